"""`textbook-chat feedback` (textbook_chat_cli/feedback.py) only reads: a --db that does not
exist is refused by name and never created, counts must be positive, a file that is not a
feedback database is a one-line error."""

from __future__ import annotations

import pytest

from functions.services.feedback import SQLiteFeedbackStore
from textbook_chat_cli.main import build_parser, main


@pytest.fixture(autouse=True)
def _local(monkeypatch, tmp_path):
    for name in ("DYNAMODB_TABLE", "TEXTBOOK_CHAT_DAYS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def test_a_db_that_does_not_exist_is_refused_and_not_created(tmp_path, capsys):
    typo = tmp_path / "typo" / "feedbak.sqlite3"
    assert main(["feedback", "--db", str(typo)]) == 2
    err = capsys.readouterr().err
    assert f"--db {typo}: no such file" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not typo.exists() and not typo.parent.exists()
    assert main(["feedback", "--db", str(tmp_path)]) == 2
    assert f"--db {tmp_path}: a folder" in capsys.readouterr().err


def test_no_feedback_file_here_yet_says_so_without_creating_it(tmp_path, capsys):
    assert main(["feedback"]) == 0
    assert ".textbook-chat/feedback.sqlite3 does not exist in this folder" in capsys.readouterr().out
    assert not (tmp_path / ".textbook-chat").exists()
    assert main(["feedback", "--format", "jsonl"]) == 0
    assert capsys.readouterr().out == ""  # machine-readable output stays empty


def test_a_file_that_is_not_a_feedback_db_is_a_one_line_error(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n" * 200)
    assert main(["feedback", "--db", str(notes)]) == 2
    err = capsys.readouterr().err
    assert f"--db {notes}: not a feedback file" in err and "Traceback" not in err
    assert notes.read_text() == "not a database\n" * 200  # untouched


@pytest.mark.parametrize("days", ["-3", "0", "two"])
def test_days_must_be_a_positive_whole_number(tmp_path, capsys, days):
    db = tmp_path / "fb.sqlite3"
    SQLiteFeedbackStore(db).db.close()
    with pytest.raises(SystemExit) as exit_:
        main(["feedback", "--db", str(db), "--days", days])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "argument --days:" in err and days in err


def test_days_from_the_environment_is_checked_too(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TEXTBOOK_CHAT_DAYS", "-1")
    with pytest.raises(SystemExit):
        main(["feedback"])
    assert "argument --days: -1 must be 1 or more" in capsys.readouterr().err
    monkeypatch.setenv("TEXTBOOK_CHAT_DAYS", "a week")  # other commands never read it
    assert build_parser().parse_args(["index", "docs"]).docs_dir.name == "docs"


def test_release_keep_must_be_positive(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["release", "switch", "book--1", "--keep", "0"])
    assert exit_.value.code == 2 and "argument --keep: 0 must be 1 or more" in capsys.readouterr().err


def test_ask_about_this_answers_are_not_listed_as_gaps_of_the_book(tmp_path, capsys):
    """Offline, every "Ask about this" answer is low confidence (it quotes the selection, it
    cannot rephrase it): not a question the book fails to answer. The report lists book
    questions only, and selection answers readers rated down apart, under their own heading."""
    from mangum import Mangum

    from functions.api.app import create_app
    from functions.api.deps import Deps
    from functions.settings import Settings
    from textbook_chat_cli.api import Question, ask

    db = tmp_path / "fb.sqlite3"
    store = SQLiteFeedbackStore(db)
    handler = Mangum(create_app(Deps(Settings(), env={}, feedback=store), "selection",
                                threaded=False), lifespan="off")
    for _ in range(2):  # the real selection route records its answers
        assert ask(Question("What does this mean?", "Jitter is the variation of the loop "
                            "period; it grows with load."), handler=handler) == 0
    [selected, _] = [r for r in store.answers(0)]
    assert selected["mode"] == "selection" and selected["low_confidence"] is True
    store.record_answer("c1", "How do I bake sourdough?", [], True, "chat")  # a real gap
    capsys.readouterr()
    assert main(["feedback", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "How do I bake sourdough?" in out and "What does this mean?" not in out
    assert main(["feedback", "--db", str(db), "--format", "jsonl"]) == 0
    assert "What does this mean?" not in capsys.readouterr().out
    store.save_feedback(selected["request_id"], "down", "still unclear")
    assert main(["feedback", "--db", str(db)]) == 0
    gaps, apart = capsys.readouterr().out.split("\n\n")
    assert "What does this mean?" not in gaps and "sourdough" in gaps
    assert apart.startswith("Rated down by readers who asked about a passage they selected")
    assert "   1x  What does this mean?  (rated down 1, last " in apart
    assert "comment: still unclear" in apart
