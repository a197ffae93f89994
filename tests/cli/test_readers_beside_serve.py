"""While `serve --watch` holds the local index, `ask` and `eval` answer (from a copy taken
between two syncs, indexer/local_index.py) and `index` names the one command that works. A real
`serve --watch` subprocess on the embedded engine; embeddings from the fake OpenAI server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from tests.ports import free_port
from tests.shared import eventually
from textbook_chat_cli.main import main

ROOT = Path(__file__).resolve().parents[2]
GEARS = ("# Gears\n\n## Spur gears\n\nA spur gear has straight teeth cut parallel to its axis; "
         "it transmits motion between parallel shafts.\n")
WORM = ("\n## Worm gears\n\nA worm gear meshes a screw-like worm with a wheel; it gives a large "
        "speed reduction in one stage and usually cannot be back-driven.\n")


@pytest.fixture
def serving(tmp_path, monkeypatch, fake_openai):
    site = tmp_path / "site"
    docs = site / "docs"
    docs.mkdir(parents=True)
    (site / "docusaurus.config.js").write_text("module.exports = {baseUrl: '/gears/'};\n")
    (docs / "gears.md").write_text(GEARS)
    env = {"QDRANT_PATH": str(tmp_path / "qdrant"), "OPENAI_API_KEY": "test-key",
           "OPENAI_BASE_URL": fake_openai.base_url, "CHAT_PROVIDER": "extractive"}
    for name in ("QDRANT_URL", "QDRANT_COLLECTION", "DYNAMODB_TABLE", "EMBEDDING_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "textbook_chat_cli", "serve", "--port", str(port), "--watch",
         str(docs)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})
    base = f"http://127.0.0.1:{port}"
    try:
        _health(proc, base)
        yield docs, base, proc
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _health(proc, base: str) -> dict:
    for _ in range(600):
        try:
            r = httpx.get(base + "/health", timeout=2)
            if r.status_code == 200:
                return r.json()["index"]
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            pytest.fail(proc.stderr.read())
        time.sleep(0.1)
    pytest.fail("serve --watch did not become ready")


def _copies() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("textbook-chat-read-*")}


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_ask_eval_and_index_while_serve_watch_holds_the_index(serving, tmp_path, capsys):
    docs, base, proc = serving
    before = _copies()
    assert main(["ask", "What does a spur gear transmit?"]) == 0
    out = capsys.readouterr()
    assert "/gears/docs/gears#spur-gears" in out.out and "in use" not in out.err
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({
        "id": "q1", "question": "What does a spur gear transmit?", "kind": "concept",
        "expected_url": "/gears/docs/gears#spur-gears", "expected_page": "/gears/docs/gears"}) + "\n")
    assert main(["eval", str(questions), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["hit_at_1"] == 1.0  # the retrieval figures: why eval reads the index itself
    # index: the one command that works (here: none, serve re-indexes on save)
    assert main(["index", str(docs)]) == 2
    err = capsys.readouterr().err
    assert f"is held by `textbook-chat serve --watch {docs}` (pid {proc.pid})" in err
    assert "there is nothing to run" in err
    other = tmp_path / "other"
    other.mkdir()
    (other / "cams.md").write_text("# Cams\n\n## Lobes\n\nA cam lobe lifts a follower.\n")
    assert main(["index", str(other)]) == 2
    err = capsys.readouterr().err
    assert f"Stop it (Ctrl+C in its terminal) and run `textbook-chat serve --watch {other}`" in err
    # a page saved while serving: the next ask reads the re-synced index
    first = _health(proc, base)["chunks"]
    (docs / "gears.md").write_text(GEARS + WORM)
    eventually(lambda: _health(proc, base)["chunks"] > first, "the saved page re-indexed",
               seconds=180)
    assert main(["ask", "Can a worm gear be back-driven?"]) == 0
    assert "/gears/docs/gears#worm-gears" in capsys.readouterr().out
    assert _copies() == before  # every copy deleted
    assert proc.poll() is None  # serve kept serving
    r = httpx.post(base + "/chat", json={"question": "Can a worm gear be back-driven?"}, timeout=60)
    assert r.status_code == 200 and "/gears/docs/gears#worm-gears" in r.text


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_mcp_over_stdio_reads_the_index_serve_watch_holds(serving, tmp_path):
    """`textbook-chat mcp` beside `serve --watch`: a reader's assistant searches the same book."""
    before = _copies()
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                    "name": "search_book", "arguments": {"query": "What does a spur gear transmit?"}}}]
    out = subprocess.run([sys.executable, "-m", "textbook_chat_cli", "mcp"], cwd=tmp_path,
                         input="".join(json.dumps(m) + "\n" for m in messages), text=True,
                         capture_output=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr
    replies = [json.loads(line) for line in out.stdout.splitlines()]
    sections = replies[1]["result"]["structuredContent"]["sections"]
    assert sections[0]["url"] == "/gears/docs/gears#spur-gears"  # not the page title alone
    assert "in use" not in out.stderr and _copies() == before  # the copy is deleted
