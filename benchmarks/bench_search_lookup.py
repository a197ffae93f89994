"""What one lookup of the widget's box costs (POST /sources with "search": true, as the reader
types), against one offline answer (POST /chat) measured in the same process.

    python benchmarks/bench_search_lookup.py [--runs 3]

The sample book is indexed with the local MiniLM (its chunks' embeddings cached like
bench_eval's); the queries are embedded afresh each time (no cache), as a deployed API does. Each
sample question is typed as a reader who pauses after every word would type it: one lookup for
each of its word prefixes of 3 characters or more (the widget searches after a pause of 300 ms,
client/search.mjs), the upper bound of what typing one question sends. Printed: lookups per
question, the server's time and CPU time per lookup (median, p90) and their ratio to an offline
answer's, the query's embedding tokens (cl100k_base) and what 1,000 lookups cost with paid
embeddings (text-embedding-3-small). No model writes anything in a lookup.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_answer_cost import PRICES  # noqa: E402
from benchmarks.bench_eval import DEFAULT_CACHE, index_corpus, make_local_embedder  # noqa: E402
from functions.settings import Settings  # noqa: E402
from functions.tokens import encoding  # noqa: E402
from tests.functions.sample_rest import SAMPLE, sample_questions  # noqa: E402


def typed(question: str) -> list[str]:
    """The box's lookups for a question typed with a pause after every word."""
    words = question.split()
    prefixes = [" ".join(words[:n]) for n in range(1, len(words) + 1)]
    return [p for p in prefixes if len(p) >= 3]


def timed(post, path: str, body: dict) -> tuple[float, float]:
    """(wall ms, CPU ms of this process) of one request."""
    wall, cpu = time.perf_counter(), time.process_time()
    response = post(path, json=body)
    assert response.status_code == 200, response.text
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    from starlette.testclient import TestClient

    from functions.api.app import create_app
    from functions.api.deps import Deps
    from functions.search.embeddings.factory import make_embedder
    from functions.search.store import QdrantStore
    from functions.services.ratelimit import MemoryRateLimiter, MemorySpendCap

    folder = tempfile.mkdtemp(prefix="search-lookup-")
    settings = Settings(qdrant_path=folder, collection="sample", search_rate_limit_per_minute=0,
                        search_rate_limit_per_day=0)  # (the benchmark types faster than a reader)
    store = QdrantStore.open(settings)
    try:
        index_corpus(SAMPLE, store, make_local_embedder(settings, DEFAULT_CACHE))
        deps = Deps(settings, env={}, search=store, embedder=make_embedder(settings),
                    chat_model=None, rate_limiter=MemoryRateLimiter(0, 0),
                    spend_cap=MemorySpendCap(0))
        client = TestClient(create_app(deps, "all"))
        questions = [q["question"] for q in sample_questions() if q.get("question")]
        lookups = [typed(q) for q in questions]
        timed(client.post, "/chat", {"question": questions[0]})  # warm: the model loads once
        look, answer = [], []
        for _ in range(args.runs):
            for question, prefixes in zip(questions, lookups, strict=True):
                answer.append(timed(client.post, "/chat", {"question": question}))
                look += [timed(client.post, "/sources", {"question": p, "search": True})
                         for p in prefixes]
        enc = encoding()
        tokens = [len(enc.encode(p, disallowed_special=())) for prefixes in lookups for p in prefixes]
    finally:
        store.close()
        shutil.rmtree(folder, ignore_errors=True)

    def p(values: list[float], q: float) -> float:
        return statistics.quantiles(values, n=100)[int(q * 100) - 1] if len(values) > 1 else values[0]

    per_question = [len(x) for x in lookups]
    print(f"sample book, {len(questions)} questions x {args.runs} runs; lookups per question typed "
          f"with a pause after every word: median {statistics.median(per_question):.0f}, "
          f"most {max(per_question)}")
    for name, i in (("wall", 0), ("CPU", 1)):
        lk, an = [x[i] for x in look], [x[i] for x in answer]
        print(f"{name:>5} ms per lookup: p50 {p(lk, .5):.1f}, p90 {p(lk, .9):.1f}; per offline "
              f"answer: p50 {p(an, .5):.1f}; lookup / answer {p(lk, .5) / p(an, .5):.2f}")
    dollars = 1000 * statistics.mean(tokens) * PRICES["text-embedding-3-small"] / 1e6
    print(f"query tokens per lookup: mean {statistics.mean(tokens):.1f}, most {max(tokens)}; "
          f"1,000 lookups with paid embeddings: ${dollars:.5f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
