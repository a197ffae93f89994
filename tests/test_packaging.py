"""The built wheel holds every package and the shipped tokenizer file (not only an editable install)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_has_every_subpackage_and_the_tokenizer(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path), str(REPO)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # Our own packaging says nothing a newcomer would have to read (e.g. deprecated license).
    assert "Warning" not in done.stdout + done.stderr, (done.stdout + done.stderr)[-2000:]
    wheel = next(tmp_path.glob("textbook_chat-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "functions/api/handlers/chat.py",
        "functions/api/handlers/selection.py",
        "functions/search/embeddings/local.py",
        "functions/data/cl100k_base.tiktoken",
        "functions/data/answer_policy.json",
        "indexer/evaluate/runner.py",
        "textbook_chat_cli/main.py",
        "textbook_chat_cli/evaluate.py",
    ):
        assert needed in names, f"{needed} missing from {wheel.name}"
    assert not any(n.startswith(("tests/", "benchmarks/", "samples/")) for n in names)
