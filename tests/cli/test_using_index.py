"""`index`, `serve` and `ask` say first which index and collection they use (indexer/job.py
using_index), so an answer from another book's index shows at once; a Qdrant server is named by
its setting, never by its URL (which may hold credentials) or key. Real embedded engine, real
`serve` subprocesses; embeddings from the fake OpenAI server over HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from functions.settings import Settings
from indexer.job import using_index
from tests.ports import free_port
from textbook_chat_cli.main import main

ROOT = Path(__file__).resolve().parents[2]
PAGE = "# Gears\n\n## Spur gears\n\nA spur gear has straight teeth cut parallel to its axis.\n"
EMBEDDED = "Using index: embedded at .textbook-chat/qdrant, collection 'textbook'"


@pytest.fixture
def book(tmp_path, monkeypatch, fake_openai):
    """A book folder with its own docs, the default QDRANT_PATH, the fake OpenAI server."""
    for name in ("QDRANT_URL", "QDRANT_API_KEY", "QDRANT_PATH", "QDRANT_COLLECTION",
                 "DYNAMODB_TABLE", "EMBEDDING_PROVIDER", "LOG_LEVEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("CHAT_PROVIDER", "extractive")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "gears.md").write_text(PAGE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_line_names_the_path_as_typed_and_never_a_server_s_url_or_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert using_index(Settings()) == EMBEDDED
    inside = Settings(qdrant_path=str(tmp_path / "idx"), collection="my-book")
    assert using_index(inside) == "Using index: embedded at idx, collection 'my-book'"
    elsewhere = Settings(qdrant_path="/srv/books/qdrant")
    assert using_index(elsewhere) == "Using index: embedded at /srv/books/qdrant, collection 'textbook'"
    server = Settings(qdrant_url="https://reader:s3cret@abc.cloud.qdrant.io:6333/?api-key=k",
                      qdrant_api_key="k3y", collection="my-book")
    assert using_index(server) == "Using index: Qdrant server (QDRANT_URL), collection 'my-book'"


def test_index_says_which_index_it_writes(book, capsys, monkeypatch):
    assert main(["index", "docs"]) == 0
    assert EMBEDDED in capsys.readouterr().err.splitlines()
    monkeypatch.setenv("QDRANT_COLLECTION", "gears")
    assert main(["index", "docs"]) == 0
    assert "Using index: embedded at .textbook-chat/qdrant, collection 'gears'" in (
        capsys.readouterr().err.splitlines())
    assert main(["index", "docs", "--dry-run"]) == 0  # no index at all: nothing to name
    assert "Using index" not in capsys.readouterr().err


def _ask(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`ask` in its own process, as an author runs it (the chat handler is built once per
    process, so an in-process call could answer from an earlier test's index)."""
    return subprocess.run([sys.executable, "-m", "textbook_chat_cli", "ask", *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                          capture_output=True, text=True, timeout=120)


def test_ask_says_which_index_answered_before_the_answer(book):
    assert main(["index", "docs"]) == 0
    done = _ask(book, "What does a spur gear have?")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == EMBEDDED and "#spur-gears" in done.stdout
    # in another folder with no index, its one line says where it looked
    other = book / "other"
    other.mkdir()
    done = _ask(other, "What does a spur gear have?")
    assert done.returncode == 1
    [err] = done.stderr.splitlines()
    assert "no index at .textbook-chat/qdrant (QDRANT_PATH, relative to this folder) for the " \
           "collection 'textbook'" in err
    done = _ask(other, "Why?", "--selection", "Spur gears have straight teeth.")
    assert done.returncode == 0 and "Using index" not in done.stderr  # a selection reads none


def test_ask_on_a_server_names_the_setting_not_the_url_or_key(book):
    port = free_port()  # nothing listens: the answer is an error, the line still comes first
    done = _ask(book, "What is a gear?", QDRANT_URL=f"http://reader:s3cret@127.0.0.1:{port}",
                QDRANT_API_KEY="k3y-k3y", QDRANT_COLLECTION="my-book")
    assert done.returncode == 1, done.stdout
    err = done.stderr
    assert err.splitlines()[0] == "Using index: Qdrant server (QDRANT_URL), collection 'my-book'"
    assert "s3cret" not in err and "k3y-k3y" not in err and str(port) not in err


def _serve_stderr(*args: str, env: dict[str, str] | None = None) -> str:
    """Start `serve`, wait until it answers HTTP (any status), stop it: its stderr."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "textbook_chat_cli", "serve", "--port", str(port), *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **(env or {})})
    try:
        for _ in range(600):
            try:
                httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except httpx.HTTPError:
                if proc.poll() is not None:
                    break
                time.sleep(0.1)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    return err


def test_serve_and_serve_watch_say_which_index_they_serve(book):
    err = _serve_stderr("--watch", "docs")
    assert EMBEDDED in err.splitlines() and "watching docs" in err
    err = _serve_stderr()
    assert err.splitlines()[0] == EMBEDDED and "POST http://127.0.0.1" in err
    err = _serve_stderr(env={"QDRANT_URL": "https://reader:s3cret@db.invalid:6333",
                             "QDRANT_API_KEY": "k3y-k3y", "QDRANT_COLLECTION": "my-book"})
    assert err.splitlines()[0] == "Using index: Qdrant server (QDRANT_URL), collection 'my-book'"
    assert "s3cret" not in err and "k3y" not in err and "db.invalid" not in err
