"""The answer a reader gets, for chat and for "Ask about this": one shape, built only here,
typed until the HTTP edge (functions.api.app) serialises it with `as_dict`.

`answer` is Markdown whose `[n]` markers name `citations[n - 1]`; `confidence` is 0..1;
`outcome` is one of OUTCOMES: "answered" (a quote or a model's answer, cited), "closest" (the
book may not answer exactly: the answer's first paragraph says so, CLOSEST_LEAD, and the rest
quotes the closest passage briefly, cited [1]; `related_topics` lists its section first, then
the next two) or "not_covered" (a refusal). `low_confidence` tells the widget to show the
answer as a refusal or a hedged reply (every closest and not_covered answer has it). A chat
refusal lists the closest sections (`related_topics`) and says which case it is (`refusal`:
`{code, names?}`: not_covered, not_mentioned, empty_question, off_topic) so a translated site
can word it in its own language. `mode: "offline-fallback"` marks the offline answer given
because the model was slow, down or rate-limited (`offline_fallback`); other answers carry no
`mode`. functions.api.validation documents the same fields for the API.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

OFFLINE_FALLBACK = "offline-fallback"
ANSWERED, CLOSEST, NOT_COVERED = "answered", "closest", "not_covered"
OUTCOMES = (ANSWERED, CLOSEST, NOT_COVERED)
CLOSEST_LEAD = "The book may not answer this exactly. The closest passage:"


@dataclass(frozen=True)
class Answer:
    answer: str
    citations: Sequence[dict]
    confidence: float
    low_confidence: bool
    related_topics: Sequence[dict] | None = None  # chat refusals: the closest sections
    refusal: dict | None = None  # which refusal it is
    mode: str | None = None  # OFFLINE_FALLBACK: the offline answer, given as the model failed
    outcome: str = ANSWERED  # one of OUTCOMES

    def as_dict(self) -> dict:
        """The JSON body of the response (functions.api.validation documents its fields)."""
        out = {"answer": self.answer, "outcome": self.outcome, "citations": list(self.citations),
               "confidence": self.confidence, "low_confidence": self.low_confidence}
        if self.related_topics is not None:
            out["related_topics"] = list(self.related_topics)
        if self.refusal is not None:
            out["refusal"] = dict(self.refusal)
        if self.mode is not None:
            out["mode"] = self.mode
        return out


def answered(text: str, citations: Sequence[dict], confidence: float,
             low_confidence: bool = False) -> Answer:
    """A shown answer with its citations (low_confidence: shown, but flagged)."""
    return Answer(text, citations, confidence, low_confidence)


def refused(text: str, confidence: float, related: Sequence[dict] | None = None,
            refusal: dict | None = None) -> Answer:
    """A refusal: no citations; for chat, the closest sections and the refusal's case."""
    return Answer(text, (), confidence, True, related, refusal, outcome=NOT_COVERED)


def closest(quote: str, citations: Sequence[dict], confidence: float,
            related: Sequence[dict]) -> Answer:
    """The closest passage: CLOSEST_LEAD, then `quote` (its [1] names citations[0]); `related`:
    the quoted section first, then the next two."""
    return Answer(f"{CLOSEST_LEAD}\n\n{quote}", citations, confidence, True, related,
                  outcome=CLOSEST)


def offline_fallback(answer: Answer) -> Answer:
    """The offline answer (or refusal) given in place of the model's, marked as such."""
    return replace(answer, mode=OFFLINE_FALLBACK)
