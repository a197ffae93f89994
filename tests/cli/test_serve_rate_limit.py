"""A local `serve` or `mcp` limits no one unless asked (`--rate-limit`, or RATE_LIMIT_PER_* set):
an author chatting all day with `serve --watch` or an assistant is never cut off; the Lambda
handlers keep the published limits (10 a minute, 200 a day per reader). A real `serve` and `mcp`
subprocess, and the real chat handler module in a fresh process, fed API Gateway v2 events."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.ports import free_port
from tests.shared import in_one_minute

ROOT = Path(__file__).resolve().parents[2]
RATING = {"request_id": "0" * 32, "rating": "up"}  # counted, then refused as unknown (422)


@pytest.fixture
def env(tmp_path):
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("OPENAI_", "QDRANT_", "AWS_", "DYNAMODB_", "RATE_LIMIT_",
                                  "TEXTBOOK_CHAT_"))}
    return {**clean, "PYTHONPATH": str(ROOT), "QDRANT_PATH": str(tmp_path / "qdrant")}


def _statuses(tmp_path: Path, env: dict, *flags: str, requests: int = 12) -> tuple[list[int], str]:
    """`serve` with flags: the statuses of `requests` ratings from one client, and its stderr
    (all within one calendar minute)."""
    return in_one_minute(lambda: _serve_statuses(tmp_path, env, flags, requests))


def _serve_statuses(tmp_path: Path, env: dict, flags: tuple, requests: int) -> tuple[list[int], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "textbook_chat_cli", "serve", "--port",
                             str(port), *flags], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(1200):  # ends when serve answers: 2 minutes at most
            try:
                httpx.get(base + "/health", timeout=2)
                break
            except httpx.HTTPError:
                assert proc.poll() is None, proc.stderr.read()
                time.sleep(0.1)
        statuses = [httpx.post(base + "/feedback", json=RATING, timeout=10).status_code
                    for _ in range(requests)]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    return statuses, err


@pytest.mark.slow  # a serve process and a Lambda handler process; the quick loop stays under 90 s (docs/development.md)
def test_local_serve_limits_no_one_unless_asked(tmp_path, env):
    statuses, err = _statuses(tmp_path, env)
    assert statuses == [422] * 12  # past the published 10 a minute, still answered
    assert "no per-reader rate limits (a local serve); --rate-limit applies" in err
    statuses, err = _statuses(tmp_path, env, "--rate-limit")
    assert statuses == [422] * 10 + [429] * 2
    assert "rate limits per reader: 10 a minute, 200 a day" in err
    statuses, err = _statuses(tmp_path, {**env, "RATE_LIMIT_PER_MINUTE": "3"}, requests=4)
    assert statuses == [422] * 3 + [429]  # a limit set by its variable is a limit asked for


def _mcp_outcomes(tmp_path: Path, env: dict, *flags: str, calls: int = 12) -> tuple[list, str]:
    """`mcp` with flags: what each of `calls` ask_book calls got (its error result's code: counted, then
    refused as an empty question unless over the limit), and its stderr (in one minute)."""
    return in_one_minute(lambda: _mcp_run(tmp_path, env, flags, calls))


def _mcp_run(tmp_path: Path, env: dict, flags: tuple, calls: int) -> tuple[list, str]:
    call = {"jsonrpc": "2.0", "method": "tools/call",
            "params": {"name": "ask_book", "arguments": {"question": ""}}}
    stdin = "".join(json.dumps({**call, "id": n}) + "\n" for n in range(calls))
    done = subprocess.run([sys.executable, "-m", "textbook_chat_cli", "mcp", *flags],
                          input=stdin, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == list(range(calls))
    assert all(r["result"]["isError"] for r in replies)  # a tool's error result, each
    return [r["result"]["structuredContent"]["error"]["code"] for r in replies], done.stderr


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_local_mcp_limits_no_one_unless_asked(tmp_path, env):
    outcomes, err = _mcp_outcomes(tmp_path, env)
    assert outcomes == ["empty_field"] * 12  # past the published 10 a minute, still answered
    assert "textbook-chat mcp: no per-reader rate limits (a local mcp); --rate-limit" in err
    outcomes, err = _mcp_outcomes(tmp_path, env, "--rate-limit")
    assert outcomes == ["empty_field"] * 10 + ["rate_limited"] * 2
    assert "textbook-chat mcp: rate limits per reader: 10 a minute, 200 a day" in err
    outcomes, _ = _mcp_outcomes(tmp_path, {**env, "TEXTBOOK_CHAT_RATE_LIMIT": "1"})
    assert outcomes == ["empty_field"] * 10 + ["rate_limited"] * 2  # the switch's variable
    outcomes, _ = _mcp_outcomes(tmp_path, {**env, "RATE_LIMIT_PER_MINUTE": "3"}, calls=4)
    assert outcomes == ["empty_field"] * 3 + ["rate_limited"]


LAMBDA = """
import json, sys
from functions.api.handlers.chat import handler
from tests.functions.events import http_api_v2
event = http_api_v2("/feedback", json.loads(sys.argv[1]))
print(json.dumps([handler(event, None)["statusCode"] for _ in range(11)]))
"""


def test_the_lambda_keeps_the_published_limits(tmp_path, env):
    def burst() -> list[int]:
        done = subprocess.run([sys.executable, "-c", LAMBDA, json.dumps(RATING)], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120, check=True)
        return json.loads(done.stdout.splitlines()[-1])
    assert in_one_minute(burst) == [422] * 10 + [429]
