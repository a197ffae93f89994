"""A fake OpenAI-compatible HTTP server on 127.0.0.1 for tests (embeddings + chat completions).

Usage::

    with FakeOpenAI(dimension=1536) as server:
        client = openai.OpenAI(api_key="test-key", base_url=server.base_url, max_retries=0)
        server.fail_next(status=429, retry_after=0)   # the next request gets a 429
        server.delay_next(2.0)                         # the one after waits 2 s (client timeouts)
        server.reply_next("Scripted answer [2].")      # the next chat completion says this
        ...
        server.requests            # every request: RecordedRequest(path, body, headers, status)
        server.embedding_requests  # only POST /v1/embeddings that succeeded
        server.chat_requests       # only POST /v1/chat/completions that succeeded

- `POST /v1/embeddings`: one deterministic unit vector per input, derived from a hash of the
  text (`embedding_for(text, dimension)`), honouring `dimensions` and
  `encoding_format` (`float` or `base64`, which the openai client asks for by default).
- `POST /v1/chat/completions`: a scripted reply (`reply_next`) or `default_reply`, which cites
  `[1]`; with `stream: true` the reply comes as server-sent events, a word at a time (OpenAI's
  `chat.completion.chunk`s, then the usage when `stream_options.include_usage`, then `[DONE]`).
  `hold_streams()` returns an Event: until it is set, each stream stops after its first cited
  sentence and the next word (what a reader sees first), so a test sees what shows meanwhile;
  `stream_pause` spaces the words as a model writing them would.
- `fail_next(status, times=1, retry_after=None, endpoint=None)`: scripted errors (401, 429, 5xx)
  in OpenAI's error shape, with a `Retry-After` header when given; `endpoint` is
  "embeddings" or "chat" to aim at one route. `delay_next(seconds, ...)` sleeps before
  answering normally, to trigger client timeouts. Scripted events apply in the order given.
- `responder`: a function of the request body returning the reply, used when nothing is
  scripted; `passage_responder` answers like a careful model from the `[n]` passages it is
  given (rewrites follow-ups by joining the previous question, and a question in the book's
  terms by adding the listed section heading that shares most of its words).
- `reverse_embeddings=True` lists embeddings last-first, as the API may: clients must use `index`.
- `api_key`: when set, requests with another bearer token get a 401.
The server binds a free port, runs in a daemon thread and stops on `stop()` / leaving the `with`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from random import Random

from tests.ports import POLL_SECONDS

DEFAULT_REPLY = "According to the textbook, this is explained in the cited section [1]."
_ROUTES = {"/v1/embeddings": "embeddings", "/v1/chat/completions": "chat"}


def embedding_for(text: str, dimension: int) -> list[float]:
    """The deterministic unit vector the fake returns for text."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    rng = Random(seed)
    vec = [rng.gauss(0.0, 1.0) for _ in range(dimension)]
    norm = sum(v * v for v in vec) ** 0.5 or 1.0
    return [v / norm for v in vec]


@dataclass
class RecordedRequest:
    path: str
    body: dict
    headers: dict[str, str]
    status: int = 200  # 0 while the answer is still being prepared (delay_next)


@dataclass
class _Event:
    endpoint: str | None
    status: int | None = None  # an error status, or None for a delay
    retry_after: float | None = None
    message: str | None = None
    delay: float = 0.0


@dataclass
class FakeOpenAI:
    dimension: int = 1536
    api_key: str | None = None
    default_reply: str = DEFAULT_REPLY
    reverse_embeddings: bool = False  # list `data` last-first (with true `index`es)
    responder: Callable[[dict], str] | None = None  # the reply when none is scripted
    stream_pause: float = 0.0  # seconds between the words of a streamed reply (a model writing)
    requests: list[RecordedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[_Event] = []
        self._replies: list[str] = []
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._stream_gate: threading.Event | None = None

    # -- scripting -------------------------------------------------------------------------
    def fail_next(self, status: int = 500, times: int = 1, retry_after: float | None = None,
                  endpoint: str | None = None, message: str | None = None) -> None:
        with self._lock:
            self._events += [_Event(endpoint, status, retry_after, message) for _ in range(times)]

    def delay_next(self, seconds: float, times: int = 1, endpoint: str | None = None) -> None:
        with self._lock:
            self._events += [_Event(endpoint, delay=seconds) for _ in range(times)]

    def hold_streams(self) -> threading.Event:
        """Streams stop after their first cited sentence and the next word until the Event is set."""
        with self._lock:
            self._stream_gate = threading.Event()
            return self._stream_gate

    def reply_next(self, content: str, times: int = 1) -> None:
        with self._lock:
            self._replies += [content] * times

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == "/v1/embeddings" and r.status == 200]

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == "/v1/chat/completions" and r.status == 200]

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "start the server first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> FakeOpenAI:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        # a short poll: shutdown() waits up to one interval (0.5 s by default, in every test)
        threading.Thread(target=self._httpd.serve_forever, args=(POLL_SECONDS,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._stopping.set()  # wakes handlers sleeping in delay_next
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- request handling (called from handler threads) ------------------------------------
    def _take_event(self, endpoint: str) -> _Event | None:
        with self._lock:
            for i, event in enumerate(self._events):
                if event.endpoint in (None, endpoint):
                    return self._events.pop(i)
        return None

    def _handle(self, path: str, body: dict, headers: dict[str, str]) -> tuple[int, dict, dict]:
        endpoint = _ROUTES.get(path)
        if endpoint is None:
            return _error(404, f"No route {path} in the fake OpenAI server.")
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided.", code="invalid_api_key")
        event = self._take_event(endpoint)
        if event is not None and event.status is not None:
            return _error(event.status, event.message or f"Scripted failure {event.status}.",
                          retry_after=event.retry_after)
        if event is not None and event.delay:
            self._stopping.wait(event.delay)
        if endpoint == "embeddings":
            return 200, self._embeddings(body), {}
        return self._chat(body)

    def _embeddings(self, body: dict) -> dict:
        inputs = body.get("input", [])
        inputs = [inputs] if isinstance(inputs, str) else list(inputs)
        dimension = int(body.get("dimensions") or self.dimension)
        data = []
        for i, text in enumerate(inputs):
            vec = embedding_for(str(text), dimension)
            if body.get("encoding_format") == "base64":
                vec = base64.b64encode(struct.pack(f"<{dimension}f", *vec)).decode("ascii")
            data.append({"object": "embedding", "index": i, "embedding": vec})
        if self.reverse_embeddings:
            data.reverse()
        tokens = sum(len(str(t).split()) for t in inputs)
        return {"object": "list", "data": data, "model": body.get("model", "fake"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    def _chat(self, body: dict) -> tuple[int, dict, dict]:
        with self._lock:
            content = self._replies.pop(0) if self._replies else None
        if content is None:
            content = self.responder(body) if self.responder else self.default_reply
        prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        completion = len(content.split())
        if body.get("stream"):
            return 200, {"_stream": content, "model": body.get("model", "fake"),
                         "usage": body.get("stream_options", {}).get("include_usage") and {
                             "prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion}}, {}
        return 200, {
            "id": f"chatcmpl-fake-{len(self.requests)}", "object": "chat.completion",
            "created": int(time.time()), "model": body.get("model", "fake"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }, {}


def _error(status: int, message: str, retry_after: float | None = None,
           code: str | None = None) -> tuple[int, dict, dict]:
    headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
    kind = "invalid_request_error" if status < 500 else "server_error"
    return status, {"error": {"message": message, "type": kind, "code": code}}, headers


def _handler_for(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            headers = {k.lower(): v for k, v in self.headers.items()}
            record = RecordedRequest(self.path, body, headers, status=0)  # 0 while in flight
            with server._lock:
                server.requests.append(record)
            status, payload, extra = server._handle(self.path, body, headers)
            record.status = status
            if "_stream" in payload:
                self._stream(payload)
                return
            data = json.dumps(payload).encode("utf-8")
            try:
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **extra}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test): nothing to answer

        def _stream(self, payload: dict) -> None:
            """The reply as server-sent events, a word at a time (chunked transfer)."""
            words = re.findall(r"\S+\s*", payload["_stream"])
            # the first cited sentence ("… [1]." or "… . [1]") and the next word
            first = re.search(r"\[\d+\][.!?]?\s+\S+\s*", payload["_stream"])
            hold_at = first.end() if first else None
            gate = server._stream_gate

            def chunk(data: dict | str) -> None:
                line = f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()
                self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
                self.wfile.flush()

            def piece(delta: dict, finish: str | None = None, usage: dict | None = None) -> dict:
                return {"id": "chatcmpl-fake-stream", "object": "chat.completion.chunk",
                        "created": int(time.time()), "model": payload["model"],
                        "choices": [] if usage else [{"index": 0, "delta": delta,
                                                      "finish_reason": finish}],
                        **({"usage": usage} if usage else {})}
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk(piece({"role": "assistant", "content": ""}))
                sent = 0
                for word in words:
                    if sent and server.stream_pause:
                        server._stopping.wait(server.stream_pause)
                    chunk(piece({"content": word}))
                    sent += len(word)
                    if gate is not None and hold_at is not None and sent >= hold_at:
                        while not gate.wait(0.05) and not server._stopping.is_set():
                            pass
                        gate = None
                chunk(piece({}, "stop"))
                if payload.get("usage"):
                    chunk(piece({}, usage=payload["usage"]))
                chunk("[DONE]")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args) -> None:  # keep test output quiet
            pass

    return Handler


_BLOCK = re.compile(r"^\[(\d+)\] ([^\n]*)\n(.*?)(?=^\[\d+\] |\Z)", re.S | re.M)
_WORD = re.compile(r"[a-z0-9]+")
_FENCE = re.compile(r"^\s*(```|~~~)")
_NUMBERED = re.compile(r"^\d{1,3}[.)]\s+")
# Function words a reader's question shares with any text: a model does not match on them.
_FUNCTION_WORDS = frozenset(
    """about above after again also because been before being below between both could does
    doing down during each from further had has have having here into itself just more most once
    only other over same should some such than that their them then there these they this those
    through under until very were what when where which while whom will with would your""".split())
HEADING_WEIGHT = 1.0  # a question word in the passage's own heading (not in the sentence)
TRAIL_WEIGHT = 0.5  # a question word only in the headings above it


def _tag(text: str, name: str) -> str:
    match = re.search(rf"<{name}>\n(.*?)\n</{name}>", text, re.S)
    return match.group(1) if match else ""


def _stem(word: str) -> str:
    """Forms of a word read alike ("recovery"/"recover", "backing"/"back", "sensors")."""
    for suffix in ("ies", "ing", "ed", "es", "s", "y"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    return word[:6]


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.lower())
            if len(w) >= 4 and w not in _FUNCTION_WORDS}


def _units(text: str) -> list[str]:
    """A passage's sentences (its lines run together, list items and code lines included,
    headings and tables left out; a numbered list reads as one, like a bulleted one) and each
    code block with the line that leads into it ("…like this:")."""
    prose = [_NUMBERED.sub("- ", line.strip()) for line in text.splitlines()
             if line.strip() and not line.lstrip().startswith(("#", "|", "`", "<"))]
    units = [s.strip() for s in re.split(r"(?<=[.!?])\s+", " ".join(prose)) if s.strip()]
    lines = [line for line in text.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if _FENCE.match(line) and i and lines[i - 1].rstrip().endswith(":"):
            end = next((j for j in range(i + 1, len(lines)) if _FENCE.match(lines[j])), None)
            if end is not None:
                units.append(lines[i - 1].strip() + "\n" + "\n".join(lines[i:end + 1]))
    return units


def _quote(unit: str, n: int) -> str:
    """A unit cited with its passage's number: "… [n]." or, for a lead-in and its code block,
    "… [n]:" and the block."""
    if "\n" in unit:
        lead, code = unit.split("\n", 1)
        return f"{lead.rstrip(':').rstrip('.')} [{n}]:\n{code}\n"
    return f"{unit.rstrip('.')} [{n}]."


def passage_responder(body: dict) -> str:
    """A model that only says what its passages say (nothing else: no corpus, no expected
    answers). The rewrite of a follow-up is the question and the previous question. An answer
    quotes the two units (sentences, or a lead-in and its code block) of the given passages that
    best match the question's words, any form of a word alike ("recover", "recovery"): a word
    counts once, found in the unit, else in its passage's own heading, else (half) in the
    headings above, the way a reader takes "Unity Implementation" to be about Unity. A unit
    must share at least one word itself."""
    user = str(body.get("messages", [{}])[-1].get("content", ""))
    question = _tag(user, "question")
    if "<sections>" in user:  # the rewrite in the book's terms: the section sharing most words
        wanted = _stems(question)
        names = [line[2:] for line in _tag(user, "sections").splitlines() if line.startswith("- ")]
        best = max(names, key=lambda n: len(wanted & _stems(n.split(" › ")[-1])), default="")
        heading = best.split(" › ")[-1]
        return f"{question} {heading}" if wanted & _stems(heading) else question
    if "<context>" not in user:  # the follow-up rewrite
        previous = [line[6:] for line in _tag(user, "conversation").splitlines()
                    if line.startswith("user: ")]
        return f"{question} {previous[-1] if previous else ''}".strip()
    wanted = _stems(question)
    scored = []
    for n, trail, text in _BLOCK.findall(_tag(user, "context") + "\n"):
        heads = trail.split(" > ")
        own, above = _stems(heads[-1]), _stems(" ".join(heads[:-1]))
        for unit in _units(text):
            said = wanted & _stems(unit)
            score = (len(said) + HEADING_WEIGHT * len((wanted - said) & own)
                     + TRAIL_WEIGHT * len((wanted - said - own) & above))
            if said and len(unit) > 20:
                scored.append((-score, int(n), unit))
    if not scored:
        return "I couldn't find this in the book."
    return " ".join(_quote(u, n) for _, n, u in sorted(scored)[:2]).strip()


def main(argv: list[str] | None = None) -> int:
    """`python -m tests.fakes.openai_server --port 18201 [--passages]`: serve until Ctrl+C, e.g.
    to run `textbook-chat eval` on the model path (CHAT_PROVIDER=openai, OPENAI_API_KEY=x,
    OPENAI_BASE_URL=http://127.0.0.1:18201/v1, EMBEDDING_PROVIDER=local)."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--passages", action="store_true",
                        help="answer from the given passages (passage_responder)")
    args = parser.parse_args(argv)
    server = FakeOpenAI(responder=passage_responder if args.passages else None)
    server._httpd = ThreadingHTTPServer(("127.0.0.1", args.port), _handler_for(server))
    print(f"fake OpenAI on {server.base_url}", flush=True)
    try:
        server._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._httpd.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
