"""The httpx OpenAI client against the fake OpenAI-compatible server: retries, timeouts, errors."""

from __future__ import annotations

import time

import pytest

from functions.errors import UpstreamError
from functions.services.openai_http import OpenAIChat, OpenAIEmbedder, OpenAIHttp
from tests.fakes.openai_server import embedding_for
from tests.shared import stopwatch, stretched

MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]


def chat(server, **kw) -> OpenAIChat:
    return OpenAIChat(OpenAIHttp("test-key", server.base_url, **kw))


def test_completion_and_request_shape(fake_openai):
    fake_openai.reply_next("Jitter is variation [1].")
    out = chat(fake_openai).complete(MESSAGES)
    assert out.text == "Jitter is variation [1]." and out.total_tokens > 0
    sent = fake_openai.chat_requests[0]
    assert sent.body["model"] == "gpt-4o-mini"
    assert sent.body["temperature"] == 0.3 and sent.body["max_tokens"] == 800
    assert sent.body["stream"] is False
    assert sent.headers["authorization"] == "Bearer test-key"


def test_429_then_success_honours_retry_after(fake_openai):
    fake_openai.fail_next(status=429, retry_after=0.2, endpoint="chat")
    start = time.monotonic()
    out = chat(fake_openai).complete(MESSAGES)
    assert out.text and time.monotonic() - start >= 0.2
    assert [r.status for r in fake_openai.requests] == [429, 200]


def test_500s_are_retried_then_fail_typed(fake_openai):
    fake_openai.fail_next(status=500, times=3)
    with pytest.raises(UpstreamError) as err:
        chat(fake_openai).complete(MESSAGES)
    assert err.value.status == 500 and len(fake_openai.requests) == 3


def test_401_is_not_retried(fake_openai):
    fake_openai.api_key = "right-key"
    with pytest.raises(UpstreamError) as err:
        chat(fake_openai).complete(MESSAGES)
    assert err.value.status == 401 and len(fake_openai.requests) == 1


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_timeout_ends_within_the_deadline(fake_openai):
    fake_openai.delay_next(60.0, times=20)
    # ten retries of 0.3 s and their backoffs would take far longer than the deadline's 2 s
    emb = OpenAIEmbedder(OpenAIHttp("k", fake_openai.base_url, timeout=0.3, deadline=2.0,
                                    max_retries=10))
    with stopwatch() as took, pytest.raises(UpstreamError, match="in time") as err:
        emb.embed_batch(["loop jitter"])
    assert took.within(waits=2.0, work=0.15), took
    assert err.value.transient and 1 <= len(fake_openai.requests) < 11


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_a_chat_completion_that_timed_out_is_not_sent_again(fake_openai):
    """A slow (local) model still working on the request is not given it twice; an embeddings
    request, cheap and quick, is sent again."""
    fake_openai.delay_next(60.0, times=3, endpoint="chat")
    with pytest.raises(UpstreamError, match="not asked again.*raise OPENAI_TIMEOUT") as err:
        chat(fake_openai, timeout=0.3, deadline=5.0, max_retries=2).complete(MESSAGES)
    assert err.value.transient  # reported while the model still works on it (status 0), once
    assert [(r.path, r.status) for r in fake_openai.requests] == [("/v1/chat/completions", 0)]
    fake_openai.delay_next(60.0, times=1, endpoint="embeddings")
    emb = OpenAIEmbedder(OpenAIHttp("k", fake_openai.base_url, timeout=stretched(0.3),
                                    deadline=stretched(5.0)))  # the second reply comes in time
    assert len(emb.embed_batch(["loop jitter"])) == 1
    assert [r.status for r in fake_openai.requests if r.path == "/v1/embeddings"] == [0, 200]


def test_a_chat_completion_is_sent_again_after_a_busy_or_broken_reply(fake_openai):
    """Retries after an answered failure (429, 5xx) and a refused connection keep working for
    the chat; what is retried is `transient` when it runs out, a refusal of the setup is not."""
    fake_openai.fail_next(status=503, endpoint="chat")
    assert chat(fake_openai, backoff=0.01).complete(MESSAGES).text
    assert [r.status for r in fake_openai.requests] == [503, 200]
    fake_openai.fail_next(status=429, times=2, retry_after=0, endpoint="chat")
    with pytest.raises(UpstreamError) as busy:
        chat(fake_openai, max_retries=1).complete(MESSAGES)
    assert busy.value.status == 429 and busy.value.transient
    fake_openai.fail_next(status=404, endpoint="chat")
    with pytest.raises(UpstreamError, match="CHAT_MODEL") as unknown:
        chat(fake_openai).complete(MESSAGES)
    assert not unknown.value.transient
    down = OpenAIChat(OpenAIHttp("k", "http://127.0.0.1:9/v1", max_retries=1, backoff=0.01))
    with pytest.raises(UpstreamError, match="connection error.*after 2 attempts") as refused:
        down.complete(MESSAGES)
    assert refused.value.transient


def test_retry_after_longer_than_the_deadline_fails_fast(fake_openai):
    fake_openai.fail_next(status=429, retry_after=60)
    slept: list[float] = []
    with pytest.raises(UpstreamError) as err:
        chat(fake_openai, deadline=5.0, sleep=slept.append).complete(MESSAGES)
    assert err.value.status == 429 and err.value.retry_after == 60
    assert slept == [] and len(fake_openai.requests) == 1  # failed at once, without a wait


def test_http_embedder_matches_the_server(fake_openai):
    emb = OpenAIEmbedder(OpenAIHttp("k", fake_openai.base_url))
    assert emb.dimension == 1536
    vecs = emb.embed_batch(["loop jitter", "encoders"])
    assert vecs[0] == pytest.approx(embedding_for("loop jitter", 1536), abs=1e-6)
    assert fake_openai.embedding_requests[0].body["encoding_format"] == "float"


def test_the_official_openai_client_accepts_our_fake(fake_openai):
    """Cross-check: the official client reads the fake server as our transport does (the
    fake stands in for OpenAI in every test of ours, so the real client vouches for it)."""
    import openai

    sdk = openai.OpenAI(api_key="k", base_url=fake_openai.base_url, max_retries=0)
    fake_openai.reply_next("same [1]")
    ours = chat(fake_openai)
    fake_openai.reply_next("same [1]")
    theirs = sdk.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert theirs.choices[0].message.content == ours.complete(MESSAGES).text
