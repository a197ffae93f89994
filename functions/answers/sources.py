"""The sections a question finds, with no model call and nothing recorded.

POST /sources: in a fraction of the time a model needs to write its answer. The widget asks for
them beside a slow /chat and shows them at once; Lambda behind API Gateway buffers responses,
so a second, quick request is how to show progress (no token streaming). Sources are shown only
when the book answers the question (the same confidence decision as /chat), so an off-topic
question shows none. Where a model writes the answers, the offline answerer's passage over the
same sections comes too (functions.answers.chat.passage_while_writing: the composition /chat
falls back to when the model fails), for the reader to read, marked as a quote, until the
model's answer replaces it.

MCP's `search_book` (functions.api.mcp): the sections themselves, each with its heading path,
exact URL and text, for a reader's AI assistant to read and cite; it judges them itself.
"""

from __future__ import annotations

import re

from functions.answers.citations import related_topics
from functions.answers.confidence import assess
from functions.answers.prompt import follow_up_context
from functions.answers.requests import ChatRequest
from functions.answers.sections import split_hit
from functions.answers.tuning import TUNING
from functions.services.budget import approx_tokens, reserve, settle

MAX_SOURCES = TUNING.max_sources.value
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")


def _retrieve(req: ChatRequest, retriever, spend_cap, paid: bool, context: str = "") -> list:
    reserved = None
    if paid:  # the query embeddings, when embeddings are paid for: spent as reserved
        reserved = reserve(spend_cap, approx_tokens(f"{req.question} {context}"))
    try:
        return retriever.retrieve(req.question, req.page_url, req.filters, req.mode, req.top_k,
                                  context=context)
    finally:
        if reserved is not None:
            settle(spend_cap, reserved, reserved.tokens)


def find_sources(req: ChatRequest, retriever, spend_cap, settings, paid: bool,
                 writes: bool = False) -> dict:
    """{"sources": [{title, url}]}: the best distinct sections, or [] when confidence is low.
    `writes`: a model writes /chat's answers; then `passage` too: the offline answer over the
    same sections ({answer, citations}, as /chat's fallback shows it), or None."""
    if writes:
        from functions.answers.chat import passage_while_writing

        hits, passage = passage_while_writing(req, retriever, spend_cap, settings, paid)
        return {"sources": related_topics(hits, MAX_SOURCES),
                "passage": None if passage is None else
                {"answer": passage.answer, "citations": list(passage.citations)}}
    context = follow_up_context(req.question, req.history)  # as /chat searches without a model
    hits = _retrieve(req, retriever, spend_cap, paid, context)
    verdict = assess(hits, retriever.embedder.model_name, settings.low_confidence_threshold,
                     query=None if context else req.question)
    return {"sources": related_topics(hits, MAX_SOURCES) if verdict.level == "ok" else []}


def search_sections(req: ChatRequest, retriever, spend_cap, paid: bool) -> list[dict]:
    """Up to req.top_k distinct sections for req.question, best first: {title, doc_title,
    heading_path, url, version, locale, text}. A chunk holding several short sections is split
    (functions.answers.sections), so each URL is the heading its text sits under."""
    out: list[dict] = []
    seen: set[str] = set()
    for hit in _retrieve(req, retriever, spend_cap, paid):
        for part in split_hit(hit):
            p = part.payload
            url = str(p.get("url") or "")
            if not url or url in seen or not _has_body(str(p.get("content") or "")):
                continue
            seen.add(url)
            out.append({"title": str(p.get("section_title") or p.get("doc_title") or ""),
                        "doc_title": str(p.get("doc_title") or ""),
                        "heading_path": _heading_path(p),
                        "url": url, "version": str(p.get("version") or ""),
                        "locale": str(p.get("locale") or ""),
                        "text": str(p.get("content") or "")})
    return out[:req.top_k]


def search_as_typed(req: ChatRequest, retriever, spend_cap, paid: bool) -> list[dict]:
    """POST /sources with `search`: search_sections for the words typed so far, each section
    with its heading path, URL and the start of its text (not the whole of it): what a search
    box lists under the box. No confidence cut: the reader judges a list of headings."""
    from functions.answers.citations import snippet

    return [{key: section[key] for key in ("title", "doc_title", "heading_path", "url")}
            | {"snippet": snippet(section["text"])}
            for section in search_sections(req, retriever, spend_cap, paid)]


def _has_body(text: str) -> bool:
    """Whether the section holds more than its heading (a page's H1 alone is no passage)."""
    return any(line.strip() and not _HEADING.match(line) for line in text.splitlines())


def _heading_path(payload: dict) -> list[str]:
    """The chunk's heading path, ending at the section's own heading (a split section's title
    replaces the deeper headings after its own, or is added under the chunk's)."""
    path = [str(h) for h in payload.get("heading_path") or []]
    title = str(payload.get("section_title") or "")
    if not title or (path and path[-1] == title):
        return path
    if title in path:
        return path[:path.index(title) + 1]
    return [*path, title]
