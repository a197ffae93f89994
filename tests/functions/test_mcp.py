"""The MCP server through the chat function's Mangum handler, fed API Gateway v2 events: a client's
whole session (initialize, tools/list, both tools), bad messages, /chat's limits and origins.
Every URL a tool returns must be one the tiny book serves (tests/functions/book.py ALL_URLS)."""

from __future__ import annotations

import io
import json
import re

import pytest
from mangum import Mangum

from functions.api import mcp
from functions.api.app import create_app
from tests.functions.book import ALL_URLS
from tests.functions.events import http_api_v2
from tests.shared import limiter

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
    assert [t["name"] for t in tools] == ["search_book", "ask_book", "fetch_page"]
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
    for result in (found["result"], asked):  # the spec's SHOULD: the JSON in `content` too
        assert json.loads(result["content"][1]["text"]) == result["structuredContent"]
    assert "confidence" in json.loads(asked["content"][1]["text"])

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
    client = session(rate_limiter=limiter(1, 100))
    response = client.post({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "ask_book", "arguments": {"question": "What is loop jitter?"}}},
                           headers={"mcp-protocol-version": "1900-01-01"})
    assert response["statusCode"] == 400
    body = json.loads(response["body"])  # the request's id, so the client stops waiting
    assert body["id"] == 1 and body["error"]["code"] == mcp.INVALID_PARAMS
    assert "2025-11-25" in body["error"]["message"]
    assert client.deps.rate_limiter._counts == {}  # no work was done


@pytest.mark.parametrize("raw, code, words", [
    ('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "search_book", '
     '"arguments": {"query": "jitter \\ud800"}}}', mcp.INVALID_REQUEST, "lone surrogate"),
    ('{"jsonrpc": "2.0", "id": "deep", "method": "tools/call", "params": {"name": '
     '"search_book", "arguments": {"query": "x", "top_k": ' + "[" * 20 + "]" * 20 + "}}}",
     mcp.INVALID_REQUEST, "nested more than 16 levels"),
    ('{"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"x": "\\udfff"}}',
     mcp.INVALID_REQUEST, "not valid Unicode"),
])
def test_a_message_refused_while_it_is_read_keeps_its_id(session, raw, code, words):
    response = session().post(raw)
    assert response["statusCode"] == 200, response
    reply = json.loads(response["body"])
    assert reply["id"] == json.loads(raw)["id"], reply
    assert reply["error"]["code"] == code and words in reply["error"]["message"], reply


def test_an_id_that_is_not_valid_unicode_is_not_echoed(session):
    raw = '{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}'
    reply = json.loads(session().post(raw)["body"])
    assert reply["id"] is None and reply["error"]["code"] == mcp.INVALID_REQUEST


@pytest.mark.parametrize("body, code, words", [
    ("{not json", mcp.PARSE_ERROR, "not valid JSON"),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {"name": "search_book", "arguments": "jitter"}}, mcp.INVALID_PARAMS,
     "`arguments` must be an object"),
    ('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', mcp.INVALID_REQUEST, "batches"),
    ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, mcp.INVALID_REQUEST, "jsonrpc"),
    ({"jsonrpc": "2.0", "id": 1, "method": "resources/list"}, mcp.METHOD_NOT_FOUND,
     "resources/list"),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "delete_book"}},
     mcp.INVALID_PARAMS, "Unknown tool 'delete_book'"),
])
def test_a_malformed_message_is_a_json_rpc_error_never_a_5xx(session, body, code, words):
    response = session().post(body)
    assert response["statusCode"] == 200, response
    reply = json.loads(response["body"])
    assert reply["error"]["code"] == code and words in reply["error"]["message"], reply
    assert "Traceback" not in response["body"]


@pytest.mark.parametrize("name, arguments, words", [
    ("search_book", {}, "`query` is required"),
    ("search_book", {"query": "x", "top_k": 11}, "`top_k` must be a whole number from 1 to 10"),
    ("ask_book", {"question": "x" * 2001}, "keep it under 2,000"),
    ("ask_book", {"question": "hi", "page": 2}, "Unknown argument(s) for ask_book: page"),
    ("ask_book", {"question": "hi", "history": [{"role": "system"}]},
     "`history[0].role` must be user or assistant"),
])
def test_bad_arguments_are_the_tools_error_result_the_assistant_reads(session, name, arguments,
                                                                      words):
    """The 2025-11-25 spec: input validation errors are tool execution errors (`isError`), which
    the model sees and can correct, not protocol errors a client may hide from it."""
    client = session()
    client.initialize()
    result = client.call(name, arguments)["result"]
    assert result["isError"] is True and words in result["content"][0]["text"], result
    error = result["structuredContent"]["error"]
    assert error["status"] in (413, 422) and words in error["message"]
    assert json.loads(result["content"][1]["text"]) == result["structuredContent"]


def test_over_the_rate_limit_is_chats_error_code_with_retry_after(session):
    client = session(rate_limiter=limiter(1, 100))
    client.initialize()  # initialize and tools/list do no work and are not counted
    assert client.call("ask_book", {"question": "What is loop jitter?"})["result"]
    again = client.post({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                         "params": {"name": "ask_book", "arguments": {"question": "jitter"}}})
    assert again["statusCode"] == 200 and int(again["headers"]["retry-after"]) >= 1
    result = json.loads(again["body"])["result"]  # a result the assistant can retry
    assert result["isError"] is True and "Try again in" in result["content"][0]["text"]
    error = result["structuredContent"]["error"]
    assert error["code"] == "rate_limited"
    assert error["status"] == 429 and error["retry_after"] >= 1
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
                     rate_limiter=limiter(10, 100))
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
        page = client.call("fetch_page", {"url": "https://robots.example/book/docs/loop"})
        page = page["result"]["structuredContent"]
        assert page["url"] == "https://robots.example/book/docs/loop"
        assert "## [Loop jitter](https://robots.example/book/docs/loop#loop-jitter)" in page["markdown"]
        assert {u.removeprefix("https://robots.example")
                for u in MARKDOWN_LINK.findall(page["markdown"])} <= ALL_URLS
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


class Lines(io.RawIOBase):
    """stdin that writes its lines as they are read (a 100 MB line is never held whole)."""

    def __init__(self, parts: list[tuple[bytes, int]]):
        self.pieces = (piece for piece, times in parts for _ in range(times))
        self.rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if not self.rest:
            self.rest = next(self.pieces, b"")
        n = min(len(buffer), len(self.rest))
        buffer[:n] = self.rest[:n]
        self.rest = self.rest[n:]
        return n


def test_stdio_caps_a_message_and_answers_the_next_one(make_deps):
    """A 100 MB line costs at most a piece of the cap's size (was: the whole line, ~300 MB),
    is answered with an error, and the message after it is read and answered as usual."""
    import tracemalloc

    from functions.api.app import BODY_CAPS
    from textbook_chat_cli.mcp_stdio import serve_stdio

    search = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "search_book", "arguments": {"query": "loop jitter"}}}
    stdin = io.BufferedReader(Lines([
        (b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"pad": "', 1),
        (b"x" * (1 << 20), 100), (b'"}}\n', 1),
        (json.dumps(search).encode() + b"\n", 1)]))
    out = io.StringIO()
    tracemalloc.start()
    try:
        assert serve_stdio(make_deps(), stdin, out) == 0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    too_big, found = (json.loads(line) for line in out.getvalue().splitlines())
    assert too_big["error"]["code"] == mcp.INVALID_REQUEST
    assert f"larger than {BODY_CAPS['mcp'] // 1024} KB" in too_big["error"]["message"]
    assert found["id"] == 3 and found["result"]["structuredContent"]["sections"]
    assert peak < 20 * (1 << 20), peak  # the line was 100 MB


MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_fetch_page_gives_the_page_as_markdown_with_its_exact_anchors(session):
    client = session()
    client.initialize()
    tools = client.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == ["search_book", "ask_book", "fetch_page"]
    result = client.call("fetch_page", {"url": "/book/docs/loop#loop-jitter"})["result"]
    assert result["isError"] is False
    page = result["structuredContent"]
    assert page["url"] == "/book/docs/loop" and page["title"] == "The Control Loop"
    text = result["content"][0]["text"]
    assert text == page["markdown"]
    assert text.startswith("# [The Control Loop](/book/docs/loop)\n\nA robot repeats a loop")
    assert ("## [Loop jitter](/book/docs/loop#loop-jitter)\n\nJitter is the variation" in text)
    assert [h["url"] for h in page["sections"]] == ["/book/docs/loop#loop-jitter",
                                                    "/book/docs/loop#open-and-closed-loop"]
    assert set(MARKDOWN_LINK.findall(text)) <= ALL_URLS
    missing = client.call("fetch_page", {"url": "/book/docs/nowhere"})["result"]
    assert missing["isError"] and "no page at '/book/docs/nowhere'" in missing["content"][0]["text"]
    assert missing["structuredContent"]["error"]["code"] == "unknown_page"


LONG = " ".join(f"Sentence {n} of the long paragraph says that tuning step {n} matters."
                for n in range(1, 160))


def test_fetch_page_puts_a_real_index_s_chunks_back_in_order_once(make_deps, tmp_path):
    """A page the indexer cut into pieces (short sections merged into one chunk, a long paragraph
    split with overlapping words): each heading once, linked to its anchor, in the page's order,
    each sentence once."""
    from functions.search.store import QdrantStore
    from functions.settings import Settings
    from indexer.job import index_docs, resolve_job
    from tests.fakes.embedder import ContentEmbedder
    from tests.functions.conftest import DIM

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pid.md").write_text(
        "# PID Control\n\nA controller with three terms.\n\n## Tuning\n\n" + LONG + "\n\n"
        "### Derivative kick\n\nA step in the setpoint kicks the derivative term.\n\n"
        "## Windup\n\nThe integral term winds up while the output saturates.\n\n"
        "| Gain | Effect |\n|---|---|\n| Kp | faster |\n")
    settings = Settings(qdrant_path=str(tmp_path / "q"), collection="pid")
    store = QdrantStore.open(settings)
    try:
        index_docs(resolve_job(docs), settings, ContentEmbedder(DIM), store, say=lambda _: None)
        assert len(store_payloads := make_deps(search=store).retriever.page_chunks("/docs/pid")) > 2
        client = LambdaSession(Mangum(create_app(make_deps(search=store), "chat", threaded=False),
                                      lifespan="off"))
        client.initialize()
        page = client.call("fetch_page", {"url": "/docs/pid"})["result"]["structuredContent"]
    finally:
        store.close()
    text = page["markdown"]
    assert [line for line in text.splitlines() if line.startswith("#")] == [
        "# [PID Control](/docs/pid)", "## [Tuning](/docs/pid#tuning)",
        "### [Derivative kick](/docs/pid#derivative-kick)", "## [Windup](/docs/pid#windup)"]
    for n in range(1, 160):
        assert text.count(f"Sentence {n} of ") == 1, (n, len(store_payloads))
    assert "| Kp | faster |" in text and text.index("kicks the derivative") < text.index("winds up")
