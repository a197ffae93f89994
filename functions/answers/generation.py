"""Model answers: prompt → completion → functions.answers.finish (links removed, claims checked,
cited answer).

What the reader sees of a model's reply: no link or URL that is not one of our citations, no
sentence that its cited passage does not support (functions.answers.claims), and a confidence scaled by
the share of the reply that survived the check. A reply with no supported sentence becomes the
refusal with the closest sections. When the model is slow, down or rate-limited
(UpstreamError.transient), `offline_answer` logs it and the reader gets the offline outcome of
the question (functions.answers.chat.offline_outcome: the quote, `offline_quote`, which /sources
also shows while a model writes, the closest passage or the refusal), marked
`mode: "offline-fallback"`; a key, model or URL the provider rejects is still an error
the author sees (502).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from functions.answers import claims, extractive, streaming
from functions.answers.finish import REFUSAL, finish, refusal
from functions.answers.prompt import chat_messages
from functions.answers.sections import split_hits
from functions.answers.types import Answer
from functions.deadline import CHECK_RESERVE, time_left, within
from functions.errors import UpstreamError
from functions.search.types import SearchHit
from functions.services.budget import approx_tokens


def complete(llm, messages: list[dict], written: Callable[[str], None] | None = None):
    """One completion within what the request has left, keeping time for the claim check.
    `written`: the reply so far, each time the model writes more (a model that can stream)."""
    with within(time_left(float("inf")), reserve=CHECK_RESERVE):
        if written is not None and hasattr(llm, "stream"):
            return llm.stream(messages, written)
        return llm.complete(messages)


def model_answer(question: str, history: Sequence, hits: Sequence[SearchHit], llm, embedder,
                 confidence: float) -> tuple[Answer, int]:
    """The response for a model answer over `hits`, and the paid tokens it used. Each section
    of a chunk is its own numbered passage, so a citation lands on the heading its text sits
    under. Any question may be asked this way (the decision, not this function, says which):
    with no passage there is nothing to ground a reply on, and the model is not called."""
    if not hits:
        return refusal(REFUSAL, confidence, hits), 0
    hits = [part for _, part in split_hits(hits)]
    out = streaming.sink()  # the reader sees each checked sentence as it is written
    partial = None if out is None else streaming.Shown(hits, embedder, confidence, out)
    completion = complete(llm, chat_messages(question, hits, history),
                          None if partial is None else partial.add)
    used = completion.total_tokens
    result, embedded = shown(completion.text, hits, embedder, confidence)
    if getattr(embedder, "paid", False):  # the streamed sentences' checks are paid for too
        used += sum(approx_tokens(t) for t in (*embedded, *(partial.embedded if partial else ())))
    return result, used


def shown(text: str, hits: Sequence[SearchHit], embedder, confidence: float
          ) -> tuple[Answer, tuple[str, ...]]:
    """What the reader sees of a model's reply (functions.answers.finish with the claim check),
    and the texts the claim check embedded."""
    embedded: list[str] = []

    def check(reply: str) -> claims.Checked:
        checked = claims.check(reply, hits, embedder)
        embedded.extend(checked.embedded)
        return checked

    return finish(text, hits, hits, confidence, check), tuple(embedded)


def offline_quote(composed: extractive.Composed, hits: Sequence[SearchHit],
                  quantity: set[str] | None, confidence: float) -> Answer:
    """The offline answer over the passages a model was (or is being) asked about: the blocks
    functions.answers.extractive.compose chose, then finish; the refusal when they do not state
    the number the question asks for. What a failed model's reader sees (`offline_answer`) and
    what /sources shows while a model writes (functions.answers.sources)."""
    if not extractive.supported(composed, quantity):
        return refusal(REFUSAL, min(confidence, 0.3), hits)
    return finish(composed.text, composed.sources, hits, confidence)


def offline_answer(error: UpstreamError) -> None:
    """A model that was slow, down or rate-limited: logged, and the caller gives the offline
    outcome in its place (functions.answers.chat.offline_outcome), marked "offline-fallback".
    Any other failure is raised again: a rejected key or an unknown model is the author's to
    fix, and hiding it would leave the site offline for good."""
    if not error.transient:
        raise error
    logging.getLogger("textbook_chat").warning(
        "the model failed (slow, down or rate-limited); answered offline",
        extra={"fields": {"status": error.status}})  # no message: it may name the server
