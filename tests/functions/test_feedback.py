"""Answer records and feedback: the same tests over SQLite and DynamoDB (moto server)."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from functions.services.dynamo import DynamoClient, DynamoError
from functions.services.feedback import (
    RETENTION,
    DynamoFeedbackStore,
    SQLiteFeedbackStore,
    export_feedback,
    list_low_confidence,
    make_feedback_store,
)
from functions.settings import Settings
from tests.functions import test_ratelimit
from tests.functions.test_ratelimit import T0, Clock, aws_env, create_table, scan

dynamo_endpoint = test_ratelimit.dynamo_endpoint  # the moto server fixture

CITES = [{"n": 1, "title": "Encoders", "section_title": "Quadrature", "doc_path": "docs/enc.md",
          "url": "https://x.github.io/book/docs/encoders#quadrature", "score": 0.71,
          "snippet": "a long snippet the record does not need"}]


@pytest.fixture(params=["sqlite", "dynamo"])
def store(request, tmp_path):
    clock = Clock(T0)
    if request.param == "sqlite":
        s = SQLiteFeedbackStore(tmp_path / "fb.sqlite3", clock)
    else:
        endpoint = request.getfixturevalue("dynamo_endpoint")
        s = DynamoFeedbackStore(DynamoClient.from_env(aws_env(endpoint)),
                                create_table(endpoint), clock)
    return s, clock


def test_answer_then_feedback_round_trip(store):
    s, clock = store
    s.record_answer("req-1", "How do encoders count?", CITES, False, "chat")
    clock.now += 30
    assert s.save_feedback("req-1", "up", "Clear, thanks") is True
    [rec] = export_feedback(s, 3, now=clock.now)
    assert rec["request_id"] == "req-1" and rec["question"] == "How do encoders count?"
    assert rec["rating"] == "up" and rec["comment"] == "Clear, thanks"
    assert rec["citations"] == [{k: v for k, v in CITES[0].items() if k != "snippet"}]
    assert rec["low_confidence"] is False and rec["mode"] == "chat"
    assert rec["created_at"] == "2026-03-14T12:00:00+00:00"


def test_feedback_for_an_unknown_request_is_refused(store):
    s, _ = store
    assert s.save_feedback("never-answered", "down", None) is False
    assert export_feedback(s, 3, now=T0) == []


def test_feedback_can_change_its_mind_and_drop_the_comment(store):
    s, clock = store
    s.record_answer("r", "q?", [], True, "selection")
    s.save_feedback("r", "down", "wrong page")
    s.save_feedback("r", "up", None)
    [rec] = export_feedback(s, 3, now=clock.now)
    assert (rec["rating"], rec["comment"], rec["mode"]) == ("up", None, "selection")


def test_low_confidence_questions_are_grouped_for_the_author(store):
    s, clock = store
    s.record_answer("a", "What is a Kalman filter?", [], True, "chat")
    clock.now += 86_401  # the next day: exports span days
    s.record_answer("b", "what is a  kalman filter", [], True, "chat")
    s.record_answer("c", "How do encoders count?", CITES, False, "chat")
    s.record_answer("d", "Why is my PID unstable?", CITES, False, "chat")
    s.save_feedback("d", "down", "does not mention tuning")
    clock.now += 1
    s.record_answer("e", "Fine question", CITES, False, "chat")
    s.save_feedback("e", "up", None)
    gaps = list_low_confidence(s, days=3, now=clock.now)
    assert [(g["asked"], g["low_confidence"], g["rated_down"]) for g in gaps] == [(2, 2, 0),
                                                                                 (1, 0, 1)]
    assert gaps[0]["question"] == "what is a  kalman filter"  # the newest wording
    assert gaps[1]["comments"] == ["does not mention tuning"]
    assert [r["request_id"] for r in export_feedback(s, 3, rated_only=True, now=clock.now)] == [
        "e", "d"]
    assert len(export_feedback(s, days=1, now=clock.now)) == 4  # the first day is out


def test_long_texts_are_capped(store):
    s, clock = store
    s.record_answer("big", "x" * 100_000, [], True, "chat")
    s.save_feedback("big", "down", "y" * 100_000)
    [rec] = export_feedback(s, 3, now=clock.now)
    assert len(rec["question"]) == 2000 and len(rec["comment"]) == 2000


def test_dynamo_records_expire_after_90_days(dynamo_endpoint):
    table = create_table(dynamo_endpoint)
    s = DynamoFeedbackStore(DynamoClient.from_env(aws_env(dynamo_endpoint)), table, Clock(T0))
    s.record_answer("r1", "q", CITES, False, "chat")
    [item] = scan(dynamo_endpoint, table)
    assert int(item["expires_at"]["N"]) == T0 + RETENTION
    assert item["pk"]["S"] == "answer#r1" and item["day"]["S"] == "2026-03-14"


def test_sqlite_forgets_records_past_retention(tmp_path):
    clock = Clock(T0)
    SQLiteFeedbackStore(tmp_path / "f.db", clock).record_answer("old", "q", [], True, "chat")
    clock.now += RETENTION + 1
    s = SQLiteFeedbackStore(tmp_path / "f.db", clock)
    assert export_feedback(s, days=10_000, now=clock.now) == []
    assert sqlite3.connect(tmp_path / "f.db").execute("SELECT count(*) FROM answers").fetchone() == (0,)


def test_sqlite_store_survives_concurrent_writers(tmp_path):
    s = SQLiteFeedbackStore(tmp_path / "f.db")
    threads = [threading.Thread(target=lambda i=i: [
        s.record_answer(f"{i}-{j}", "q", [], False, "chat") for j in range(25)])
        for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(export_feedback(s)) == 200


def test_missing_table_is_a_clear_error(dynamo_endpoint):
    s = DynamoFeedbackStore(DynamoClient.from_env(aws_env(dynamo_endpoint)), "absent-table")
    with pytest.raises(DynamoError, match="does not exist"):
        s.record_answer("r", "q", [], False, "chat")


def test_make_feedback_store_picks_the_backend(tmp_path, dynamo_endpoint):
    local = make_feedback_store(Settings(), env={}, path=str(tmp_path / "x" / "fb.sqlite3"))
    assert isinstance(local, SQLiteFeedbackStore) and (tmp_path / "x" / "fb.sqlite3").exists()
    deployed = make_feedback_store(Settings(dynamodb_table="t"), env=aws_env(dynamo_endpoint))
    assert isinstance(deployed, DynamoFeedbackStore)


def test_feedback_command_lists_the_gaps(tmp_path, capsys, monkeypatch):
    from textbook_chat_cli.main import main

    for name in ("DYNAMODB_TABLE", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    db = tmp_path / "fb.sqlite3"
    s = SQLiteFeedbackStore(db)
    s.record_answer("a", "What is a Kalman filter?", [], True, "chat")
    s.record_answer("b", "How do encoders count?", CITES, False, "chat")
    s.save_feedback("b", "up", "great")
    assert main(["feedback", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "1x  What is a Kalman filter?" in out and "encoders" not in out
    assert main(["feedback", "--db", str(db), "--rated", "--format", "jsonl"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert '"comment": "great"' in line


def test_one_rating_per_answer_through_the_api_last_wins(store, make_deps):
    """Rated five times (ASGI and the Lambda handler): one rating is kept, the last one."""
    import json

    from mangum import Mangum
    from starlette.testclient import TestClient

    from functions.api.app import create_app
    from tests.functions.events import http_api_v2

    s, clock = store
    deps = make_deps(feedback=s)
    client = TestClient(create_app(deps, "all"))
    handler = Mangum(create_app(deps, "chat", threaded=False), lifespan="off")
    rid = client.post("/chat", json={"question": "How do I measure loop jitter?"}).json()[
        "request_id"]
    ratings = [("up", "great"), ("down", None), ("up", "x"), ("down", "wrong page")]
    for rating, comment in ratings:
        body = {"request_id": rid, "rating": rating, **({"comment": comment} if comment else {})}
        assert client.post("/feedback", json=body).status_code == 200
    last = handler(http_api_v2("/feedback", {"request_id": rid, "rating": "up"}), None)
    assert last["statusCode"] == 200 and json.loads(last["body"])["ok"] is True
    records = [r for r in export_feedback(s, 3, now=clock.now) if r["request_id"] == rid]
    assert [(r["rating"], r["comment"]) for r in records] == [("up", None)]
    if isinstance(s, DynamoFeedbackStore):  # one item, not one per rating
        items = scan(s.client.endpoint, s.table)
        assert [i["pk"]["S"] for i in items].count(f"answer#{rid}") == 1 and len(items) == 1
