"""`serve --watch`: the fingerprint, the locked store, the watcher thread, and a real server that
answers about a page right after the author saves it (local MiniLM, local Qdrant)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from indexer.watch import LockedStore, Watcher, fingerprint
from tests.ports import free_port
from tests.shared import eventually

ROOT = Path(__file__).resolve().parents[2]


def test_fingerprint_sees_edits_new_files_and_the_config(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n")
    config = tmp_path / "docusaurus.config.js"
    config.write_text("module.exports = {baseUrl: '/'};")
    before = fingerprint(docs, config)
    (docs / "a.md").write_text("# A\n\nmore\n")
    assert fingerprint(docs, config) != before
    before = fingerprint(docs, config)
    (docs / "_partial.mdx").write_text("shared\n")
    assert fingerprint(docs, config) != before
    before = fingerprint(docs, config)
    config.write_text("module.exports = {baseUrl: '/book/'};")
    assert fingerprint(docs, config) != before
    (docs / "notes.txt").write_text("not a doc")
    assert fingerprint(docs, config) == fingerprint(docs, config)


def test_locked_store_reads_generators_inside_its_lock():
    held = []

    class Store:
        def __init__(self):
            self.lock_owner = None

        def scroll(self):
            for i in range(3):
                held.append(locked._lock._is_owned())
                yield i

        name = "plain attribute"

    locked = LockedStore(Store())
    assert list(locked.scroll()) == [0, 1, 2]
    assert held == [True, True, True]
    assert locked.name == "plain attribute"


def test_watcher_syncs_once_per_settled_change_and_survives_failures(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n")
    calls, lines = [], []
    done = threading.Event()

    def sync():
        calls.append(time.monotonic())
        done.set()
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return "re-synced"

    watcher = Watcher(docs, sync, poll=0.05, say=lines.append)
    watcher.start()
    try:
        time.sleep(0.2)
        assert calls == []  # nothing changed yet
        (docs / "a.md").write_text("# A\n\nedited\n")
        assert done.wait(60)  # as soon as it syncs; a minute before calling it a failure
        done.clear()
        (docs / "b.md").write_text("# B\n")
        assert done.wait(60)
        time.sleep(0.3)
    finally:
        watcher.stop()
        watcher.join(5)
    assert len(calls) == 2
    assert lines[0] == "textbook-chat serve: re-synced"
    assert "re-sync failed, still serving the previous index: disk full" in lines[1]


def _port() -> int:
    return free_port(18400, 18499)


@pytest.mark.slow
def test_serve_watch_answers_about_a_page_saved_while_it_runs(tmp_path):
    site = tmp_path / "site"
    docs = site / "docs"
    docs.mkdir(parents=True)
    # a template literal: read by pattern here (no node_modules), and trailingSlash after it kept
    (site / "docusaurus.config.js").write_text(
        "const name = 'gears';\nmodule.exports = {baseUrl: `/${name}/`, trailingSlash: true};\n")
    page = docs / "gears.md"
    page.write_text("# Gears\n\n## Spur gears\n\nA spur gear has straight teeth cut parallel "
                    "to its axis; it transmits motion between parallel shafts.\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "QDRANT_URL", "DYNAMODB_TABLE", "QDRANT_COLLECTION")}
    env.update(PYTHONPATH=str(ROOT), QDRANT_PATH=str(tmp_path / "qdrant"), OMP_NUM_THREADS="1")
    port = _port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "textbook_chat_cli", "serve", "--port", str(port),
                             "--watch", str(docs), "--route-base-path", "guide"],
                            env=env, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []  # what serve says, as it says it
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()

    def health() -> dict:
        for _ in range(600):
            try:
                r = httpx.get(base + "/health", timeout=2)
                if r.status_code == 200:
                    return r.json()["index"]
            except httpx.HTTPError:
                pass
            if proc.poll() is not None:
                reader.join(10)
                pytest.fail("".join(lines))
            time.sleep(0.1)
        pytest.fail("serve --watch did not become ready")

    try:
        first = health()
        assert first["chunks"] >= 1 and first["synced_at"]
        # While serve holds the local index, `index` says what to do instead.
        blocked = subprocess.run([sys.executable, "-m", "textbook_chat_cli", "index", str(docs)],
                                 env=env, cwd=tmp_path, capture_output=True, text=True,
                                 timeout=120)
        assert blocked.returncode == 2 and "serve --watch" in blocked.stderr
        page.write_text(page.read_text() + "\n## Worm gears\n\nA worm gear meshes a screw-like "
                        "worm with a wheel; it gives a large speed reduction in one stage and "
                        "usually cannot be back-driven.\n")
        eventually(lambda: health()["chunks"] > first["chunks"], "the saved page re-indexed",
                   seconds=180)
        r = httpx.post(base + "/chat", json={"question": "Can a worm gear be back-driven?"},
                       timeout=60)
        assert r.status_code == 200
        # the config's baseUrl and trailingSlash, the flag's routeBasePath
        assert r.json()["citations"][0]["url"] == "/gears/guide/gears/#worm-gears"
        # A page saved with MDX a Docusaurus build would stop on: indexed, and named with its line
        before = health()["chunks"]
        (docs / "racks.mdx").write_text("# Racks\n\n## Rack and pinion\n\nA rack is a straight "
                                        "gear bar.\n\n<Unclosed attr={1\n")
        eventually(lambda: health()["chunks"] > before, "the saved .mdx page re-indexed",
                   seconds=180)
        # the count changes inside the sync; its summary line follows it
        eventually(lambda: "racks.mdx:7" in "".join(lines), "the sync's warning", seconds=60)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    reader.join(10)
    said = "".join(lines)
    assert "re-synced" in said
    assert ("warning: racks.mdx:7: MDX: this JSX tag (`<Unclosed attr={1`) is never closed, so "
            "Docusaurus cannot build the page") in said, said


def test_serve_says_when_there_is_no_index_yet(tmp_path, monkeypatch, capsys):
    from textbook_chat_cli.api import hint_missing_index as _hint_missing_index

    monkeypatch.delenv("QDRANT_URL", raising=False)
    monkeypatch.setenv("QDRANT_PATH", str(tmp_path / "qdrant"))
    monkeypatch.setenv("QDRANT_COLLECTION", "book")
    _hint_missing_index()
    err = capsys.readouterr().err
    assert "no index at" in err and "textbook-chat index DOCS_DIR" in err and "--watch" in err
    (tmp_path / "qdrant" / "edge" / "book").mkdir(parents=True)  # the engine's folder
    _hint_missing_index()
    assert capsys.readouterr().err == ""
