"""`textbook-chat release` (textbook_chat_cli/release.py) against a Qdrant server that is not
there: one line naming QDRANT_URL, before any step runs."""

from __future__ import annotations

import pytest

from tests.ports import free_port
from textbook_chat_cli.main import main


@pytest.mark.parametrize("step", [["status"], ["rollback"], ["switch", "book--1"],
                                  ["discard", "book--1"]])
def test_release_with_a_server_that_is_not_there(step, monkeypatch, capsys):
    monkeypatch.setenv("QDRANT_URL", f"http://127.0.0.1:{free_port()}")  # nothing listens
    assert main(["release", *step]) == 2
    err = capsys.readouterr().err
    assert "Qdrant cannot be reached: check QDRANT_URL" in err and "Traceback" not in err
