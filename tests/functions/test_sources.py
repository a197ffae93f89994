"""POST /sources: the sections a question finds, quickly, for the widget to show while a model
writes the answer, and there the offline answer's passage (as /chat's fallback gives it); none
for an off-topic question; its own rate-limit bucket; never recorded; bad input a 4xx."""

from __future__ import annotations

import json
import re

import pytest

from tests.functions.book import ALL_URLS
from tests.shared import in_one_minute, limiter, stretched


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
    c = client(rate_limiter=limiter(1, 100))
    assert c.post("/sources", json={"question": "jitter"}).status_code == 200
    assert c.post("/chat", json={"question": "jitter"}).status_code == 200  # not used up
    assert c.post("/sources", json={"question": "jitter"}).status_code == 429
    r = client().post("/sources", json={"question": "jitter", "nope": 1})
    assert r.status_code in (400, 422) and r.json()["error"]["code"]


# Where a model writes the answers (CHAT_PROVIDER=openai): /sources also brings the offline
# answer's passage over the same sections, through the Lambda handler, the model being the fake
# OpenAI server over HTTP, slow.
JITTER = {"question": "How do I measure loop jitter?"}


@pytest.fixture
def model_handler(make_deps, fake_openai, book_settings):
    """(the chat function's Lambda handler with a model that times out after 0.5 s, its deps)."""
    from mangum import Mangum

    from functions.api.app import create_app
    from functions.services.openai_http import OpenAIChat, OpenAIHttp

    timeout = stretched(0.5)  # a normal reply beats it on a loaded machine too
    llm = OpenAIChat(OpenAIHttp("k", fake_openai.base_url, timeout=timeout, deadline=6 * timeout))
    deps = make_deps(chat_model=llm,
                     settings=book_settings.with_(chat_provider="openai", openai_api_key="k"))
    return Mangum(create_app(deps, "chat", threaded=False), lifespan="off"), deps


def _post(handler, path: str, body) -> tuple[int, dict]:
    from tests.functions.events import LambdaContext, http_api_v2

    response = handler(http_api_v2(path, body), LambdaContext())
    return response["statusCode"], json.loads(response["body"])


def test_while_a_model_writes_sources_bring_the_passage_its_fallback_would_show(
        model_handler, fake_openai):
    handler, deps = model_handler
    fake_openai.delay_next(60.0, times=5, endpoint="chat")  # far past the timeout
    status, found = _post(handler, "/sources", JITTER)
    assert status == 200, found
    assert not fake_openai.requests and not deps.feedback.answers  # no model call, no record
    passage = found["passage"]
    assert found["sources"][0]["url"] == "/book/docs/loop#loop-jitter"
    assert "monotonic clock" in passage["answer"] and "[1]" in passage["answer"]
    status, chat = _post(handler, "/chat", JITTER)  # the model is slow: /chat falls back
    assert status == 200 and chat["mode"] == "offline-fallback", chat
    assert passage == {"answer": chat["answer"], "citations": chat["citations"]}
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", passage["answer"])}
    assert markers == {c["n"] for c in passage["citations"]}
    assert {c["url"] for c in passage["citations"]} <= set(ALL_URLS)


def test_while_a_model_writes_a_follow_up_gets_the_passage_of_the_question_with_its_turn(
        model_handler, fake_openai):
    handler, _ = model_handler
    history = [{"role": "user", "content": "What is a complementary filter?"},
               {"role": "assistant", "content": "A fusion of gyroscope and accelerometer [1]."}]
    status, found = _post(handler, "/sources", {"question": "what value is typical?",
                                                "history": history})
    assert status == 200 and not fake_openai.requests  # no rewrite by the model either
    assert found["passage"]["citations"][0]["url"].endswith("#complementary-filter"), found


@pytest.mark.parametrize("question", [
    "What is the capital of Australia?",  # off the book: the decision refuses
    "How do I bake a sourdough loaf?",  # names what the book never mentions
])
def test_no_sources_and_no_passage_when_the_decision_refuses(model_handler, question):
    status, found = _post(model_handler[0], "/sources", {"question": question})
    assert (status, found["sources"], found["passage"]) == (200, [], None)


def test_no_passage_when_the_offline_answerer_has_nothing_to_quote(model_handler, fake_openai):
    """The book's sections on the loop rate are found (the model gets them) but none states the
    number asked for, so the offline answerer refuses, and /chat's fallback does too."""
    handler, _ = model_handler
    asked = {"question": "How many times per second does the loop run?"}
    status, found = _post(handler, "/sources", asked)
    assert status == 200 and found["sources"] and found["passage"] is None
    fake_openai.delay_next(60.0, times=5, endpoint="chat")  # far past the timeout
    chat = _post(handler, "/chat", asked)[1]
    assert chat["mode"] == "offline-fallback" and chat["low_confidence"] and not chat["citations"]


def test_the_offline_deployment_sends_no_passage(client):
    r = client().post("/sources", json=JITTER)
    assert r.status_code == 200 and set(r.json()) == {"sources", "request_id"}


@pytest.mark.parametrize("body", [
    "{not json", {"question": 5}, {"question": "jitter", "top_k": 99},
    {"question": "jitter", "history": "yes"}, {"question": "x" * 2001},
    ["question"],
])
def test_bad_input_to_sources_with_a_model_is_a_4xx_naming_the_problem(model_handler,
                                                                       fake_openai, body):
    status, answer = _post(model_handler[0], "/sources", body)
    assert 400 <= status < 500 and answer["error"]["code"] and answer["error"]["message"], answer
    assert "Traceback" not in json.dumps(answer) and not fake_openai.requests


def test_sources_with_a_model_keep_their_own_rate_limit(make_deps, fake_openai, book_settings):
    from mangum import Mangum

    from functions.api.app import create_app
    from functions.services.openai_http import OpenAIChat, OpenAIHttp

    fake_openai.reply_next("Jitter is the variation of the loop period [1].")
    deps = make_deps(chat_model=OpenAIChat(OpenAIHttp("k", fake_openai.base_url)),
                     rate_limiter=limiter(1, 100),
                     settings=book_settings.with_(chat_provider="openai", openai_api_key="k"))
    handler = Mangum(create_app(deps, "chat", threaded=False), lifespan="off")
    assert _post(handler, "/sources", JITTER)[0] == 200
    assert _post(handler, "/chat", JITTER)[0] == 200  # a question left: not used up by /sources
    status, limited = _post(handler, "/sources", JITTER)
    assert status == 429 and "passage" not in limited


def test_sources_with_a_model_spend_from_the_days_budget_as_chat_does(make_deps, fake_openai,
                                                                      book_settings):
    """The search is paid for where a model writes (as /chat's): within the budget it is
    counted (three questions fit a budget of 40 tokens, the fourth does not), past it /sources
    says so, like /chat, and sends nothing."""
    from mangum import Mangum

    from functions.api.app import create_app
    from functions.services.openai_http import OpenAIChat, OpenAIHttp
    from functions.services.ratelimit import MemorySpendCap

    deps = make_deps(chat_model=OpenAIChat(OpenAIHttp("k", fake_openai.base_url)),
                     spend_cap=MemorySpendCap(40),
                     settings=book_settings.with_(chat_provider="openai", openai_api_key="k"))
    handler = Mangum(create_app(deps, "chat", threaded=False), lifespan="off")
    replies = [_post(handler, "/sources", JITTER) for _ in range(4)]  # 11 tokens each
    assert [status for status, _ in replies] == [200, 200, 200, 429], replies
    assert replies[3][1]["error"]["code"] == "daily_budget" and not fake_openai.requests


# The widget's box searching as the reader types: POST /sources with "search": true.
def test_search_as_typed_lists_sections_with_their_headings(client):
    c = client()
    r = c.post("/sources", json={"question": "loop jitter", "search": True})
    assert r.status_code == 200, r.text
    sections = r.json()["sections"]
    assert sections and sections[0]["url"] == "/book/docs/loop#loop-jitter"
    assert all(set(s) == {"title", "doc_title", "heading_path", "url", "snippet"} for s in sections)
    assert all(s["url"] in ALL_URLS for s in sections)
    assert len({s["url"] for s in sections}) == len(sections) <= 5
    first = sections[0]
    assert first["heading_path"][-1] == first["title"] and first["snippet"]
    assert "#" not in first["snippet"]  # prose, not the section's raw Markdown heading
    assert not c.deps.feedback.answers  # nothing recorded


def test_search_as_typed_has_its_own_allowance_and_checks_its_flag(client, book_settings):
    """Typing searches more often than a reader asks: the box's searches have an allowance of
    their own (SEARCH_RATE_LIMIT_PER_MINUTE), past the questions' one, counted apart from it."""
    def burst() -> list:
        c = client(rate_limiter=limiter(1, 100),
                   settings=book_settings.with_(search_rate_limit_per_minute=3))
        searches = [c.post("/sources", json={"question": "jitter", "search": True})
                    for _ in range(4)]
        return [*searches, c.post("/sources", json={"question": "jitter"})]

    *searches, sources = in_one_minute(burst)
    assert [r.status_code for r in searches] == [200, 200, 200, 429]  # 3, the questions' 1
    assert sources.status_code == 200  # its own bucket: not used up by the searches
    refused = searches[-1]
    assert refused.json()["error"]["code"] == "rate_limited"
    assert "searching faster than this site allows" in refused.json()["error"]["message"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    r = client().post("/sources", json={"question": "jitter", "search": "yes"})
    assert r.status_code == 422 and "`search`" in r.json()["error"]["message"]
    r = client().post("/chat", json={"question": "jitter", "search": True})
    assert r.status_code == 422 and r.json()["error"]["code"] == "unknown_field"
    r = client().post("/sources", json={"question": "", "search": True})
    assert r.status_code in (400, 422) and r.json()["error"]["code"]


def test_the_search_allowance_fits_typing_by_default():
    """10 a minute (the questions' allowance) left a typing reader's list empty: each pause in
    typing is a search (docs/http-api.md measures one)."""
    from functions.settings import Settings

    defaults = Settings.from_env({})
    assert (defaults.search_rate_limit_per_minute, defaults.search_rate_limit_per_day) == (120, 5000)
    assert defaults.search_rate_limit_per_minute >= 6 * defaults.rate_limit_per_minute
    given = Settings.from_env({"SEARCH_RATE_LIMIT_PER_MINUTE": "5", "SEARCH_RATE_LIMIT_PER_DAY": "0"})
    assert (given.search_rate_limit_per_minute, given.search_rate_limit_per_day) == (5, 0)
