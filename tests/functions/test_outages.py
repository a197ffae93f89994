"""Each backing service fails on its own terms: a DynamoDB outage is the readers' limits or the
feedback being unavailable, never "the search index"; GET /health names every service the
routes need and is 503 when one is down; no table name, region or endpoint reaches a reader.
The real Lambda app under Mangum, fed API Gateway events, over moto's DynamoDB with faults."""

from __future__ import annotations

import io
import json
import logging

import pytest
from mangum import Mangum

from functions.api.app import create_app
from functions.api.deps import Deps
from functions.api.http_errors import _LOG, _JsonFormatter
from tests.fakes.aws import MotoServer, create_table
from tests.fakes.embedder import ContentEmbedder
from tests.functions.conftest import DIM
from tests.functions.events import http_api_v2

pytest.importorskip("flask", reason="moto's server needs moto[server] (flask)")
QUESTION = {"question": "How do I measure loop jitter?"}


@pytest.fixture(scope="module")
def aws():
    with MotoServer() as server:
        yield server


@pytest.fixture
def deployed(aws, book_settings, book_store):
    """A chat function as deployed: limits and answer records in a DynamoDB table."""
    def make(table: str | None = None):
        table = table or create_table(aws.endpoint)
        deps = Deps(book_settings.with_(dynamodb_table=table), env=aws.env(), search=book_store,
                    embedder=ContentEmbedder(DIM), chat_model=None)
        handler = Mangum(create_app(deps, "chat", threaded=False), lifespan="off")

        def call(path: str, body: dict | None = None, method: str = "POST") -> tuple[int, dict, dict]:
            r = handler(http_api_v2(path, body, method), None)
            return r["statusCode"], json.loads(r["body"]), r["headers"]
        call.table = table
        return call
    yield make
    aws.clear()


def _public(body: dict, table: str, aws: MotoServer) -> None:
    text = json.dumps(body)
    for hidden in (table, aws.region, aws.endpoint, "127.0.0.1", "DynamoDB", "Traceback"):
        assert hidden not in text, (hidden, text)


def test_health_lists_every_service_the_routes_need(deployed):
    call = deployed()
    status, body, _ = call("/health", method="GET")
    assert status == 200, body
    assert body["services"] == {"index": "ok", "limits": "ok", "feedback": "ok"}
    assert body["index"]["chunks"] > 0


def test_dynamodb_down_is_the_limits_and_the_feedback_not_the_index(deployed, aws):
    call = deployed()
    aws.fail_next(error="InternalServerError", status=500, times=1000, target="DynamoDB_")
    status, body, headers = call("/chat", QUESTION)
    assert status == 503 and body["error"]["code"] == "limits_unavailable", body
    assert "index" not in body["error"]["message"] and "try again" in body["error"]["message"]
    assert int(headers["retry-after"]) >= 1
    _public(body, call.table, aws)
    status, body, _ = call("/health", method="GET")
    assert status == 503 and body["error"]["code"] == "limits_unavailable"
    assert body["services"] == {"index": "ok", "limits": "limits_unavailable",
                                "feedback": "feedback_unavailable"}
    _public(body, call.table, aws)
    aws.clear()  # DynamoDB is back: so is every route, in the same container
    assert call("/chat", QUESTION)[0] == 200
    assert call("/health", method="GET")[0] == 200


def test_feedback_that_cannot_be_saved_says_so(deployed, aws):
    call = deployed()
    status, answer, _ = call("/chat", QUESTION)
    assert status == 200
    aws.fail_next(error="InternalServerError", status=500, times=3, match=b"answer#")
    status, body, _ = call("/feedback", {"request_id": answer["request_id"], "rating": "up"})
    assert status == 503 and body["error"]["code"] == "feedback_unavailable", body
    assert "rating" in body["error"]["message"]
    _public(body, call.table, aws)
    assert call("/feedback", {"request_id": answer["request_id"], "rating": "up"})[0] == 200


def test_a_missing_table_shows_no_name_region_or_endpoint(deployed, aws):
    """The reader learns what is unavailable; the operator's log line says why."""
    call = deployed(table="textbook-chat-prod-table-gone")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_JsonFormatter())
    _LOG.addHandler(handler)
    try:
        status, body, _ = call("/chat", QUESTION)
    finally:
        _LOG.removeHandler(handler)
    assert status == 503 and body["error"]["code"] == "limits_unavailable"
    _public(body, call.table, aws)
    [error] = [json.loads(line) for line in stream.getvalue().splitlines()
               if json.loads(line)["msg"] == "error"]
    assert error["request_id"] == body["request_id"] and error["code"] == "limits_unavailable"
    assert "textbook-chat-prod-table-gone" in error["error"] and "does not exist" in error["error"]
    status, body, _ = call("/feedback", {"request_id": "a" * 32, "rating": "up"})
    assert status == 503 and body["error"]["code"] == "limits_unavailable"
    _public(body, call.table, aws)


def test_a_throttled_call_is_retried_and_the_reader_never_knows(deployed, aws):
    call = deployed()
    aws.fail_next(times=2, target="DynamoDB_20120810.UpdateItem")  # HTTP 400 ThrottlingException
    assert call("/chat", QUESTION)[0] == 200
    assert aws.pending() == 0
