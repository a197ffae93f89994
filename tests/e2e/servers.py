"""Small HTTP servers for the e2e tests: the built site under its baseUrl, a switchable API proxy, a stub API."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tests.ports import POLL_SECONDS, free_port, wait_until_serving


def _serve(server: ThreadingHTTPServer):
    thread = threading.Thread(target=server.serve_forever, args=(POLL_SECONDS,), daemon=True)
    thread.start()
    return thread


@contextmanager
def running(server: ThreadingHTTPServer):
    """Serve in a daemon thread; always shut down, even when the test fails."""
    _serve(server)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def origin(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def static_site(build_dir: Path, base_url: str, port: int = 0) -> ThreadingHTTPServer:
    """The Docusaurus build folder served at `base_url`, the way GitHub Pages serves it."""

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args):  # keep pytest output quiet
            pass

        def _file(self) -> Path | None:
            path = unquote(urlsplit(self.path).path)
            if not path.startswith(base_url):
                return None
            rel = path[len(base_url):]
            target = (build_dir / rel).resolve()
            if build_dir.resolve() not in (target, *target.parents):
                return None
            for candidate in (target, target / "index.html", target.with_name(target.name + ".html")):
                if candidate.is_file():
                    return candidate
            return None

        def do_GET(self):
            file = self._file()
            if file is None:
                if urlsplit(self.path).path == "/":
                    self.send_response(302)
                    self.send_header("Location", base_url)
                    self.end_headers()
                    return
                file, status = build_dir / "404.html", 404
            else:
                status = 200
            body = file.read_bytes()
            self.send_response(status)
            self.send_header("Content-Type", self.guess_type(str(file)))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


class SwitchableProxy(ThreadingHTTPServer):
    """Forwards every request verbatim (CORS preflights included) to `target`, which tests switch."""

    target: str | None = None
    requests: list[tuple[str, str, bytes]]


def api_proxy(port: int = 0) -> SwitchableProxy:
    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            self.server.requests.append((self.command, self.path, body))
            if self.server.target == "drop":
                # Like an unreachable API: the connection dies without a reply.
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if not self.server.target:
                self.send_error(503, "no API behind the proxy")
                return
            host, port = urlsplit(self.server.target).netloc.split(":")
            conn = http.client.HTTPConnection(host, int(port), timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            conn.request(self.command, self.path, body=body or None, headers=headers)
            reply = conn.getresponse()
            if "x-ndjson" in (reply.getheader("Content-Type") or ""):
                self._stream(reply)  # an answer as it is written: passed on line by line
                conn.close()
                return
            data = reply.read()
            self.send_response(reply.status)
            for key, value in reply.getheaders():
                if key.lower() not in ("transfer-encoding", "connection", "content-length", "server", "date"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            conn.close()

        def _stream(self, reply):
            self.send_response(reply.status)
            for key, value in reply.getheaders():
                if key.lower() not in ("transfer-encoding", "connection", "content-length", "server", "date"):
                    self.send_header(key, value)
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True  # the body ends when the connection does (HTTP/1.0)
            while line := reply.readline():
                self.wfile.write(line)
                self.wfile.flush()

        do_GET = do_POST = do_OPTIONS = _forward

    server = SwitchableProxy(("127.0.0.1", port), Handler)
    server.requests = []
    return server


def stub_api(answer: dict, status: int = 200, headers: dict | None = None,
             delay: float = 0.0) -> ThreadingHTTPServer:
    """An API that gives every POST the same reply, `delay` seconds after it, with permissive
    CORS (for the malicious-answer test)."""

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _cors(self):
            self.send_header("Access-Control-Allow-Origin", self.headers.get("Origin") or "*")
            self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
            self.send_header("Access-Control-Allow-Headers", "content-type, accept")
            self.send_header("Access-Control-Expose-Headers", "Retry-After")

        def do_OPTIONS(self):
            self.send_response(204)
            self._cors()
            self.end_headers()

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if delay:
                import time

                time.sleep(delay)
            body = json.dumps(answer).encode()
            self.send_response(status)
            self._cors()
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the page moved on before the image arrived

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


@contextmanager
def textbook_chat_serve(cli: list[str], env: dict, cwd: Path, log_path: Path, port: int = 0,
                        extra: tuple[str, ...] = ()):
    """`textbook-chat serve` in a child process until /health answers; yields its URL and
    always stops it. Startup failures show the server's log."""
    import subprocess

    if not port:
        port = free_port()
    log = log_path.open("w")
    proc = subprocess.Popen([*cli, "serve", "--host", "127.0.0.1", "--port", str(port), *extra],
                            cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(url, 90, proc, "textbook-chat serve", said=lambda: "\n" + log_path.read_text())
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def slow_images() -> ThreadingHTTPServer:
    """Images that arrive late, as a diagram service or a slow CDN sends them:
    `/diagram.svg?delay=MS&height=PX` answers after MS milliseconds with an SVG PX tall (the page
    gives no dimensions, so the layout grows when it arrives)."""
    import time
    from urllib.parse import parse_qs

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            query = parse_qs(urlsplit(self.path).query)
            time.sleep(int(query.get("delay", ["0"])[0]) / 1000)
            height = int(query.get("height", ["400"])[0])
            body = (f'<svg xmlns="http://www.w3.org/2000/svg" width="600" height="{height}">'
                    f'<rect width="600" height="{height}" fill="#9ab"/></svg>').encode()
            self.send_response(200)
            self.send_header("Content-Type", "image/svg+xml")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the page moved on before the image arrived

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)
