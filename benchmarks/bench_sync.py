"""No-op re-sync of an already indexed 5 MB textbook (embedded engine), and a one-file edit.

    python benchmarks/bench_sync.py [--chapters 100] [--megabytes 5] [--runs 5]

The first (full) index uses a zero-cost random embedder (tests/fakes, named as the local model so
the real command accepts the collection): the benchmark measures the sync itself, not the model. Then,
in the same process: a no-op re-sync, the same re-sync with the per-file source-hash shortcut
disabled (every file re-parsed and re-chunked, the baseline), and a sync after editing one file.
Last, the no-op re-sync as a whole command (`textbook-chat index DOCS --json` in a new
interpreter, target <= 0.5 s), beside the bare interpreter start of the same run. Prints
figures; not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.gen_corpus import generate  # noqa: E402
from functions.search.store import QdrantStore  # noqa: E402
from functions.settings import LOCAL_EMBEDDING_MODEL, Settings  # noqa: E402
from indexer.build import build_chunks  # noqa: E402
from indexer.chunker import ChunkOptions  # noqa: E402
from indexer.job import index_docs, resolve_job  # noqa: E402
from indexer.model import SiteSettings  # noqa: E402
from indexer.sync import sync_chunks, sync_docs  # noqa: E402
from tests.fakes.embedder import RandomEmbedder  # noqa: E402


def command_noop(docs: Path, qdrant: Path, runs: int) -> None:
    """The no-op re-sync as the author runs it, against a bare interpreter start."""
    settings = Settings(qdrant_path=str(qdrant))
    index_docs(resolve_job(docs), settings, embedder=RandomEmbedder(model_name=LOCAL_EMBEDDING_MODEL), say=lambda _: None)
    env = {**os.environ, "QDRANT_PATH": str(qdrant), "PYTHONPATH": str(ROOT),
           "OMP_NUM_THREADS": "1"}
    for name in ("OPENAI_API_KEY", "QDRANT_URL", "QDRANT_COLLECTION", "EMBEDDING_PROVIDER"):
        env.pop(name, None)

    def run(argv) -> tuple[float, float, str]:
        """wall and CPU (user + system) seconds of one command, its stdout."""
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        out = subprocess.run(argv, env=env, cwd=qdrant.parent, capture_output=True, text=True,
                             check=False)
        wall = time.perf_counter() - t
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        if out.returncode:
            raise SystemExit(f"{argv} failed:\n{out.stderr}")
        return wall, now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime, out.stdout

    index = [sys.executable, "-m", "textbook_chat_cli", "index", str(docs), "--json"]
    bare, cmd, cpu = [], [], []
    for _ in range(runs):
        bare.append(run([sys.executable, "-c", "pass"])[0])
        wall, used, out = run(index)
        cmd.append(wall)
        cpu.append(used)
    summary = json.loads(out)
    assert summary["embedded"] == 0 and summary["deleted"] == 0, summary
    b, c = statistics.median(bare), statistics.median(cmd)
    print(f"no-op re-sync as a command (median of {runs}): {c:.2f} s wall, "
          f"{statistics.median(cpu):.2f} s CPU (target <= 0.5 s); bare interpreter {b:.2f} s, "
          f"so {c - b:.2f} s is textbook-chat ({c / b:.1f}x the bare start); "
          f"load average {os.getloadavg()[0]:.1f}; {summary}")


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
    ap.add_argument("--runs", type=int, default=5, help="runs of the command (median)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = generate(root, args.chapters, args.megabytes)
        docs = root / "docs"
        size = sum(f.stat().st_size for f in files) / 1e6
        print(f"corpus: {len(files)} files, {size:.2f} MB")
        site, options = SiteSettings(base_url="/book/"), ChunkOptions()
        store = QdrantStore.open(Settings(qdrant_path=str(root / "q"), collection="bench"))
        emb = RandomEmbedder(model_name=LOCAL_EMBEDDING_MODEL)
        timed("first index (random embedder)", lambda: sync_docs(docs, site, options, store, emb))
        noop = timed("no-op re-sync", lambda: sync_docs(docs, site, options, store, emb))
        full = timed(
            "no-op re-sync, every file re-parsed (baseline)",
            lambda: sync_chunks(build_chunks(docs, site, options), store, emb),
        )
        target = files[len(files) // 2]
        target.write_text(target.read_text() + "\n## Added section\n\nA new paragraph of text.\n")
        timed("re-sync after editing one file", lambda: sync_docs(docs, site, options, store, emb))
        print(f"no-op re-sync: {noop:.2f} s in the process; {full / noop:.1f}x faster than re-parsing")
        store.close()
        command_noop(docs, root / "q-command", args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
