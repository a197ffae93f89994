"""One deadline per request, from its arrival to its reply: the limits' DynamoDB calls, the
search, the model and the answer record all spend from it, and it ends before Lambda stops the
function. The real app under Mangum fed API Gateway events with a Lambda context, moto's
DynamoDB made slow, the fake OpenAI server made to hang."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from mangum import Mangum

from functions.api.app import create_app
from functions.api.deps import Deps
from functions.deadline import LAMBDA_MARGIN, REQUEST_SECONDS, request_seconds
from functions.search.qdrant_http import QdrantHttp
from functions.services.dynamo import DynamoClient
from functions.services.openai_http import OpenAIChat, OpenAIHttp
from functions.services.ratelimit import DynamoSpendCap, Reservation
from tests.fakes.aws import MotoServer, create_table
from tests.fakes.embedder import ContentEmbedder
from tests.functions.conftest import DIM
from tests.functions.events import LambdaContext, http_api_v2
from tests.ports import POLL_SECONDS
from tests.shared import eventually, stopwatch

QUESTION = {"question": "How do I measure loop jitter?"}


@pytest.fixture(scope="module")
def aws():
    pytest.importorskip("flask", reason="moto's server needs moto[server] (flask)")
    with MotoServer() as server:
        yield server


def _chat_function(aws, settings, store, llm, **given):
    table = create_table(aws.endpoint)
    deps = Deps(settings.with_(dynamodb_table=table, chat_provider="openai",
                               openai_api_key="sk-deadline"),
                env=aws.env(), search=store, embedder=ContentEmbedder(DIM), chat_model=llm,
                **given)
    return Mangum(create_app(deps, "chat", threaded=False), lifespan="off"), table


def test_the_deadline_is_shorter_than_the_function_s_time():
    assert REQUEST_SECONDS + LAMBDA_MARGIN <= 25  # serverless.yml: timeout 25
    assert request_seconds(LambdaContext(25)) == REQUEST_SECONDS
    assert request_seconds(LambdaContext(6)) == pytest.approx(6 - LAMBDA_MARGIN, abs=0.05)
    assert request_seconds(None) == REQUEST_SECONDS  # serve, ask: no Lambda context


@pytest.mark.slow  # ~6 s: it waits for the deadline on purpose; the quick loop stays under 90 s (docs/development.md)
def test_slow_dynamodb_and_a_hung_model_still_reply_before_the_function_is_stopped(
        aws, book_settings, book_store, fake_openai):
    """DynamoDB at 1.2 s a call (two limit counters, the reservation, its settling, the answer
    record) and a model that never replies, in a function with 8 s to live: the reader gets a
    reply, not Lambda's timeout: the offline answer (the model gave none in time) or busy."""
    fake_openai.delay_next(120, times=5, endpoint="chat")
    llm = OpenAIChat(OpenAIHttp("sk-deadline", fake_openai.base_url))
    handler, _ = _chat_function(aws, book_settings, book_store, llm)
    aws.slow(1.2, target="DynamoDB_")
    try:
        with stopwatch() as took:
            response = handler(http_api_v2("/chat", QUESTION), LambdaContext(8.0))
    finally:
        aws.clear()
    body = json.loads(response["body"])
    assert response["statusCode"] in (200, 503), body
    assert body.get("mode") == "offline-fallback" or body["error"]["code"] == "busy"
    # the deadline (what Lambda leaves less LAMBDA_MARGIN), not Lambda, ended it: on a quiet
    # machine with more than a second of the function's 8 s to spare
    assert took.within(waits=8.0 - LAMBDA_MARGIN, work=0.15), took


def test_a_request_that_waited_past_its_deadline_does_no_work(aws, book_settings, book_store,
                                                               fake_openai):
    """A function with almost no time left answers 503 busy at once: no DynamoDB call, no model."""
    llm = OpenAIChat(OpenAIHttp("sk-deadline", fake_openai.base_url))
    handler, _ = _chat_function(aws, book_settings, book_store, llm)
    eventually(aws.quiet, "the calls a test before gave up on, answered")  # not this one's
    calls = len(aws.calls)
    response = handler(http_api_v2("/chat", QUESTION), LambdaContext(LAMBDA_MARGIN + 0.01))
    assert response["statusCode"] == 503
    assert json.loads(response["body"])["error"]["code"] == "busy"
    assert int(response["headers"]["retry-after"]) >= 1
    assert len(aws.calls) == calls and not fake_openai.chat_requests


def test_a_reservation_in_flight_is_busy_not_the_day_s_budget(aws, book_settings, book_store,
                                                               fake_openai):
    """Another container's answer is under way with most of the day's budget reserved: the next
    reader is asked to come back in seconds (503 busy), not told the budget is gone for hours.
    When it settles, the reader is answered; when the day is really spent, 429 daily_budget."""
    llm = OpenAIChat(OpenAIHttp("sk-deadline", fake_openai.base_url))
    budget = 10_000
    handler, table = _chat_function(aws, book_settings.with_(daily_token_budget=budget),
                                    book_store, llm)
    other = DynamoSpendCap(DynamoClient.from_env(aws.env()), table, budget)
    elsewhere = other.reserve(budget - 2000)  # an answer in flight elsewhere
    assert isinstance(elsewhere, Reservation), elsewhere
    response = handler(http_api_v2("/chat", QUESTION), LambdaContext())
    body = json.loads(response["body"])
    assert response["statusCode"] == 503 and body["error"]["code"] == "busy", body
    assert 1 <= int(response["headers"]["retry-after"]) <= 30
    other.settle(elsewhere, 500)  # it used 500 tokens
    response = handler(http_api_v2("/chat", QUESTION), LambdaContext())
    assert response["statusCode"] == 200, response["body"]
    elsewhere = other.reserve(budget - 2000)
    assert isinstance(elsewhere, Reservation), elsewhere
    other.settle(elsewhere, budget - 2000)  # now the day is spent
    response = handler(http_api_v2("/chat", QUESTION), LambdaContext())
    body = json.loads(response["body"])
    assert response["statusCode"] == 429 and body["error"]["code"] == "daily_budget", body
    # when it answers again: the day's end (UTC), in hours or, late in the day, minutes
    assert re.search(r"answer again in about \d+ (hours|minutes|seconds)\.$",
                     body["error"]["message"]), body


class _NotJson(BaseHTTPRequestHandler):
    """A proxy's error page where Qdrant should be: 200, text/html."""

    def _answer(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        out = b"<html><body>Gateway maintenance</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


def test_a_reply_from_qdrant_that_is_not_json_is_a_503(make_deps):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotJson)
    threading.Thread(target=server.serve_forever, args=(POLL_SECONDS,), daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}"
        handler = Mangum(create_app(make_deps(search=QdrantHttp(url, "book")), "chat",
                                    threaded=False), lifespan="off")
        for event in (http_api_v2("/chat", QUESTION), http_api_v2("/health", None, "GET")):
            response = handler(event, LambdaContext())
            body = json.loads(response["body"])
            assert response["statusCode"] == 503, body
            assert body["error"]["code"] == "index_unavailable"
            assert "QDRANT_URL" in body["error"]["message"] and url not in response["body"]
    finally:
        server.shutdown()


def test_a_command_at_a_terminal_is_never_busy_however_slow_the_machine():
    """`ask`, `demo` and `eval` run unhurried: a request deadline that has already passed (a
    loaded machine) bounds nothing there, where a served request stops with Busy."""
    from functions.deadline import (
        REWRITE_SECONDS,
        current_deadline,
        on_time,
        time_left,
        unhurried,
        within,
    )
    from functions.errors import Busy

    with within(0.0):
        with pytest.raises(Busy):
            on_time()
    with unhurried(), within(0.0), within(REWRITE_SECONDS):
        on_time()  # no Busy
        assert current_deadline() is None and time_left(4.0) == 4.0
    with within(0.0):  # and it ends with its block
        with pytest.raises(Busy):
            on_time()
