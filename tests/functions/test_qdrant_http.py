"""QdrantHttp against a REST shim that parses requests with qdrant_client's own REST models
(generated from Qdrant's OpenAPI) and answers from the real local-mode collection."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from qdrant_client.http import models

from functions.errors import StoreUnavailableError
from functions.qdrant_http import QdrantHttp, query_body
from functions.retrieval import Retriever
from tests.functions.conftest import DIM, ContentEmbedder


@pytest.mark.parametrize("mode", ["hybrid", "dense", "sparse"])
def test_query_body_is_a_valid_query_request(mode):
    body = query_body([0.1] * 4, ([1, 5], [1.0, 1.0]), 10, {"module": "Sensors"}, mode)
    parsed = models.QueryRequest.model_validate(body)
    assert parsed.limit == 10 and parsed.with_vector == ["dense"]
    if mode == "hybrid":
        assert parsed.query.fusion == models.Fusion.RRF
        assert [p.using for p in parsed.prefetch] == ["dense", "sparse"]
        assert all(p.filter.must[0].key == "module" for p in parsed.prefetch)


@pytest.fixture
def rest_shim(book_store):
    """A tiny Qdrant REST server over the local collection; records api-key headers."""
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
                if not book_store.client.collection_exists(name):
                    return self._send(404, {"status": {"error": f"Collection `{name}` missing"}})
                info = book_store.client.get_collection(name)
            self._send(200, {"result": info.model_dump(mode="json"), "status": "ok"})

        def do_POST(self):  # noqa: N802
            name = self.path.split("/")[2]
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "api-key": self.headers.get("api-key"), "body": body})
            req = models.QueryRequest.model_validate(body)
            with lock:
                res = book_store.client.query_points(
                    name, query=req.query, using=req.using, prefetch=req.prefetch,
                    query_filter=req.filter, limit=req.limit, with_payload=req.with_payload,
                    with_vectors=req.with_vector)
            self._send(200, {"result": res.model_dump(mode="json"), "status": "ok"})

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def test_http_backend_matches_the_local_client(rest_shim, book_store):
    url, seen = rest_shim
    http = QdrantHttp(url, "book", api_key="secret")
    assert http.collection_meta()["embedding_model"] == "fake-embedder"
    q = "How does a complementary filter fuse the gyroscope?"
    embedder = ContentEmbedder(DIM)
    over_http = Retriever(http, embedder).candidates(q, {"module": "Sensors"})
    local = Retriever(book_store, embedder).candidates(q, {"module": "Sensors"})
    assert [h.point_id for h in over_http] == [h.point_id for h in local]
    assert [round(h.dense_score, 5) for h in over_http] == [round(h.dense_score, 5) for h in local]
    assert {h.payload["module"] for h in over_http} == {"Sensors"}
    assert all(s["api-key"] == "secret" for s in seen)


def test_http_backend_missing_collection_and_unreachable(rest_shim):
    url, _ = rest_shim
    with pytest.raises(StoreUnavailableError, match="textbook-chat index"):
        QdrantHttp(url, "nope").collection_meta()
    with pytest.raises(StoreUnavailableError, match="cannot be reached"):
        QdrantHttp("http://127.0.0.1:9", "book", timeout=0.3, retries=1).collection_meta()
