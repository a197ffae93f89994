"""No-op re-sync of an already indexed 5 MB textbook (local Qdrant), and a one-file edit.

    python benchmarks/bench_sync.py [--chapters 100] [--megabytes 5]

The first (full) index uses a zero-cost hashing embedder so the benchmark measures the sync
itself, not the model. Then, in the same process: a no-op re-sync (target < 3 s here), the same
re-sync with the per-file source-hash shortcut disabled (every file re-parsed and re-chunked,
the baseline), and a sync after editing one file. Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.gen_corpus import generate  # noqa: E402
from functions.settings import Settings  # noqa: E402
from functions.store import QdrantStore  # noqa: E402
from indexer.chunker import ChunkOptions  # noqa: E402
from indexer.model import SiteSettings  # noqa: E402
from indexer.sync import build_chunks, sync_chunks, sync_docs  # noqa: E402


class HashEmbedder:
    """Zero-cost deterministic vectors: the benchmark is about syncing, not embedding."""

    model_name = "bench-hash"
    dimension = 8

    def embed_batch(self, texts):
        out = []
        for t in texts:
            d = hashlib.blake2b(t.encode(), digest_size=8).digest()
            out.append([(b - 127.5) / 127.5 + 1e-3 for b in d])
        return out


def timed(label: str, fn):
    t0, c0 = time.perf_counter(), time.process_time()
    result = fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"{label:<44} {wall:7.2f} s wall  {cpu:7.2f} s cpu   {result.as_dict()}")
    return wall


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chapters", type=int, default=100)
    ap.add_argument("--megabytes", type=float, default=5.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = generate(root, args.chapters, args.megabytes)
        docs = root / "docs"
        size = sum(f.stat().st_size for f in files) / 1e6
        print(f"corpus: {len(files)} files, {size:.2f} MB")
        site, options = SiteSettings(base_url="/book/"), ChunkOptions()
        store = QdrantStore(QdrantStore.open(Settings(qdrant_path=str(root / "q"))).client, "bench")
        emb = HashEmbedder()
        timed("first index (hash embedder)", lambda: sync_docs(docs, site, options, store, emb))
        noop = timed("no-op re-sync", lambda: sync_docs(docs, site, options, store, emb))
        full = timed(
            "no-op re-sync, every file re-parsed (baseline)",
            lambda: sync_chunks(build_chunks(docs, site, options), store, emb),
        )
        target = files[len(files) // 2]
        target.write_text(target.read_text() + "\n## Added section\n\nA new paragraph of text.\n")
        timed("re-sync after editing one file", lambda: sync_docs(docs, site, options, store, emb))
        print(f"no-op re-sync: {noop:.2f} s (target < 3 s); {full / noop:.1f}x faster than re-parsing")
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
