"""The chat answer: standalone query → retrieval → confidence → answer → citations."""

from __future__ import annotations

from functions import extractive
from functions.budget import approx_tokens, reserve
from functions.citations import link_citations, related_topics
from functions.confidence import assess
from functions.deadline import REQUEST_SECONDS, REWRITE_SECONDS, within
from functions.errors import UpstreamError
from functions.generation import model_answer
from functions.prompt import (
    NOT_FOUND,
    echoes_instructions,
    heuristic_standalone,
    recent,
    rewrite_messages,
)
from functions.validation import ChatRequest

LOW_CONFIDENCE = (
    "The book doesn't seem to cover this directly, so I won't guess. "
    "These sections are the closest:"
)
OFF_TOPIC = "I can only answer questions about this book."
CONTEXT_TOKENS_ESTIMATE = 450  # per context chunk, for the spend-cap reservation
REWRITE_MAX_TOKENS = 60


def standalone_query(req: ChatRequest, llm) -> tuple[str, int]:
    """The question rewritten as a standalone search query, and the tokens that cost."""
    if not req.history:
        return req.question, 0
    if llm is None:
        return heuristic_standalone(req.question, req.history), 0
    try:
        with within(REWRITE_SECONDS):  # a slow rewrite must leave time for the answer
            completion = llm.complete(rewrite_messages(req.question, req.history),
                                      max_tokens=REWRITE_MAX_TOKENS)
    except UpstreamError:
        return heuristic_standalone(req.question, req.history), 0
    query = " ".join(completion.text.split())[:500]
    return query or req.question, completion.total_tokens


def estimate_tokens(req: ChatRequest, llm) -> int:
    history = sum(approx_tokens(m["content"]) for m in recent(req.history))
    question = approx_tokens(req.question)
    if llm is None:  # only the paid query embedding, if any
        return question + history
    rewrite = (history + question + 100 + REWRITE_MAX_TOKENS) if req.history else 0
    return (300 + history + question + req.top_k * CONTEXT_TOKENS_ESTIMATE + llm.max_tokens
            + rewrite)


def answer_chat(req: ChatRequest, retriever, llm, spend_cap, settings, paid: bool) -> dict:
    """`paid`: whether any model call costs money (OpenAI chat or embeddings). The rewrite,
    retrieval and answer share one deadline (functions.deadline)."""
    with within(REQUEST_SECONDS):
        return _answer_chat(req, retriever, llm, spend_cap, settings, paid)


def _answer_chat(req: ChatRequest, retriever, llm, spend_cap, settings, paid: bool) -> dict:
    reserved = reserve(spend_cap, estimate_tokens(req, llm)) if paid else 0
    used = 0
    try:
        query, used = standalone_query(req, llm)
        used += approx_tokens(query) if paid else 0
        hits = retriever.retrieve(query, req.page_url, req.filters, req.mode, req.top_k)
        verdict = assess(hits, retriever.embedder.model_name, settings.low_confidence_threshold,
                         query=query)
        if verdict.level == "none":
            return _abstain(NOT_FOUND, verdict.confidence, hits)
        if verdict.level == "low":
            return _abstain(LOW_CONFIDENCE, verdict.confidence, hits)
        if llm is None:
            text = extractive.answer(query, _extractive_sources(hits))
        else:  # links removed, claims checked against the passages they cite
            result, tokens = model_answer(req.question, req.history, hits, llm,
                                          retriever.embedder, verdict.confidence)
            used += tokens
            return result
    finally:
        if paid:
            spend_cap.settle(reserved, used)
    if echoes_instructions(text):
        return _abstain(OFF_TOPIC, verdict.confidence, hits)
    text, citations = link_citations(text, hits)
    if not text or _says_not_found(text):
        return _abstain(NOT_FOUND, verdict.confidence, hits)
    if not citations:  # never a confident answer without sources
        return _abstain(text, verdict.confidence, hits)
    return {"answer": text, "citations": citations, "confidence": verdict.confidence,
            "low_confidence": False}


WEAK_SOURCE = 0.5  # an extractive answer quotes no chunk whose similarity is under half the best


def _extractive_sources(hits) -> list[str]:
    """The hits' texts, with far weaker hits blanked so no sentence is quoted from them
    (positions stay, so [n] still maps to hit n)."""
    best = max((h.dense_score for h in hits), default=0.0)
    return [
        str(h.payload.get("content", "")) if h.dense_score >= WEAK_SOURCE * best else ""
        for h in hits
    ]


def _says_not_found(text: str) -> bool:
    return text.lower().startswith(NOT_FOUND[:25].lower())


def _abstain(text: str, confidence: float, hits) -> dict:
    return {"answer": text, "citations": [], "confidence": confidence, "low_confidence": True,
            "related_topics": related_topics(hits)}
