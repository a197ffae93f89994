"""Bursts of readers against `textbook-chat serve`: what is answered, what is told busy, how long
each request took by the server's own clock against the request's deadline, and (with --dynamo)
what the day's budget still holds once nothing is in flight.

    python benchmarks/bench_burst.py [--bursts 3] [--readers 60] [--model-delay 3]
                                     [--dynamo --budget 40000] [--kill]

Indexes samples/textbook with the local model into a temporary folder, serves it with the fake
OpenAI server (tests/fakes) as the chat model, its answers delayed --model-delay seconds, and
sends --bursts bursts of --readers POST /chat at once (the sample's questions, in turn), each
burst after the last one's replies. The durations are serve's own `request` log lines (from
the request's arrival to its reply, the span the deadline bounds). --dynamo: the limits and the
budget in moto's DynamoDB (tests/fakes/aws.py); --kill: serve is killed (SIGKILL) in the middle
of the second burst and started again. Not a test: prints figures.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from functions.deadline import REQUEST_SECONDS  # noqa: E402
from functions.services.ratelimit import HOLD_SECONDS  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI, passage_responder  # noqa: E402
from tests.ports import free_port, wait_until_serving  # noqa: E402


def questions() -> list[str]:
    lines = (ROOT / "samples" / "textbook" / "questions.jsonl").read_text().splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()]


class Serve:
    """One `textbook-chat serve` process; its stderr lines kept (JSON log lines among them)."""

    def __init__(self, env: dict, cwd: Path, port: int):
        self.env, self.cwd, self.port = env, cwd, port
        self.lines: list[str] = []
        self.proc: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "textbook_chat_cli", "serve", "--port", str(self.port)],
            env=self.env, cwd=self.cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True)
        proc = self.proc
        threading.Thread(target=lambda: self.lines.extend(proc.stderr), daemon=True).start()
        wait_until_serving(self.base, 300, proc, said=lambda: "".join(self.lines)[-2000:])

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)

    def logged(self, since: int = 0) -> list[dict]:
        out = []
        for line in self.lines[since:]:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out


def burst(base: str, asked: list[str]) -> Counter:
    """POST /chat for each question at once; the (status, error code) of each reply."""
    got: Counter = Counter()
    lock = threading.Lock()

    def reader(question: str) -> None:
        try:
            r = httpx.post(base + "/chat", json={"question": question},
                           timeout=REQUEST_SECONDS + 120)
            code = (r.json().get("error") or {}).get("code") if r.status_code != 200 else None
            if r.status_code == 503 and not r.headers.get("retry-after"):
                code = f"{code} without Retry-After"
            outcome = (r.status_code, code)
        except (httpx.HTTPError, ValueError) as exc:
            outcome = (0, type(exc).__name__)
        with lock:
            got[outcome] += 1

    threads = [threading.Thread(target=reader, args=(q,)) for q in asked]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got


def spend_item(aws, table: str) -> dict:
    items = aws.client("dynamodb").scan(TableName=table)["Items"]
    item = next((i for i in items if i["pk"]["S"] == "spend"), {})
    return {k: int(float(v["N"])) for k, v in item.items() if "N" in v and k != "expires_at"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bursts", type=int, default=3)
    ap.add_argument("--readers", type=int, default=60)
    ap.add_argument("--model-delay", type=float, default=3.0)
    ap.add_argument("--dynamo", action="store_true", help="limits and budget in moto's DynamoDB")
    ap.add_argument("--budget", type=int, default=40_000, help="DAILY_TOKEN_BUDGET (0: none)")
    ap.add_argument("--kill", action="store_true", help="SIGKILL serve mid second burst")
    ap.add_argument("--port", type=int, default=0, help="serve's port (default: a free one)")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-burst-"))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "QDRANT_", "AWS_", "DYNAMODB_", "EMBEDDING_"))}
    env.update(PYTHONPATH=str(ROOT), QDRANT_PATH=str(work / "qdrant"), LOG_LEVEL="INFO",
               EMBEDDING_PROVIDER="local")
    sample = ROOT / "samples" / "textbook"
    subprocess.run([sys.executable, "-m", "textbook_chat_cli", "index", str(sample / "docs"),
                    "--site-dir", str(sample), "--json"], env=env, cwd=work, check=True,
                   capture_output=True)
    asked = questions()
    aws = table = None
    with FakeOpenAI(responder=passage_responder) as fake:
        fake.delay_next(args.model_delay, times=10**6, endpoint="chat")
        env.update(CHAT_PROVIDER="openai", OPENAI_API_KEY="sk-burst", OPENAI_BASE_URL=fake.base_url,
                   RATE_LIMIT_PER_MINUTE="0", RATE_LIMIT_PER_DAY="0",
                   DAILY_TOKEN_BUDGET=str(args.budget))
        if args.dynamo:
            from tests.fakes.aws import MotoServer, create_table

            aws = MotoServer().start()
            table = create_table(aws.endpoint)
            env.update(aws.env(DYNAMODB_TABLE=table))
        serve = Serve(env, work, args.port or free_port(19000, 19099))
        try:
            serve.start()
            httpx.post(serve.base + "/chat", json={"question": asked[0]}, timeout=120)  # warm
            since, rows = len(serve.lines), []
            for n in range(args.bursts):
                batch = [asked[(n * args.readers + i) % len(asked)] for i in range(args.readers)]
                killer = None
                if args.kill and n == 1:
                    killer = threading.Timer(REQUEST_SECONDS / 3, serve.kill)
                    killer.start()
                replies = burst(serve.base, batch)
                if killer is not None:
                    killer.join()
                    serve.start()
                logged = [e for e in serve.logged(since)
                          if e.get("msg") == "request" and e.get("route") == "chat"]
                since = len(serve.lines)
                answered = [e["ms"] / 1000 for e in logged if e["status"] == 200]
                rows.append((replies, answered))
                late = sum(s > REQUEST_SECONDS for s in answered)
                print(f"burst {n + 1}: replies {dict(replies)}; answered {len(answered)}, "
                      f"{late} past the {REQUEST_SECONDS:.0f} s deadline, longest "
                      f"{max(answered, default=0):.1f} s (serve's log)", flush=True)
            answered = [s for _, a in rows for s in a]
            busy = sum(r[(503, "busy")] for r, _ in rows)
            print(f"total: {args.bursts} bursts of {args.readers}: answered {len(answered)}, "
                  f"busy {busy}, past the deadline {sum(s > REQUEST_SECONDS for s in answered)}, "
                  f"longest answered {max(answered, default=0):.1f} s (deadline "
                  f"{REQUEST_SECONDS:.0f} s); cores {os.cpu_count()}, load "
                  f"{os.getloadavg()[0]:.1f}")
            failed = [e for e in serve.logged() if e.get("msg") == "settle failed"]
            print(f"'settle failed' lines: {len(failed)}")
            if aws is not None:
                print(f"the day's spend item now: {spend_item(aws, table)}")
                time.sleep(HOLD_SECONDS + 12)  # what a killed request reserved is over by now
                httpx.post(serve.base + "/chat", json={"question": asked[1]}, timeout=120)
                print(f"after {HOLD_SECONDS + 12} s and one more question: "
                      f"{spend_item(aws, table)}")
        finally:
            serve.stop()
            if aws is not None:
                aws.stop()


if __name__ == "__main__":
    main()
