"""How every chat answer ends, offline or from a model: `finish` turns the text written for the
reader into the Answer shown (or the refusal with the closest sections), `nearest` shows the
closest passage when the book may not answer exactly, and the refusal wordings are written here
once."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from functions.answers import claims
from functions.answers.citations import link_citations, related_topics, strip_links
from functions.answers.prompt import NOT_FOUND, echoes_instructions
from functions.answers.sections import split_hits
from functions.answers.types import Answer, answered, closest, refused
from functions.search.types import SearchHit

# One wording for every refusal; the related sections follow it in the response.
REFUSAL = "The book doesn't cover this, so I won't guess. These sections are the closest:"
NAMED_REFUSAL = "The book doesn't mention {names}, so I won't guess. These sections are the closest:"
EMPTY_QUESTION = "Please ask a question about the book in a few words, for example “What is …?”"
OFF_TOPIC = "I can only answer questions about this book."


def refusal(text: str, confidence: float, hits: Sequence[SearchHit],
            case: dict | None = None) -> Answer:
    """A refusal with the closest sections. `case` tells the widget which refusal it is, so a
    translated site shows its own words (labels refusalNotCovered, refusalNotMentioned, …);
    the one English wording of each case is the default."""
    if case is None and text == REFUSAL:
        case = {"code": "not_covered"}
    return refused(text, confidence, related_topics(hits), case)


def nearest(composed, hits: Sequence[SearchHit], confidence: float) -> Answer:
    """The closest passage (outcome "closest"): the best block of `composed`
    (functions.answers.extractive.Composed) quoted alone, cited [1], and three sections to
    read: the quoted one, the next block's, then the closest retrieved. Nothing to quote: the
    refusal."""
    text, citations = link_citations(composed.brief if composed is not None else "",
                                     composed.sources if composed is not None else ())
    if not text or not citations:
        return refusal(REFUSAL, confidence, hits)
    sections = [*composed.closest[:2], *(part for _, part in split_hits(hits))]
    return closest(text, citations, round(confidence, 3), related_topics(sections))


def says_not_found(text: str) -> bool:
    """The text is the prompt's "not in the book" reply (functions.answers.prompt.NOT_FOUND)."""
    return text.lower().startswith(NOT_FOUND[:25].lower())


def finish(text: str, sources: Sequence[SearchHit], hits: Sequence[SearchHit],
           confidence: float, check: Callable[[str], claims.Checked] | None = None) -> Answer:
    """The Answer shown for `text`, whose `[n]` markers name `sources[n - 1]`: off-topic text
    (an echo of the instructions) and "not found" are refused, `[n]` become citations (a marker
    with no source is dropped), and text left with no citation is refused, never shown without
    sources. Every refusal lists the closest of `hits`.

    `check`: a model's reply is not taken at its word: its links are removed first and each
    sentence must be supported by the passage it cites (functions.answers.claims); the share
    that survived scales the confidence. The offline answer quotes the book and has no check.
    """
    if echoes_instructions(text):
        return refusal(OFF_TOPIC, confidence, hits, {"code": "off_topic"})
    share = 1.0
    if check is not None:
        text = strip_links(text).strip()
        if not text or says_not_found(text):
            return refusal(REFUSAL, confidence, hits)
        checked = check(text)
        if not checked.supported:
            return refusal(REFUSAL, round(min(confidence, 0.3) * checked.share, 3), hits)
        text, share = checked.text, checked.share
    text, citations = link_citations(text, sources)
    if not text or says_not_found(text):
        return refusal(REFUSAL, confidence, hits)
    if not citations:  # never a confident answer without sources
        return refusal(REFUSAL, min(confidence, 0.3), hits)
    return answered(text, citations, round(confidence * share, 3),
                    share < claims.MOSTLY_SUPPORTED)
