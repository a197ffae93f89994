"""The book as an MCP server (Model Context Protocol): JSON-RPC messages in, JSON-RPC replies out.

One message at a time, the same for both transports: `POST /mcp` (Streamable HTTP, each reply a
single JSON response; functions.api.app) and `textbook-chat mcp` (stdio, one message a line).
Stateless: no session id, nothing kept between messages, so any Lambda container answers any
message. The tools do the work the HTTP routes do (functions.api.app `mcp_tools`): `search_book`
is /sources' search without its confidence cut, `ask_book` is /chat itself, with /chat's
limits, budget and error codes; `fetch_page` gives one page as Markdown from the index, each
heading linked to its exact URL. As the 2025-11-25 spec says, what goes wrong in a tool (its
arguments, the rate limit, a busy server, a model outage) is the tool's result with
`isError: true`, so the assistant reads it and may correct itself or retry; only a message the
protocol cannot take (not JSON, an unknown method or tool) is a JSON-RPC error. Every reply
carries the request's `id` whenever the message has a readable one.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from functions.api.http_errors import ApiError, from_exception, log, operator_detail
from functions.api.validation import MAX_QUESTION_CHARS, parse_json, valid_text

# Protocol revisions reachable through `initialize`, oldest to newest. A client asking for
# another is answered with the newest: the spec lets the client decide whether to go on.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST = PROTOCOL_VERSIONS[-1]
SERVER_NAME = "textbook-chat"
SERVER_VERSION = "0.2.0"  # pyproject's version (the Lambda package has no installed metadata)

# JSON-RPC 2.0 error codes; -32000..-32099 are the server's own (here: the service could not
# answer, e.g. over the rate limit or a model outage; `data` says which, with /chat's code).
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
SERVER_ERROR = -32000
INPUT_STATUSES = (400, 413, 415, 422)

INSTRUCTIONS = (
    "This server answers from one textbook, with a link to the exact section for every "
    "passage. Use search_book to read the book's own text on a topic, ask_book for the "
    "book's cited answer to a question and fetch_page to read a whole page. When you use what they return, cite the section URLs "
    "they give, exactly as given, so the reader can open the section; do not invent links.")

_CITE = ("Cite the `url` of each section you use, exactly as given: it opens that heading on "
         "the book's site. Each `url` is absolute (https://…) when the book's index records the "
         "site's address; otherwise it is the heading's path on the book's site "
         "(/docs/page#heading), to put after the site's address, and is not a link on its own.")
_EDITION = {
    "version": {"type": "string", "description": "the book's docs version, e.g. \"current\" "
                "or \"1.0\" (default: the one the site shows at its docs root; another is an "
                "error naming the ones there are)"},
    "locale": {"type": "string", "description": "the language, e.g. \"en\" or \"fr\" "
               "(default: the site's default language)"},
}


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    input_schema: dict
    route: str  # the HTTP route whose work it is: its limits, budget and errors

    def describe(self) -> dict:
        return {"name": self.name, "title": self.title, "description": self.description,
                "inputSchema": self.input_schema,
                "annotations": {"title": self.title, "readOnlyHint": True,
                                "openWorldHint": False}}


TOOLS = (
    Tool("search_book", "Search the book",
         "Find the sections of the textbook about a topic, best first: each with its title, "
         "heading path, the URL of its heading and the passage's text as the book writes it. No answer is "
         "written: read the passages yourself. " + _CITE,
         {"type": "object", "additionalProperties": False, "required": ["query"],
          "properties": {
              "query": {"type": "string", "maxLength": MAX_QUESTION_CHARS,
                        "description": "what to look for, in words the book would use"},
              **_EDITION,
              "top_k": {"type": "integer", "minimum": 1, "maximum": 10, "default": 5,
                        "description": "how many sections to return"}}},
         "sources"),
    Tool("ask_book", "Ask the book",
         "Ask the textbook a question: its answer quotes or paraphrases the book with numbered "
         "citations [n], each linking to the exact section. `outcome` says which answer it is: "
         "\"answered\"; \"closest\" (the book may not answer exactly: the closest passage, "
         "quoted, and the closest sections: present it as where to read, not as the answer); "
         "\"not_covered\" (the book does not cover it: a refusal listing the closest sections; "
         "do not present it as the book's answer). " + _CITE,
         {"type": "object", "additionalProperties": False, "required": ["question"],
          "properties": {
              "question": {"type": "string", "maxLength": MAX_QUESTION_CHARS},
              "history": {"type": "array", "description": "the conversation so far, oldest "
                          "first, for a follow-up question",
                          "items": {"type": "object", "required": ["role", "content"],
                                    "additionalProperties": False,
                                    "properties": {"role": {"enum": ["user", "assistant"]},
                                                   "content": {"type": "string"}}}}}},
         "chat"),
    Tool("fetch_page", "Read a page of the book",
         "Read one whole page of the textbook as Markdown: its title, then each section under "
         "its heading, each heading a link to its exact URL (with its #anchor). Give the `url` "
         "of a page or of a section, as search_book or ask_book returned it. " + _CITE,
         {"type": "object", "additionalProperties": False, "required": ["url"],
          "properties": {"url": {"type": "string", "maxLength": 2000,
                                 "description": "a page's or a section's URL, as the other "
                                 "tools give it (absolute or a path on the site)"}}},
         "sources"),
)
TOOLS_BY_NAME = {t.name: t for t in TOOLS}

# (tool name, the /chat-shaped body, the caller's ip, request id) -> the route's response fields
RunTool = Callable[[str, dict, str, str], dict]


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: dict | None = None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def error_reply(msg_id, code: int, message: str, data: dict | None = None) -> dict:
    error = {"code": code, "message": message, **({"data": data} if data else {})}
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


def error_data(err: ApiError) -> dict:
    """/chat's code, status and, when it is worth trying again, after how many seconds."""
    data: dict = {"code": err.code, "status": err.status}
    if err.retry_after is not None:
        data["retry_after"] = max(1, int(err.retry_after + 0.999))
    return data


def from_api_error(err: ApiError) -> RpcError:
    """/chat's error as a JSON-RPC error (for what comes before a tool runs: the origin, the
    body's size, the configuration): bad input is invalid params, anything else the server's
    own code; `data` keeps /chat's code, status and Retry-After."""
    return RpcError(INVALID_PARAMS if err.status in INPUT_STATUSES else SERVER_ERROR,
                    err.message, error_data(err))


# The JSON checks (functions.api.validation) that a message can fail after it parsed: its id
# is still readable, and answered.
_UNPARSED = frozenset({"bad_encoding", "empty_body", "invalid_json"})


def parse_message(raw: bytes) -> dict:
    """One JSON-RPC message. A batch (a JSON array) is refused: MCP dropped batches in
    2025-06-18 and no client sends them to a single-response server."""
    if raw.lstrip()[:1] == b"[":
        raise RpcError(INVALID_REQUEST, "Send one JSON-RPC message per request; batches are "
                       "not supported.")
    try:
        message = parse_json(raw)
    except ApiError as exc:
        raise RpcError(PARSE_ERROR if exc.code in _UNPARSED else INVALID_REQUEST, exc.message,
                       {"code": exc.code}) from None
    return message


def message_id(raw: bytes):
    """The message's `id` when it has a valid one (a string of real Unicode or an integer),
    else None: for the reply to a message refused before or while it is read (a lone
    surrogate, nesting too deep, a busy server), so the client is not left waiting for it."""
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):  # also bytes that are not UTF-8
        return None
    msg_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(msg_id, int) and not isinstance(msg_id, bool):
        return msg_id
    return msg_id if isinstance(msg_id, str) and valid_text(msg_id) else None


def method_of(raw: bytes) -> str | None:
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    method = message.get("method") if isinstance(message, dict) else None
    return method if isinstance(method, str) else None


def failure_reply(raw: bytes, err: ApiError) -> dict | None:
    """The reply to a message that could not be worked on (a busy server, the configuration):
    a tool's call gets the tool's result with `isError` (retried by the assistant after
    `retry_after`), any other request a JSON-RPC error; both with the message's `id`. None for
    a message without a readable id (the caller answers with the HTTP status)."""
    msg_id = message_id(raw)
    if msg_id is None:
        return None
    if method_of(raw) == "tools/call" and err.status not in INPUT_STATUSES:
        return {"jsonrpc": "2.0", "id": msg_id, "result": error_result(err)}
    rpc = from_api_error(err)
    return error_reply(msg_id, rpc.code, rpc.message, rpc.data)


def handle(raw: bytes, run_tool: RunTool, ip: str, request_id: str) -> dict | None:
    """The reply to one message (None for a notification, which has none). Never raises for
    what a client sends: every failure is a JSON-RPC error reply or a tool's error result."""
    try:
        message = parse_message(raw)
    except RpcError as exc:
        return error_reply(message_id(raw), exc.code, exc.message, exc.data)
    msg_id = message.get("id")
    try:
        method = _check_envelope(message)
        if method is None:  # a notification (e.g. notifications/initialized) or a response
            return None
        result = dispatch(method, message.get("params"), run_tool, ip, request_id)
        return {"jsonrpc": "2.0", "id": msg_id, "result": result}
    except RpcError as exc:
        return error_reply(msg_id, exc.code, exc.message, exc.data)


def _check_envelope(message: dict) -> str | None:
    """The request's method; None for a notification or a client's response."""
    if message.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, "`jsonrpc` must be \"2.0\".")
    method = message.get("method")
    if "id" not in message:
        if method is None and not ("result" in message or "error" in message):
            raise RpcError(INVALID_REQUEST, "A message needs `method` (a request or a "
                           "notification) or `result`/`error` (a response).")
        return None
    msg_id = message["id"]
    if isinstance(msg_id, bool) or not isinstance(msg_id, str | int):
        raise RpcError(INVALID_REQUEST, "`id` must be a string or an integer.")
    if method is None and ("result" in message or "error" in message):
        return None  # a response to a request we never send: nothing to answer
    if not isinstance(method, str) or not method:
        raise RpcError(INVALID_REQUEST, "`method` must be a non-empty string.")
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        raise RpcError(INVALID_REQUEST, "`params` must be an object.")
    return method


def dispatch(method: str, params: dict | None, run_tool: RunTool, ip: str,
             request_id: str) -> dict:
    params = params or {}
    if method == "initialize":
        return initialize(params)
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [t.describe() for t in TOOLS]}
    if method == "tools/call":
        return call_tool(params, run_tool, ip, request_id)
    raise RpcError(METHOD_NOT_FOUND, f"There is no method {method[:60]!r} here; this server "
                   "offers initialize, ping, tools/list and tools/call.")


def initialize(params: dict) -> dict:
    """The server's version: the client's when supported, else the newest one (the client may
    then disconnect, as the spec's lifecycle says)."""
    asked = params.get("protocolVersion")
    if not isinstance(asked, str) or not asked:
        raise RpcError(INVALID_PARAMS, "`params.protocolVersion` is required (e.g. "
                       f"\"{LATEST}\").", {"supported": list(PROTOCOL_VERSIONS)})
    return {"protocolVersion": asked if asked in PROTOCOL_VERSIONS else LATEST,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": SERVER_NAME, "title": "Textbook", "version": SERVER_VERSION},
            "instructions": INSTRUCTIONS}


def call_tool(params: dict, run_tool: RunTool, ip: str, request_id: str) -> dict:
    name, args = params.get("name"), params.get("arguments")
    tool = TOOLS_BY_NAME.get(name) if isinstance(name, str) else None
    if tool is None:
        raise RpcError(INVALID_PARAMS, f"Unknown tool {str(name)[:60]!r}; the tools are "
                       f"{', '.join(TOOLS_BY_NAME)}.")
    if args is None:
        args = {}
    if not isinstance(args, dict):  # the call itself is malformed: a protocol error
        raise RpcError(INVALID_PARAMS, "`arguments` must be an object.")
    try:
        fields = run_tool(tool.name, request_body(tool, args), ip, request_id)
    except ApiError as exc:  # the arguments, as /chat's validation words it
        return error_result(_renamed(tool, exc))
    except Exception as exc:  # noqa: BLE001 - a domain error (limits, outage): /chat's code
        err = from_exception(exc)
        if err.status >= 500:  # the operator's log keeps what the assistant is not told
            log("error", logging.ERROR if err.status == 500 else logging.WARNING,
                request_id=request_id, code=err.code, error=operator_detail(exc))
        return error_result(_renamed(tool, err))
    return tool_result(tool, fields)


def request_body(tool: Tool, args: dict) -> dict:
    """The /chat-shaped body the route's own validation reads (functions.api.validation)."""
    allowed = set(tool.input_schema["properties"])
    extra = sorted(set(args) - allowed)
    if extra:
        raise ApiError(422, "invalid_field", f"Unknown argument(s) for {tool.name}: "
                       f"{', '.join(map(str, extra))[:200]}. Allowed: {', '.join(sorted(allowed))}.")
    if tool.name == "fetch_page":
        return {"url": args.get("url")}
    if tool.name == "search_book":
        filters = {k: args[k] for k in ("version", "locale") if args.get(k) is not None}
        return {"question": args.get("query"), "top_k": args.get("top_k"),
                **({"filters": filters} if filters else {})}
    return {"question": args.get("question"), "history": args.get("history")}


def _renamed(tool: Tool, err: ApiError) -> ApiError:
    """The error in the tool's own argument names (search_book's `question` is `query`)."""
    if tool.name == "search_book":
        err.message = err.message.replace("`question`", "`query`").replace(
            "`filters.", "`").replace("; type a question first", "; say what to look for")
    return err


def tool_result(tool: Tool, fields: dict) -> dict:
    """The tool's result: the fields as structured content, as text an assistant reads and,
    as the spec asks of a tool with structured content, serialized in a text block too (a
    client that reads only `content` still gets `outcome` and `confidence`)."""
    text = (search_text(fields) if tool.name == "search_book" else
            fields["markdown"] if tool.name == "fetch_page" else answer_text(fields))
    return _result(text, fields, False)


def error_result(err: ApiError) -> dict:
    """What went wrong in a tool, as its result with `isError` (the spec's tool execution
    error): the message an assistant can act on and, in `structuredContent.error`, /chat's
    code, status and `retry_after` (seconds) when trying again later will work."""
    data = error_data(err)
    text = err.message
    if "retry_after" in data:
        text += f" (Try again in {data['retry_after']} s.)"
    return _result(text, {"error": {"message": err.message, **data}}, True)


def _result(text: str, structured: dict, is_error: bool) -> dict:
    return {"content": [{"type": "text", "text": text},
                        {"type": "text", "text": dumps(structured)}],
            "structuredContent": structured, "isError": is_error}


def search_text(fields: dict) -> str:
    sections = fields.get("sections") or []
    if not sections:
        return "The book has no section about this."
    parts = []
    for n, s in enumerate(sections, 1):
        path = " › ".join(s.get("heading_path") or [s.get("title", "")])
        parts.append(f"[{n}] {path}\nURL: {s['url']}\n\n{s.get('text', '')}")
    return "\n\n---\n\n".join(parts)


def answer_text(fields: dict) -> str:
    lines = [str(fields.get("answer", ""))]
    citations = fields.get("citations") or []
    if citations:
        lines += ["", "Sources:"] + [f"[{c['n']}] {c.get('title', '')} — {c['url']}"
                                     for c in citations]
    related = fields.get("related_topics") or []
    if related and (not citations or fields.get("outcome") == "closest"):
        lines += ["", "Closest sections:"] + [f"- {r.get('title', '')} — {r['url']}"
                                              for r in related]
    return "\n".join(lines)


def dumps(reply: dict) -> str:
    """One line of JSON (stdio frames messages by newline; no raw newline may occur inside)."""
    return json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
