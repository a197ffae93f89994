"""The embedded index as the book grows: `python benchmarks/bench_store.py [--sizes 100,2000,20000]
[--requests 40] [--old-engine]`.

For each size, N synthetic chunks (384-d vectors from a deterministic fake embedder, BM25 of
made-up robotics text) are written to the embedded engine in a temporary QDRANT_PATH. Then a
fresh interpreter, like `textbook-chat serve`, measures: opening the store (first search
included), `POST /chat` through the real Mangum handler (p50/p95; the embedder costs nothing,
so this is retrieval + answer), and the process's memory (RSS after answering; "index MB" is
that minus the RSS before opening, imports done, so it includes the answer layer's first-use
loads, which the smallest size shows; "private" is the anonymous part of RSS, without the
engine's memory-mapped files). Every figure is also printed as a ratio: latency
against the smallest size of the same run, and with --old-engine against qdrant-client's local
mode (textbook-chat's embedded store before the engine) on the same points. textbook-chat reaches
that engine only as a server now: it is measured behind the tests' Qdrant REST stand-in
(tests/functions/qdrant_rest.py, in the same process), so its figures include a loopback HTTP
request per search (well under a millisecond) and the stand-in's thread.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_handler_overhead import WORDS, build  # noqa: E402
from tests.fakes.embedder import RandomEmbedder  # noqa: E402

COLLECTION = "bench"


def rss_mb(kind: str = "VmRSS") -> float:
    """Resident memory: all of it (VmRSS), or the private part (RssAnon), without the mapped
    files (the engine maps its segment and WAL files: page cache the system can drop)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(kind + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def questions() -> list[str]:
    import random

    return [" ".join(random.Random(i).sample(WORDS, 6)) + "?" for i in range(50)]


def child(path: str, requests: int, engine: str) -> dict:
    """One serve-like process: open, answer, measure. Prints a JSON line."""
    import logging

    from mangum import Mangum

    from functions.api.app import create_app
    from functions.api.deps import Deps
    from functions.search.store import QdrantStore
    from functions.services.ratelimit import MemoryRateLimiter, MemorySpendCap
    from functions.settings import Settings
    from textbook_chat_cli.events import api_gateway_event

    class NoFeedback:
        def record_answer(self, *a):
            pass

        def save_feedback(self, *a):
            return False

    embedder = RandomEmbedder(model_name="bench-embedder")
    asked = questions()
    for q in asked:
        embedder.vector(q)
    if engine == "old":  # imported before timing and RSS: the open is the figure
        from qdrant_client import QdrantClient

        from tests.functions.qdrant_rest import qdrant_rest
    else:
        import qdrant_edge  # noqa: F401
    before, before_anon = rss_mb(), rss_mb("RssAnon")
    t = time.perf_counter()
    if engine == "old":
        server = contextlib.ExitStack()
        local = QdrantClient(path=path)
        url, _ = server.enter_context(qdrant_rest(local))
        server.callback(local.close)
        store = QdrantStore.open(Settings(qdrant_url=url, collection=COLLECTION))
    else:
        store = QdrantStore.open(Settings(qdrant_path=path, collection=COLLECTION))
    from functions.search.sparse import encode_query

    store.search(embedder.vector(asked[0]), encode_query(asked[0]), 10)
    opened = time.perf_counter() - t
    deps = Deps(Settings(low_confidence_threshold=0.0, collection=COLLECTION), env={},
                search=store, embedder=embedder, chat_model=None,
                rate_limiter=MemoryRateLimiter(0, 0), spend_cap=MemorySpendCap(0),
                feedback=NoFeedback())
    handler = Mangum(create_app(deps, "chat", threaded=False), lifespan="off")
    logging.getLogger("textbook_chat").setLevel(logging.WARNING)
    events = [api_gateway_event("/chat", {"question": q}) for q in asked]
    for ev in events[:3]:
        handler(ev, None)
    times = []
    for i in range(requests):
        t = time.perf_counter()
        response = handler(events[i % len(events)], None)
        times.append(time.perf_counter() - t)
        assert response["statusCode"] == 200, response["body"]
    assert json.loads(response["body"])["citations"], "the benchmark answer had no citations"
    after, after_anon = rss_mb(), rss_mb("RssAnon")
    store.close()
    if engine == "old":
        server.close()
    times.sort()
    return {"open_s": opened, "p50_ms": statistics.median(times) * 1000,
            "p95_ms": times[min(len(times) - 1, int(0.95 * len(times)))] * 1000,
            "rss_before_mb": before, "rss_after_mb": after, "anon_before_mb": before_anon,
            "anon_after_mb": after_anon}


def measure(path: Path, requests: int, engine: str) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    out = subprocess.run([sys.executable, __file__, "--child", str(path), "--requests",
                          str(requests), "--engine", engine], capture_output=True, text=True,
                         env=env, check=False)
    if out.returncode:
        raise SystemExit(f"child failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def build_old(path: Path, n: int, embedder: RandomEmbedder) -> None:
    """The same points in qdrant-client's local mode (the embedded store before the engine)."""
    from qdrant_client import QdrantClient

    from functions.search.store import QdrantStore
    from functions.settings import Settings
    from tests.functions.qdrant_rest import qdrant_rest

    local = QdrantClient(path=str(path))
    with qdrant_rest(local) as (url, _):
        store = QdrantStore.open(Settings(qdrant_url=url, collection=COLLECTION))
        build(str(path), n, embedder, store=store)
        store.close()
    local.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,2000,20000")
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--old-engine", action="store_true",
                        help="also measure qdrant-client's local mode on the same points")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--engine", default="edge", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.requests, args.engine)))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"edge-{n}"
            t = time.perf_counter()
            from functions.search.store import QdrantStore
            from functions.settings import Settings

            store = QdrantStore.open(Settings(qdrant_path=str(path), collection=COLLECTION))
            build(str(path), n, RandomEmbedder(model_name="bench-embedder"), store=store)
            store.mark_synced("2026-01-01T00:00:00+00:00")
            store.close()
            written = time.perf_counter() - t
            row = {"chunks": n, "write_s": written, **measure(path, args.requests, "edge")}
            if args.old_engine:
                old = Path(tmp) / f"old-{n}"
                build_old(old, n, RandomEmbedder(model_name="bench-embedder"))
                row["old"] = measure(old, max(5, args.requests // 4 if n > 5000 else
                                              args.requests), "old")
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    base = rows[0]
    print(f"{'chunks':>7} {'open s':>7} {'/chat p50 ms':>12} {'p95 ms':>7} {'vs ' + str(base['chunks']):>7}"
          f" {'index MB':>8} {'RSS MB':>7} {'private':>7}" + (
              "   old engine: open s, p50 ms, index MB; new/old p50" if args.old_engine else ""))
    for r in rows:
        line = (f"{r['chunks']:>7} {r['open_s']:>7.3f} {r['p50_ms']:>12.1f} {r['p95_ms']:>7.1f} "
                f"{r['p50_ms'] / base['p50_ms']:>6.2f}x {r['rss_after_mb'] - r['rss_before_mb']:>8.1f}"
                f" {r['rss_after_mb']:>7.1f} {r['anon_after_mb']:>7.1f}")
        if "old" in r:
            o = r["old"]
            line += (f"   {o['open_s']:7.2f} {o['p50_ms']:8.1f} "
                     f"{o['rss_after_mb'] - o['rss_before_mb']:6.1f}; "
                     f"{r['p50_ms'] / o['p50_ms']:.3f}x")
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
