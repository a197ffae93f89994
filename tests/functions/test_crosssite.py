"""Requests another site could forge do no work: 403/415 before limits, budget and the model.

The model is a real OpenAIChat over the fake OpenAI server, so "no work" is counted, not assumed.
"""

from __future__ import annotations

import json

import pytest
from mangum import Mangum
from starlette.testclient import TestClient

from functions.api.app import create_app
from functions.services.openai_http import OpenAIChat, OpenAIHttp
from functions.services.ratelimit import MemorySpendCap
from tests.functions.events import function_url, http_api_v2
from tests.shared import limiter

ALLOWED, EVIL = "https://reader.example", "https://evil.example"
QUESTION = {"question": "How do I measure loop jitter?"}
SELECTION = {"question": "What is jitter?", "selected_text": "Jitter is the variation of the "
             "loop period. It adds noise to the control output."}
FORM = "question=How+do+I+measure+loop+jitter%3F"


@pytest.fixture
def paid(make_deps, book_settings, fake_openai):
    """Deps whose answers cost a model call on the fake server."""
    def make():
        deps = make_deps(
            settings=book_settings.with_(chat_provider="openai", openai_api_key="test-key",
                                         openai_base_url=fake_openai.base_url),
            chat_model=OpenAIChat(OpenAIHttp("test-key", fake_openai.base_url)),
            rate_limiter=limiter(10, 100), spend_cap=MemorySpendCap(10_000_000))
        return deps
    return make


def _no_work_done(deps, fake_openai) -> None:
    assert fake_openai.requests == []  # zero model calls
    assert deps.rate_limiter._counts == {}  # the reader's allowance is untouched
    assert deps.spend_cap._used == 0  # and so is the day's budget
    assert deps.feedback.answers == {}  # nothing was answered


FORGED = [  # (content-type, body, origin): what a page on another site can make a browser send
    ("text/plain", json.dumps(QUESTION), EVIL),
    ("text/plain;charset=UTF-8", json.dumps(QUESTION), None),
    ("application/x-www-form-urlencoded", FORM, EVIL),
    ("application/x-www-form-urlencoded", FORM, None),
    ("multipart/form-data; boundary=x", "--x\r\n\r\nq\r\n--x--", EVIL),
    ("application/json", json.dumps(QUESTION), EVIL),  # only after a preflight, which fails
    ("application/json", json.dumps(QUESTION), "null"),  # sandboxed iframe, file://
]


@pytest.mark.parametrize(("ctype", "body", "origin"), FORGED,
                         ids=[f"{c.split(';')[0]}-{o or 'no-origin'}" for c, _, o in FORGED])
@pytest.mark.parametrize("route", ["/chat", "/selection", "/feedback"])
def test_forged_requests_do_no_work_asgi(paid, fake_openai, route, ctype, body, origin):
    deps = paid()
    c = TestClient(create_app(deps, "all"), raise_server_exceptions=False)
    headers = {"content-type": ctype, **({"origin": origin} if origin else {})}
    r = c.post(route, content=body, headers=headers)
    expected = 403 if origin not in (None, ALLOWED) else 415
    assert r.status_code == expected, r.text
    assert r.json()["error"]["code"] == {403: "origin_not_allowed",
                                         415: "unsupported_media_type"}[expected]
    if expected == 403:  # the deployed API names its setting, never the sites it holds
        message = r.json()["error"]["message"]
        assert "ALLOWED_ORIGINS setting (deployed: its SSM parameter" in message, message
        assert ALLOWED not in message and "--cors-origin" not in message
    assert r.json()["request_id"] == r.headers["x-request-id"]
    assert "access-control-allow-origin" not in r.headers
    _no_work_done(deps, fake_openai)


def test_the_widget_and_curl_still_work(paid, fake_openai):
    deps = paid()
    c = TestClient(create_app(deps, "all"), raise_server_exceptions=False)
    pre = c.options("/chat", headers={"Origin": ALLOWED, "Access-Control-Request-Method": "POST",
                                      "Access-Control-Request-Headers": "content-type"})
    assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == ALLOWED
    r = c.post("/chat", json=QUESTION, headers={"Origin": ALLOWED})
    assert r.status_code == 200, r.text
    assert r.headers["access-control-allow-origin"] == ALLOWED
    assert len(fake_openai.chat_requests) == 1  # the guard passes real readers through
    rated = c.post("/feedback", json={"request_id": r.json()["request_id"], "rating": "up"},
                   headers={"Origin": ALLOWED, "content-type": "application/json; charset=utf-8"})
    assert rated.status_code == 200, rated.text
    curl = c.post("/selection", json=SELECTION)  # no Origin: server-to-server, curl
    assert curl.status_code == 200, curl.text
    assert len(fake_openai.chat_requests) == 2


def test_refused_preflight_is_json(paid):
    c = TestClient(create_app(paid(), "all"), raise_server_exceptions=False)
    r = c.options("/chat", headers={"Origin": EVIL, "Access-Control-Request-Method": "POST",
                                    "Access-Control-Request-Headers": "content-type"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "cors_refused"
    assert "access-control-allow-origin" not in r.headers
    assert "ALLOWED_ORIGINS setting" in r.json()["error"]["message"]
    # where the app names another fix (a local `serve`: its flag), both refusals name that one
    c = TestClient(create_app(paid(), "all", allowed_by="sites given with --cors-origin"),
                   raise_server_exceptions=False)
    r = c.options("/chat", headers={"Origin": EVIL, "Access-Control-Request-Method": "POST",
                                    "Access-Control-Request-Headers": "content-type"})
    assert r.json()["error"]["message"].endswith("only on sites given with --cors-origin.")
    r = c.post("/chat", json=QUESTION, headers={"Origin": EVIL})
    assert r.status_code == 403 and "ALLOWED_ORIGINS" not in r.json()["error"]["message"]


def test_without_allowed_origins_any_origin_may_post_json(make_deps, book_settings):
    deps = make_deps(settings=book_settings.with_(allowed_origins=()))
    c = TestClient(create_app(deps, "all"), raise_server_exceptions=False)
    assert c.post("/chat", json=QUESTION, headers={"Origin": EVIL}).status_code == 200
    # but never a body a form could send
    assert c.post("/chat", content=json.dumps(QUESTION),
                  headers={"content-type": "text/plain"}).status_code == 415


@pytest.mark.parametrize("make_event", [
    lambda path, body, headers: http_api_v2(path, body, headers=headers),
    lambda path, body, headers: function_url(path, body, headers=headers),
], ids=["http-api-v2", "function-url"])
def test_forged_requests_through_the_lambda_handlers(paid, fake_openai, make_event):
    deps = paid()
    chat = Mangum(create_app(deps, "chat", threaded=False), lifespan="off")
    selection = Mangum(create_app(deps, "selection", threaded=False), lifespan="off")
    for handler, path, body in ((chat, "/chat", QUESTION), (selection, "/selection", SELECTION),
                                (chat, "/feedback", {"request_id": "x", "rating": "up"})):
        text_plain = handler(make_event(path, json.dumps(body),
                                        {"content-type": "text/plain", "origin": EVIL}), None)
        form = handler(make_event(path, FORM, {"content-type":
                                               "application/x-www-form-urlencoded"}), None)
        assert (text_plain["statusCode"], form["statusCode"]) == (403, 415)
        for response in (text_plain, form):
            data = json.loads(response["body"])
            assert data["request_id"] == response["headers"]["x-request-id"]
    _no_work_done(deps, fake_openai)
    ok = chat(make_event("/chat", QUESTION, {"origin": ALLOWED}), None)
    assert ok["statusCode"] == 200 and ok["headers"]["access-control-allow-origin"] == ALLOWED
    assert len(fake_openai.chat_requests) == 1
