"""How a chat answer ends: the refusal wordings, written once, and the refusal with the closest
sections that every way of answering falls back to."""

from __future__ import annotations

from collections.abc import Sequence

from functions.answers.citations import related_topics
from functions.answers.types import refused
from functions.search.types import SearchHit

# One wording for every refusal; the related sections follow it in the response.
REFUSAL = "The book doesn't cover this, so I won't guess. These sections are the closest:"
NAMED_REFUSAL = "The book doesn't mention {names}, so I won't guess. These sections are the closest:"
EMPTY_QUESTION = "Please ask a question about the book in a few words, for example “What is …?”"
OFF_TOPIC = "I can only answer questions about this book."


def refusal(text: str, confidence: float, hits: Sequence[SearchHit],
            case: dict | None = None) -> dict:
    """A refusal with the closest sections. `case` tells the widget which refusal it is, so a
    translated site shows its own words (labels refusalNotCovered, refusalNotMentioned, …);
    the one English wording of each case is the default."""
    if case is None and text == REFUSAL:
        case = {"code": "not_covered"}
    return refused(text, confidence, related_topics(hits), case)
