"""Ways to rank a reader's question's candidates, measured: `python benchmarks/bench_recall.py`.

Issue 25 item 1 asks for recall on questions in readers' own words with what runs locally and in
the keyless Lambda. For every answerable question of each development book (its book-worded
sets and its para set, apart) and the sample textbook, one pool of candidates is gathered: the
hybrid (RRF), dense and sparse top 20 of the question as served (functions.search.retrieval,
follow-ups with their context). Each candidate gets what a ranking could read without a new
model: its cosine, the share of the question's terms it holds (plain, and weighted by rarity in
the book), the cosine of its heading path alone, and the best cosine of its blocks (sentences
and paragraphs: several vectors per section, max-similarity). Each variant ranks the pool and
the expected section's rank gives hit@1, hit@5 and MRR@10 per set.

A second table changes the question's vector instead, over every section of the book (cosine
alone, no pool): the plain question; pseudo-relevance feedback (Rocchio: the question's vector
plus a share of the mean of its k best sections'); the question's sentences, each searched and
the best kept; and a linear adapter learned from the book's own heading-path -> section pairs
(ridge towards the identity), applied to the question. None uses the questions to fit.

`base` is the ranking before issue 25 (functions.search.ranking.hybrid_score over the hybrid
candidates); today's multiplies it by functions.search.ranking.recap_weight (kept).
A variant earns its place only if it gains on both books' para sets without losing on their
book-worded sets (benchmarks/calibration.md has the figures and what was kept).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_eval  # noqa: E402
import numpy as np  # noqa: E402

from functions.answers.chat import standalone_query  # noqa: E402
from functions.answers.requests import ChatRequest, Turn  # noqa: E402
from functions.api.deps import Deps  # noqa: E402
from functions.search.ranking import DENSE_WEIGHT, chunk_text, recap_weight  # noqa: E402
from functions.search.sparse import encode_document, encode_query  # noqa: E402
from functions.search.store import QdrantStore  # noqa: E402
from functions.search.types import SearchHit, cosine  # noqa: E402
from functions.services.ratelimit import MemorySpendCap  # noqa: E402
from functions.settings import Settings  # noqa: E402
from indexer.evaluate.runner import held_urls  # noqa: E402

BOOKS = ("pai-ali", "pai-hassaan", "textbook")
POOL = 20  # per retrieval mode, as served (functions.search.retrieval.CANDIDATES)
_BLOCK = re.compile(r"\n\s*\n|(?<=[.!?])\s+(?=[A-Z])")

Score = Callable[[dict], float]
VARIANTS: dict[str, Score] = {
    "base (0.7 cosine + 0.3 terms)": lambda c: (
        DENSE_WEIGHT * c["cos"] + (1 - DENSE_WEIGHT) * c["share"]),
    "base x recap weight (kept)": lambda c: (
        DENSE_WEIGHT * c["cos"] + (1 - DENSE_WEIGHT) * c["share"]) * c["recap"],
    "0.8 cosine + 0.2 terms": lambda c: 0.8 * c["cos"] + 0.2 * c["share"],
    "0.9 cosine + 0.1 terms": lambda c: 0.9 * c["cos"] + 0.1 * c["share"],
    "cosine alone": lambda c: c["cos"],
    "0.7 cosine + 0.3 rare terms": lambda c: 0.7 * c["cos"] + 0.3 * c["rare_share"],
    "0.6 cosine + 0.4 rare terms": lambda c: 0.6 * c["cos"] + 0.4 * c["rare_share"],
    "base + 0.1 heading cosine": lambda c: 0.7 * c["cos"] + 0.3 * c["share"] + 0.1 * c["heading"],
    "base + 0.2 heading cosine": lambda c: 0.7 * c["cos"] + 0.3 * c["share"] + 0.2 * c["heading"],
    "base + 0.1 best block": lambda c: 0.7 * c["cos"] + 0.3 * c["share"] + 0.1 * c["block"],
    "base + 0.3 best block": lambda c: 0.7 * c["cos"] + 0.3 * c["share"] + 0.3 * c["block"],
}


_SENTENCE = re.compile(r"(?<=[.?!])\s+")


def _unit(x: np.ndarray) -> np.ndarray:
    return x / (np.linalg.norm(x, axis=-1, keepdims=True) + 1e-9)


def _rocchio(k: int, share: float):
    def vector(q: dict, book: dict) -> np.ndarray:
        best = np.argsort(-(book["vectors"] @ q["vector"]))[:k]
        return _unit(q["vector"] + share * book["vectors"][best].mean(0))
    return vector


def _adapter(ridge: float):
    def vector(q: dict, book: dict) -> np.ndarray:
        if ridge not in book["adapters"]:  # W minimising |H W - M|^2 + ridge |W - I|^2
            heads, vectors = book["headings"], book["vectors"]
            eye = np.eye(heads.shape[1])
            book["adapters"][ridge] = np.linalg.solve(heads.T @ heads + ridge * eye,
                                                      heads.T @ vectors + ridge * eye)
        return _unit(q["vector"] @ book["adapters"][ridge])
    return vector


QueryVector = Callable[[dict, dict], "np.ndarray | list[np.ndarray]"]
QUERY_VARIANTS: dict[str, QueryVector] = {
    "question's vector": lambda q, book: q["vector"],
    "PRF k=2, 0.25": _rocchio(2, 0.25),
    "PRF k=3, 0.5": _rocchio(3, 0.5),
    "PRF k=5, 0.5": _rocchio(5, 0.5),
    "best of its sentences": lambda q, book: [q["vector"], *q["sentences"]],
    "heading adapter, ridge 3": _adapter(3.0),
    "heading adapter, ridge 30": _adapter(30.0),
}


def whole_book(store, embedder, questions: list[dict]) -> dict:
    """Every section's vector, heading-path vector and held URLs, and each question's vector
    and its sentences' (for QUERY_VARIANTS)."""
    payloads = dict(store.scroll_payloads(["url", "sections", "heading_path", "doc_title"]))
    ids = list(payloads)
    dense = store.dense_vectors(ids)
    book = {"vectors": _unit(np.array([dense[i] for i in ids], dtype=np.float32)),
            "held": [held_urls(payloads[i]) for i in ids], "adapters": {},
            "headings": _unit(np.array(embedder.embed_batch(
                [" ".join(map(str, (payloads[i].get("heading_path") or [])[-2:]))
                 or str(payloads[i].get("doc_title", "")) for i in ids]), dtype=np.float32))}
    for q, v in zip(questions, embedder.embed_batch([q["query"] for q in questions]),
                    strict=True):
        parts = [p for p in _SENTENCE.split(q["query"]) if len(p.split()) >= 3]
        q["vector"] = _unit(np.array(v, dtype=np.float32))
        q["sentences"] = ([_unit(np.array(s, dtype=np.float32))
                           for s in embedder.embed_batch(parts)] if len(parts) > 1 else [])
    return book


def whole_book_rank(q: dict, book: dict, variant: QueryVector) -> int | None:
    """The expected section's rank (sections counted once) over every section of the book."""
    vectors = variant(q, book)
    scores = np.max([book["vectors"] @ v for v in vectors], axis=0) if isinstance(
        vectors, list) else book["vectors"] @ vectors
    seen: list[tuple] = []
    for i in np.argsort(-scores)[:60]:
        key = tuple(sorted(book["held"][i]))
        if key not in seen:
            seen.append(key)
        if q["expected"] in book["held"][i]:
            return len(seen)
    return None


def gather(name: str, workdir: Path, cache: Path | None) -> tuple[list[dict], dict]:
    """Every answerable question of one book with its pool of candidates and their features,
    and the whole book's vectors (whole_book)."""
    corpus = (ROOT / "samples" if name == "textbook" else bench_eval.corpora_root()) / name
    settings = Settings(qdrant_path=str(workdir / name), collection=name)
    embedder = bench_eval.make_local_embedder(settings, cache)
    store = QdrantStore.open(settings)
    try:
        bench_eval.index_corpus(corpus, store, embedder)
        retriever = Deps(settings, search=store, embedder=embedder,
                         spend_cap=MemorySpendCap(10**12)).retriever
        questions, payloads = [], {}
        for which in bench_eval.SETS:
            for q in bench_eval.corpus_questions(corpus, which):
                if not q.answerable:
                    continue
                req = ChatRequest(question=q.question, history=tuple(
                    Turn(t["role"], t["content"]) for t in q.history))
                query, context, _ = standalone_query(req, None)
                pool: dict[int, dict] = {}
                for mode in ("hybrid", "dense", "sparse"):
                    for hit in retriever.candidates(query, None, mode, POOL, context):
                        payloads[hit.point_id] = hit.payload
                        pool.setdefault(hit.point_id, {"cos": hit.dense_score})
                questions.append({"set": which, "query": query, "expected": q.expected_url,
                                  "pool": pool})
        book = whole_book(store, embedder, questions)
    finally:
        store.close()
    ids = list(payloads)
    held = {i: held_urls(payloads[i]) for i in ids}
    doc_terms = {i: set(encode_document(chunk_text_of(payloads[i]))[0]) for i in ids}
    df: dict[int, int] = {}
    for ts in doc_terms.values():
        for t in ts:
            df[t] = df.get(t, 0) + 1
    idf = {t: math.log(1 + len(ids) / n) for t, n in df.items()}
    headings = dict(zip(ids, embedder.embed_batch([heading_of(payloads[i]) for i in ids]),
                        strict=True))
    owners, blocks = [], []
    for i in ids:
        for block in [b.strip() for b in _BLOCK.split(str(payloads[i].get("content", "")))
                      if len(b.strip()) > 20][:30]:
            owners.append(i)
            blocks.append(block)
    block_vectors: dict[int, list] = {}
    for i, vector in zip(owners, embedder.embed_batch(blocks) if blocks else [], strict=True):
        block_vectors.setdefault(i, []).append(vector)
    for q, qv in zip(questions, embedder.embed_batch([q["query"] for q in questions]),
                     strict=True):
        wanted = set(encode_query(q["query"])[0])
        weight = sum(idf.get(t, math.log(1 + len(ids))) for t in wanted) or 1.0
        for i, c in q["pool"].items():
            held_terms = wanted & doc_terms[i]
            c["share"] = len(held_terms) / len(wanted) if wanted else 0.0
            c["rare_share"] = sum(idf.get(t, 0.0) for t in held_terms) / weight
            c["heading"] = cosine(qv, headings[i])
            c["block"] = max((cosine(qv, v) for v in block_vectors.get(i, [])), default=c["cos"])
            c["held"] = held[i]
            c["recap"] = recap_weight(SearchHit(i, 0.0, 0.0, payloads[i]))
    return questions, book


def chunk_text_of(payload: dict) -> str:
    return chunk_text(type("Hit", (), {"payload": payload})())


def heading_of(payload: dict) -> str:
    return " ".join([str(payload.get("doc_title", "")),
                     *map(str, payload.get("heading_path") or [])])


def rank_of(question: dict, score: Score) -> int | None:
    """The expected section's rank (sections counted once) when the pool is ranked by score."""
    seen: list[tuple] = []
    for c in sorted(question["pool"].values(), key=lambda c: -score(c)):
        key = tuple(sorted(c["held"]))
        if key not in seen:
            seen.append(key)
        if question["expected"] in c["held"]:
            return len(seen)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=str(bench_eval.DEFAULT_CACHE),
                        help="embedding cache ('' for none)")
    args = parser.parse_args(argv)
    cache = Path(args.cache) if args.cache else None
    with tempfile.TemporaryDirectory(prefix="textbook-chat-recall-") as tmp:
        gathered = {name: gather(name, Path(tmp), cache) for name in BOOKS}
    books = {name: questions for name, (questions, _) in gathered.items()}
    columns = [(name, which) for name in BOOKS for which in bench_eval.SETS
               if any(q["set"] == which for q in books[name])]
    header = f"{'variant':32}" + "".join(f"{name[:11] + ' ' + which[:4]:>20}"
                                         for name, which in columns)
    print("hit@1 / hit@5 / MRR@10 of the expected section, answerable questions")
    print("\nthe pool as served, ranked:\n" + header)
    for label, score in VARIANTS.items():
        print(_row(label, [[rank_of(q, score) for q in books[name] if q["set"] == which]
                           for name, which in columns]))
    print("\nthe question's vector, over every section (cosine alone):\n" + header)
    for label, variant in QUERY_VARIANTS.items():
        print(_row(label, [[whole_book_rank(q, gathered[name][1], variant)
                            for q in books[name] if q["set"] == which]
                           for name, which in columns]))
    return 0


def _row(label: str, columns: list[list[int | None]]) -> str:
    cells = []
    for ranks in columns:
        hit1 = sum(r == 1 for r in ranks) / len(ranks)
        hit5 = sum(r is not None and r <= 5 for r in ranks) / len(ranks)
        mrr = sum(1 / r for r in ranks if r is not None and r <= 10) / len(ranks)
        cells.append(f"{hit1:.2f}/{hit5:.2f}/{mrr:.2f}")
    return f"{label:32}" + "".join(f"{cell:>20}" for cell in cells)


if __name__ == "__main__":
    sys.exit(main())
