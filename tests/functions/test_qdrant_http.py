"""QdrantHttp, the one client of a Qdrant server, against a REST shim over qdrant-client's engine
(tests/functions/qdrant_rest), and the same answers from the embedded engine; each caller's
policy and the messages of a failure."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from qdrant_client.http import models

from functions.errors import StoreUnavailableError
from functions.search.qdrant_access import INDEX, QUERY
from functions.search.qdrant_http import QdrantHttp, query_body
from functions.search.query import TIE_SLACK
from functions.search.retrieval import Retriever
from functions.search.store import QdrantStore, open_index
from functions.settings import Settings
from tests.fakes.embedder import ContentEmbedder
from tests.functions.conftest import DIM
from tests.functions.qdrant_rest import qdrant_rest
from tests.ports import POLL_SECONDS, free_port
from tests.shared import stopwatch


@pytest.mark.parametrize("mode", ["hybrid", "dense", "sparse"])
def test_query_body_is_a_valid_query_request(mode):
    body = query_body([0.1] * 4, ([1, 5], [1.0, 1.0]), 10, {"module": "Sensors"}, mode)
    parsed = models.QueryRequest.model_validate(body)
    # hybrid asks for more than it keeps, to cut at an RRF tie in a fixed order (ranking.rank)
    assert parsed.limit == (10 + TIE_SLACK if mode == "hybrid" else 10)
    # hybrid also fetches the candidates' sparse vectors, for their term coverage
    assert parsed.with_vector == (["dense", "sparse"] if mode == "hybrid" else ["dense"])
    if mode == "hybrid":
        assert parsed.query.fusion == models.Fusion.RRF
        assert [p.using for p in parsed.prefetch] == ["dense", "sparse"]
        assert all(p.filter.must[0].key == "module" for p in parsed.prefetch)


@pytest.fixture
def rest_shim(server_store, qdrant_engine):
    with qdrant_rest(qdrant_engine) as shim:
        yield shim


def test_http_backend_matches_the_embedded_engine(rest_shim, book_store):
    url, seen = rest_shim
    http = QdrantHttp(url, "book", api_key="secret")
    assert http.collection_meta()["embedding_model"] == "fake-embedder"
    q = "How does a complementary filter fuse the gyroscope?"
    embedder = ContentEmbedder(DIM)
    over_http = Retriever(http, embedder).candidates(q, {"module": "Sensors"})
    local = Retriever(book_store, embedder).candidates(q, {"module": "Sensors"})
    assert [h.point_id for h in over_http] == [h.point_id for h in local]
    assert [round(h.dense_score, 5) for h in over_http] == [round(h.dense_score, 5) for h in local]
    assert [round(h.score, 5) for h in over_http] == [round(h.score, 5) for h in local]
    assert {h.payload["module"] for h in over_http} == {"Sensors"}
    assert all(s["api-key"] == "secret" for s in seen)


def test_http_backend_missing_collection_and_unreachable(rest_shim):
    url, _ = rest_shim
    with pytest.raises(StoreUnavailableError, match="textbook-chat index"):
        QdrantHttp(url, "nope").collection_meta()
    with pytest.raises(StoreUnavailableError, match="cannot be reached"):
        QdrantHttp("http://127.0.0.1:9", "book", timeout=0.3, retries=1).collection_meta()


def test_both_callers_reach_the_server_through_one_client_with_their_policy(rest_shim):
    url, _ = rest_shim
    reader = open_index(Settings(qdrant_url=url, collection="book"), reader=True)
    store = open_index(Settings(qdrant_url=url, collection="book"))
    assert isinstance(reader, QdrantHttp) and isinstance(store.http, QdrantHttp)
    assert (reader.policy, store.http.policy) == (QUERY, INDEX)
    assert store.index_status() == reader.index_status()
    assert store.collection_store("nope").exists() is False


class CountingTransport(httpx.HTTPTransport):
    """httpx's own transport, counting the requests it is asked to send."""

    attempts = 0

    def handle_request(self, request):
        self.attempts += 1
        return super().handle_request(request)


@contextmanager
def flaky_server(replies: list[tuple[int, dict]]):
    """Answers each request with the next of `replies` (status, JSON body), then 200 {}."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            status, body = replies.pop(0) if replies else (200, {"result": {"exists": True}})
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(POLL_SECONDS,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_busy_server_is_not_waited_for_past_the_requests_deadline():
    from functions.deadline import within

    busy = (503, {"status": {"error": "overloaded"}})
    slow_pauses = replace(QUERY, backoff=30.0)  # a pause far longer than the deadline left
    with flaky_server([busy] * 5) as url:
        transport = CountingTransport()
        qdrant = QdrantHttp(url, "book", policy=slow_pauses, transport=transport)
        with stopwatch() as took, within(1.0), pytest.raises(
                StoreUnavailableError, match="did not answer in the request's time"):
            qdrant.collection_meta()
        assert took.within(work=0.3), took  # before: slept the pause past the deadline
        assert transport.attempts == 1


def test_the_index_side_retries_a_busy_server_and_says_what_failed_without_url_or_key():
    busy = (503, {"status": {"error": "overloaded"}})
    quick = replace(INDEX, backoff=0.01)  # INDEX's retries, without its pauses
    with flaky_server([busy] * INDEX.retries) as url:  # the last attempt is answered
        assert QdrantStore(QdrantHttp(url, "book", policy=quick)).exists() is True
    with flaky_server([busy] * (INDEX.retries + 1)) as url, \
            pytest.raises(StoreUnavailableError) as failed:
        QdrantStore(QdrantHttp(url, "book", policy=quick)).exists()
    assert str(failed.value).startswith("Qdrant failed (HTTP 503): the cluster may be busy")
    gone = f"http://127.0.0.1:{free_port()}"  # nothing listens: the index side says so at once
    for policy, attempts in ((INDEX, 1), (QUERY, QUERY.retries + 1)):
        transport = CountingTransport()
        with pytest.raises(StoreUnavailableError, match="cannot be reached"):
            QdrantHttp(gone, "book", policy=replace(policy, backoff=0.01),
                       transport=transport).collection_meta()
        assert transport.attempts == attempts
    refused = (403, {"status": {"error": "Invalid api-key"}})
    with flaky_server([refused]) as url, pytest.raises(StoreUnavailableError) as failed:
        open_index(Settings(qdrant_url=url, qdrant_api_key="key-0123456789",
                            collection="book")).exists()
    assert str(failed.value) == "Qdrant refused the API key: check QDRANT_API_KEY for this cluster."
    assert url not in str(failed.value) and "key-0123456789" not in str(failed.value)
