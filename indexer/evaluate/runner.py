"""Run each question through the chat path of POST /chat (functions.answers.chat.answer_chat).

The questions go through the very code the API runs: standalone query, embedding with the
collection's own model, Qdrant search in the requested mode, re-ranking, confidence, answer and
citations. The retrieved ranking (top 10, ranked by the chat path's own retrieval) is scored
alongside the final answer (its citations and low_confidence flag).

The ranking scored is the answer's own retrieval (the last `ranked` search the chat path made, after
any respelling), asked again for the top 10; not a word search made to check a name.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from functions.search.embeddings.factory import make_embedder
from functions.search.store import QdrantStore
from functions.settings import Settings
from indexer.evaluate.metrics import TOP_K, Outcome, summarize
from indexer.evaluate.questions import Question

MODES = ("hybrid", "dense", "sparse")
BASELINES = ("naive",)


class RecordingRetriever:
    """A retriever that remembers the arguments of the answer's last search (ranked()), so the
    same ranking can be asked again for the top 10."""

    def __init__(self, inner):
        self.inner = inner
        self.last: tuple | None = None

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def ranked(self, query, page_url=None, filters=None, mode="hybrid", top_k=5, context=""):
        self.last = (query, page_url, filters, mode, context)
        return self.inner.ranked(query, page_url, filters, mode, top_k, context=context)

    def ranking(self) -> list:
        if self.last is None:
            return []
        query, page_url, filters, mode, context = self.last
        return self.inner.retrieve(query, page_url, filters, mode, TOP_K, context=context)


@dataclass
class EvalRun:
    summary: dict
    outcomes: list[Outcome]
    collection: str
    mode: str
    chunks: int  # points in the evaluated collection


def ask_all(
    questions: Sequence[Question],
    deps,
    mode: str = "hybrid",
    clock: Callable[[], float] = time.perf_counter,
) -> list[Outcome]:
    """One Outcome per question, answered by answer_chat exactly as POST /chat would."""
    from functions.answers.chat import answer_chat
    from functions.answers.requests import ChatRequest, Turn
    from functions.deadline import unhurried

    retriever = RecordingRetriever(deps.retriever)
    llm, settings = deps.chat_model, deps.settings
    outcomes = []
    for q in questions:
        retriever.last = None
        start = clock()
        with unhurried():  # the answers, not the machine's speed: never "busy" under load
            result = answer_chat(
                ChatRequest(question=q.question, mode=mode,
                            history=tuple(Turn(t["role"], t["content"]) for t in q.history)),
                retriever, llm, deps.spend_cap, settings, deps.paid,
            )
        elapsed = (clock() - start) * 1000.0
        ranking = retriever.ranking()
        outcomes.append(
            Outcome(
                question=q,
                ranking=[str(h.payload.get("url", "")) for h in ranking],
                pages=[str(h.payload.get("page_url", "")) for h in ranking],
                citations=[str(c.get("url", "")) for c in result.citations],
                low_confidence=result.low_confidence,
                latency_ms=elapsed,
                titles=[str(h.payload.get("section_title", "")) for h in ranking],
                answer=result.answer,
                held=[tuple(held_urls(h.payload)) for h in ranking],
                outcome=result.outcome,
                related=[str(t.get("url", "")) for t in result.related_topics or ()],
            )
        )
    return outcomes


def held_urls(payload: dict) -> list[str]:
    """The url of a chunk and of every section it holds (merged short sections keep theirs)."""
    urls = [str(payload.get("url", ""))]
    for section in payload.get("sections") or []:
        url = str(section.get("url", ""))
        if url and url not in urls:
            urls.append(url)
    return urls


def indexed_urls(store) -> set[str]:
    """Every url a citation can have in the collection (raises a clear error when it does not
    exist): chunk urls and the urls of the sections they hold."""
    store.collection_meta()
    return {url for _, p in store.scroll_payloads(["url", "sections"]) for url in held_urls(p)}


def run_eval(
    questions: Sequence[Question],
    settings: Settings,
    mode: str = "hybrid",
    baseline: str | None = None,
    embedder=None,
    store=None,
    valid_citation=None,
) -> EvalRun:
    """Evaluate the collection of `settings` (or its naive baseline, rebuilt from it).

    `store`: an open QdrantStore to reuse (local Qdrant allows one client per folder);
    `embedder`: a ready embedder (tests pass fakes), else the one settings select;
    `valid_citation(url) -> bool`: checks each shown citation (e.g. against a build folder).
    """
    from functions.api.deps import Deps
    from functions.services.ratelimit import MemorySpendCap

    if mode not in MODES:
        raise ValueError(f"retrieval mode {mode!r} is not one of {', '.join(MODES)}")
    own = store is None
    store = store or QdrantStore.open(settings)
    try:
        known = indexed_urls(store)
        target = store
        if baseline == "naive":
            from indexer.evaluate.naive import NAIVE_SUFFIX, build_naive_index

            if embedder is None:
                embedder = make_embedder(settings)
            target = store.collection_store(settings.collection + NAIVE_SUFFIX)
            build_naive_index(store, target, embedder)
        elif baseline is not None:
            raise ValueError(f"baseline {baseline!r} is not one of {', '.join(BASELINES)}")
        deps = Deps(
            settings.with_(collection=target.collection),
            search=target,
            embedder=embedder,
            spend_cap=MemorySpendCap(10**12),  # an eval never spends the site's daily budget
        )
        outcomes = ask_all(questions, deps, mode)
        return EvalRun(summarize(outcomes, known, valid_citation), outcomes, target.collection,
                       mode, target.count())
    finally:
        if own:
            store.close()
