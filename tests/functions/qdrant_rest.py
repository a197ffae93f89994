"""A tiny Qdrant REST server for tests: parses requests with qdrant_client's own REST models
(generated from Qdrant's OpenAPI) and answers from a real local-mode client.

What it serves: everything functions/search/qdrant_http.py asks of a server, for the Lambda query
path (GET /collections/{name}, POST .../points/query) and for an index run and a release
(QDRANT_URL: functions/search/store.py's QdrantStore): collections, their metadata and payload
indexes, aliases, scroll, retrieve, upsert, delete and count. So a
`textbook-chat` subprocess can index and release against it, and be killed half-way.
"""

from __future__ import annotations

import json
import re
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel
from qdrant_client.http import models

from tests.ports import POLL_SECONDS

DONE = {"operation_id": 0, "status": "completed"}
VERSION = version("qdrant-client")  # the server version the client expects


def _json(value):
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value


def _routes(client):
    """(method, path pattern, handler(name, body) -> result) for each endpoint served."""

    def get_collection(name, _):
        if not client.collection_exists(name):
            raise LookupError(f"Collection `{name}` doesn't exist!")
        return client.get_collection(name)

    def create(name, body):
        req = models.CreateCollection.model_validate(body)
        return client.create_collection(name, vectors_config=req.vectors,
                                        sparse_vectors_config=req.sparse_vectors,
                                        metadata=req.metadata)

    def update(name, body):
        return client.update_collection(name, metadata=models.UpdateCollection.model_validate(
            body).metadata)

    def index(name, body):
        req = models.CreateFieldIndex.model_validate(body)
        with warnings.catch_warnings():  # local mode says its payload indexes have no effect
            warnings.simplefilter("ignore", UserWarning)
            client.create_payload_index(name, req.field_name, field_schema=req.field_schema)
        return DONE

    def scroll(name, body):
        req = models.ScrollRequest.model_validate(body)
        points, offset = client.scroll(name, scroll_filter=req.filter, limit=req.limit or 10,
                                       offset=req.offset, with_payload=req.with_payload,
                                       with_vectors=req.with_vector or False)
        return {"points": _json(points), "next_page_offset": offset}

    def retrieve(name, body):
        req = models.PointRequest.model_validate(body)
        return client.retrieve(name, req.ids, with_payload=req.with_payload,
                               with_vectors=req.with_vector or False)

    def upsert(name, body):
        client.upsert(name, points=models.PointsList.model_validate(body).points, wait=True)
        return DONE

    def delete(name, body):
        selector = (models.PointIdsList.model_validate(body) if "points" in body
                    else models.FilterSelector.model_validate(body))
        client.delete(name, points_selector=selector, wait=True)
        return DONE

    def count(name, body):
        req = models.CountRequest.model_validate(body)
        return client.count(name, count_filter=req.filter, exact=bool(req.exact))

    def query(name, body):
        req = models.QueryRequest.model_validate(body)
        return client.query_points(
            name, query=req.query, using=req.using, prefetch=req.prefetch,
            query_filter=req.filter, limit=req.limit, with_payload=req.with_payload,
            with_vectors=req.with_vector)

    def aliases(_name, body):
        req = models.ChangeAliasesOperation.model_validate(body)
        return client.update_collection_aliases(change_aliases_operations=req.actions)

    c = r"/collections/(?P<name>[^/?]+)"
    return [
        ("GET", r"/collections", lambda *_: client.get_collections()),
        ("GET", r"/aliases", lambda *_: client.get_aliases()),
        ("POST", r"/collections/aliases", aliases),
        ("GET", c + r"/exists", lambda n, _: {"exists": client.collection_exists(n)}),
        ("GET", c, get_collection),
        ("PUT", c, create),
        ("PATCH", c, update),
        ("DELETE", c, lambda n, _: client.delete_collection(n)),
        ("PUT", c + r"/index", index),
        ("POST", c + r"/points/scroll", scroll),
        ("POST", c + r"/points", retrieve),
        ("PUT", c + r"/points", upsert),
        ("POST", c + r"/points/delete", delete),
        ("POST", c + r"/points/count", count),
        ("POST", c + r"/points/query", query),
    ]


# What a read-only API key may do, as Qdrant's read_only_api_key / Cloud's read-only keys: read
# collections and aliases, scroll, retrieve, count and query points; nothing that writes.
READS = {("POST", "/points/scroll"), ("POST", "/points"), ("POST", "/points/count"),
         ("POST", "/points/query")}


def _reads(method: str, path: str) -> bool:
    return method == "GET" or any(method == m and path.endswith(end) for m, end in READS)


@contextmanager
def qdrant_rest(client, read_only_key: str | None = None, routes: list | None = None
                ) -> Iterator[tuple[str, list[dict]]]:
    """Yields (base url, requests seen: {method, path, api-key, body, status}). read_only_key: a
    request with that `api-key` that would write is refused with 403, as Qdrant does.
    routes: (method, path pattern, handler(name, body) -> result) served instead of the
    local-mode client's (benchmarks/bench_lambda_scale.py serves Qdrant's engine with them)."""
    seen: list[dict] = []
    lock = threading.Lock()
    routes = [(m, re.compile(p + r"$"), fn) for m, p, fn in routes or _routes(client)]

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, data: dict) -> None:
            if getattr(self, "entry", None) is not None:
                self.entry["status"] = status
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _serve(self) -> None:
            path = urlsplit(self.path).path
            if path == "/":  # the client's version check: not wrapped in `result`
                return self._send(200, {"title": "qdrant stand-in", "version": VERSION})
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            self.entry = {"method": self.command, "path": self.path, "body": body,
                          "api-key": self.headers.get("api-key")}
            seen.append(self.entry)
            if read_only_key and self.headers.get("api-key") == read_only_key \
                    and not _reads(self.command, path):
                return self._send(403, {"status": {"error": "Forbidden: read-only api key"}})
            for method, pattern, fn in routes:
                match = pattern.match(path)
                if method == self.command and match:
                    name = unquote(match.groupdict().get("name") or "")
                    try:
                        with lock:
                            result = fn(name, body)
                    except (LookupError, ValueError) as exc:  # local mode's "not found"
                        status = 404 if "not found" in str(exc) or "exist" in str(exc) else 400
                        return self._send(status, {"status": {"error": str(exc)}})
                    return self._send(200, {"result": _json(result), "status": "ok",
                                            "time": 0.0})
            self._send(404, {"status": {"error": f"{self.command} {path} is not served here"}})

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve  # noqa: N815

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(POLL_SECONDS,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
