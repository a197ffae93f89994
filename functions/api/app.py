"""The ASGI app (Starlette): POST /chat, /sources, /feedback, /selection, /mcp and GET /health
over Deps."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from functions.api import mcp
from functions.api.admission import Gate
from functions.api.crosssite import DEPLOYED_FIX, JsonCORSMiddleware, OriginRule, check_request
from functions.api.http_errors import (
    REQUEST_ID_HEADER,
    ApiError,
    configure_logging,
    error_body,
    error_headers,
    from_exception,
    json_response,
    log,
    new_request_id,
    operator_detail,
)
from functions.api.validation import (
    chat_request,
    check_size,
    feedback_request,
    parse_json,
    search_flag,
    selection_request,
)
from functions.deadline import REPLY_SECONDS, Deadline, on_time, request_seconds, within
from functions.errors import StoreUnavailableError
from functions.search.contract import META_MODEL, META_SYNCED_AT
from functions.services.budget import check_rate

if TYPE_CHECKING:  # the answer code loads on a route's first request (see below)
    from functions.answers.types import Answer

BODY_CAPS = {"chat": 64 * 1024, "selection": 1024 * 1024, "feedback": 8 * 1024,
             "sources": 64 * 1024, "mcp": 64 * 1024}
# (body, client ip, request id) -> the response's fields, or the whole response (/mcp)
Work = Callable[[bytes, str, str], "dict | Response"]
Failure = Callable[[BaseException, str, bytes], Response]  # (error, request id, body read)
CLIENT_CLOSED = 499  # nginx's status for a request its client abandoned; logged, never sent


def client_ip(request: Request) -> str:
    """The reader's IP: API Gateway's sourceIp under Lambda, else the socket's peer."""
    event = request.scope.get("aws.event") or {}
    ip = ((event.get("requestContext") or {}).get("http") or {}).get("sourceIp")
    if ip:
        return str(ip)
    return request.client.host if request.client else "unknown"


async def read_body(request: Request, cap: int) -> bytes:
    too_big = ApiError(413, "too_large",
                       f"The request is larger than {cap // 1024} KB; send a shorter question.")
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > cap:
        raise too_big
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise too_big
    return bytes(body)


def respond(request_id: str, status: int, body: dict, headers: dict | None = None) -> JSONResponse:
    return json_response({**body, "request_id": request_id}, status, request_id, headers)


def _failure(exc: BaseException, request_id: str, extra: dict | None = None) -> JSONResponse:
    """The error response for exc (`extra`: more fields for its body); logged when a 5xx."""
    try:
        err = from_exception(exc)
        if err.status >= 500:
            log("error", logging.ERROR if err.status == 500 else logging.WARNING,
                request_id=request_id, code=err.code, error=operator_detail(exc))
        return json_response({**error_body(err, request_id), **(extra or {})}, err.status,
                             request_id, error_headers(err))
    except Exception:  # the error path itself must not raise: a fixed answer, still JSON
        err = ApiError(500, "internal", "Something went wrong on our side; please try again.")
        return json_response(error_body(err, request_id), 500, request_id)


def endpoint(deps, route: str, work: Work, gate: Gate | None, failure: Failure | None = None,
             streams: bool = False):
    """The route's handler. Its deadline starts when the request arrives (functions.deadline):
    reading the body, waiting for a turn and the work all spend from it. With a gate (a local
    server) the work runs on a thread once the gate gives it a turn; without one (Lambda, one
    request at a time) it runs inline, which saves anyio's thread machinery (~0.2 s of cold
    start). `failure`: the response for an error, given the body as far as it was read
    (default: /chat's JSON error). `streams`: /chat asked for NDJSON answers as it is written
    (`streamed`), where the response can reach the reader in parts."""
    fail = failure or (lambda exc, request_id, _raw: _failure(exc, request_id))

    async def run(request: Request) -> Response:
        deadline = Deadline(request_seconds(request.scope.get("aws.context")))
        request_id, start = new_request_id(), time.perf_counter()
        ip = client_ip(request)
        raw = b""

        def timed_work(raw: bytes) -> dict:
            with within(deadline):
                return work(raw, ip, request_id)

        try:
            # a request another site could forge does no work at all: before limits and models
            check_request(request, request.app.state.origin_rule)
            with within(deadline):  # settings SSM did not give yet are read again, in time
                deps.settings  # noqa: B018 (a configuration error answers 503 on every route)
            raw = await read_body(request, BODY_CAPS[route])
            if streams and NDJSON in request.headers.get("accept", ""):
                result = await streamed(gate, deadline, lambda: timed_work(raw), request_id, fail)
            elif gate is None:
                result = timed_work(raw)
            else:
                async with gate.turn(deadline):
                    result = await run_in_threadpool(timed_work, raw)
            response = (result if isinstance(result, Response)
                        else respond(request_id, 200, result))
        except ClientDisconnect:  # the reader left before sending the question: not a failure
            response = JSONResponse(None, CLIENT_CLOSED)
        except Exception as exc:  # every failure becomes JSON, never a stack trace
            response = fail(exc, request_id, raw)
        log("request", request_id=request_id, route=route, status=response.status_code,
            ms=round((time.perf_counter() - start) * 1000, 1),
            client=hashlib.sha256(ip.encode()).hexdigest()[:12])
        return response
    return run


NDJSON = "application/x-ndjson"


async def streamed(gate: Gate | None, deadline: Deadline, work: Callable[[], dict], request_id: str,
                   fail: Failure) -> dict | Response:
    """POST /chat asked with `Accept: application/x-ndjson` on a local server or the Lambda
    `stream` function (functions.api.lambda_stream): a model's answer as it is written (functions.answers.streaming), one JSON object a line:
    `{"partial": {"answer", "citations"}}` each time a checked sentence joins the text shown,
    then `{"final": …}`, the body a non-streamed request gets (or `{"failed": {"status",
    "body"}}`). Until the first sentence, nothing is sent: an answer with none (offline, a
    refusal, an error) is the usual JSON response, with its status. Without a gate (Lambda, one
    request at a time) the work runs on a thread of its own, so the sentences leave as they come."""
    import asyncio

    from starlette.responses import StreamingResponse

    from functions.answers.streaming import streaming

    loop = asyncio.get_running_loop()
    events: asyncio.Queue = asyncio.Queue()

    def sink(event: dict) -> None:
        loop.call_soon_threadsafe(events.put_nowait, ("partial", event))

    def worked() -> dict | Response:
        with streaming(sink):
            return work()

    async def produce() -> None:
        try:
            if gate is None:
                events.put_nowait(("final", await asyncio.to_thread(worked)))
                return
            async with gate.turn(deadline):
                events.put_nowait(("final", await run_in_threadpool(worked)))
        except Exception as exc:  # noqa: BLE001 (every failure becomes JSON, as in `endpoint`)
            events.put_nowait(("failed", exc))

    producer = asyncio.create_task(produce())
    kind, item = await events.get()
    if kind == "final":
        return item
    if kind == "failed":
        raise item

    async def lines():
        nonlocal kind, item
        _ = producer  # held until the answer is done
        while True:
            if kind == "partial":
                line = {"partial": item}
            elif kind == "final":
                line = {"final": item if isinstance(item, dict) else {}}
                line["final"] = {**line["final"], "request_id": request_id}
            else:
                failed = fail(item, request_id)
                line = {"failed": {"status": failed.status_code,
                                   "body": json.loads(bytes(failed.body))}}
            yield json.dumps(line, ensure_ascii=False) + "\n"
            if kind != "partial":
                return
            kind, item = await events.get()

    return StreamingResponse(lines(), media_type=NDJSON,
                             headers={REQUEST_ID_HEADER: request_id, "Cache-Control": "no-store"})


def _record(deps, request_id: str, question: str, result: Answer, mode: str) -> None:
    try:
        deps.feedback.record_answer(request_id, question, list(result.citations),
                                    result.low_confidence, mode)
    except Exception as exc:  # the answer still goes out; the log says what was lost
        log("record_answer failed", logging.WARNING, request_id=request_id,
            error=operator_detail(exc)[:300])


# Each route's answer code (answers.chat, sources, selection) and retrieval are imported on first
# use, so each Lambda function loads only its own: the selection function never imports
# retrieval, the store or an embedder (test_handlers checks).
def answer(deps, body: bytes | dict, ip: str, request_id: str) -> dict:
    """/chat's work on a body (raw, or parsed: MCP's ask_book): the rate limit, the request's
    checks, the answer and its record."""
    from functions.answers.chat import answer_chat

    check_rate(deps.rate_limiter, ip)
    req = chat_request(parse_json(body) if isinstance(body, bytes) else body)
    result = answer_chat(req, deps.retriever, deps.chat_model, deps.spend_cap,
                         deps.settings, deps.paid)
    # an answer its request's time did not hold is not sent late (busy: come back), and its
    # record leaves the reply its time
    on_time(keep=REPLY_SECONDS)
    with within(float("inf"), reserve=REPLY_SECONDS):
        _record(deps, request_id, req.question, result, "chat")
    return result.as_dict()  # the Answer stays typed until here


def chat_work(deps) -> Work:
    def work(raw: bytes, ip: str, request_id: str) -> dict:
        return answer(deps, raw, ip, request_id)
    return work


def sources_work(deps) -> Work:
    """POST /sources: the /chat body, answered with the sections found (functions.answers.sources)
    and, where a model writes the answers, the offline answer's passage. Its own rate-limit
    bucket, so asking for sources never uses up a reader's questions. With `"search": true`,
    the sections the words typed so far find (the widget's box searching as the reader types),
    in a bucket of their own."""
    def work(raw: bytes, ip: str, request_id: str) -> dict:
        from functions.answers.sources import find_sources, search_as_typed

        body = parse_json(raw)
        if search_flag(body):  # the widget's box, as the reader types: its own allowance
            settings = deps.settings
            check_rate(deps.rate_limiter, f"{ip}|search", doing="searching",
                       limits=(settings.search_rate_limit_per_minute,
                               settings.search_rate_limit_per_day))
            return {"sections": search_as_typed(chat_request(body), deps.retriever, deps.spend_cap,
                                                deps.paid)}
        check_rate(deps.rate_limiter, f"{ip}|sources")
        req = chat_request(body)
        return find_sources(req, deps.retriever, deps.spend_cap, deps.settings, deps.paid,
                            writes=deps.chat_model is not None)
    return work


def search_book(deps, body: dict, ip: str) -> dict:
    """MCP's search_book: the sections themselves, in /sources' rate-limit bucket (no model)."""
    from functions.answers.sources import search_sections

    check_rate(deps.rate_limiter, f"{ip}|sources")
    req = chat_request(body)
    return {"sections": search_sections(req, deps.retriever, deps.spend_cap, deps.paid)}


def fetch_page(deps, body: dict, ip: str) -> dict:
    """MCP's fetch_page: one page as Markdown from the index (functions.search.page), in
    /sources' rate-limit bucket (no model)."""
    from functions.search.page import page_markdown

    check_rate(deps.rate_limiter, f"{ip}|sources")
    url = body.get("url")
    if not isinstance(url, str) or not url.strip():
        raise ApiError(422, "empty_field", "`url` is required: a page's or a section's URL as "
                       "search_book or ask_book gave it.")
    if len(url) > 2000:
        raise ApiError(422, "invalid_field", "`url` is too long; send a URL the tools gave.")
    page = page_markdown(url.strip(), deps.retriever)
    if page is None:
        raise ApiError(422, "unknown_page", f"The book has no page at {url.strip()[:120]!r}; "
                       "use a `url` that search_book or ask_book returned.")
    return page


def mcp_tools(deps) -> mcp.RunTool:
    """The MCP tools' work: each is its HTTP route's (functions.api.mcp), its URLs absolute
    when the index records the site's address (an assistant's reader is not on the site; the
    widget's /chat keeps the site-relative ones)."""
    def run(name: str, body: dict, ip: str, request_id: str) -> dict:
        if name == "fetch_page":  # the site's address is known once the index was read
            page = fetch_page(deps, body, ip)
            return on_site_page(page, getattr(deps.retriever, "site_url", None))
        fields = (answer(deps, body, ip, request_id) if name == "ask_book"
                  else search_book(deps, body, ip))
        return on_site(fields, getattr(deps.retriever, "site_url", None))
    return run


def on_site_page(page: dict, site_url: str | None) -> dict:
    """fetch_page's URLs (the page's, its headings' and the links in its Markdown) on the
    site's address."""
    if not site_url:
        return page
    from functions.search.retrieval import absolute

    path = page["url"]
    page["markdown"] = page["markdown"].replace(f"]({path}", f"]({absolute(path, site_url)}")
    page["url"] = absolute(path, site_url)
    for heading in page["sections"]:
        heading["url"] = absolute(heading["url"], site_url)
    return page


def on_site(fields: dict, site_url: str | None) -> dict:
    """The result's `url`s (sections, citations, related topics) on the site's address."""
    if not site_url:
        return fields
    from functions.search.retrieval import absolute

    for key in ("sections", "citations", "related_topics"):
        for item in fields.get(key) or []:
            if isinstance(item, dict) and isinstance(item.get("url"), str):
                item["url"] = absolute(item["url"], site_url)
    return fields


def mcp_work(deps) -> Work:
    """POST /mcp: one JSON-RPC message, answered as one JSON response (Streamable HTTP without
    SSE), or 202 with no body for a notification."""
    run_tool = mcp_tools(deps)

    def work(raw: bytes, ip: str, request_id: str) -> Response:
        reply = mcp.handle(raw, run_tool, ip, request_id)
        if reply is None:
            return Response(status_code=202, headers={REQUEST_ID_HEADER: request_id})
        return mcp_reply(reply, request_id)
    return work


def mcp_reply(reply: dict, request_id: str, status: int = 200) -> Response:
    """A JSON-RPC reply, with Retry-After when it says when to try again."""
    result = reply.get("result") or {}
    data = (reply.get("error") or {}).get("data") or (
        (result.get("structuredContent") or {}).get("error") if result.get("isError") else None)
    retry = (data or {}).get("retry_after")
    return json_response(reply, status, request_id, {"Retry-After": str(retry)} if retry else None)


def mcp_failure(exc: BaseException, request_id: str, raw: bytes = b"") -> Response:
    """A failure outside the tools (origin, size, configuration, busy, the version header).
    A message whose id could be read is answered with it: busy is a 200 the client retries
    (a tool's error result, or a JSON-RPC error, with `retry_after`); the rest keep their HTTP
    status. Before the message is read, the body is a JSON-RPC error with a null id."""
    err = from_exception(exc)
    if err.status >= 500:
        log("error", logging.WARNING, request_id=request_id, code=err.code,
            error=operator_detail(exc))
    reply = mcp.failure_reply(raw, err) if raw else None
    if reply is not None:
        return mcp_reply(reply, request_id, 200 if err.retry_after is not None else err.status)
    rpc = mcp.from_api_error(err)
    return json_response(mcp.error_reply(None, rpc.code, rpc.message, rpc.data), err.status,
                         request_id, error_headers(err))


def unsupported_version(raw: bytes, ip: str, request_id: str) -> Response:
    raise ApiError(400, "unsupported_protocol_version", "This MCP-Protocol-Version header is "
                   f"not supported; use one of {', '.join(mcp.PROTOCOL_VERSIONS)}.")


def mcp_route(deps, gate: Gate | None):
    """/mcp: POST one message; GET (a server-sent event stream) and DELETE (a session) are
    405, as the transport allows a server that keeps neither. A protocol version header the
    server does not speak is 400, before any work (its message read only for its id)."""
    post = endpoint(deps, "mcp", mcp_work(deps), gate, mcp_failure)
    refuse = endpoint(deps, "mcp", unsupported_version, None, mcp_failure)

    async def run(request: Request) -> Response:
        if request.method != "POST":
            response = mcp_failure(ApiError(405, "method_not_allowed", f"{request.method} is "
                                            "not allowed on /mcp: POST one JSON-RPC message."),
                                   new_request_id())
            response.headers["Allow"] = "POST"
            return response
        version = request.headers.get("mcp-protocol-version")
        if version is not None and version not in mcp.PROTOCOL_VERSIONS:
            return await refuse(request)
        return await post(request)
    return run


def selection_work(deps) -> Work:
    def work(raw: bytes, ip: str, request_id: str) -> dict:
        from functions.answers.selection import answer_selection

        check_rate(deps.rate_limiter, ip)
        req = selection_request(parse_json(raw))
        tokens = check_size(req.selected_text, deps.settings.max_selection_tokens)
        result = answer_selection(req, deps.chat_model, deps.spend_cap, tokens)
        _record(deps, request_id, req.question, result, "selection")
        return result.as_dict()
    return work


def feedback_work(deps) -> Work:
    def work(raw: bytes, ip: str, request_id: str) -> dict:
        check_rate(deps.rate_limiter, ip)
        req = feedback_request(parse_json(raw))
        if not deps.feedback.save_feedback(req.request_id, req.rating, req.comment):
            raise ApiError(422, "unknown_request",
                           "This answer is unknown or too old to rate; ask again and rate the "
                           "new answer.")
        return {"ok": True}
    return work


def health(deps, threaded: bool):
    """GET /health: 200 when every service the chat routes need answers (the index, the limits'
    and the feedback's store), else 503 with the first one's error; `services` says each."""
    async def run(request: Request) -> JSONResponse:
        request_id = new_request_id()
        try:
            s = deps.settings
        except Exception as exc:
            return _failure(exc, request_id)

        def check() -> tuple[dict, dict, BaseException | None]:
            with within(Deadline(request_seconds(request.scope.get("aws.context")))):
                return service_status(deps)

        index, services, error = (await run_in_threadpool(check) if threaded else check())
        if error is not None:
            return _failure(error, request_id, {"services": services})
        return respond(request_id, 200, {"status": "ok", "chat_provider": s.chat_provider,
                                         "embedding_model": s.embedding_model, "index": index,
                                         "services": services})
    return run


def service_status(deps) -> tuple[dict, dict, BaseException | None]:
    """(the index's status, {service: "ok" or its error code}, the first error or None)."""
    index: dict = {}
    services: dict[str, str] = {}
    first: BaseException | None = None

    def probe(name: str, check: Callable[[], object]) -> None:
        nonlocal first
        try:
            check()
            services[name] = "ok"
        except Exception as exc:  # noqa: BLE001 - reported per service
            services[name] = from_exception(exc).code
            first = first or exc

    probe("index", lambda: index.update(index_status(deps)))
    probe("limits", lambda: [getattr(x, "check", lambda: None)()
                             for x in (deps.rate_limiter, deps.spend_cap)])
    probe("feedback", lambda: getattr(deps.feedback, "check", lambda: None)())
    return index, services, first


def index_status(deps) -> dict:
    """What /chat will search: collection, model, chunk count, last sync; raises when unusable."""
    from functions.search.retrieval import check_model

    search, embedder = deps.search, deps.embedder
    status = getattr(search, "index_status", None)
    meta = status() if status else {**search.collection_meta(), "points": None}
    check_model(meta, embedder.model_name, embedder.dimension)
    if meta.get("points") == 0:
        raise StoreUnavailableError("The index is empty: run `textbook-chat index DOCS_DIR`.")
    return {"collection": deps.settings.collection, "embedding_model": meta.get(META_MODEL),
            "chunks": meta.get("points"), "synced_at": meta.get(META_SYNCED_AT)}


async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "bad_request")
    status = exc.status_code if exc.status_code in (404, 405) else 400
    message = {404: f"There is no {request.url.path} here.",
               405: f"{request.method} is not allowed on {request.url.path}."}.get(
                   status, "Bad request.")
    return _failure(ApiError(status, code, message), new_request_id())


def create_app(deps, routes: str = "chat", cors_origins: Iterable[str] | None = None,
               cors_origin_regex: str | None = None, threaded: bool = True,
               allowed_by: str = DEPLOYED_FIX, streams: bool | None = None) -> Starlette:
    """routes: "chat" (/chat, /sources, /feedback, /mcp, /health), "selection" (/selection) or
    "all".
    CORS allows only cors_origins (default: settings.allowed_origins) or cors_origin_regex;
    a refused site is told how the author allows one here (`allowed_by`: `serve` names its flag).
    threaded=False runs the blocking work inline (Lambda: one request per container); True runs
    it on threads behind a gate (functions.api.admission) that answers 503 busy past capacity.
    streams: /chat may answer NDJSON as the model writes (default: threaded, the local server;
    on Lambda only the `stream` function's response reaches the reader in parts)."""
    configure_logging()
    gate = Gate() if threaded else None  # one for all routes: they share the threads and CPUs
    table = []
    if routes in ("chat", "all"):
        chat = endpoint(deps, "chat", chat_work(deps), gate,
                        streams=threaded if streams is None else streams)
        table += [Route("/chat", chat, methods=["POST"]),
                  Route("/feedback", endpoint(deps, "feedback", feedback_work(deps), gate),
                        methods=["POST"]),
                  Route("/sources", endpoint(deps, "sources", sources_work(deps), gate),
                        methods=["POST"]),
                  Route("/mcp", mcp_route(deps, gate), methods=["POST", "GET", "DELETE"]),
                  Route("/health", health(deps, threaded), methods=["GET"])]
    if routes in ("selection", "all"):
        table.append(Route("/selection", endpoint(deps, "selection", selection_work(deps), gate),
                           methods=["POST"]))
    if not table:
        raise ValueError(f"routes={routes!r}: use chat, selection or all")
    origins = list(cors_origins if cors_origins is not None else deps.allowed_origins)
    middleware = [Middleware(JsonCORSMiddleware, allowed_by=allowed_by, allow_origins=origins,
                             allow_origin_regex=cors_origin_regex, allow_methods=["GET", "POST"],
                             allow_headers=["Content-Type", "MCP-Protocol-Version"], max_age=600,
                             expose_headers=[REQUEST_ID_HEADER, "Retry-After"])]
    app = Starlette(routes=table, middleware=middleware,
                    exception_handlers={HTTPException: _http_error})
    app.state.origin_rule = OriginRule(origins, cors_origin_regex, allowed_by)  # CORS's sites
    return app
