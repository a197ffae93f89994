"""Every command that reads or writes an index (`index`, `serve`, `ask`, `eval`, `mcp`,
`release`, `demo`, `invoke chat`) says first which index and collection it uses (indexer/job.py
using_index), so an answer from another book's index shows at once; a Qdrant server is named by
its setting, never by its URL (which may hold credentials) or key. Real embedded engine, real
`serve` subprocesses, the Qdrant server stand-in (tests/functions/qdrant_rest.py); embeddings
from the fake OpenAI server over HTTP."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from contextlib import contextmanager
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
def book(tmp_path, monkeypatch, fake_openai_env):
    """A book folder with its own docs, the default QDRANT_PATH, the fake OpenAI server."""
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


def _ask(cwd: Path, *args: str, command: str = "ask", **env: str) -> subprocess.CompletedProcess:
    """`ask` in its own process, as an author runs it (the chat handler is built once per
    process, so an in-process call could answer from an earlier test's index)."""
    return subprocess.run([sys.executable, "-m", "textbook_chat_cli", command, *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_ask_says_which_index_answered_before_the_answer(book):
    assert main(["index", "docs"]) == 0
    done = _ask(book, "What does a spur gear have?")
    assert done.returncode == 0, done.stderr
    # which book, from the index's own record: the site folder's name and its docs folder
    assert done.stderr.splitlines()[0] == f"{EMBEDDED}, book {book.name}/docs"
    assert "#spur-gears" in done.stdout
    (book / "docusaurus.config.js").write_text("module.exports = {title: 'Gears and Gearing', "
                                               "baseUrl: '/gears/'};")
    assert main(["index", "docs"]) == 0
    done = _ask(book, "What does a spur gear have?")
    assert done.stderr.splitlines()[0] == f"{EMBEDDED}, book 'Gears and Gearing' ({book.name}/docs)"
    assert "bundled sample" not in done.stderr
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


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_invoke_chat_says_which_index_the_handler_reads(book):
    assert main(["index", "docs"]) == 0
    done = _ask(book, "chat", "--question", "What does a spur gear have?", command="invoke")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == f"{EMBEDDED}, book {book.name}/docs"
    assert "#spur-gears" in done.stdout
    done = _ask(book, "selection", "--question", "Why?", "--selected-text",
                "Spur gears have straight teeth.", command="invoke")
    assert done.returncode == 0 and "Using index" not in done.stderr  # a selection reads none


SERVER = "Using index: Qdrant server (QDRANT_URL), collection"


@contextmanager
def server_index():
    """The Qdrant server stand-in (tests/functions/qdrant_rest.py) over an in-memory engine:
    its URL with credentials in it, as a Qdrant Cloud URL may carry them."""
    from qdrant_client import QdrantClient

    from tests.functions.qdrant_rest import qdrant_rest

    engine = QdrantClient(":memory:")
    try:
        with qdrant_rest(engine) as (url, _seen):
            yield url.replace("http://", "http://reader:s3cret@")
    finally:
        engine.close()


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_ask_on_a_server_names_the_book_and_the_setting_not_the_url_or_key(book):
    with server_index() as url:
        env = {"QDRANT_URL": url, "QDRANT_API_KEY": "k3y-k3y", "QDRANT_COLLECTION": "my-book"}
        indexed = _ask(book, "docs", command="index", **env)
        assert indexed.returncode == 0, indexed.stderr
        done = _ask(book, "What does a spur gear have?", **env)
        assert done.returncode == 0, done.stderr
        assert done.stderr.splitlines()[0] == f"{SERVER} 'my-book', book {book.name}/docs"
        assert "#spur-gears" in done.stdout
    printed = indexed.stderr + done.stderr
    assert "s3cret" not in printed and "k3y-k3y" not in printed and url.split("@")[1] not in printed
    port = free_port()  # nothing listens: the answer is an error, the line still comes first
    done = _ask(book, "What is a gear?", QDRANT_URL=f"http://reader:s3cret@127.0.0.1:{port}",
                QDRANT_API_KEY="k3y-k3y", QDRANT_COLLECTION="my-book")
    assert done.returncode == 1, done.stdout
    err = done.stderr
    assert err.splitlines()[0] == f"{SERVER} 'my-book'"
    assert "s3cret" not in err and "k3y-k3y" not in err and str(port) not in err


def test_index_eval_and_mcp_name_the_book_a_server_s_collection_holds(book, capsys, monkeypatch,
                                                                      tmp_path):
    questions = tmp_path / "questions.jsonl"
    questions.write_text('{"id": "q1", "question": "What does a spur gear have?", "kind": '
                         '"fact", "expected_url": "/docs/gears#spur-gears", '
                         '"expected_page": "/docs/gears"}\n')
    (book / "docusaurus.config.js").write_text("module.exports = {title: 'Gears and Gearing'};")
    named = f"{SERVER} 'gears', book 'Gears and Gearing' ({book.name}/docs)"
    with server_index() as url:
        monkeypatch.setenv("QDRANT_URL", url)
        monkeypatch.setenv("QDRANT_API_KEY", "k3y-k3y")
        monkeypatch.setenv("QDRANT_COLLECTION", "gears")
        assert using_index(Settings.from_env(os.environ)) == f"{SERVER} 'gears'"  # none yet
        assert main(["index", "docs"]) == 0
        first = capsys.readouterr().err
        assert f"{SERVER} 'gears'" in first.splitlines()  # after the site's settings
        assert main(["index", "docs"]) == 0  # now the collection records which book it holds
        again = capsys.readouterr().err
        assert named in again.splitlines()
        main(["eval", str(questions)])  # its score is not the point here
        scored = capsys.readouterr().err
        assert scored.splitlines()[0] == named
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))  # the client hangs up
        assert main(["mcp"]) == 0
        served = capsys.readouterr().err
        assert served.splitlines()[0] == named
        monkeypatch.setenv("QDRANT_COLLECTION", "my-book")  # no such collection there
        assert using_index(Settings.from_env(os.environ)) == f"{SERVER} 'my-book'"
    printed = first + again + scored + served
    assert "s3cret" not in printed and "k3y-k3y" not in printed and url.split("@")[1] not in printed


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


@pytest.mark.slow  # two serve processes; the quick loop stays under 90 s (docs/development.md)
def test_serve_and_serve_watch_say_which_index_they_serve(book):
    err = _serve_stderr("--watch", "docs")
    assert EMBEDDED in err.splitlines() and "watching docs" in err
    err = _serve_stderr()
    assert err.splitlines()[0] == f"{EMBEDDED}, book {book.name}/docs" and "POST http://127.0.0.1" in err
    err = _serve_stderr(env={"QDRANT_URL": "https://reader:s3cret@db.invalid:6333",
                             "QDRANT_API_KEY": "k3y-k3y", "QDRANT_COLLECTION": "my-book"})
    assert err.splitlines()[0] == "Using index: Qdrant server (QDRANT_URL), collection 'my-book'"
    assert "s3cret" not in err and "k3y" not in err and "db.invalid" not in err


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_the_demo_says_which_index_and_never_a_server_s_url(book, capsys, monkeypatch):
    port = free_port()  # nothing listens: indexing stops at the server, after the line
    monkeypatch.setenv("QDRANT_URL", f"http://reader:s3cret@127.0.0.1:{port}")
    monkeypatch.setenv("QDRANT_API_KEY", "k3y-k3y")
    assert main(["demo", "--question", "What is a gear?"]) == 2
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert "s3cret" not in printed and "k3y-k3y" not in printed and str(port) not in printed
    first = captured.err.splitlines()[0]
    assert first == "Using index: Qdrant server (QDRANT_URL), collection 'textbook'"
    monkeypatch.delenv("QDRANT_URL")
    assert main(["demo", "--question", "What is jitter?"]) == 0
    assert capsys.readouterr().err.splitlines()[0] == EMBEDDED


def test_eval_says_which_index_it_scores(book, capsys, tmp_path):
    questions = tmp_path / "questions.jsonl"
    questions.write_text('{"id": "q1", "question": "What does a spur gear have?", "kind": '
                         '"fact", "expected_url": "/docs/gears#spur-gears", '
                         '"expected_page": "/docs/gears"}\n')
    assert main(["index", "docs"]) == 0
    capsys.readouterr()
    main(["eval", str(questions)])  # its score is not the point here
    assert capsys.readouterr().err.splitlines()[0] == f"{EMBEDDED}, book {book.name}/docs"
    assert main(["eval", str(questions), "--collection", "my-book"]) == 2  # no such index:
    err = capsys.readouterr().err  # its one line says where it looked instead
    assert "Using index" not in err and "collection 'my-book'" in err


def test_eval_on_a_server_names_the_setting_not_the_url_or_key(book, capsys, monkeypatch,
                                                                tmp_path):
    questions = tmp_path / "questions.jsonl"
    questions.write_text('{"id": "q1", "question": "What is a gear?", "kind": "fact", '
                         '"expected_url": "/docs/gears#spur-gears", "expected_page": "/docs/gears"}\n')
    port = free_port()  # nothing listens: the run fails, the line still comes first
    monkeypatch.setenv("QDRANT_URL", f"http://reader:s3cret@127.0.0.1:{port}")
    monkeypatch.setenv("QDRANT_API_KEY", "k3y-k3y")
    assert main(["eval", str(questions), "--collection", "my-book"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == "Using index: Qdrant server (QDRANT_URL), collection 'my-book'"
    assert "s3cret" not in err and "k3y-k3y" not in err and str(port) not in err


def test_release_says_which_collection_and_book_on_which_server(book, capsys, monkeypatch):
    server = f"{SERVER} 'gears'"
    with server_index() as url:
        monkeypatch.setenv("QDRANT_URL", url)
        monkeypatch.setenv("QDRANT_COLLECTION", "gears")
        assert main(["release", "stage", "docs"]) == 0
        staged = capsys.readouterr()
        assert staged.err.splitlines()[0] == server  # no release yet: no book to name
        assert main(["release", "switch", staged.out.split()[-1]]) == 0
        switched = capsys.readouterr()
        assert switched.err.splitlines()[0] == server and "Readers now see gears--" in switched.err
        assert main(["release", "status"]) == 0  # the alias's release records its book
        status = capsys.readouterr()
        assert status.err.splitlines()[0] == f"{server}, book {book.name}/docs"
    printed = "".join(c.out + c.err for c in (staged, switched, status))
    assert "s3cret" not in printed and url.split("@")[1] not in printed


def test_mcp_says_which_index_it_serves(book, capsys, monkeypatch):
    assert main(["index", "docs"]) == 0
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))  # the client hangs up
    assert main(["mcp"]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines()[0] == f"{EMBEDDED}, book {book.name}/docs" and out == ""  # stdout is the protocol's alone
    monkeypatch.setenv("QDRANT_URL", "https://reader:s3cret@db.invalid:6333")
    monkeypatch.setenv("QDRANT_COLLECTION", "my-book")
    assert main(["mcp"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[0] == "Using index: Qdrant server (QDRANT_URL), collection 'my-book'"
    assert "s3cret" not in err and "db.invalid" not in err
