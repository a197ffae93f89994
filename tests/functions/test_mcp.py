"""The MCP server through the chat function's Mangum handler, fed API Gateway v2 events: a client's
whole session (initialize, tools/list, both tools), bad messages, /chat's limits and origins.
Every URL a tool returns must be one the tiny book serves (tests/functions/book.py ALL_URLS)."""

from __future__ import annotations

import json

import pytest
from mangum import Mangum

from functions.api import mcp
from functions.api.app import create_app
from functions.services.ratelimit import MemoryRateLimiter
from tests.functions.book import ALL_URLS
from tests.functions.events import http_api_v2

HEADERS = {"accept": "application/json, text/event-stream"}


class LambdaSession:
    """An MCP client over the deployed transport: each message one POST /mcp event."""

    def __init__(self, handler, source_ip: str = "203.0.113.7", origin: str | None = None):
        self.handler, self.ip, self.origin = handler, source_ip, origin
        self.version: str | None = None
        self.next_id = 0

    def post(self, body, headers: dict | None = None) -> dict:
        extra = {**HEADERS, **({"mcp-protocol-version": self.version} if self.version else {}),
                 **(headers or {})}
        return self.handler(http_api_v2("/mcp", body, source_ip=self.ip, origin=self.origin,
                                         headers=extra), None)

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method,
                   **({"params": params} if params is not None else {})}
        response = self.post(message)
        assert response["statusCode"] == 200, response
        assert response["headers"]["content-type"] == "application/json"
        reply = json.loads(response["body"])
        assert reply["jsonrpc"] == "2.0" and reply["id"] == self.next_id
        return reply

    def initialize(self, version: str = "2025-11-25") -> dict:
        reply = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                            "clientInfo": {"name": "test", "version": "1"}})
        self.version = reply["result"]["protocolVersion"]
        note = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert note["statusCode"] == 202 and not note["body"]
        return reply["result"]

    def call(self, name: str, arguments: dict) -> dict:
        return self.request("tools/call", {"name": name, "arguments": arguments})


@pytest.fixture
def session(make_deps):
    def make(**given) -> LambdaSession:
        deps = make_deps(**given)
        client = LambdaSession(Mangum(create_app(deps, "chat", threaded=False), lifespan="off"))
        client.deps = deps
        return client
    return make


def urls_in(result: dict) -> list[str]:
    fields = result["structuredContent"]
    return ([s["url"] for s in fields.get("sections", [])]
            + [c["url"] for c in fields.get("citations", [])]
            + [r["url"] for r in fields.get("related_topics") or []])


def test_a_whole_session_initialize_list_search_and_ask(session):
    client = session()
    init = client.initialize()
    assert init["protocolVersion"] == "2025-11-25"
    assert init["capabilities"] == {"tools": {"listChanged": False}}
    assert init["serverInfo"]["name"] == "textbook-chat" and "cite" in init["instructions"]

    tools = client.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == ["search_book", "ask_book"]
    assert all("Cite the `url`" in t["description"] for t in tools)
    assert tools[0]["inputSchema"]["required"] == ["query"]

    found = client.call("search_book", {"query": "How do I measure loop jitter?", "top_k": 3})
    result = found["result"]
    assert result["isError"] is False
    sections = result["structuredContent"]["sections"]
    assert 1 <= len(sections) <= 3
    first = sections[0]
    assert first["url"] == "/book/docs/loop#loop-jitter"
    assert first["heading_path"] == ["The Control Loop", "Loop jitter"]
    assert first["title"] == "Loop jitter" and "monotonic clock" in first["text"]
    assert "URL: /book/docs/loop#loop-jitter" in result["content"][0]["text"]

    asked = client.call("ask_book", {"question": "How do I measure loop jitter?"})["result"]
    chat = client.handler(http_api_v2("/chat", {"question": "How do I measure loop jitter?"}),
                          None)
    same = json.loads(chat["body"])
    del same["request_id"]
    assert asked["structuredContent"] == same  # /chat's own answer and citations
    assert asked["structuredContent"]["citations"][0]["url"] == "/book/docs/loop#loop-jitter"
    assert "/book/docs/loop#loop-jitter" in asked["content"][0]["text"]

    for result in (found["result"], asked):
        assert urls_in(result) and set(urls_in(result)) <= ALL_URLS


def test_ask_book_refuses_as_chat_does_with_the_closest_sections(session):
    client = session()
    client.initialize()
    result = client.call("ask_book", {"question": "What is the capital of Australia?"})["result"]
    fields = result["structuredContent"]
    assert fields["low_confidence"] is True and fields["citations"] == []
    assert fields["related_topics"] and set(urls_in(result)) <= ALL_URLS
    assert "Closest sections:" in result["content"][0]["text"]


def test_a_follow_up_with_history(session):
    client = session()
    client.initialize()
    history = [{"role": "user", "content": "What is a wheel encoder?"},
               {"role": "assistant", "content": "It turns rotation into ticks [1]."}]
    result = client.call("ask_book", {"question": "How do I count its ticks?",
                                      "history": history})["result"]
    assert set(urls_in(result)) <= ALL_URLS and urls_in(result)


@pytest.mark.parametrize("asked, answered", [("2024-11-05", "2024-11-05"),
                                             ("2025-03-26", "2025-03-26"),
                                             ("2025-06-18", "2025-06-18"),
                                             ("2026-07-28", "2025-11-25"),
                                             ("1999-01-01", "2025-11-25")])
def test_the_protocol_version_is_the_clients_when_supported_else_the_newest(session, asked,
                                                                            answered):
    assert session().initialize(asked)["protocolVersion"] == answered


def test_an_unsupported_protocol_version_header_is_400_before_any_work(session):
    client = session()
    response = client.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                           headers={"mcp-protocol-version": "1900-01-01"})
    assert response["statusCode"] == 400
    body = json.loads(response["body"])
    assert body["id"] is None and body["error"]["code"] == mcp.INVALID_PARAMS
    assert "2025-11-25" in body["error"]["message"]


@pytest.mark.parametrize("body, code, words", [
    ("{not json", mcp.PARSE_ERROR, "not valid JSON"),
    ('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', mcp.INVALID_REQUEST, "batches"),
    ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, mcp.INVALID_REQUEST, "jsonrpc"),
    ({"jsonrpc": "2.0", "id": 1, "method": "resources/list"}, mcp.METHOD_NOT_FOUND,
     "resources/list"),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "delete_book"}},
     mcp.INVALID_PARAMS, "Unknown tool 'delete_book'"),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {"name": "search_book", "arguments": {}}}, mcp.INVALID_PARAMS,
     "`query` is required"),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {"name": "search_book", "arguments": {"query": "jitter", "top_k": 99}}},
     mcp.INVALID_PARAMS, "`top_k` must be a whole number from 1 to 10"),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {"name": "ask_book", "arguments": {"question": "x" * 2001}}},
     mcp.INVALID_PARAMS, "keep it under 2,000"),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {"name": "ask_book", "arguments": {"question": "hi", "page": 2}}},
     mcp.INVALID_PARAMS, "Unknown argument(s) for ask_book: page"),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {"name": "ask_book", "arguments": {"question": "hi",
                                                   "history": [{"role": "system"}]}}},
     mcp.INVALID_PARAMS, "`history[0].role` must be user or assistant"),
])
def test_a_malformed_message_is_a_json_rpc_error_never_a_5xx(session, body, code, words):
    response = session().post(body)
    assert response["statusCode"] == 200, response
    reply = json.loads(response["body"])
    assert reply["error"]["code"] == code and words in reply["error"]["message"], reply
    assert "Traceback" not in response["body"]


def test_over_the_rate_limit_is_chats_error_code_with_retry_after(session):
    client = session(rate_limiter=MemoryRateLimiter(1, 100))
    client.initialize()  # initialize and tools/list do no work and are not counted
    assert client.call("ask_book", {"question": "What is loop jitter?"})["result"]
    again = client.post({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                         "params": {"name": "ask_book", "arguments": {"question": "jitter"}}})
    assert again["statusCode"] == 200 and int(again["headers"]["retry-after"]) >= 1
    error = json.loads(again["body"])["error"]
    assert error["code"] == mcp.SERVER_ERROR and error["data"]["code"] == "rate_limited"
    assert error["data"]["status"] == 429 and error["data"]["retry_after"] >= 1
    # search_book counts in /sources' bucket, as asking for sources never uses up questions
    found = client.call("search_book", {"query": "jitter"})["result"]
    assert set(urls_in(found)) <= ALL_URLS and urls_in(found)


def test_a_foreign_origin_is_refused_before_any_work(session):
    client = session()
    client.origin = "https://elsewhere.example"
    response = client.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response["statusCode"] == 403
    assert json.loads(response["body"])["error"]["data"]["code"] == "origin_not_allowed"


def test_get_and_delete_are_405_and_a_bare_response_is_accepted(session):
    client = session()
    for method in ("GET", "DELETE"):
        response = client.handler(http_api_v2("/mcp", None, method=method), None)
        assert response["statusCode"] == 405 and response["headers"]["allow"] == "POST"
        assert json.loads(response["body"])["error"]["data"]["code"] == "method_not_allowed"
    assert client.post({"jsonrpc": "2.0", "id": 5, "result": {}})["statusCode"] == 202


def test_search_book_never_calls_a_model_ask_book_does(session, book_settings, fake_openai):
    from functions.services.openai_http import OpenAIChat, OpenAIHttp

    client = session(settings=book_settings.with_(chat_provider="openai", openai_api_key="k",
                                                  openai_base_url=fake_openai.base_url),
                     chat_model=OpenAIChat(OpenAIHttp("k", fake_openai.base_url)))
    client.initialize()
    found = client.call("search_book", {"query": "How does a complementary filter work?"})
    assert urls_in(found["result"]) and set(urls_in(found["result"])) <= ALL_URLS
    assert fake_openai.requests == []
    client.call("ask_book", {"question": "How does a complementary filter work?"})
    assert fake_openai.chat_requests  # the same deps do call the model for an answer


@pytest.mark.parametrize("ctype, origin, status, code", [
    ("text/plain", None, 415, "unsupported_media_type"),
    ("application/x-www-form-urlencoded", "https://elsewhere.example", 403, "origin_not_allowed"),
    ("application/json", "https://elsewhere.example", 403, "origin_not_allowed"),
])
def test_a_forged_tool_call_does_no_work(session, book_settings, fake_openai, ctype, origin,
                                         status, code):
    """What a page on another site could make a browser send: refused before the rate limit,
    the budget and the model, with /chat's code in a JSON-RPC error."""
    from functions.services.openai_http import OpenAIChat, OpenAIHttp

    client = session(settings=book_settings.with_(chat_provider="openai", openai_api_key="k",
                                                  openai_base_url=fake_openai.base_url),
                     chat_model=OpenAIChat(OpenAIHttp("k", fake_openai.base_url)),
                     rate_limiter=MemoryRateLimiter(10, 100))
    call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "ask_book", "arguments": {"question": "How do I measure loop jitter?"}}})
    client.origin = origin
    response = client.post(call, headers={"content-type": ctype})
    assert response["statusCode"] == status
    body = json.loads(response["body"])
    assert body["error"]["data"]["code"] == code and body["id"] is None
    assert fake_openai.requests == []
    assert client.deps.rate_limiter._counts == {}  # the reader's allowance is untouched
    assert client.deps.spend_cap._used == 0 and client.deps.feedback.answers == {}


def test_urls_are_absolute_when_the_index_records_the_site_s_address(make_deps, tmp_path):
    """An assistant's reader is not on the book's site: where the index records the site's
    `url` (an `index` run reads it from docusaurus.config or the build manifest), both tools give
    absolute URLs, which open the heading; /chat (the widget's) keeps the site-relative ones.
    Without it (the other tests' index) the URLs stay paths, and the descriptions say so."""
    from functions.search.store import QdrantStore
    from functions.settings import Settings
    from tests.fakes.embedder import ContentEmbedder
    from tests.functions.conftest import DIM, index_book

    settings = Settings(qdrant_path=str(tmp_path / "qdrant"), collection="book",
                        low_confidence_threshold=0.3)
    store = QdrantStore.open(settings)
    try:
        index_book(store, ContentEmbedder(DIM))
        store.mark_synced("2026-11-26T00:00:00+00:00", site_url="https://robots.example/")
        deps = make_deps(search=store, settings=settings)
        client = LambdaSession(Mangum(create_app(deps, "chat", threaded=False), lifespan="off"))
        client.initialize()
        found = client.call("search_book", {"query": "How do I measure loop jitter?"})["result"]
        asked = client.call("ask_book", {"question": "How do I measure loop jitter?"})["result"]
        for result in (found, asked):
            urls = urls_in(result)
            assert urls and all(u.startswith("https://robots.example/book/") for u in urls), urls
            assert {u.removeprefix("https://robots.example") for u in urls} <= ALL_URLS
        assert found["structuredContent"]["sections"][0]["url"] == (
            "https://robots.example/book/docs/loop#loop-jitter")
        assert "URL: https://robots.example/book/docs/loop#loop-jitter" in found["content"][0]["text"]
        chat = json.loads(client.handler(http_api_v2("/chat", {"question": "How do I measure "
                                                               "loop jitter?"}), None)["body"])
        assert chat["citations"][0]["url"] == "/book/docs/loop#loop-jitter"  # the widget's
    finally:
        store.close()
    tools = {t["name"]: t["description"] for t in
             mcp.dispatch("tools/list", None, None, "", "")["tools"]}
    for description in tools.values():  # no promise the index may not keep
        assert "absolute (https://…) when the book's index records the site's address" in description
        assert "is not a link on its own" in description
