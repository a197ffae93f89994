"""Model answers: prompt → completion → links removed → claims checked → cited answer.

What the reader sees of a model's reply: no link or URL that is not one of our citations, no
sentence that its cited passage does not support (functions.answers.claims), and a confidence scaled by
the share of the reply that survived the check. A reply with no supported sentence becomes the
refusal with the closest sections.
"""

from __future__ import annotations

from collections.abc import Sequence

from functions.answers import claims
from functions.answers.citations import link_citations, related_topics, strip_links
from functions.answers.finish import OFF_TOPIC, REFUSAL
from functions.answers.prompt import NOT_FOUND, chat_messages, echoes_instructions
from functions.answers.sections import split_hits
from functions.answers.types import answered, refused
from functions.deadline import CHECK_RESERVE, time_left, within
from functions.search.types import SearchHit
from functions.services.budget import approx_tokens


def abstain(text: str | None, confidence: float, hits: Sequence[SearchHit]) -> dict:
    """A refusal (the one wording of functions.answers.finish unless `text`) with related sections."""
    return refused(text or REFUSAL, round(confidence, 3), related_topics(hits),
                   None if text else {"code": "not_covered"})


def complete(llm, messages: list[dict]):
    """One completion within what the request has left, keeping time for the claim check."""
    with within(time_left(float("inf")), reserve=CHECK_RESERVE):
        return llm.complete(messages)


def model_answer(question: str, history: Sequence, hits: Sequence[SearchHit], llm, embedder,
                 confidence: float) -> tuple[dict, int]:
    """The response for a model answer over `hits`, and the paid tokens it used. Each section
    of a chunk is its own numbered passage, so a citation lands on the heading its text sits
    under."""
    hits = [part for _, part in split_hits(hits)]
    completion = complete(llm, chat_messages(question, hits, history))
    used = completion.total_tokens
    result, embedded = shown(completion.text, hits, embedder, confidence)
    if getattr(embedder, "paid", False):
        used += sum(approx_tokens(t) for t in embedded)
    return result, used


def shown(text: str, hits: Sequence[SearchHit], embedder, confidence: float
          ) -> tuple[dict, tuple[str, ...]]:
    """What the reader sees of a model's reply (and the texts the claim check embedded)."""
    if echoes_instructions(text):
        return abstain(OFF_TOPIC, confidence, hits), ()
    text = strip_links(text).strip()
    if not text or text.lower().startswith(NOT_FOUND[:25].lower()):
        return abstain(None, confidence, hits), ()
    checked = claims.check(text, hits, embedder)
    if not checked.supported:
        return abstain(None, min(confidence, 0.3) * checked.share, hits), checked.embedded
    answer, citations = link_citations(checked.text, hits)
    if not citations:
        return abstain(None, min(confidence, 0.3), hits), checked.embedded
    share = checked.share
    return (answered(answer, citations, round(confidence * share, 3), share < claims.MOSTLY_SUPPORTED),
            checked.embedded)
