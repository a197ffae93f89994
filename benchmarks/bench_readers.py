"""`ask` while `serve` holds the local index: asked of the running serve (what textbook-chat
does), against `ask` alone (a new process that opens the index and loads the model), POST /chat
to the serve directly, and the private copy `ask --explain` still reads from.

    python benchmarks/bench_readers.py [--docs samples/textbook/docs] [--site-dir samples/textbook]
                                       [--runs 5] [--question "..."] [--follow-up]
    python benchmarks/bench_readers.py --generate 2000 --follow-up --runs 9

Indexes DOCS (or a book of about CHUNKS chunks from benchmarks/gen_corpus.py) with the
configured embedder (default: the local model) into a temporary QDRANT_PATH, printing the
index's time per 1,000 chunks; then, in the same run: `textbook-chat ask` as a new process with
nothing else running (the baseline); `textbook-chat serve` started and asked once (it now holds
the index); `ask` again (it asks the serve); POST /chat to the serve; and the copy alone,
in-process. --follow-up asks with `--history` (one earlier turn). Prints p50s and ratios; not a
test.
"""

from __future__ import annotations

import argparse
import json
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
    ap.add_argument("--question", default=None)
    ap.add_argument("--generate", type=int, metavar="CHUNKS",
                    help="index a gen_corpus book of about CHUNKS chunks instead of --docs")
    ap.add_argument("--follow-up", action="store_true", help="ask with --history (one turn)")
    ap.add_argument("--reuse", type=Path, metavar="WORK",
                    help="the folder of an earlier run (its book and index): no indexing")
    args = ap.parse_args()
    work = args.reuse or Path(tempfile.mkdtemp(prefix="bench-readers-"))
    if args.reuse:
        args.docs = work / "book" / "docs" if (work / "book").is_dir() else args.docs
    elif args.generate:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import gen_corpus

        gen_corpus.generate(work / "book", chapters=30, megabytes=args.generate / 700)
        args.docs, args.site_dir = work / "book" / "docs", None
    args.question = args.question or (
        "What does the controller gain limit?" if args.generate or args.reuse
        else "What does the derivative term of a PID controller do?")
    history = work / "history.json"
    if args.follow_up:  # an earlier exchange the question follows
        history.write_text(json.dumps([
            {"role": "user", "content": "How does the encoder estimate the wheel pose?"},
            {"role": "assistant", "content": "It counts the motor's turns [1]."}]))
    env = {**os.environ, "QDRANT_PATH": str(work / "qdrant"), "PYTHONPATH": str(ROOT),
           "OMP_NUM_THREADS": "1"}
    for name in ("QDRANT_URL", "QDRANT_COLLECTION"):
        env.pop(name, None)
    cli = [sys.executable, "-m", "textbook_chat_cli"]
    site = ["--site-dir", str(args.site_dir)] if args.site_dir and not args.reuse else []
    if not args.reuse:
        done = subprocess.run([*cli, "index", str(args.docs), *site], env=env, cwd=work,
                              check=True, capture_output=True, text=True)
        print(next((ln for ln in done.stderr.splitlines() if "per 1,000 chunks" in ln), ""), flush=True)
    follow = ["--history", str(history)] if args.follow_up else []
    body = {"question": args.question}
    if args.follow_up:
        body["history"] = json.loads(history.read_text())

    def ask(expect: str = "") -> float:
        saved = history.read_text() if args.follow_up else ""
        t = time.perf_counter()
        out = subprocess.run([*cli, "ask", args.question, *follow], env=env, cwd=work,
                             capture_output=True, text=True)
        took = time.perf_counter() - t
        if args.follow_up:
            history.write_text(saved)  # every run the same follow-up
        if out.returncode or expect not in out.stderr:
            raise SystemExit(out.stderr)
        return took

    settings = Settings.from_env(env)
    alone = [ask() for _ in range(min(args.runs, 3))]  # seconds each: a baseline, not the figure
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
        httpx.post(base + "/chat", json=body, timeout=120)  # its first answer loads the model
        asked = [ask("Answered by the `textbook-chat serve`") for _ in range(args.runs)]
        served = []
        for _ in range(args.runs):
            t = time.perf_counter()
            httpx.post(base + "/chat", json=body, timeout=120)
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
    print(f"{args.docs}: p50 of {args.runs}{', a follow-up (--history)' if args.follow_up else ''}"
          f" at load {os.getloadavg()[0]:.1f}")
    print(f"  ask alone (new process, opens the index)     {med(alone):7.2f} s")
    print(f"  ask while serve runs (asks the serve)        {med(asked):7.2f} s   "
          f"ratio {med(asked) / med(alone):.2f}   (p90 {sorted(asked)[int(0.9 * (len(asked) - 1))]:.2f} s)")
    print(f"  POST /chat to the running serve              {med(served):7.2f} s   "
          f"ratio {med(served) / med(alone):.2f}")
    print(f"  the copy alone: {med(copies) * 1000:.0f} ms, {size / 1e6:.1f} MB on disk")


if __name__ == "__main__":
    main()
