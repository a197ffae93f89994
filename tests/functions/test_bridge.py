"""With a model, a question the book did not answer offline is rewritten by the model in the
book's terms and searched again (functions.answers.chat.bridged), and a model that is down gives
the reader the offline outcome: end to end over the sample book indexed with the real MiniLM,
the model the fake OpenAI-compatible server of tests/fakes over HTTP."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from functions.answers.chat import estimate_tokens, explain_chat
from functions.answers.requests import ChatRequest
from functions.api.deps import Deps
from functions.search.store import QdrantStore
from functions.services.openai_http import OpenAIChat, OpenAIHttp
from functions.services.ratelimit import MemorySpendCap
from functions.settings import Settings
from tests.fakes.openai_server import FakeOpenAI, passage_responder
from tests.minilm import cached_minilm
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_eval  # noqa: E402

pytestmark = pytest.mark.slow
ANSWERED = "How do I measure loop jitter?"  # answered offline (the book's words)
# in a reader's own words: offline, the closest passage
CLOSEST = "My robot's wheel speed loop keeps overshooting, which knob do I turn down first?"
FAR = "How should I train for my first marathon?"  # nothing near: not covered


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    settings = Settings(qdrant_path=str(tmp_path_factory.mktemp("bridge")), collection="bridge")
    embedder = cached_minilm()  # each text embedded once in this process (tests/minilm.py)
    store = QdrantStore.open(settings)
    bench_eval.index_corpus(ROOT / "samples" / "textbook", store, embedder)
    yield settings, store, embedder
    store.close()


class Searches:
    """The retriever, remembering every query the answer searched (ranked())."""

    def __init__(self, inner):
        self.inner, self.queries = inner, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def ranked(self, query, page_url=None, filters=None, mode="hybrid", top_k=5, context=""):
        self.queries.append((query, context))
        return self.inner.ranked(query, page_url, filters, mode, top_k, context=context)


def ask(sample, question: str, base_url: str | None, cap=None, searches=None):
    settings, store, embedder = sample
    llm = None if base_url is None else OpenAIChat(OpenAIHttp(
        "k", base_url, timeout=5.0, deadline=10.0, max_retries=0))
    deps = Deps(settings, search=store, embedder=embedder,
                spend_cap=cap or MemorySpendCap(10**9))
    retriever = Searches(deps.retriever)
    if searches is not None:
        searches.append(retriever)
    return explain_chat(ChatRequest(question=question), retriever, llm, deps.spend_cap,
                        settings, llm is not None)


def test_the_offline_outcomes_of_the_three_questions(sample):
    assert [ask(sample, q, None)[0].outcome for q in (ANSWERED, CLOSEST, FAR)] == [
        "answered", "closest", "not_covered"]


def test_a_question_not_answered_offline_is_rewritten_in_the_book_s_terms_first(sample):
    searches = []
    with FakeOpenAI(responder=passage_responder) as model:
        answer, decision = ask(sample, CLOSEST, model.base_url, searches=searches)
        first, *rest = model.chat_requests
    sent = first.body["messages"][-1]["content"]
    assert "<sections>" in sent and CLOSEST in sent and "<context>" not in sent
    assert "PID Control › Tuning Kp, Ki and Kd" in sent  # the book's own section names
    assert first.body["max_tokens"] <= 60  # one short call
    # the fake model adds the listed heading that shares most of the question's words, and
    # the book is searched again with that beside the reader's own words
    (retriever,) = searches
    assert retriever.queries[0] == (CLOSEST, "") and len(retriever.queries) >= 2
    query, context = retriever.queries[-1]
    assert query == CLOSEST and context.startswith(CLOSEST + " ")
    # then the model answers (or the offline outcome stands): one answer call at most
    assert len(rest) <= 1 and all("<context>" in r.body["messages"][-1]["content"] for r in rest)
    assert answer.outcome in ("answered", "closest")


def test_a_question_answered_offline_goes_straight_to_the_model(sample):
    with FakeOpenAI(responder=passage_responder) as model:
        answer, _ = ask(sample, ANSWERED, model.base_url)
        sent = [r.body["messages"][-1]["content"] for r in model.chat_requests]
    assert len(sent) == 1 and "<context>" in sent[0]
    assert answer.outcome == "answered" and answer.mode is None


def test_a_model_that_is_down_gives_the_offline_outcome(sample):
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    for question in (ANSWERED, CLOSEST, FAR):
        offline, _ = ask(sample, question, None)
        answer, _ = ask(sample, question, dead)
        assert answer.mode == "offline-fallback"
        assert (answer.outcome, answer.answer, answer.low_confidence) == (
            offline.outcome, offline.answer, offline.low_confidence), question


def test_the_rewrite_is_paid_for_within_the_reservation(sample):
    """The daily budget is reserved for the rewrite too, and settled at what was used."""
    cap = MemorySpendCap(10**9)
    with FakeOpenAI(responder=passage_responder) as model:
        ask(sample, CLOSEST, model.base_url, cap)
        calls = len(model.chat_requests)
    llm = OpenAIChat(OpenAIHttp("k", "http://127.0.0.1:1/v1"))
    assert calls >= 1 and cap.held() == 0  # settled
    assert 0 < cap._spent <= estimate_tokens(ChatRequest(question=CLOSEST), llm)
