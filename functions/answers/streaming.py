"""A model's answer shown sentence by sentence as it is written, each sentence only once it has
passed the claim check the whole answer gets (functions.answers.claims, through
functions.answers.finish).

The reply is read as the model writes it (OpenAIChat.stream). The part of it that can be judged
as it will be at the end is checked as soon as it is written: every complete line, and in the
line being written every sentence up to the last one that carries its own `[n]` (a sentence
without one borrows the next marker of its line, so it waits for it); never a code block still
open. What survives the check joins what was shown, and the reader gets the shown text with its
citations numbered as the answer numbers them (`finish`, no second check). A sentence that fails
is never shown. When the model is done, the whole reply goes through the same path as a reply
that was not streamed (functions.answers.generation.shown), and that answer replaces the shown
text: the final answer is the one a non-streamed request returns.

Who wants the sentences sets a sink (`streaming(sink)`, functions.api.app for `POST /chat`
asked with `Accept: application/x-ndjson`); with none, or a model without `stream`, nothing
changes.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar

from functions.answers import claims
from functions.answers.finish import finish
from functions.answers.text import sentences
from functions.answers.types import ANSWERED
from functions.search.types import SearchHit

Sink = Callable[[dict], None]
_SINK: ContextVar[Sink | None] = ContextVar("textbook_chat_sentence_sink", default=None)
_FENCE = re.compile(r"^\s*(```|~~~)", re.M)


@contextlib.contextmanager
def streaming(sink: Sink) -> Iterator[None]:
    """Within the block, a model answer's checked sentences go to `sink` as they are written:
    `sink({"answer": text, "citations": [...]})`, the text shown so far each time."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


def sink() -> Sink | None:
    return _SINK.get()


def decided(text: str) -> int:
    """How much of the reply written so far (`text`) reads as it will at the end: up to the
    last complete line (not into a code block still open), then in the line being written up to
    the end of its last complete sentence that has its own marker."""
    lines_end = text.rfind("\n") + 1
    fences = [m.start() for m in _FENCE.finditer(text, 0, lines_end)]
    if len(fences) % 2:  # a code block still open: up to its first line
        return fences[-1]
    line = text[lines_end:]
    if _FENCE.match(line):
        return lines_end
    parts = sentences(line)[:-1]  # the last one may not be finished
    end, at = lines_end, 0
    for part in parts:
        at = line.find(part, at)
        if at < 0:
            break
        at += len(part)
        if claims.markers(part):
            end = lines_end + at
    return end


class Shown:
    """The sentences of one reply shown so far: `add(text)` with the reply as written up to now."""

    def __init__(self, hits: Sequence[SearchHit], embedder, confidence: float, out: Sink):
        self.hits, self.embedder, self.confidence, self.out = hits, embedder, confidence, out
        self.checked_to = 0
        self.text = ""
        self.sent = ""
        self.embedded: list[str] = []  # what the checks embedded (the caller counts paid tokens)

    def add(self, written: str) -> None:
        """Never in the answer's way: a check that fails here (no CPU turn in time, an embedding
        service down) ends the sentences shown early, and the answer comes whole as usual."""
        if self.out is None:
            return
        try:
            self._add(written)
        except Exception:  # noqa: BLE001 (the final answer, checked again, decides)
            self.out = None

    def _add(self, written: str) -> None:
        end = decided(written)
        if end <= self.checked_to:
            return
        start, part = self.checked_to, written[self.checked_to:end]
        self.checked_to = end
        if not part.strip():
            return
        checked = claims.check(part, self.hits, self.embedder)
        self.embedded.extend(checked.embedded)
        kept = checked.text.strip()
        if not kept:
            return
        if not self.text:
            self.text = kept
        else:  # as the reply joins it: a new paragraph, a new line, or the same line
            gap = written[:start]
            self.text += ("\n\n" if gap.endswith("\n\n") else "\n" if gap.endswith("\n")
                          else " ") + kept
        answer = finish(self.text, self.hits, self.hits, self.confidence)
        if answer.outcome == ANSWERED and answer.answer != self.sent:
            self.sent = answer.answer
            self.out({"answer": answer.answer, "citations": list(answer.citations)})
