"""Lambda `stream`: the chat routes through a function URL whose invoke mode is RESPONSE_STREAM,
so a model's checked sentences reach the reader as they are written (functions.answers.streaming)
where API Gateway's HTTP API can only send the whole answer.

Lambda's managed Python runtime has no response streaming of its own, so this module is the
function's runtime: `functions/api/handlers/stream-runtime` (the function's
AWS_LAMBDA_EXEC_WRAPPER) starts it in place of the managed runtime's client, with the same
Python and the same zip. It speaks the Lambda Runtime API (2018-06-01) itself: init builds what
the `chat` function builds (functions.api.handlers.chat), then each invocation (a function-URL
event, payload 2.0) runs the same ASGI app, asked with streams=True, and its response goes back
in Lambda's streaming response mode as the app sends it: `Lambda-Runtime-Function-Response-Mode:
streaming`, a chunked body whose first part is the HTTP prelude the function URL reads (the
status, headers and cookies as JSON, then 8 NUL bytes), then the body's parts. An error after the
first part is told in the trailers (Lambda-Runtime-Function-Error-Type / -Body), an error before
it through /error. With SnapStart, restore/next is asked after init, as the managed runtime does.

Nothing here is imported by the `chat` or `selection` functions (tests/test_imports.py).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import sys
import time
import traceback
from dataclasses import dataclass, field
from urllib.parse import urlsplit

API_VERSION = "2018-06-01"
PRELUDE_TYPE = "application/vnd.awslambda.http-integration-response"
PRELUDE_END = b"\0" * 8
ERROR_TYPE = "Lambda-Runtime-Function-Error-Type"
ERROR_BODY = "Lambda-Runtime-Function-Error-Body"


@dataclass
class Invocation:
    """One event from /invocation/next and the context a handler gets (what Mangum and
    functions.deadline read of it)."""

    request_id: str
    event: dict
    deadline_ms: int
    function_arn: str = ""
    function_name: str = field(default_factory=lambda: os.environ.get("AWS_LAMBDA_FUNCTION_NAME", ""))

    @property
    def aws_request_id(self) -> str:
        return self.request_id

    def get_remaining_time_in_millis(self) -> int:
        return max(0, self.deadline_ms - int(time.time() * 1000))


class RuntimeApi:
    """The Runtime API at `address` (AWS_LAMBDA_RUNTIME_API, host:port), over plain HTTP/1.1:
    one connection per call, as the streaming response needs a body of chunks and trailers that
    http.client cannot send."""

    def __init__(self, address: str):
        parts = urlsplit(f"http://{address}")
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.base = f"/{API_VERSION}/runtime"

    # --- one request ----------------------------------------------------------------------------
    def _connect(self) -> socket.socket:
        return socket.create_connection((self.host, self.port))

    def _head(self, method: str, path: str, headers: dict[str, str]) -> bytes:
        lines = [f"{method} {self.base}{path} HTTP/1.1", f"Host: {self.host}:{self.port}",
                 *(f"{k}: {v}" for k, v in headers.items()), "", ""]
        return "\r\n".join(lines).encode("latin-1")

    @staticmethod
    def _reply(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
        data = b""
        while b"\r\n\r\n" not in data:
            more = sock.recv(65536)
            if not more:
                raise ConnectionError("the Runtime API closed the connection")
            data += more
        head, _, body = data.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            return int(status_line.split()[1]), headers, RuntimeApi._chunks(sock, body)
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            more = sock.recv(65536)
            if not more:
                break
            body += more
        return int(status_line.split()[1]), headers, body[:length]

    @staticmethod
    def _chunks(sock: socket.socket, data: bytes) -> bytes:
        """A chunked body, `data` being what was read of it already."""
        body = b""
        while True:
            while b"\r\n" not in data:
                data += sock.recv(65536) or b"\r\n"
            size_line, _, data = data.partition(b"\r\n")
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                return body
            while len(data) < size + 2:
                more = sock.recv(65536)
                if not more:
                    return body + data[:size]
                data += more
            body, data = body + data[:size], data[size + 2:]

    def call(self, method: str, path: str, body: bytes = b"",
             headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        with self._connect() as sock:
            sock.sendall(self._head(method, path, {**(headers or {}),
                                                   "Content-Length": str(len(body))}) + body)
            return self._reply(sock)

    # --- the calls a runtime makes --------------------------------------------------------------
    def next(self) -> Invocation:
        status, headers, body = self.call("GET", "/invocation/next")
        if status != 200:
            raise ConnectionError(f"invocation/next answered {status}")
        trace = headers.get("lambda-runtime-trace-id")
        if trace:
            os.environ["_X_AMZN_TRACE_ID"] = trace
        return Invocation(headers["lambda-runtime-aws-request-id"], json.loads(body or b"{}"),
                          int(headers.get("lambda-runtime-deadline-ms", "0") or 0),
                          headers.get("lambda-runtime-invoked-function-arn", ""))

    def error(self, path: str, exc: BaseException) -> None:
        body = json.dumps(error_body(exc)).encode()
        self.call("POST", path, body, {"Content-Type": "application/json",
                                       ERROR_TYPE: f"Runtime.{type(exc).__name__}"})

    def restore_next(self) -> None:
        """SnapStart: blocks until this environment is restored from its snapshot."""
        self.call("GET", "/restore/next")

    def stream(self, request_id: str) -> Stream:
        return Stream(self, request_id)


def error_body(exc: BaseException) -> dict:
    return {"errorMessage": str(exc)[:500], "errorType": type(exc).__name__,
            "stackTrace": traceback.format_exception(exc)[-5:]}


class Stream:
    """One invocation's streamed response: `start(status, headers)`, `write(part)` any number of
    times, then `close()` or `close(exc)` (the error as trailers)."""

    def __init__(self, api: RuntimeApi, request_id: str):
        self.api, self.request_id = api, request_id
        self.sock: socket.socket | None = None

    def start(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        combined: dict[str, str] = {}
        cookies: list[str] = []
        for raw_name, raw_value in headers:
            name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
            if name == "set-cookie":
                cookies.append(value)
            elif name != "content-length":  # the body is sent in parts
                combined[name] = f"{combined[name]}, {value}" if name in combined else value
        self.sock = self.api._connect()
        self.sock.sendall(self.api._head("POST", f"/invocation/{self.request_id}/response", {
            "Lambda-Runtime-Function-Response-Mode": "streaming",
            "Transfer-Encoding": "chunked",
            "Content-Type": PRELUDE_TYPE,
            "Trailer": f"{ERROR_TYPE}, {ERROR_BODY}"}))
        prelude = json.dumps({"statusCode": status, "headers": combined, "cookies": cookies})
        self.write(prelude.encode() + PRELUDE_END)

    def write(self, part: bytes) -> None:
        if part and self.sock is not None:
            self.sock.sendall(b"%x\r\n%s\r\n" % (len(part), part))

    def close(self, exc: BaseException | None = None) -> int:
        """Ends the body (with the error's trailers); the Runtime API's status (202 accepted)."""
        if self.sock is None:
            return 0
        trailers = b""
        if exc is not None:
            body = base64.b64encode(json.dumps(error_body(exc)).encode())
            trailers = (f"{ERROR_TYPE}: Runtime.{type(exc).__name__}\r\n".encode()
                        + ERROR_BODY.encode() + b": " + body + b"\r\n")
        with self.sock:
            self.sock.sendall(b"0\r\n" + trailers + b"\r\n")
            status, _, _ = RuntimeApi._reply(self.sock)
        self.sock = None
        return status


def run_asgi(adapter, invocation: Invocation, out: Stream, loop: asyncio.AbstractEventLoop) -> None:
    """The app's response to one function-URL event, sent part by part as the app sends it. The
    request's scope and body are Mangum's (`adapter`: the `chat` function reads the same)."""
    app = adapter.app
    handler = adapter.infer(invocation.event, invocation)
    body = handler.body
    state: dict = {"sent": False, "status": 200, "headers": []}

    async def receive() -> dict:
        if state.get("read"):  # the reader stays until the answer ends (Lambda finishes it anyway)
            await asyncio.get_running_loop().create_future()
        state["read"] = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            state["status"], state["headers"] = message["status"], message.get("headers", [])
        elif message["type"] == "http.response.body":
            if not state["sent"]:
                out.start(state["status"], state["headers"])
                state["sent"] = True
            out.write(message.get("body", b""))

    loop.run_until_complete(app(handler.scope, receive, send))
    if not state["sent"]:  # a response without a body message still has its status
        out.start(state["status"], state["headers"])


def serve(app, api: RuntimeApi, invocations: int | None = None) -> None:
    """Answers invocations one at a time, forever (or `invocations` of them)."""
    from mangum import Mangum

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    adapter = Mangum(app, lifespan="off")
    done = 0
    while invocations is None or done < invocations:
        invocation = api.next()
        out = api.stream(invocation.request_id)
        try:
            run_asgi(adapter, invocation, out, loop)
        except Exception as exc:  # noqa: BLE001 (the app answers its own errors; this is the rest)
            if out.sock is None:
                api.error(f"/invocation/{invocation.request_id}/error", exc)
            else:
                out.close(exc)
        else:
            out.close()
        done += 1


def main() -> None:
    api = RuntimeApi(os.environ["AWS_LAMBDA_RUNTIME_API"])
    try:
        from functions.api.app import create_app
        from functions.api.handlers.chat import deps  # the `chat` function's init, warm

        app = create_app(deps, "chat", threaded=False, streams=True)
    except Exception as exc:  # noqa: BLE001 (Lambda reports it as the init error)
        api.error("/init/error", exc)
        raise SystemExit(1) from exc
    if os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") == "snap-start":
        api.restore_next()
    sys.stdout.flush()
    serve(app, api)


if __name__ == "__main__":
    main()
