"""POST /sources: the sections a question finds, in a fraction of the time a model needs to
write its answer. The widget asks for them beside a slow /chat and shows them at once; Lambda
behind API Gateway buffers responses, so a second, quick request is how to show progress.

No model call, nothing recorded; sources are shown only when the book answers the question
(the same confidence decision as /chat), so an off-topic question shows none.
"""

from __future__ import annotations

from functions.answers.citations import related_topics
from functions.answers.confidence import assess
from functions.answers.prompt import follow_up_context
from functions.answers.requests import ChatRequest
from functions.services.budget import approx_tokens, reserve, settle

MAX_SOURCES = 3


def find_sources(req: ChatRequest, retriever, spend_cap, settings, paid: bool) -> dict:
    """{"sources": [{title, url}]}: the best distinct sections, or [] when confidence is low."""
    context = follow_up_context(req.question, req.history)  # as /chat searches without a model
    reserved = 0
    if paid:  # the query embeddings, when embeddings are paid for: spent as reserved
        reserved = reserve(spend_cap, approx_tokens(f"{req.question} {context}"))
    try:
        hits = retriever.retrieve(req.question, req.page_url, req.filters, req.mode, req.top_k,
                                  context=context)
    finally:
        if reserved:
            settle(spend_cap, reserved, reserved)
    verdict = assess(hits, retriever.embedder.model_name, settings.low_confidence_threshold,
                     query=None if context else req.question)
    return {"sources": related_topics(hits, MAX_SOURCES) if verdict.level == "ok" else []}
