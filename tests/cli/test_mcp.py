"""The MCP server as an assistant meets it: the official MCP SDK's client (the `mcp` package)
against `textbook-chat serve` (POST /mcp, Streamable HTTP) and `textbook-chat mcp` (stdio), each in
a fresh process over a real local index of the tiny book embedded by the local MiniLM. A session
initializes, lists the tools, calls both, sends a malformed call and goes over the rate limit;
every URL returned must be one the book serves (tests/functions/book.py ALL_URLS)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import httpx
import pytest

from tests.cli.test_api import minilm_env  # noqa: F401 (the fixture: the tiny book, MiniLM)
from tests.functions.book import ALL_URLS
from tests.ports import free_port, wait_until_serving
from tests.shared import in_one_minute

mcp = pytest.importorskip("mcp")  # the `test` extra installs it
pytestmark = pytest.mark.slow

QUESTION = "How do I measure loop jitter?"


def urls_of(result) -> list[str]:
    fields = result.structured_content or {}
    return ([s["url"] for s in fields.get("sections", [])]
            + [c["url"] for c in fields.get("citations", [])]
            + [r["url"] for r in fields.get("related_topics") or []])


async def session_checks(client) -> dict:
    """initialize (done by the client on connect), tools/list, both tools, bad arguments and
    calls past the limit (RATE_LIMIT_PER_MINUTE=2: ask_book twice, then refused): what goes
    wrong in a tool is its result with isError, which the SDK hands to the model."""

    assert client.protocol_version == "2025-11-25"  # the SDK's newest handshake version
    assert client.server_info.name == "textbook-chat" and "cite" in client.instructions
    tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == ["search_book", "ask_book", "fetch_page"]

    found = await client.call_tool("search_book", {"query": QUESTION, "top_k": 3})
    assert not found.is_error
    sections = found.structured_content["sections"]
    assert sections[0]["url"] == "/book/docs/loop#loop-jitter" and sections[0]["text"]
    asked = await client.call_tool("ask_book", {"question": QUESTION})
    assert asked.structured_content["citations"][0]["url"] == "/book/docs/loop#loop-jitter"
    refused = await client.call_tool("ask_book", {"question": "What is the capital of Peru?"})
    assert refused.structured_content["low_confidence"] is True
    for result in (found, asked, refused):
        assert urls_of(result) and set(urls_of(result)) <= ALL_URLS, urls_of(result)
        # a client that reads only `content` gets the JSON too: outcome, confidence
        assert json.loads(result.content[1].text) == result.structured_content
    assert "confidence" in json.loads(asked.content[1].text)

    bad = await client.call_tool("search_book", {"query": "x", "top_k": 11})
    assert bad.is_error and "`top_k` must be a whole number" in bad.content[0].text, bad
    limited = await client.call_tool("ask_book", {"question": "What is a wheel encoder?"})
    assert limited.is_error and "Try again in" in limited.content[0].text
    error = limited.structured_content["error"]
    assert error["code"] == "rate_limited" and error["retry_after"] >= 1
    return {"limited": error}


def run_session(server) -> dict:
    async def go():
        async with mcp.Client(server) as client:
            return await session_checks(client)
    return asyncio.run(go())


def test_a_session_against_serve(minilm_env):  # noqa: F811
    env, cwd = minilm_env
    env = {**env, "RATE_LIMIT_PER_MINUTE": "2"}
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "textbook_chat_cli", "serve", "--port",
                             str(port)], env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, 30, proc)
        limited = in_one_minute(lambda: run_session(base + "/mcp"))
        assert limited["limited"]["status"] == 429
        # what the transport says over plain HTTP: a notification is 202, GET is 405
        note = httpx.post(base + "/mcp", json={"jsonrpc": "2.0",
                                               "method": "notifications/initialized"})
        assert note.status_code == 202 and note.content == b""
        assert httpx.get(base + "/mcp").status_code == 405
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_session_over_stdio(minilm_env):  # noqa: F811
    env, cwd = minilm_env
    server = mcp.StdioServerParameters(command=sys.executable,
                                       args=["-m", "textbook_chat_cli", "mcp"],
                                       env={**env, "RATE_LIMIT_PER_MINUTE": "2"}, cwd=str(cwd))
    assert in_one_minute(lambda: run_session(server))["limited"]["status"] == 429


def test_stdio_answers_line_by_line_and_nothing_else_on_stdout(minilm_env):  # noqa: F811
    env, cwd = minilm_env
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             "{not json",
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "search_book", "arguments": {"query": "gyroscope bias drift"}}}]
    stdin = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n"
    out = subprocess.run([sys.executable, "-m", "textbook_chat_cli", "mcp"], input=stdin,
                         env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    replies = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r.get("id") for r in replies] == [1, None, 2]  # the notification has no reply
    assert replies[0]["result"]["protocolVersion"] == "2025-06-18"
    assert replies[1]["error"]["code"] == -32700
    sections = replies[2]["result"]["structuredContent"]["sections"]
    assert sections[0]["url"] == "/book/docs/sensors/imu#gyroscope-drift"
    assert {s["url"] for s in sections} <= ALL_URLS
