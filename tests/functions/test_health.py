"""GET /health says whether /chat can answer: the index's collection, model, size, last sync."""

from __future__ import annotations

from functions.search.store import QdrantStore
from functions.settings import Settings
from tests.fakes.embedder import ContentEmbedder, FakeEmbedder
from tests.functions.conftest import DIM


def test_health_reports_the_ready_index(client, book_store):
    book_store.mark_synced("2026-01-02T03:04:05+00:00")
    r = client().get("/health")
    assert r.status_code == 200, r.text
    index = r.json()["index"]
    assert index == {"collection": "book", "embedding_model": ContentEmbedder(DIM).model_name,
                     "chunks": book_store.count(), "synced_at": "2026-01-02T03:04:05+00:00"}
    assert index["chunks"] > 0


def test_health_is_503_without_an_index(client, tmp_path):
    empty = QdrantStore.open(Settings(qdrant_path=str(tmp_path / "q"), collection="nothing"))
    try:
        r = client(search=empty).get("/health")
        assert r.status_code == 503
        assert r.json()["error"]["code"] == "index_unavailable"
        assert "textbook-chat index" in r.json()["error"]["message"]
        empty.ensure_collection("fake-embedder", DIM)  # created, never filled
        r = client(search=empty, embedder=FakeEmbedder(DIM)).get("/health")
        assert r.status_code == 503 and "empty" in r.json()["error"]["message"]
    finally:
        empty.close()


def test_health_is_503_when_the_index_has_another_model(client):
    r = client(embedder=FakeEmbedder(DIM + 1)).get("/health")
    assert r.status_code == 503 and r.json()["error"]["code"] == "model_mismatch"


def test_the_rest_backend_reports_the_same_index(book_store, server_store, qdrant_engine, client):
    from functions.search.qdrant_http import QdrantHttp
    from tests.functions.qdrant_rest import qdrant_rest

    for store in (book_store, server_store):
        store.mark_synced("2026-01-02T03:04:05+00:00")
    with qdrant_rest(qdrant_engine) as (url, _):
        http = QdrantHttp(url, "book")
        assert http.index_status() == {**book_store.collection_meta(), "points": book_store.count()}
        r = client(search=http).get("/health")
    assert r.status_code == 200 and r.json()["index"]["chunks"] == book_store.count()
