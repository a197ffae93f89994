"""The chat answer: standalone query → retrieval → confidence → answer → citations."""

from __future__ import annotations

from functions.answers import extractive
from functions.answers.confidence import assess
from functions.answers.finish import (
    EMPTY_QUESTION,
    NAMED_REFUSAL,
    REFUSAL,
    finish,
    refusal,
)
from functions.answers.generation import model_answer, offline_answer
from functions.answers.prompt import (
    follow_up_context,
    recent,
    rewrite_messages,
)
from functions.answers.question_kind import empty_question, quantity_words
from functions.answers.requests import ChatRequest
from functions.answers.types import Answer, refused
from functions.deadline import REQUEST_SECONDS, REWRITE_SECONDS, within
from functions.errors import UpstreamError
from functions.search.ranking import chunk_text
from functions.services.budget import approx_tokens, reserve, settle

CONTEXT_TOKENS_ESTIMATE = 450  # per context chunk, for the spend-cap reservation
REWRITE_MAX_TOKENS = 60
# A respelt word can bring the sections that spell the next one ("debounse a push buton":
# "debouncing" finds the section that says "button").
RESPELL_ROUNDS = 2


def standalone_query(req: ChatRequest, llm) -> tuple[str, str, int]:
    """The search query, the follow-up context searched beside it (functions.search.retrieval), and
    the tokens that cost. With a model, its standalone rewrite of the question; without one
    (or when the rewrite fails), the question and the previous turn it leans on."""
    if not req.history:
        return req.question, "", 0
    if llm is None:
        return req.question, follow_up_context(req.question, req.history), 0
    try:
        with within(REWRITE_SECONDS):  # a slow rewrite must leave time for the answer
            completion = llm.complete(rewrite_messages(req.question, req.history),
                                      max_tokens=REWRITE_MAX_TOKENS)
    except UpstreamError:
        return req.question, follow_up_context(req.question, req.history), 0
    query = " ".join(completion.text.split())[:500]
    return query or req.question, "", completion.total_tokens


def estimate_tokens(req: ChatRequest, llm) -> int:
    history = sum(approx_tokens(m["content"]) for m in recent(req.history))
    question = approx_tokens(req.question)
    if llm is None:  # only the paid query embedding, if any
        return question + history
    rewrite = (history + question + 100 + REWRITE_MAX_TOKENS) if req.history else 0
    return (300 + history + question + req.top_k * CONTEXT_TOKENS_ESTIMATE + llm.max_tokens
            + rewrite)


def answer_chat(req: ChatRequest, retriever, llm, spend_cap, settings, paid: bool) -> Answer:
    """`paid`: whether any model call costs money (OpenAI chat or embeddings). The rewrite,
    retrieval and answer share one deadline (functions.deadline)."""
    with within(REQUEST_SECONDS):
        return _answer_chat(req, retriever, llm, spend_cap, settings, paid)


def _answer_chat(req: ChatRequest, retriever, llm, spend_cap, settings, paid: bool) -> Answer:
    reserved = reserve(spend_cap, estimate_tokens(req, llm)) if paid else 0
    used = 0
    try:
        query, context, used = standalone_query(req, llm)
        used += approx_tokens(f"{query} {context}") if paid else 0
        if empty_question(req.question):
            return refused(EMPTY_QUESTION, 0.0, [], {"code": "empty_question"})
        hits = retriever.retrieve(query, req.page_url, req.filters, req.mode, req.top_k,
                                  context=context)
        question = req.question
        for _ in range(RESPELL_ROUNDS):  # "humaniod" searched again as the book spells it
            question, query, respelt = _respell(question, query, hits)
            if not respelt:
                break
            hits = retriever.retrieve(query, req.page_url, req.filters, req.mode, req.top_k,
                                      context=context)
        # Word coverage is judged on what the reader asks now, and not for a follow-up that
        # leans on the previous turn ("What's the catch with going that route?": its words are
        # conversation, not the book's), with or without a model (a model's rewrite is in its
        # own words); names the book never uses are still refused.
        follows = bool(follow_up_context(req.question, req.history))
        verdict = assess(hits, retriever.embedder.model_name, settings.low_confidence_threshold,
                         query=None if follows else question)
        absent = _absent_names(question, hits, retriever, req.filters)
        if absent:
            return refusal(_named_refusal(absent), min(verdict.confidence, 0.2), hits,
                           {"code": "not_mentioned", "names": absent[:3]})
        if verdict.level != "ok":
            return refusal(REFUSAL, verdict.confidence, hits)
        if llm is not None:  # links removed, claims checked against the passages they cite
            try:
                result, tokens = model_answer(req.question, req.history, hits, llm,
                                              retriever.embedder, verdict.confidence)
            except UpstreamError as exc:  # slow, down or rate-limited: the offline answer
                result, tokens = offline_answer(exc, f"{query} {context}".strip(), hits,
                                                retriever.embedder, req.page_url,
                                                quantity_words(question), verdict.confidence)
            used += tokens
            return result
        quantity = quantity_words(question)
        composed = extractive.compose(f"{query} {context}".strip(), hits,
                                      retriever.embedder.embed_batch, req.page_url, quantity)
        if not extractive.supported(composed, quantity):
            return refusal(REFUSAL, min(verdict.confidence, 0.3), hits)
    finally:
        if paid:
            settle(spend_cap, reserved, used)
    return finish(composed.text, composed.sources, hits, verdict.confidence)


def _respell(question: str, query: str, hits) -> tuple[str, str, bool]:
    """The question and query with misspelt words respelt as the retrieved text spells
    them (functions.answers.names.respelled), and whether any was."""
    from functions.answers.names import apply_spelling, respelled
    from functions.tokens import common_words

    fixes = respelled(question, [chunk_text(h) for h in hits], common_words)
    if not fixes:
        return question, query, False
    return apply_spelling(question, fixes), apply_spelling(query, fixes), True


def _absent_names(question: str, hits, retriever, filters) -> list[str]:
    """What the question names that the book never mentions: names (products, tools,
    acronyms, identifiers) and rare words, as written. Each is looked for in the retrieved
    chunks first, then by a word search of the whole book."""
    from functions.answers.names import absent_in, missing, rare_unknown_words
    from functions.search.sparse import terms
    from functions.tokens import common_words

    texts = [chunk_text(h) for h in hits]
    vocabulary = {t for text in texts for t in terms(text)}
    absent = missing(question, texts)
    absent += [w for w in rare_unknown_words(question, vocabulary, common_words())
               if not any(w.lower() in a.lower() for a in absent)]
    return [name for name in absent[:4]
            if absent_in(name, [chunk_text(h) for h in retriever.word_search(name, filters)])]


def _named_refusal(names: list[str]) -> str:
    shown = [f"“{n}”" for n in names[:3]]
    joined = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
    return NAMED_REFUSAL.format(names=joined)
