"""Reading QUESTIONS.jsonl: good files parse, bad ones name the line and the fix."""

from __future__ import annotations

import json

import pytest

from indexer.evaluate.questions import QuestionFileError, parse_questions, read_questions

GOOD = {
    "id": "q1",
    "question": "What does the derivative term do?",
    "expected_url": "/book/docs/pid#derivative",
    "expected_page": "/book/docs/pid",
    "kind": "concept",
}
NONE = {"id": "q2", "question": "How do I bake bread?", "expected_url": None,
        "expected_page": None, "kind": "unanswerable"}


def lines(*objs) -> list[str]:
    return [o if isinstance(o, str) else json.dumps(o) for o in objs]


def problems(*objs) -> list[str]:
    with pytest.raises(QuestionFileError) as err:
        parse_questions(lines(*objs), source="q.jsonl")
    return err.value.problems


def test_good_file_parses_with_lines_and_ignores_extra_fields():
    qs = parse_questions(lines(GOOD, "", {**NONE, "source": None, "heading": "x"}), "q.jsonl")
    assert [(q.id, q.line, q.kind, q.answerable) for q in qs] == [
        ("q1", 1, "concept", True),
        ("q2", 3, "unanswerable", False),
    ]
    assert qs[0].expected_url == "/book/docs/pid#derivative"
    assert qs[1].expected_url is None


def test_malformed_line_is_named():
    assert problems(GOOD, '{"id": "q9", "question": ') == [
        "q.jsonl:2: not valid JSON (Expecting value at column 26)"
    ]


def test_not_an_object():
    assert problems('["a", "b"]') == ["q.jsonl:1: expected a JSON object {...}, found list"]


def test_missing_field_is_named():
    bad = {k: v for k, v in GOOD.items() if k != "expected_page"}
    (msg,) = problems(NONE, bad)
    assert msg.startswith("q.jsonl:2: missing field(s) expected_page;")


def test_bad_kind_and_empty_question():
    found = problems({**GOOD, "kind": "no kind!", "question": "  "})
    assert "q.jsonl:1: 'question' must be a non-empty string" in found
    assert any(p.startswith("q.jsonl:1: kind 'no kind!' must be a short label") for p in found)
    assert any(p.startswith("q.jsonl:1: kind None must be") for p in problems({**GOOD, "kind": None}))


def test_any_kind_label_is_accepted_and_takes_its_base_rules():
    (q,) = parse_questions([json.dumps({**GOOD, "kind": "para-goal"})], "q.jsonl")
    assert q.kind == "para-goal" and q.answerable
    assert problems({**GOOD, "kind": "para-followup"}) == [
        "q.jsonl:1: a followup question needs the earlier turns in \"history\""]
    history = [{"role": "user", "content": "What is PID?"}]
    (q,) = parse_questions([json.dumps({**GOOD, "kind": "para-followup", "history": history})])
    assert q.history == ({"role": "user", "content": "What is PID?"},)


def test_answerable_needs_urls_and_unanswerable_needs_nulls():
    assert problems({**GOOD, "expected_url": None})[0].startswith(
        "q.jsonl:1: expected_url must be a URL path"
    )
    assert problems({**NONE, "expected_page": "/x"}) == [
        "q.jsonl:1: expected_page must be null for an unanswerable question"
    ]


def test_url_must_lie_on_the_expected_page():
    (msg,) = problems({**GOOD, "expected_page": "/book/docs/other"})
    assert msg.startswith("q.jsonl:1: expected_url '/book/docs/pid#derivative' is not on")


def test_duplicate_id():
    assert problems(GOOD, GOOD) == ["q.jsonl:2: id 'q1' is already used on line 1"]


def test_every_problem_is_listed_in_the_message():
    with pytest.raises(QuestionFileError) as err:
        parse_questions(lines("nope", GOOD, {"id": "x"}), source="q.jsonl")
    text = str(err.value)
    assert text.startswith("q.jsonl: 2 problem(s) in the question file:")
    assert "q.jsonl:1: not valid JSON" in text and "q.jsonl:3: missing field(s)" in text


def test_empty_file(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(QuestionFileError) as err:
        read_questions(path)
    assert err.value.problems == [
        f"{path}: the file has no questions; write one JSON object per line with "
        "id, question, expected_url, expected_page, kind"
    ]


def test_missing_and_non_utf8_files(tmp_path):
    with pytest.raises(QuestionFileError, match="no such file"):
        read_questions(tmp_path / "nope.jsonl")
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(json.dumps(GOOD).replace("derivative", "d\u00e9riv").encode("latin-1"))
    with pytest.raises(QuestionFileError, match="not UTF-8 text"):
        read_questions(path)
