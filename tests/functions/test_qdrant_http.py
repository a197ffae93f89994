"""QdrantHttp against a REST shim over qdrant-client's engine (tests/functions/qdrant_rest), and
the same answers from the embedded engine."""

from __future__ import annotations

import pytest
from qdrant_client.http import models

from functions.errors import StoreUnavailableError
from functions.search.qdrant_http import QdrantHttp, query_body
from functions.search.retrieval import Retriever
from tests.fakes.embedder import ContentEmbedder
from tests.functions.conftest import DIM
from tests.functions.qdrant_rest import qdrant_rest


@pytest.mark.parametrize("mode", ["hybrid", "dense", "sparse"])
def test_query_body_is_a_valid_query_request(mode):
    body = query_body([0.1] * 4, ([1, 5], [1.0, 1.0]), 10, {"module": "Sensors"}, mode)
    parsed = models.QueryRequest.model_validate(body)
    assert parsed.limit == 10
    # hybrid also fetches the candidates' sparse vectors, for their term coverage
    assert parsed.with_vector == (["dense", "sparse"] if mode == "hybrid" else ["dense"])
    if mode == "hybrid":
        assert parsed.query.fusion == models.Fusion.RRF
        assert [p.using for p in parsed.prefetch] == ["dense", "sparse"]
        assert all(p.filter.must[0].key == "module" for p in parsed.prefetch)


@pytest.fixture
def rest_shim(server_store):
    with qdrant_rest(server_store.client) as shim:
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
