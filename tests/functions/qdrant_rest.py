"""A tiny Qdrant REST server for tests: parses requests with qdrant_client's own REST models
(generated from Qdrant's OpenAPI) and answers from a real local-mode client."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from qdrant_client.http import models


@contextmanager
def qdrant_rest(client) -> Iterator[tuple[str, list[dict]]]:
    """Yields (base url, requests seen); GET /collections/{name}, POST .../points/query."""
    seen: list[dict] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, data: dict) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self):  # noqa: N802
            name = self.path.split("/")[2]
            seen.append({"path": self.path, "api-key": self.headers.get("api-key")})
            with lock:
                if not client.collection_exists(name):
                    return self._send(404, {"status": {"error": f"Collection `{name}` missing"}})
                info = client.get_collection(name)
            self._send(200, {"result": info.model_dump(mode="json"), "status": "ok"})

        def do_POST(self):  # noqa: N802
            name = self.path.split("/")[2]
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "api-key": self.headers.get("api-key"), "body": body})
            req = models.QueryRequest.model_validate(body)
            with lock:
                res = client.query_points(
                    name, query=req.query, using=req.using, prefetch=req.prefetch,
                    query_filter=req.filter, limit=req.limit, with_payload=req.with_payload,
                    with_vectors=req.with_vector)
            self._send(200, {"result": res.model_dump(mode="json"), "status": "ok"})

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
