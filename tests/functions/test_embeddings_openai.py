"""The index side's OpenAIEmbedder (the indexer's retry budget) over real HTTP to the fake
OpenAI-compatible server; the query side's budget is tested in test_openai_http.py."""

from __future__ import annotations

import math

import pytest

from functions.api.deps import Deps
from functions.errors import ConfigError, UpstreamError
from functions.search.embeddings.factory import make_embedder
from functions.services.openai_http import INDEX_BUDGET, OpenAIEmbedder, OpenAIHttp
from functions.settings import Settings
from tests.fakes.openai_server import FakeOpenAI, embedding_for
from tests.shared import stretched


def make(server: FakeOpenAI, dimension: int | None = None, **budget) -> OpenAIEmbedder:
    waits: list[float] = []
    # the index side's own budget (30 s a request): the fake writes 100 vectors of 1536 floats in
    # Python, which took more than the 5 s this once allowed on a loaded machine
    http = OpenAIHttp("test-key", server.base_url, sleep=waits.append, **{**INDEX_BUDGET, **budget})
    embedder = OpenAIEmbedder(http, dimension=dimension)
    embedder.waits = waits  # the backoff sleeps it asked for, instead of sleeping
    return embedder


def close(a: list[float], b: list[float]) -> bool:
    return all(math.isclose(x, y, abs_tol=1e-6) for x, y in zip(a, b, strict=True))


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_batches_of_100_keep_order(fake_openai):
    texts = [f"chunk number {i}" for i in range(250)]
    vectors = make(fake_openai).embed_batch(texts)
    sizes = [len(r.body["input"]) for r in fake_openai.embedding_requests]
    assert sizes == [100, 100, 50]
    assert [r.body["model"] for r in fake_openai.embedding_requests] == ["text-embedding-3-small"] * 3
    assert len(vectors) == 250 and all(len(v) == 1536 for v in vectors)
    assert all(close(v, embedding_for(t, 1536)) for t, v in zip(texts, vectors, strict=True))


def test_order_follows_index_when_server_reorders():
    with FakeOpenAI(dimension=8, reverse_embeddings=True) as server:
        texts = ["alpha", "beta", "gamma"]
        vectors = make(server, dimension=8).embed_batch(texts)
    assert all(close(v, embedding_for(t, 8)) for t, v in zip(texts, vectors, strict=True))
    assert server.embedding_requests[0].body["dimensions"] == 8


def test_429_then_success_honours_retry_after(fake_openai):
    fake_openai.fail_next(status=429, retry_after=0.25)
    embedder = make(fake_openai)
    assert len(embedder.embed_batch(["one", "two"])) == 2
    assert [r.status for r in fake_openai.requests] == [429, 200]
    assert embedder.waits == [0.25]


def test_500_then_success_backs_off_with_jitter(fake_openai):
    fake_openai.fail_next(status=500, times=2)
    embedder = make(fake_openai, backoff=1.0)
    embedder.embed_batch(["one"])
    assert [r.status for r in fake_openai.requests] == [500, 500, 200]
    assert len(embedder.waits) == 2
    assert 0 <= embedder.waits[0] <= 1.0 and 0 <= embedder.waits[1] <= 2.0


def test_timeout_then_success(fake_openai):
    fake_openai.delay_next(60.0)  # the first request is answered a minute later (or never)
    embedder = make(fake_openai, timeout=stretched(0.3))  # what the second reply takes, and more
    assert len(embedder.embed_batch(["slow"])) == 1
    # the vectors came from the second request while the first was still unanswered: the
    # client gave up on it after its timeout instead of waiting for it
    assert [r.status for r in fake_openai.requests] == [0, 200] and len(embedder.waits) == 1


def test_401_is_not_retried_and_names_the_variable():
    with FakeOpenAI(api_key="the-right-key") as server:
        embedder = make(server)  # sends "test-key"
        with pytest.raises(UpstreamError, match="OPENAI_API_KEY") as err:
            embedder.embed_batch(["x"])
    assert err.value.status == 401
    assert len(server.requests) == 1 and embedder.waits == []


def test_gives_up_after_max_retries(fake_openai):
    fake_openai.fail_next(status=503, times=10)
    embedder = make(fake_openai, max_retries=2)
    with pytest.raises(UpstreamError, match="HTTP 503 after 3 attempts") as err:
        embedder.embed_batch(["x"])
    assert err.value.status == 503
    assert len(fake_openai.requests) == 3


def test_too_long_retry_after_is_reported_not_waited(fake_openai):
    fake_openai.fail_next(status=429, retry_after=3600)
    embedder = make(fake_openai)
    with pytest.raises(UpstreamError, match="wait 3600 s") as err:
        embedder.embed_batch(["x"])
    assert err.value.retry_after == 3600 and embedder.waits == []


def test_empty_text_is_sent_as_a_space(fake_openai):
    make(fake_openai).embed_batch(["", "text"])
    assert fake_openai.embedding_requests[0].body["input"] == [" ", "text"]


def test_factory_builds_the_openai_embedder(fake_openai):
    settings = Settings.from_env({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake_openai.base_url})
    embedder = make_embedder(settings)
    assert (embedder.model_name, embedder.dimension) == ("text-embedding-3-small", 1536)
    assert len(embedder.embed_batch(["hello"])[0]) == 1536


def test_factory_builds_local_without_loading_it():
    embedder = make_embedder(Settings.from_env({}))
    assert (embedder.model_name, embedder.dimension) == ("all-MiniLM-L6-v2", 384)
    assert embedder._encoder is None  # loads on first use


def test_factory_refuses_unknown_local_model():
    with pytest.raises(ConfigError, match="'bge-small' is not a model textbook-chat knows"):
        make_embedder(Settings.from_env({"EMBEDDING_MODEL": "bge-small"}))


def test_the_index_and_the_query_side_send_the_same_request_with_their_own_budgets(fake_openai):
    settings = Settings.from_env({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake_openai.base_url})
    index_side, query_side = make_embedder(settings), Deps(settings).embedder
    assert index_side.embed_batch(["loop jitter"]) == query_side.embed_batch(["loop jitter"])
    indexed, queried = fake_openai.embedding_requests
    assert indexed.body == queried.body and "dimensions" not in indexed.body
    assert (index_side.http.max_retries, index_side.http.deadline) == (5, None)
    assert (query_side.http.max_retries, query_side.http.deadline) == (2, 20.0)


def test_dimensions_is_sent_only_to_shorten_a_models_vectors():
    with FakeOpenAI(dimension=3072) as server:
        http = OpenAIHttp("k", server.base_url)
        for dimension in (None, 256):
            OpenAIEmbedder(http, "text-embedding-3-large", dimension).embed_batch(["a"])
    native, shortened = (r.body for r in server.embedding_requests)
    assert "dimensions" not in native and shortened["dimensions"] == 256


def test_vectors_of_another_size_are_refused_on_both_sides():
    with FakeOpenAI(dimension=8) as server:  # serves another model under the name
        settings = Settings.from_env({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url})
        for embedder in (make_embedder(settings), Deps(settings).embedder):
            with pytest.raises(UpstreamError, match="returned 8-d vectors, expected 1536"):
                embedder.embed_batch(["a"])
