"""A read-only or unusable QDRANT_PATH is a setup error: one clear line and exit 2 (not 1, which
means "some files failed"), never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from textbook_chat_cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def _docs(base: Path) -> Path:
    docs = base / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("## Setup\n\n" + "words about encoders and motors " * 20)
    return docs


def test_a_file_in_the_way_exits_2(tmp_path, capsys, monkeypatch):
    (tmp_path / "blocker").write_text("not a folder")
    monkeypatch.setenv("QDRANT_PATH", str(tmp_path / "blocker" / "qdrant"))
    assert main(["index", str(_docs(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert "QDRANT_PATH=" in err and "a file is in the way" in err and "Traceback" not in err


def test_a_read_only_index_folder_exits_2():
    base = Path(tempfile.mkdtemp(prefix="tc-ro-"))
    try:
        docs = _docs(base)
        index = base / "qdrant"
        index.mkdir()
        env = {**os.environ, "QDRANT_PATH": str(index), "PYTHONPATH": str(ROOT),
               "HOME": str(base), "OMP_NUM_THREADS": "1"}
        env.pop("OPENAI_API_KEY", None)
        command = [sys.executable, "-m", "textbook_chat_cli", "index", str(docs)]
        if os.geteuid() == 0:  # root writes anywhere: run as nobody, for whom the folder is read-only
            if not shutil.which("setpriv"):
                pytest.skip("running as root without setpriv")
            base.chmod(0o755)
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
        index.chmod(0o555)
        out = subprocess.run(command, env=env, cwd=base, capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 2, out.stderr
        assert "QDRANT_PATH=" in out.stderr and "read-only" in out.stderr
        assert "Traceback" not in out.stderr
    finally:
        shutil.rmtree(base, ignore_errors=True)
