"""`textbook-chat eval` (textbook_chat_cli/evaluate.py) where there is no index: it names the
folder it looked in, as `ask` does, and opens nothing."""

from __future__ import annotations

import json

import pytest

from textbook_chat_cli.main import main

QUESTION = {"id": "q1", "question": "What is loop jitter?", "kind": "concept",
            "expected_url": "/docs/intro#jitter", "expected_page": "/docs/intro"}


def test_eval_without_an_index_names_the_folder_it_looked_in(tmp_path, monkeypatch, capsys):
    for name in ("QDRANT_URL", "QDRANT_PATH", "QDRANT_COLLECTION", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps(QUESTION) + "\n")
    assert main(["eval", str(questions)]) == 2
    err = capsys.readouterr().err
    assert "textbook-chat eval: there is no index at .textbook-chat/qdrant (QDRANT_PATH" in err
    assert "collection 'textbook'" in err and "Traceback" not in err
    assert main(["eval", str(questions), "--collection", "my-book"]) == 2
    assert "collection 'my-book'" in capsys.readouterr().err
    assert not (tmp_path / ".textbook-chat").exists()


@pytest.mark.slow
def test_eval_of_another_book_s_questions_shows_both_urls(tmp_path, monkeypatch, capsys):
    for name in ("QDRANT_URL", "QDRANT_COLLECTION", "OPENAI_API_KEY", "DYNAMODB_TABLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("QDRANT_PATH", str(tmp_path / "qdrant"))
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "kites.md").write_text("# Kites\n\n## Flying\n\nA kite flies on a string in the wind.\n")
    assert main(["index", "docs"]) == 0
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps(QUESTION) + "\n")
    capsys.readouterr()
    assert main(["eval", str(questions)]) == 1
    err = capsys.readouterr().err
    assert ("none of the questions' sections is in the collection 'textbook': they are at URLs "
            "like /docs/intro#jitter, the index holds URLs like /docs/kites") in err
    assert "QDRANT_COLLECTION=" in err and "--site-dir" in err
