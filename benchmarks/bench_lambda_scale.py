"""Does the keyless Lambda's `/chat` slow down as the book grows? 2,000 vs 20,000 chunks.

    python benchmarks/bench_lambda_scale.py --offline-zip ZIP --python python3.12
        [--sizes 2000,20000] [--questions 40] [--warmup 4]

The keyless deployment as Lambda runs it (the unzipped `chat.zip` of `serverless package
--param="answers=offline"`, see benchmarks/bench_cold_start.py; a Python that sees only the zip,
one warm container per book size) asks the same questions of two books made by
benchmarks/gen_corpus.py, chunked by the indexer: the first 2,000 of its chunks and all 20,000.
Each book is in Qdrant's own engine (qdrant-edge, the embedded default) served over Qdrant's
REST API on 127.0.0.1 (tests/functions/qdrant_rest.py), as a Qdrant server answers the deployed
function. A chunk's dense vector is the sum of the real MiniLM vectors of its words (the book's
made-up vocabulary: ~100 words, embedded once), so similar chunks are near, as in a real book,
without embedding 20,000 chunks; the questions are embedded by the zip's own model.

Questions alternate between the two sizes, so load drifts alike. Prints each size's /chat p50 and
p90 (the handler's time in the container, Lambda's Duration), the engine's own p50 per search
request, and the p50 ratio against the goal (20,000 within 1.3x of 2,000).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import gen_corpus  # noqa: E402

GOAL = 1.3
CHUNKS_PER_MB = 700  # gen_corpus's text, chunked by the indexer (18,594 chunks in 25.5 MB)
ORIGIN = "https://example.github.io"

# The warm container: reads one API Gateway event per line, answers it, prints its timing.
CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from functions.api.handlers import chat
class Context:
    function_name, memory_limit_in_mb, aws_request_id = "bench-scale", 1024, "bench"
    def get_remaining_time_in_millis(self):
        return 25_000
print(json.dumps({"ready": True}), flush=True)
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1000
for line in sys.stdin:
    event = json.loads(line)
    start, cpu0 = time.perf_counter(), cpu()
    r = chat.handler(event, Context())
    ms, cpu_ms = (time.perf_counter() - start) * 1000, cpu() - cpu0
    body = json.loads(r["body"])
    print(json.dumps({"ms": ms, "cpu_ms": cpu_ms, "status": r["statusCode"],
                      "answered": not body.get("low_confidence")}), flush=True)
"""


def book(out: Path, chunks: int, cache: Path | None = None):
    """gen_corpus's book, big enough for `chunks`, chunked by the indexer (in reading order);
    kept in `cache` (a pickle) for the next run when given: chunking 25 MB takes minutes."""
    import pickle

    if cache and cache.exists():
        kept = pickle.loads(cache.read_bytes())
        if len(kept) >= chunks:
            return kept
    from indexer.build import build_chunks
    from indexer.chunker import ChunkOptions
    from indexer.site_config import read_site_config

    gen_corpus.generate(out, chapters=100, megabytes=chunks / CHUNKS_PER_MB * 1.15)
    built = build_chunks(out, read_site_config(out), ChunkOptions())
    if len(built.chunks) < chunks:
        raise SystemExit(f"gen_corpus gave {len(built.chunks)} chunks, fewer than {chunks}: "
                         "raise CHUNKS_PER_MB's margin")
    if cache:
        cache.write_bytes(pickle.dumps(built.chunks))
    return built.chunks


def word_vectors(embedder) -> dict[str, list[float]]:
    """The real model's vector of each word gen_corpus writes with."""
    words = sorted(set(gen_corpus.TOPICS + gen_corpus.NOUNS + gen_corpus.VERBS
                       + gen_corpus.ADJECTIVES))
    return dict(zip(words, embedder.embed_array(words), strict=True))


def chunk_vector(text: str, vectors: dict, rng) -> list[float]:
    import numpy as np

    total = rng.standard_normal(384).astype(np.float32) * 0.05  # distinct chunks stay distinct
    for word in text.lower().split():
        vec = vectors.get(word.strip(".,!?:;`|()[]*#"))
        if vec is not None:
            total += vec
    return (total / np.linalg.norm(total)).tolist()


class WordSums:
    """The book's model: a text's vector is the sum of its words' real MiniLM vectors."""

    def __init__(self, vectors: dict, rng):
        self.vectors, self.rng = vectors, rng

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        return [chunk_vector(t, self.vectors, self.rng) for t in texts]


def fill(store, chunks, vectors) -> None:
    """The chunks written as `index` writes them: each with its blocks embedded
    (indexer.sync.block_vectors), so a question embeds only itself."""
    import numpy as np

    from functions.search.sparse import encode_document
    from functions.settings import LOCAL_EMBEDDING_MODEL
    from indexer.sync import block_vectors

    model = WordSums(vectors, np.random.default_rng(7))
    store.ensure_collection(LOCAL_EMBEDDING_MODEL, 384, recreate=True)
    for start in range(0, len(chunks), 1000):
        batch = chunks[start:start + 1000]
        blocks = block_vectors([c.payload() for c in batch], model)
        store.upsert([(c.point_id, {**c.payload(), **b}, model.embed_batch([c.embed_text])[0],
                       encode_document(c.embed_text)) for c, b in zip(batch, blocks, strict=True)])


def _has_blocks(store) -> bool:
    """Whether a kept index was written with its blocks embedded (else it is written again)."""
    from functions.search.contract import BLOCK_VECTORS

    first = next(iter(store.scroll_payloads([BLOCK_VECTORS])), (0, {}))[1]
    return BLOCK_VECTORS in first


def questions(n: int) -> list[str]:
    """Readers' questions in the book's words (gen_corpus's vocabulary), some with a word the
    book never uses (the path that searches the whole book for it)."""
    rng = random.Random(11)
    g = gen_corpus
    forms = ("How does the {a} {n} {v} the {m}?", "Why is the {n} {a} when it {v} the {m}?",
             "What {v} the {n} in {t}?", "How do I tune the {n} {m} for {t}?",
             "Does the {a} {n} work with a {odd}?")
    odd = ("flux capacitor", "Kubernetes", "hydroponics", "sourdough starter")
    return [rng.choice(forms).format(a=rng.choice(g.ADJECTIVES), n=rng.choice(g.NOUNS),
                                     m=rng.choice(g.NOUNS), v=rng.choice(g.VERBS),
                                     t=rng.choice(g.TOPICS), odd=rng.choice(odd))
            for _ in range(n)]


@contextmanager
def served(folder: Path, names: list[str]):
    """The engine's collections over Qdrant's REST API: what the query path asks of a server
    (the collection's info, the Query API), each search timed in the engine."""
    from functions.search.edge_store import EdgeStore, edge_request
    from functions.settings import Settings
    from tests.functions.qdrant_rest import qdrant_rest

    root = EdgeStore.open(Settings(qdrant_path=str(folder), collection=names[0]))
    stores = {n: root.collection_store(n) for n in names}
    engine_ms: dict[str, list[float]] = {n: [] for n in names}

    def info(name, _):
        store = stores[name]
        return {"status": "green", "points_count": store.count(),
                "config": {"metadata": store.collection_meta()}}

    def query(name, body):
        start = time.perf_counter()
        points = stores[name]._shard().query(edge_request(body))
        engine_ms[name].append((time.perf_counter() - start) * 1000)
        return {"points": [_point_json(p) for p in points]}

    c = r"/collections/(?P<name>[^/?]+)"
    try:
        with qdrant_rest(None, routes=[("GET", c, info), ("POST", c + r"/points/query", query)]
                         ) as (url, _):
            yield url, engine_ms
    finally:
        root.close()


def _point_json(p) -> dict:
    vector = {}
    for name, v in (p.vector or {}).items():
        vector[name] = ({"indices": list(v.indices), "values": list(v.values)}
                        if hasattr(v, "indices") else list(v))
    return {"id": p.id, "score": p.score, "payload": dict(p.payload or {}), "vector": vector}


class Container:
    """One warm Lambda container of the unzipped package, answering events sent one by one."""

    def __init__(self, python: str, task: str, env: dict, cwd: Path):
        self.proc = subprocess.Popen([python, "-I", "-S", "-B", "-c", CHILD, task], env=env,
                                     cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        self._read()

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("the Lambda package failed to start or answer (run it alone: "
                             "benchmarks/bench_cold_start.py --kinds chat-offline)")
        return json.loads(line)

    def ask(self, event: dict) -> dict:
        self.proc.stdin.write(json.dumps(event) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--offline-zip", required=True, help="chat.zip (or its unzipped folder)")
    ap.add_argument("--python", default=sys.executable, help="the functions' Python (3.12)")
    ap.add_argument("--sizes", default="2000,20000")
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--cache", type=Path, help="keep the chunked book in this file (and its index "
                                              "beside it, FILE.index) for the next run: making "
                                              "them takes minutes")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    from functions.search.embeddings.local import LocalEmbedder
    from textbook_chat_cli.events import api_gateway_event

    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        task = args.offline_zip
        if zipfile.is_zipfile(task):
            zipfile.ZipFile(task).extractall(tmp / "task")
            task = str(tmp / "task")
        t = time.perf_counter()
        chunks = book(tmp / "book", max(sizes), args.cache)
        vectors = word_vectors(LocalEmbedder())
        from functions.search.edge_store import EdgeStore
        from functions.settings import Settings

        names = [f"book-{n}" for n in sizes]
        index = args.cache.with_name(args.cache.name + ".index") if args.cache else tmp / "index"
        root = EdgeStore.open(Settings(qdrant_path=str(index), collection=names[0]))
        for name, n in zip(names, sizes, strict=True):
            store = root.collection_store(name)
            if not (store.exists() and store.count() == n and _has_blocks(store)):  # kept
                fill(store, chunks[:n], vectors)
        root.close()
        print(f"books of {', '.join(map(str, sizes))} chunks made and indexed in "
              f"{time.perf_counter() - t:.0f} s")
        url, engine_ms = stack.enter_context(served(index, names))
        base = {"PATH": "/usr/bin:/bin", "QDRANT_URL": url, "EMBEDDING_PROVIDER": "local",
                "CHAT_PROVIDER": "extractive", "ALLOWED_ORIGINS": ORIGIN,
                "RATE_LIMIT_PER_MINUTE": "1000000", "RATE_LIMIT_PER_DAY": "1000000",
                "AWS_LAMBDA_FUNCTION_NAME": "bench-scale", "AWS_REGION": "us-east-1"}
        containers = {}
        for name in names:
            (tmp / name).mkdir()
            containers[name] = Container(args.python, task, {**base, "QDRANT_COLLECTION": name},
                                         tmp / name)  # its local answer records
            stack.callback(containers[name].close)
        asked = questions(args.warmup + args.questions)
        events = [api_gateway_event("/chat", {"question": q}, headers={"origin": ORIGIN})
                  for q in asked]
        times: dict[str, list[float]] = {n: [] for n in names}
        cpu: dict[str, list[float]] = {n: [] for n in names}
        answered: dict[str, int] = dict.fromkeys(names, 0)
        for i, event in enumerate(events):
            if i == args.warmup:
                for ms in engine_ms.values():
                    ms.clear()
            order = names if i % 2 == 0 else names[::-1]  # neither size always goes first
            for name in order:
                r = containers[name].ask(event)
                if r["status"] != 200:
                    raise SystemExit(f"{name}: /chat answered {r['status']}")
                if i >= args.warmup:
                    times[name].append(r["ms"])
                    cpu[name].append(r["cpu_ms"])
                    answered[name] += r["answered"]
    p50 = {n: statistics.median(v) for n, v in times.items()}
    cpu50 = {n: statistics.median(v) for n, v in cpu.items()}
    print(f"keyless /chat, warm containers of the zip (python via {args.python}), "
          f"{args.questions} questions each, alternating; load average {os.getloadavg()[0]:.1f}")
    for name, n in zip(names, sizes, strict=True):
        v = times[name]
        print(f"  {n:>6} chunks: /chat p50 {p50[name]:6.0f} ms, p90 "
              f"{statistics.quantiles(v, n=10)[-1]:6.0f} ms, CPU p50 {cpu50[name]:5.0f} ms; "
              f"engine p50 {statistics.median(engine_ms[name]):5.1f} ms per search "
              f"({len(engine_ms[name])} searches); {answered[name]} answered, "
              f"{len(v) - answered[name]} refused")
    ratio = p50[names[-1]] / p50[names[0]]
    print(f"  p50 {sizes[-1]:,} / {sizes[0]:,}: x{ratio:.2f}, CPU p50 "
          f"x{cpu50[names[-1]] / cpu50[names[0]]:.2f} (goal <= {GOAL}: "
          f"{'ok' if ratio <= GOAL else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
