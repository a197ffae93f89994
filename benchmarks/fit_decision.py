"""Fit the three-outcome decision (functions/answers/decision.py) on labelled questions:
`python benchmarks/fit_decision.py [CORPORA_DIR] [--write] [--only BOOK ...]`.

Every question of each development book (its main, extra and para files: answerable or not, in
the book's words and in readers' own) goes through the chat path's own evidence gathering
(functions.answers.chat.gather: retrieval, respelling, names and rare words, the block choice)
on a fresh index with the embedded defaults (EMBEDDING_MODEL chooses the local model). A
logistic model over the decision's signals is fitted to "the quote cites the section that
answers" on each book alone, reported on the others, and on all of them. Its threshold (answer
from here) is the lowest at which, in every question file of the fitting books, the answers
cite the expected section at least PRECISION of the time and at most UNANSWERED_MAX of the
unanswerable questions are answered; below it the reader gets the closest passage. `near` (no
passage near: not covered) is NEAR_SHARE of the lowest `cosine` signal of any answerable
question of the fitting books, unless the best block holds NEAR_TERMS of the question's words
(by rarity). `ask_model` is the lowest probability of the 97% most confident
rightly quoted questions (from it up the model path asks the model). The figures printed per
file: answered / closest / not covered, answers citing the expected section, expected section
reached (answered citing it, or among the closest outcome's three sections), its ceiling (every
question answered, top 3), unanswerable answered. `--write` stores the policy fitted on FIT_ON
(chosen on one book, reported on the other and on any other corpus given) under the embedding
model's name in functions/data/answer_policy.json (the other models' policies are kept), with
this command and the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_eval  # noqa: E402

from functions.answers.chat import gather, standalone_query  # noqa: E402
from functions.answers.citations import link_citations  # noqa: E402
from functions.answers.decision import FEATURES, POLICY_FILE  # noqa: E402
from functions.answers.extractive import supported  # noqa: E402
from functions.answers.finish import nearest  # noqa: E402
from functions.api.deps import Deps  # noqa: E402
from functions.api.validation import ChatRequest, Turn  # noqa: E402
from functions.search.store import QdrantStore  # noqa: E402
from functions.services.ratelimit import MemorySpendCap  # noqa: E402
from functions.settings import Settings  # noqa: E402

BOOKS = ("pai-ali", "pai-hassaan")
FIT_ON = ("pai-ali",)  # weights and threshold chosen here; pai-hassaan and the sample report them
PRECISION = 0.90  # answers citing the expected section, in every file of the fitting books
UNANSWERED_MAX = 0.10  # unanswerable questions answered, in every file of the fitting books
NEAR_SHARE = 0.8  # `near` is this share of the lowest answerable question's cosine…
NEAR_TERMS = 0.5  # … and a best block holding half the question's words is near (by hand)
SHOWN = 3  # sections the closest outcome links
COMMAND = "OMP_NUM_THREADS=1 python benchmarks/fit_decision.py --write"
L2 = 1.0  # ridge on the standardised weights: ~100 questions a book, five signals
ASK_MODEL_RECALL = 0.97


def rows_for(corpus: Path, workdir: Path, cache: Path | None) -> list[dict]:
    """One row per question: its signals, label and what answering it would show."""
    settings = Settings.from_env(os.environ).with_(qdrant_path=str(workdir / corpus.name),
                                                   collection=corpus.name)
    embedder = bench_eval.make_local_embedder(settings, cache)
    store = QdrantStore.open(settings)
    rows = []
    try:
        bench_eval.index_corpus(corpus, store, embedder)
        deps = Deps(settings, search=store, embedder=embedder, spend_cap=MemorySpendCap(10**12))
        for which, name, q in bench_eval.corpus_files(corpus):
            req = ChatRequest(question=q.question, history=tuple(
                Turn(t["role"], t["content"]) for t in q.history))
            query, context, _ = standalone_query(req, None)
            ev = gather(req, deps.retriever, query, context)
            _, citations = link_citations(ev.composed.text, ev.composed.sources)
            rows.append({
                "book": corpus.name, "set": which, "file": name, "id": q.id,
                "kind": q.kind, "answerable": q.answerable,
                "x": list(ev.signals.values()), "absent": bool(ev.absent),
                "shown": supported(ev.composed, ev.reading.quantity),
                "cites": q.expected_url in [c["url"] for c in citations],
                # the sections the closest outcome would link (finish.nearest)
                "shown3": [t["url"] for t in nearest(ev.composed, ev.hits, 0.0).related_topics],
                "expected": q.expected_url, "model": embedder.model_name,
            })
    finally:
        store.close()
    return rows


def standardise(rows: list[dict]) -> tuple[list[float], list[float]]:
    cols = list(zip(*(r["x"] for r in rows), strict=True))
    mean = [sum(c) / len(c) for c in cols]
    scale = [max(1e-6, (sum((v - m) ** 2 for v in c) / len(c)) ** 0.5)
             for c, m in zip(cols, mean, strict=True)]
    return mean, scale


def right(row: dict) -> bool:
    """Answering would be right: the book answers it and the quote cites the expected section."""
    return bool(row["answerable"] and row["cites"])


def fit(rows: list[dict]) -> dict:
    """Ridge logistic regression by Newton's method (numpy), on standardised signals, to
    `right`; then where to cut it (`cuts`)."""
    import numpy as np

    mean, scale = standardise(rows)
    X = np.array([[(v - m) / s for v, m, s in zip(r["x"], mean, scale, strict=True)]
                  for r in rows])
    y = np.array([1.0 if right(r) else 0.0 for r in rows])
    Xb = np.hstack([X, np.ones((len(X), 1))])
    w = np.zeros(Xb.shape[1])
    ridge = np.diag([L2] * X.shape[1] + [0.0])
    for _ in range(50):
        p = 1 / (1 + np.exp(-Xb @ w))
        grad = Xb.T @ (p - y) + ridge @ w
        hess = Xb.T @ (Xb * (p * (1 - p))[:, None]) + ridge
        w -= np.linalg.solve(hess, grad)
    policy = {"features": list(FEATURES), "mean": mean, "scale": scale,
              "weights": [round(float(v), 4) for v in w[:-1]], "bias": round(float(w[-1]), 4)}
    probs = [probability(policy, r) for r in rows]
    policy["threshold"] = best_threshold(rows, probs)
    rightly = sorted(p for p, r in zip(probs, rows, strict=True) if right(r))
    policy["ask_model"] = round(min(policy["threshold"], rightly[int(
        len(rightly) * (1 - ASK_MODEL_RECALL))]), 3)
    cosine = FEATURES.index("cosine")
    policy["near"] = round(NEAR_SHARE * min(r["x"][cosine] for r in rows if r["answerable"]), 3)
    policy["near_terms"] = NEAR_TERMS
    return policy


def probability(policy: dict, row: dict) -> float:
    z = policy["bias"] + sum(w * (v - m) / s for v, m, s, w in zip(
        row["x"], policy["mean"], policy["scale"], policy["weights"], strict=True))
    return 1 / (1 + math.exp(-z))


def outcome(row: dict, p: float, policy: dict) -> str:
    """What the chat path shows (functions.answers.chat._decide, offline)."""
    far = (row["x"][FEATURES.index("cosine")] < policy["near"]
           and row["x"][FEATURES.index("passage_terms")] < policy["near_terms"])
    if row["absent"] or not row["shown3"] or far:
        return "not_covered"
    return "answered" if p >= policy["threshold"] and row["shown"] else "closest"


def best_threshold(rows: list[dict], probs: list[float]) -> float:
    """The lowest threshold meeting PRECISION and UNANSWERED_MAX in every file."""
    files = sorted({(r["book"], r["file"]) for r in rows})

    def meets(t: float) -> bool:
        for key in files:
            sub = [(r, p) for r, p in zip(rows, probs, strict=True)
                   if (r["book"], r["file"]) == key and not r["absent"] and r["shown"]]
            said = [r for r, p in sub if p >= t and r["answerable"]]
            unanswerable = sum(not r["answerable"] for r in rows
                               if (r["book"], r["file"]) == key)
            wrong = sum(1 for r, p in sub if p >= t and not r["answerable"])
            if said and sum(r["cites"] for r in said) / len(said) < PRECISION:
                return False
            if unanswerable and wrong / unanswerable > UNANSWERED_MAX:
                return False
        return True
    return next((t / 100 for t in range(20, 100) if meets(t / 100)), 1.0)


def figures(policy: dict, rows: list[dict]) -> dict:
    """Per book and file: [answered, closest, not covered], answers citing the expected section,
    answerable questions reached, its ceiling, unanswerable answered."""
    out = {}
    for book, name in sorted({(r["book"], r["file"]) for r in rows}):
        sub = [r for r in rows if r["book"] == book and r["file"] == name]
        shown = {id(r): outcome(r, probability(policy, r), policy) for r in sub}
        ans = [r for r in sub if r["answerable"]]
        un = [r for r in sub if not r["answerable"]]
        said = [r for r in ans if shown[id(r)] == "answered"]
        reached = [r for r in ans if (shown[id(r)] == "answered" and r["cites"]) or (
            shown[id(r)] == "closest" and r["expected"] in r["shown3"][:SHOWN])]
        out[f"{book} {name}"] = (
            [sum(v == k for v in shown.values()) for k in ("answered", "closest", "not_covered")],
            round(sum(r["cites"] for r in said) / len(said), 3) if said else None,
            round(len(reached) / len(ans), 3) if ans else None,
            round(sum(r["cites"] or r["expected"] in r["shown3"][:SHOWN] for r in ans)
                  / len(ans), 3) if ans else None,
            round(sum(shown[id(r)] == "answered" for r in un) / len(un), 3) if un else None)
    return out


def _fmt(v) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="?", help="folder of corpora (default: bench_eval's)")
    parser.add_argument("--only", action="append", help="book to use (default both)")
    parser.add_argument("--fit-on", action="append",
                        help=f"book(s) the written policy is fitted on (default {', '.join(FIT_ON)})")
    parser.add_argument("--report", type=Path, action="append", default=[],
                        help="rows of another corpus (saved with --rows) to report on too")
    parser.add_argument("--write", action="store_true",
                        help=f"store the policy fitted on every book in {POLICY_FILE}")
    parser.add_argument("--rows", type=Path, help="reuse (or save) the gathered rows here")
    parser.add_argument("--cache", type=lambda v: Path(v) if v else None,
                        default=bench_eval.DEFAULT_CACHE, help="embedding cache ('' for none)")
    args = parser.parse_args(argv)
    books = args.only or list(BOOKS)
    if args.rows and args.rows.is_file():
        rows = [r for r in json.loads(args.rows.read_text()) if r["book"] in books]
    else:
        root = bench_eval.corpora_root(args.corpora)
        missing = [b for b in books if not (root / b / "docs").is_dir()]
        if missing:
            print(f"no corpus {', '.join(missing)} under {root}", file=sys.stderr)
            return 2
        rows = []
        with tempfile.TemporaryDirectory(prefix="textbook-chat-fit-") as tmp:
            for book in books:
                print(f"gathering {book}...", file=sys.stderr)
                rows += rows_for(root / book, Path(tmp), args.cache)
        if args.rows:
            args.rows.write_text(json.dumps(rows))
    for extra in args.report:
        rows += json.loads(extra.read_text())
    print("answered/closest/not covered, answers citing expected, reached, reach ceiling "
          "(answer all; top 3), unanswerable answered; per book and file")
    fit_on = args.fit_on or [b for b in FIT_ON if b in books] or books
    for train in [[b] for b in books] + ([books] if len(books) > 1 else []):
        policy = fit([r for r in rows if r["book"] in train])
        print(f"\nfitted on {' + '.join(train)}: threshold {policy['threshold']}, near "
              f"{policy['near']}, ask the model from {policy['ask_model']}, weights "
              + ", ".join(f"{f} {w:+.2f}" for f, w in zip(FEATURES, policy["weights"],
                                                          strict=True)))
        for name, (counts, cites, reached, ceiling, unans) in figures(policy, rows).items():
            held = "" if name.split()[0] in train else "  (held out)"
            print(f"  {name:46s} {'/'.join(map(str, counts)):>9}  {_fmt(cites)}  "
                  f"{_fmt(reached)} ({_fmt(ceiling)})  {_fmt(unans)}{held}")
    if args.write:
        fitted = [r for r in rows if r["book"] in fit_on]
        policy = fit(fitted)
        policy["notes"] = {"fitted_on": fit_on, "questions": len(fitted),
                           "precision": PRECISION, "unanswered_max": UNANSWERED_MAX,
                           "figures": {k: list(v) for k, v in figures(policy, rows).items()}}
        model = rows[0].get("model", "all-MiniLM-L6-v2")
        data = json.loads(POLICY_FILE.read_text(encoding="utf-8")) if POLICY_FILE.is_file() \
            else {"policies": {}}
        data["command"] = COMMAND
        data["policies"][model] = policy
        POLICY_FILE.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"\nwrote the {model} policy in {POLICY_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
