"""POST /sources: the sections a question finds, quickly, for the widget to show while a model
writes the answer; none for an off-topic question; its own rate-limit bucket; never recorded."""

from __future__ import annotations

from functions.services.ratelimit import MemoryRateLimiter


def test_sources_are_the_sections_the_answer_will_cite(client):
    c = client()
    question = {"question": "How do I measure loop jitter?"}
    r = c.post("/sources", json=question)
    assert r.status_code == 200, r.text
    sources = r.json()["sources"]
    assert sources and sources[0]["url"] == "/book/docs/loop#loop-jitter"
    assert all(set(s) == {"title", "url"} for s in sources) and len(sources) <= 3
    cited = [x["url"] for x in c.post("/chat", json=question).json()["citations"]]
    assert sources[0]["url"] in cited
    assert list(c.deps.feedback.answers.values())[0]["question"] == question["question"]
    assert len(c.deps.feedback.answers) == 1  # /sources is not an answer: nothing recorded


def test_no_sources_for_an_off_topic_question(client):
    r = client().post("/sources", json={"question": "What is the capital of Australia?"})
    assert r.status_code == 200 and r.json()["sources"] == []


def test_sources_have_their_own_rate_limit_and_the_chat_validation(client):
    c = client(rate_limiter=MemoryRateLimiter(1, 100))
    assert c.post("/sources", json={"question": "jitter"}).status_code == 200
    assert c.post("/chat", json={"question": "jitter"}).status_code == 200  # not used up
    assert c.post("/sources", json={"question": "jitter"}).status_code == 429
    r = client().post("/sources", json={"question": "jitter", "nope": 1})
    assert r.status_code in (400, 422) and r.json()["error"]["code"]
