"""A model's answer as it is written (POST /chat with `Accept: application/x-ndjson`): each
sentence shows once it passes the claim check, one that fails never shows, and the final
answer is the one a non-streamed request returns. The model is the fake OpenAI server over
HTTP, streaming a word at a time; the app is the local server's (threads behind a gate)."""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest

from functions.answers.streaming import decided
from functions.services.budget import approx_tokens
from functions.services.openai_http import OpenAIChat, OpenAIHttp
from functions.services.ratelimit import MemorySpendCap
from tests.fakes.embedder import ContentEmbedder
from tests.functions.conftest import DIM
from tests.functions.test_model_answers import JITTER, TRUE_1

TRUE_2 = "Logging and garbage collection add jitter [1]."
FALSE = "Jitter is caused by cosmic rays hitting the motor driver [1]."
TRUE_3 = "Jitter is the variation of the loop period from one tick to the next [1]."
REPLY = f"{TRUE_1} {FALSE} {TRUE_2} {TRUE_3}"
SHOWN = f"{TRUE_1} {TRUE_2} {TRUE_3}"
NDJSON = {"Accept": "application/x-ndjson"}


@pytest.fixture
def chat(client, fake_openai, book_settings):
    llm = OpenAIChat(OpenAIHttp("k", fake_openai.base_url, timeout=30.0, deadline=60.0))
    settings = book_settings.with_(chat_provider="openai", openai_api_key="k")
    return client(chat_model=llm, settings=settings)


def _lines(response) -> list[dict]:
    return [json.loads(line) for line in response.iter_lines() if line.strip()]


def test_checked_sentences_stream_and_the_final_answer_is_the_unstreamed_one(chat, fake_openai):
    fake_openai.reply_next(REPLY, times=2)
    plain = chat.post("/chat", json={"question": JITTER})
    assert plain.status_code == 200 and plain.headers["content-type"].startswith("application/json")
    with chat.stream("POST", "/chat", json={"question": JITTER}, headers=NDJSON) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
        lines = _lines(r)
    partials = [line["partial"] for line in lines if "partial" in line]
    final = lines[-1]["final"]
    # each sentence once the next has begun (the last comes with the final answer)
    assert [p["answer"] for p in partials] == [TRUE_1, f"{TRUE_1} {TRUE_2}"], partials
    assert all("cosmic" not in p["answer"] for p in partials)  # the failing sentence never shows
    assert partials[-1]["citations"][0]["url"] == "/book/docs/loop#loop-jitter"
    expected = plain.json()
    assert {k: v for k, v in final.items() if k != "request_id"} == \
        {k: v for k, v in expected.items() if k != "request_id"}
    assert final["answer"] == SHOWN and final["request_id"] == r.headers["x-request-id"]
    streamed = [q for q in fake_openai.chat_requests if q.body.get("stream")]
    assert len(streamed) == 1 and streamed[0].body["stream_options"] == {"include_usage": True}


def test_the_first_sentence_shows_while_the_model_is_still_writing(chat, fake_openai):
    fake_openai.reply_next(REPLY)
    gate = fake_openai.hold_streams()  # the model stops after its first sentence and a word
    first: list[dict] = []
    seen = threading.Event()
    try:
        with chat.stream("POST", "/chat", json={"question": JITTER}, headers=NDJSON) as r:
            lines = r.iter_lines()
            for line in lines:
                if line.strip():
                    first.append(json.loads(line))
                    seen.set()
                    break
            # the model has not written the rest: the reader already has the first sentence
            assert first == [{"partial": {"answer": TRUE_1, "citations": first[0]["partial"]["citations"]}}]
            assert not gate.is_set()
            gate.set()
            rest = [json.loads(line) for line in lines if line.strip()]
    finally:
        gate.set()
    assert rest[-1]["final"]["answer"] == SHOWN


def test_without_a_checked_sentence_the_answer_is_plain_json(chat, fake_openai):
    fake_openai.reply_next(FALSE)  # nothing survives: the closest passage, as unstreamed
    r = chat.post("/chat", json={"question": JITTER}, headers=NDJSON)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    assert r.json()["outcome"] == "closest" and "cosmic" not in r.json()["answer"]
    bad = chat.post("/chat", json={"question": JITTER, "top_k": 99}, headers=NDJSON)
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_field"


def test_the_offline_server_and_sources_ignore_the_header(client):
    c = client()
    r = c.post("/chat", json={"question": JITTER}, headers=NDJSON)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    assert r.json()["citations"]


@pytest.mark.parametrize(("written", "upto"), [
    ("Kp sets the gain [1]. Ki", "Kp sets the gain [1]."),
    ("Kp sets the gain. Ki removes the offset [2]. Kd", "Kp sets the gain. Ki removes the offset [2]."),
    ("Kp sets the gain. Ki removes", ""),  # the first borrows a marker not yet written
    ("Kp sets the gain [1].", ""),  # the sentence may go on ("[1]. [2]")
    ("Kp [1].\n- Ki", "Kp [1].\n"),
    ("Intro [1].\n```python\nx = 1\n", "Intro [1].\n"),  # not into an open code block
    ("Intro [1].\n```python\nx = 1\n```\nThen", "Intro [1].\n```python\nx = 1\n```\n"),
])
def test_what_is_decided_is_what_reads_as_it_will_at_the_end(written, upto):
    assert written[:decided(written)] == upto


def test_a_check_that_fails_while_streaming_ends_the_sentences_not_the_answer():
    from functions.answers.streaming import Shown
    from functions.errors import Busy
    from functions.search.types import SearchHit

    class NoTurn:  # no CPU turn in time for the streamed check (functions.cpu_turns)
        model_name = "fake"

        def embed_batch(self, texts):
            raise Busy()

    sent: list[dict] = []
    hit = SearchHit(1, 0.9, 0.9, {"content": "Jitter is the variation of the loop period.",
                                  "url": "/book/docs/loop#loop-jitter"})
    shown = Shown([hit], NoTurn(), 0.9, sent.append)
    shown.add("Jitter is the variation of the loop period [1]. It")  # does not raise
    shown.add("Jitter is the variation of the loop period [1]. It matters [1]. Then")
    assert sent == [] and shown.out is None


class PaidEmbedder(ContentEmbedder):
    """The book's fake embedder, billed as the OpenAI embedder is (`paid`)."""

    paid = True


def test_the_streamed_checks_are_counted_in_the_days_budget(client, fake_openai, book_settings):
    """Each sentence checked while the model writes is embedded then: those tokens are spent
    from the day's budget like the final check's."""
    def asked(headers: dict) -> tuple[int, list[str]]:
        embedder, cap = PaidEmbedder(DIM), MemorySpendCap(10_000_000)
        llm = OpenAIChat(OpenAIHttp("k", fake_openai.base_url, timeout=30.0, deadline=60.0))
        c = client(chat_model=llm, embedder=embedder, spend_cap=cap,
                   settings=book_settings.with_(chat_provider="openai", openai_api_key="k"))
        fake_openai.reply_next(REPLY)
        with c.stream("POST", "/chat", json={"question": JITTER}, headers=headers) as r:
            assert r.status_code == 200
            r.read()
        assert cap._slots == {} or set(cap._slots.values()) == {0}  # settled
        return cap._spent, list(embedder.texts_embedded)

    plain_spent, plain_texts = asked({})
    streamed_spent, streamed_texts = asked(NDJSON)
    extra = Counter(streamed_texts) - Counter(plain_texts)
    assert extra  # the sentences were checked as they came, before the final check
    assert streamed_spent - plain_spent == sum(approx_tokens(t) for t in extra.elements()) > 0
