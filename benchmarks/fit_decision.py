"""Fit the decision to answer (functions/answers/decision.py) on labelled questions:
`python benchmarks/fit_decision.py [CORPORA_DIR] [--write] [--only BOOK ...]`.

Every question of each development book (its main, extra and para sets: answerable or not, in
the book's words and in readers' own) goes through the chat path's own evidence gathering
(functions.answers.chat.gather: retrieval, respelling, names and rare words, the block choice)
on a fresh index with the embedded defaults. A logistic model over the decision's signals is
fitted to "the book answers it" on each book alone, reported on the others, and on all of them.
The threshold maximises, summed over each question set (book-worded, readers' own words) of the
fitting books, the share of answerable questions answered plus UNANSWERED_COST times the share
of unanswerable ones refused: a confident answer to a question the book does not answer costs
more than an honest refusal that lists the closest sections. `ask_model` is the lowest
probability of the 97% most confident answerable questions (below it the model path refuses
without asking). `--write` stores the policy fitted on FIT_ON (chosen on one book, reported on
the other and on any other corpus given) in functions/data/answer_policy.json with this command
and the figures.
"""

from __future__ import annotations

import argparse
import json
import math
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
from functions.api.deps import Deps  # noqa: E402
from functions.api.validation import ChatRequest, Turn  # noqa: E402
from functions.search.store import QdrantStore  # noqa: E402
from functions.services.ratelimit import MemorySpendCap  # noqa: E402
from functions.settings import Settings  # noqa: E402

BOOKS = ("pai-ali", "pai-hassaan")
FIT_ON = ("pai-ali",)  # weights and threshold chosen here; pai-hassaan and the sample report them
UNANSWERED_COST = 1.5
COMMAND = "OMP_NUM_THREADS=1 python benchmarks/fit_decision.py --write"
L2 = 1.0  # ridge on the standardised weights: ~100 questions a book, five signals
ASK_MODEL_RECALL = 0.97


def rows_for(corpus: Path, workdir: Path, cache: Path | None) -> list[dict]:
    """One row per question: its signals, label and what answering it would show."""
    settings = Settings(qdrant_path=str(workdir / corpus.name), collection=corpus.name)
    embedder = bench_eval.make_local_embedder(settings, cache)
    store = QdrantStore.open(settings)
    rows = []
    try:
        bench_eval.index_corpus(corpus, store, embedder)
        deps = Deps(settings, search=store, embedder=embedder, spend_cap=MemorySpendCap(10**12))
        for which in bench_eval.SETS:
            for q in bench_eval.corpus_questions(corpus, which):
                req = ChatRequest(question=q.question, history=tuple(
                    Turn(t["role"], t["content"]) for t in q.history))
                query, context, _ = standalone_query(req, None)
                ev = gather(req, deps.retriever, query, context)
                _, citations = link_citations(ev.composed.text, ev.composed.sources)
                rows.append({
                    "book": corpus.name, "set": which, "id": q.id, "answerable": q.answerable,
                    "x": list(ev.signals.values()), "absent": bool(ev.absent),
                    "shown": supported(ev.composed, ev.reading.quantity),
                    "cites": q.expected_url in [c["url"] for c in citations],
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


def fit(rows: list[dict]) -> dict:
    """Ridge logistic regression by Newton's method (numpy), on standardised signals."""
    import numpy as np

    mean, scale = standardise(rows)
    X = np.array([[(v - m) / s for v, m, s in zip(r["x"], mean, scale, strict=True)]
                  for r in rows])
    y = np.array([1.0 if r["answerable"] else 0.0 for r in rows])
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
    answerable = sorted(p for p, r in zip(probs, rows, strict=True) if r["answerable"])
    policy["ask_model"] = round(min(policy["threshold"], answerable[int(
        len(answerable) * (1 - ASK_MODEL_RECALL))]), 3)
    return policy


def probability(policy: dict, row: dict) -> float:
    z = policy["bias"] + sum(w * (v - m) / s for v, m, s, w in zip(
        row["x"], policy["mean"], policy["scale"], policy["weights"], strict=True))
    return 1 / (1 + math.exp(-z))


def answers(row: dict, p: float, threshold: float) -> bool:
    return p >= threshold and not row["absent"] and row["shown"]


def best_threshold(rows: list[dict], probs: list[float]) -> float:
    sets = {(r["book"], r["set"]) for r in rows}

    def gain(t: float) -> float:
        total = 0.0
        for key in sets:
            ans = [answers(r, p, t) for r, p in zip(rows, probs, strict=True)
                   if (r["book"], r["set"]) == key and r["answerable"]]
            un = [not answers(r, p, t) for r, p in zip(rows, probs, strict=True)
                  if (r["book"], r["set"]) == key and not r["answerable"]]
            total += (sum(ans) / len(ans) if ans else 0.0) + (
                UNANSWERED_COST * sum(un) / len(un) if un else 0.0)
        return total
    return max((round(t / 100, 2) for t in range(20, 91)), key=lambda t: (gain(t), -abs(t - .5)))


def figures(policy: dict, rows: list[dict]) -> dict:
    """Per book and set: cites expected / answerable refused / unanswerable refused."""
    out = {}
    for book in sorted({r["book"] for r in rows}):
        for which in bench_eval.SETS:
            sub = [r for r in rows if r["book"] == book and r["set"] == which]
            if not sub:
                continue
            ans = [r for r in sub if r["answerable"]]
            un = [r for r in sub if not r["answerable"]]
            shown = {id(r): answers(r, probability(policy, r), policy["threshold"]) for r in sub}
            out[f"{book} {which}"] = (
                round(sum(shown[id(r)] and r["cites"] for r in ans) / len(ans), 3),
                round(sum(not shown[id(r)] for r in ans) / len(ans), 3),
                round(sum(not shown[id(r)] for r in un) / len(un), 3) if un else None)
    return out


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
    print("cites expected / answerable refused / unanswerable refused, per book and set")
    fit_on = args.fit_on or [b for b in FIT_ON if b in books] or books
    for train in [[b] for b in books] + ([books] if len(books) > 1 else []):
        policy = fit([r for r in rows if r["book"] in train])
        print(f"\nfitted on {' + '.join(train)}: threshold {policy['threshold']}, "
              f"ask the model from {policy['ask_model']}, weights "
              + ", ".join(f"{f} {w:+.2f}" for f, w in zip(FEATURES, policy["weights"],
                                                          strict=True)))
        for name, (cites, aref, uref) in figures(policy, rows).items():
            held = "" if name.split()[0] in train else "  (held out)"
            print(f"  {name:24s} {cites:.3f} / {aref:.3f} / "
                  f"{'n/a' if uref is None else f'{uref:.3f}'}{held}")
    if args.write:
        fitted = [r for r in rows if r["book"] in fit_on]
        policy = fit(fitted)
        policy["notes"] = {"fitted_on": fit_on, "questions": len(fitted),
                           "unanswered_cost": UNANSWERED_COST,
                           "figures": {k: list(v) for k, v in figures(policy, rows).items()}}
        data = {"command": COMMAND, "policies": {"all-MiniLM-L6-v2": policy}}
        POLICY_FILE.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"\nwrote {POLICY_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
