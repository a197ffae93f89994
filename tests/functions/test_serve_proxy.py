"""`serve` believes X-Forwarded-For only with --trust-proxy: a client cannot rotate the header
to escape the per-IP rate limit (a real `textbook-chat serve` process, real HTTP)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.ports import free_port
from tests.shared import in_one_minute

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    return free_port(18150, 18199)


def _codes(tmp_path, *flags: str) -> list[int]:
    """Four ratings from four forwarded addresses, in one calendar minute (RATE_LIMIT_PER_MINUTE=2)."""
    return in_one_minute(lambda: _serve_codes(tmp_path, flags))


def _serve_codes(tmp_path, flags: tuple) -> list[int]:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RATE_LIMIT_PER_MINUTE": "2",
           "QDRANT_PATH": str(tmp_path / "q"), "LOG_LEVEL": "WARNING"}
    for name in ("OPENAI_API_KEY", "DYNAMODB_TABLE", "ALLOWED_ORIGINS",
                 "TEXTBOOK_CHAT_TRUST_PROXY", "FORWARDED_ALLOW_IPS"):
        env.pop(name, None)
    proc = subprocess.Popen([sys.executable, "-m", "textbook_chat_cli", "serve", "--port", str(port),
                             *flags], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(1200):  # ends when serve listens: 2 minutes at most
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("serve did not start")
        # /feedback: the rate limit is counted first; an unknown answer then gets a 422
        return [httpx.post(f"http://127.0.0.1:{port}/feedback",
                           json={"request_id": "nope", "rating": "up"},
                           headers={"X-Forwarded-For": f"198.51.100.{i}"}, timeout=10).status_code
                for i in range(4)]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_forwarded_for_is_ignored_by_default(tmp_path):
    assert _codes(tmp_path) == [422, 422, 429, 429]


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_trust_proxy_takes_the_readers_ip_from_the_proxy(tmp_path):
    assert _codes(tmp_path, "--trust-proxy") == [422, 422, 422, 422]
