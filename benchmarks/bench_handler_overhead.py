"""Handler overhead: `python benchmarks/bench_handler_overhead.py [--chunks 10000] [--requests 100]`.

An embedded-engine collection of N synthetic chunks (384-d, hybrid dense + BM25), a
zero-latency embedder (precomputed unit vectors) and the extractive answerer: each request
goes through the real Mangum chat handler (API Gateway v2 event → Starlette → retrieval →
answer → citations → JSON), beside a bare hybrid `store.search` on the same collection.
Prints p50/p95 of both and their ratio.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from mangum import Mangum  # noqa: E402

from functions.api.app import create_app  # noqa: E402
from functions.api.deps import Deps  # noqa: E402
from functions.search.contract import chunk_id, point_id  # noqa: E402
from functions.search.sparse import encode_document, encode_query  # noqa: E402
from functions.search.store import QdrantStore  # noqa: E402
from functions.services.ratelimit import MemoryRateLimiter, MemorySpendCap  # noqa: E402
from functions.settings import Settings  # noqa: E402
from tests.fakes.embedder import RandomEmbedder  # noqa: E402
from textbook_chat_cli.events import api_gateway_event  # noqa: E402

WORDS = ("loop sensor encoder motor torque filter kalman gyroscope accelerometer drift bias "
         "jitter sample rate noise lidar range voltage current pwm bridge servo stepper node "
         "topic message launch parameter watchdog stop test frame angle speed wheel").split()


def build(path: str, n: int, embedder: RandomEmbedder, store=None):
    """n synthetic chunks in the embedded engine at path (or in the given store)."""
    store = store or QdrantStore.open(Settings(qdrant_path=path))
    store.ensure_collection(embedder.model_name, embedder.dimension)
    rng = random.Random(7)
    items = []
    for i in range(n):
        doc = f"doc-{i // 20}.md"
        cid = chunk_id(doc, i % 20)
        text = " ".join(rng.choice(WORDS) for _ in range(120)) + "."
        payload = {"chunk_id": cid, "doc_path": doc, "doc_title": f"Doc {i // 20}",
                   "module": f"m{i % 7}", "heading_path": [f"Doc {i // 20}", f"S{i % 20}"],
                   "section_title": f"S{i % 20}", "anchor": f"s{i % 20}",
                   "url": f"/docs/d{i // 20}#s{i % 20}", "page_url": f"/docs/d{i // 20}",
                   "content": text}
        dense = np.random.default_rng(i).standard_normal(384)
        items.append((point_id(cid), payload, (dense / np.linalg.norm(dense)).tolist(),
                      encode_document(text)))
    store.upsert(items)
    return store


def pct(values: list[float], p: float) -> float:
    return sorted(values)[min(len(values) - 1, int(p * len(values)))] * 1000


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=100)
    args = parser.parse_args(argv)

    class NoFeedback:
        def record_answer(self, *a):
            pass

        def save_feedback(self, *a):
            return False

    embedder = RandomEmbedder(model_name="bench-embedder")  # vectors cached before timing
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        store = build(tmp, args.chunks, embedder)
        print(f"indexed {args.chunks} chunks in {time.perf_counter() - t:.1f} s")
        questions = [" ".join(random.Random(i).sample(WORDS, 6)) + "?" for i in range(50)]
        for q in questions:
            embedder.vector(q)
        deps = Deps(Settings(low_confidence_threshold=0.0), env={}, search=store,
                    embedder=embedder, chat_model=None, rate_limiter=MemoryRateLimiter(0, 0),
                    spend_cap=MemorySpendCap(0), feedback=NoFeedback())
        handler = Mangum(create_app(deps, "chat", threaded=False), lifespan="off")
        logging.getLogger("textbook_chat").setLevel(logging.WARNING)  # no per-request lines
        events = [api_gateway_event("/chat", {"question": q}) for q in questions]

        def bare(q: str):  # the store's own hybrid search, no handler around it
            return store.search(embedder.vector(q), encode_query(q), 10)

        for i in range(3):  # warm both paths
            bare(questions[i])
            handler(events[i], None)
        timings: dict[str, list[float]] = {"bare search": [], "chat handler": []}
        for i in range(args.requests):
            q, ev = questions[i % 50], events[i % 50]
            t = time.perf_counter()
            bare(q)
            timings["bare search"].append(time.perf_counter() - t)
            t = time.perf_counter()
            response = handler(ev, None)
            timings["chat handler"].append(time.perf_counter() - t)
            assert response["statusCode"] == 200, response["body"]
        assert json.loads(response["body"])["citations"], "the benchmark answer had no citations"
        store.close()
    rows = {k: (pct(v, 0.5), pct(v, 0.95), statistics.mean(v) * 1000) for k, v in timings.items()}
    for name, (p50, p95, mean) in rows.items():
        print(f"{name:>18}: p50 {p50:7.1f} ms  p95 {p95:7.1f} ms  mean {mean:7.1f} ms")
    bare_p50, handler_p50 = rows["bare search"][0], rows["chat handler"][0]
    print(f"handler / bare (p50): {handler_p50 / bare_p50:.2f}x; "
          f"overhead p50 {handler_p50 - bare_p50:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
