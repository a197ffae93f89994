"""A damaged or full embedded index is explained, never a crash: a file cut short is named with
the fix (`--recreate`), `index` rebuilds it instead of reporting it unchanged, and a disk too
full to write is refused before the engine's memory-mapped writes die of SIGBUS. Real embedded
engine; embeddings from the fake OpenAI server over HTTP; a real tiny filesystem (tmpfs) where
this machine lets the test mount one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from textbook_chat_cli.main import main

TEXT = "{topic} is explained here with enough words to make a real section of a chapter. " * 3
PAGES = {"gears.md": "Gears", "cams.md": "Cams", "belts.md": "Belts"}


@pytest.fixture
def book(tmp_path, monkeypatch, fake_openai_env):
    monkeypatch.setenv("QDRANT_PATH", str(tmp_path / "qdrant"))
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, topic in PAGES.items():
        (docs / name).write_text(f"# {topic}\n\n## About {topic}\n\n{TEXT.format(topic=topic)}\n")
    assert main(["index", "docs"]) == 0
    return tmp_path


def _ask(root: Path, question: str = "What are cams?") -> subprocess.CompletedProcess:
    """`ask` in its own process: the Lambda handler it runs keeps the index open until exit."""
    return subprocess.run([sys.executable, "-m", "textbook_chat_cli", "ask", question], cwd=root,
                          capture_output=True, text=True, timeout=600)


def _cut(root: Path, pattern: str) -> Path:
    """Truncate the collection's one file matching pattern (as a crash or a copy cut short would)."""
    [path] = (root / "qdrant" / "edge" / "textbook").glob(pattern)
    with open(path, "r+b") as fh:
        fh.truncate(4096)
    return path


@pytest.mark.parametrize("pattern", ["segments/*/vector_storage-dense/vectors/chunk_0.mmap",
                                     "segments/*/payload_storage/page_0.dat"])
@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_a_file_cut_short_is_named_and_index_rebuilds_it(book, capsys, pattern):
    cut = _cut(book, pattern)
    named = f"edge/textbook/{cut.relative_to(book / 'qdrant' / 'edge' / 'textbook').as_posix()}"
    err = _ask(book).stderr
    assert f"is damaged: its file {named} was cut short or removed" in err, err
    assert "run `textbook-chat index DOCS_DIR --recreate` to rebuild it from the docs" in err
    assert "Traceback" not in err

    assert main(["index", "docs", "--json"]) == 0  # repaired, not "3 unchanged"
    out, err = capsys.readouterr()
    assert f"is damaged: its file {named} was cut short" in err and "rebuilding it now" in err
    summary = json.loads(out)
    assert summary["unchanged"] == 0 and summary["embedded"] == summary["chunks"] > 0
    answered = _ask(book)
    assert answered.returncode == 0 and "About Cams" in answered.stdout, answered.stderr
    assert main(["index", "docs", "--json"]) == 0  # and the repaired index stays whole
    assert json.loads(capsys.readouterr().out)["unchanged"] == summary["chunks"]


def test_health_reports_a_damaged_index(book):
    from starlette.testclient import TestClient

    from functions.api.app import create_app
    from functions.api.deps import Deps
    from functions.search.store import QdrantStore
    from functions.settings import Settings
    from tests.fakes.feedback import MemoryFeedback

    settings = Settings.from_env(os.environ)
    _cut(book, "segments/*/vector_storage-dense/vectors/chunk_0.mmap")
    store = QdrantStore.open(settings)
    try:
        from functions.search.embeddings.factory import make_embedder

        deps = Deps(settings, env={}, search=store, embedder=make_embedder(settings),
                    chat_model=None, feedback=MemoryFeedback())
        r = TestClient(create_app(deps, "chat"), raise_server_exceptions=False).get("/health")
    finally:
        store.close()
    assert r.status_code == 503, r.text
    error = r.json()["error"]
    assert error["code"] == "index_unavailable"
    assert "is damaged: its file edge/textbook/segments/" in error["message"]
    assert "--recreate" in error["message"] and str(book) not in error["message"]


@contextmanager
def _tmpfs(tmp_path: Path, megabytes: int) -> Iterator[Path]:
    """A real filesystem of that size (tmpfs), unmounted after; the test is skipped where this
    machine does not let it mount one (not root)."""
    mount = tmp_path / f"tmpfs-{megabytes}m-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs",
                           str(mount)], capture_output=True, text=True)
    if made.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.fixture
def tiny_disk(tmp_path):
    """A real 40 MB filesystem: the engine's first 32 MB files do not fit beside the index."""
    with _tmpfs(tmp_path, 40) as mount:
        yield mount


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_a_full_disk_is_refused_with_one_line_not_a_bus_error(book, tiny_disk):
    env = {**os.environ, "QDRANT_PATH": str(tiny_disk / "qdrant")}
    runs = [subprocess.run([sys.executable, "-m", "textbook_chat_cli", *args], cwd=book, env=env,
                           capture_output=True, text=True, timeout=600)
            for args in (["index", "docs"], ["ask", "What are cams?"])]
    for run in runs:
        assert run.returncode in (1, 2), (run.returncode, run.stderr)  # -7 was SIGBUS
        assert "Traceback" not in run.stderr
    assert "The disk holding the local index at" in runs[0].stderr
    assert "is full" in runs[0].stderr and "Free some space on that disk" in runs[0].stderr


@pytest.fixture
def roomy_disk(tmp_path):
    """A real 200 MB filesystem the test fills later."""
    with _tmpfs(tmp_path, 200) as mount:
        yield mount


@pytest.mark.slow  # a serve --watch process, a sync after the disk fills
def test_serve_watch_keeps_serving_when_the_disk_fills(book, roomy_disk):
    import threading

    import httpx

    from tests.ports import free_port
    from tests.shared import eventually

    env = {**os.environ, "QDRANT_PATH": str(roomy_disk / "qdrant")}
    port = free_port(19100, 19199)
    proc = subprocess.Popen([sys.executable, "-m", "textbook_chat_cli", "serve", "--port",
                             str(port), "--watch", "docs"], env=env, cwd=book,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()

    def health() -> int:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).status_code
        except httpx.HTTPError:
            assert proc.poll() is None, "".join(lines)
            return 0

    try:
        eventually(lambda: health() == 200, "serve --watch ready", seconds=300)
        with open(roomy_disk / "filler", "wb") as filler:  # leave ~1 MB: under the 64 needed
            st = os.statvfs(roomy_disk)
            os.posix_fallocate(filler.fileno(), 0, st.f_bavail * st.f_frsize - 1024 * 1024)
        (book / "docs" / "gears.md").write_text("# Gears\n\n## Worm gears\n\n" + TEXT.format(
            topic="A worm gear"))
        eventually(lambda: "re-sync" in "".join(lines) or proc.poll() is not None,
                   "the re-sync after the save", seconds=300)
        assert proc.poll() is None, f"serve died ({proc.returncode}): {''.join(lines)}"
        said = "".join(lines)
        assert "still serving the previous index: The disk holding the local index" in said
        assert "is full" in said and "Free some space on that disk" in said
        assert proc.poll() is None and health() == 200  # the previous index still answers
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    reader.join(10)
