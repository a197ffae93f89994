"""A Lambda Runtime API (2018-06-01) over real HTTP on 127.0.0.1, for the `stream` function's
runtime (functions.api.lambda_stream): it hands out the events queued with `invoke`, reads each
response as Lambda does (a streamed one chunk by chunk, with its trailers) and records what
arrived in order, so a test can see a part arrive while the function is still working."""

from __future__ import annotations

import json
import queue
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.ports import POLL_SECONDS

PRELUDE_END = b"\0" * 8


@dataclass
class Response:
    """One invocation's response as received: `parts` in arrival order (a streamed one's first
    is its prelude), `done` once the last arrived."""

    request_id: str
    mode: str = ""  # "streaming", or "" for a buffered response
    content_type: str = ""
    parts: list[bytes] = field(default_factory=list)
    trailers: dict[str, str] = field(default_factory=dict)
    error: dict | None = None  # posted to /invocation/{id}/error
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def raw(self) -> bytes:
        return b"".join(self.parts)

    @property
    def prelude(self) -> dict:
        head, sep, _ = self.raw.partition(PRELUDE_END)
        assert sep, f"no prelude in {self.raw[:200]!r}"
        return json.loads(head)

    @property
    def body(self) -> bytes:
        return self.raw.partition(PRELUDE_END)[2] if self.mode == "streaming" else self.raw

    def lines(self) -> list[dict]:
        """The NDJSON lines of the body received so far (whole lines only)."""
        text = self.body.decode()
        complete = text[:text.rfind("\n") + 1]
        return [json.loads(line) for line in complete.splitlines() if line.strip()]


class FakeRuntimeApi:
    def __init__(self):
        self._events: queue.Queue = queue.Queue()
        self.responses: dict[str, Response] = {}
        self.init_error: dict | None = None
        self.restored = threading.Event()
        self.restore_asked = threading.Event()
        self.chunked = False  # send each event in two chunks (Transfer-Encoding: chunked)
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def address(self) -> str:
        assert self._httpd is not None
        return f"127.0.0.1:{self._httpd.server_address[1]}"

    def invoke(self, event: dict, deadline_ms: int) -> Response:
        request_id = str(uuid.uuid4())
        response = self.responses[request_id] = Response(request_id)
        self._events.put((request_id, event, deadline_ms))
        return response

    def pending(self) -> int:
        """Events queued that no runtime has asked for yet."""
        return self._events.qsize()

    def start(self) -> FakeRuntimeApi:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, args=(POLL_SECONDS,),
                         daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()


def _handler(api: FakeRuntimeApi):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet
            pass

        def _send(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _read_body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def do_GET(self) -> None:
            path = self.path.split("/2018-06-01/runtime", 1)[-1]
            if path == "/invocation/next":
                request_id, event, deadline = api._events.get()
                body = json.dumps(event).encode()
                headers = {"Lambda-Runtime-Aws-Request-Id": request_id,
                           "Lambda-Runtime-Deadline-Ms": str(deadline),
                           "Lambda-Runtime-Invoked-Function-Arn": "arn:aws:lambda:eu-west-1:1:function:f",
                           "Content-Type": "application/json"}
                if not api.chunked:
                    self._send(200, body, headers)
                    return
                self.send_response(200)
                for k, v in {**headers, "Transfer-Encoding": "chunked"}.items():
                    self.send_header(k, v)
                self.end_headers()
                half = len(body) // 2
                for part in (body[:half], body[half:]):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.write(b"0\r\n\r\n")
            elif path == "/restore/next":
                api.restore_asked.set()
                api.restored.wait()
                self._send(200)
            else:
                self._send(404)

        def do_POST(self) -> None:
            path = self.path.split("/2018-06-01/runtime", 1)[-1]
            if path == "/init/error":
                api.init_error = json.loads(self._read_body())
                self._send(202)
                return
            _, _, request_id, kind = path.split("/", 3)
            response = api.responses[request_id]
            if kind == "error":
                response.error = json.loads(self._read_body())
            else:
                response.mode = self.headers.get("Lambda-Runtime-Function-Response-Mode", "")
                response.content_type = self.headers.get("Content-Type", "")
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    self._read_chunks(response)
                else:
                    response.parts.append(self._read_body())
            self._send(202, b'{"status":"OK"}', {"Content-Type": "application/json"})
            response.done.set()

        def _read_chunks(self, response: Response) -> None:
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    break
                response.parts.append(self.rfile.read(size))
                self.rfile.readline()  # the chunk's CRLF
            while (line := self.rfile.readline().strip()):
                name, _, value = line.decode("latin-1").partition(":")
                response.trailers[name.strip()] = value.strip()

    return Handler
