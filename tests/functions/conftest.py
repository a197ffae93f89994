"""Fixtures for the API tests: a real local Qdrant holding the tiny book, fakes, deps, clients."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from functions.api.app import create_app
from functions.api.deps import Deps
from functions.search.sparse import encode_document
from functions.search.store import QdrantStore, open_index
from functions.services.ratelimit import MemoryRateLimiter, MemorySpendCap
from functions.settings import Settings
from tests.fakes.conftest_plugin import fake_embedder, fake_openai  # noqa: F401 (fixtures)
from tests.fakes.embedder import ContentEmbedder
from tests.fakes.feedback import MemoryFeedback
from tests.functions.book import chunks
from tests.functions.qdrant_rest import qdrant_rest

DIM = 64


def index_book(store: QdrantStore, embedder) -> None:
    items = chunks(embedder.model_name)
    store.ensure_collection(embedder.model_name, embedder.dimension)
    vectors = embedder.embed_batch([c.embed_text for c in items])
    store.upsert([(c.point_id, c.payload(), v, encode_document(c.embed_text))
                  for c, v in zip(items, vectors, strict=True)])


@pytest.fixture(scope="session")
def book_settings(tmp_path_factory) -> Settings:
    # The fake embedder's threshold: on-topic questions score >= 0.34, off-topic <= 0.23 here.
    return Settings(qdrant_path=str(tmp_path_factory.mktemp("qdrant")), collection="book",
                    low_confidence_threshold=0.3, allowed_origins=("https://reader.example",))


@pytest.fixture(scope="session")
def book_store(book_settings):
    store = QdrantStore.open(book_settings)
    index_book(store, ContentEmbedder(DIM))
    yield store
    store.close()


@pytest.fixture(scope="session")
def qdrant_engine():
    """qdrant-client's own engine (in memory), where a Qdrant server's REST answers come from in
    tests (tests/functions/qdrant_rest.py)."""
    from qdrant_client import QdrantClient

    engine = QdrantClient(location=":memory:")
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def server_store(qdrant_engine, book_store):
    """The same book on a Qdrant server (the stand-in over qdrant_engine), written through the
    index side's store (QDRANT_URL); synced at the same time."""
    with qdrant_rest(qdrant_engine) as (url, _):
        store = open_index(Settings(qdrant_url=url, collection="book"))
        index_book(store, ContentEmbedder(DIM))
        yield store
        store.close()


@pytest.fixture
def make_deps(book_settings, book_store):
    def make(**given) -> Deps:
        given.setdefault("search", book_store)
        given.setdefault("embedder", ContentEmbedder(DIM))
        given.setdefault("chat_model", None)
        given.setdefault("rate_limiter", MemoryRateLimiter(1000, 10000))
        given.setdefault("spend_cap", MemorySpendCap(10_000_000))
        given.setdefault("feedback", MemoryFeedback())
        settings = given.pop("settings", book_settings)
        return Deps(settings, env={}, **given)
    return make


@pytest.fixture
def client(make_deps):
    """A TestClient over the combined app (chat + selection) with default fakes."""
    def make(routes: str = "all", **given) -> TestClient:
        deps = make_deps(**given)
        test_client = TestClient(create_app(deps, routes), raise_server_exceptions=False)
        test_client.deps = deps
        return test_client
    return make
