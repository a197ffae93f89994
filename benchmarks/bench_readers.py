"""`ask` while `serve` holds the local index: from a copy (what textbook-chat does) against `ask`
alone, and against asking the running server over HTTP (the alternative it did not choose).

    python benchmarks/bench_readers.py [--docs samples/textbook/docs] [--site-dir samples/textbook]
                                       [--runs 5] [--question "..."]

Indexes DOCS with the configured embedder (default: the local model) into a temporary
QDRANT_PATH, then, in the same run: `textbook-chat ask` as a new process with nothing else
running (the baseline); `textbook-chat serve` started and asked once (it now holds the index);
`ask` again (it copies the index: indexer/local_index.py); POST /chat to the server; and the copy
alone, in-process. Prints medians and ratios; not a test.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from functions.settings import Settings  # noqa: E402
from indexer import local_index  # noqa: E402


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=Path, default=ROOT / "samples" / "textbook" / "docs")
    ap.add_argument("--site-dir", type=Path, default=ROOT / "samples" / "textbook")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--question", default="What does the derivative term of a PID controller do?")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-readers-"))
    env = {**os.environ, "QDRANT_PATH": str(work / "qdrant"), "PYTHONPATH": str(ROOT),
           "OMP_NUM_THREADS": "1"}
    for name in ("QDRANT_URL", "QDRANT_COLLECTION"):
        env.pop(name, None)
    cli = [sys.executable, "-m", "textbook_chat_cli"]
    subprocess.run([*cli, "index", str(args.docs), "--site-dir", str(args.site_dir), "--json"],
                   env=env, cwd=work, check=True, capture_output=True)

    def ask() -> float:
        t = time.perf_counter()
        out = subprocess.run([*cli, "ask", args.question], env=env, cwd=work,
                             capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(out.stderr)
        return time.perf_counter() - t

    settings = Settings.from_env(env)
    alone = [ask() for _ in range(args.runs)]
    port = _port()
    serve = subprocess.Popen([*cli, "serve", "--port", str(port)], env=env, cwd=work,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(base + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        assert local_index.held(settings), "serve does not hold the index"
        copied = [ask() for _ in range(args.runs)]
        served = []
        for _ in range(args.runs):
            t = time.perf_counter()
            httpx.post(base + "/chat", json={"question": args.question}, timeout=60)
            served.append(time.perf_counter() - t)
        copies = []
        for _ in range(args.runs):
            t = time.perf_counter()
            with local_index.readable(settings) as copy:
                copies.append(time.perf_counter() - t)
                size = sum(p.stat().st_blocks * 512 for p in Path(copy.qdrant_path).rglob("*")
                           if p.is_file())
    finally:
        serve.terminate()
        serve.wait(timeout=20)
    med = statistics.median
    print(f"{args.docs}: median of {args.runs}")
    print(f"  ask alone (new process, opens the index)     {med(alone):7.2f} s")
    print(f"  ask while serve holds it (from a copy)       {med(copied):7.2f} s   "
          f"ratio {med(copied) / med(alone):.2f}")
    print(f"  POST /chat to the running serve              {med(served):7.2f} s   "
          f"ratio {med(served) / med(alone):.2f}")
    print(f"  the copy alone: {med(copies) * 1000:.0f} ms, {size / 1e6:.1f} MB on disk")


if __name__ == "__main__":
    main()
