"""Markdown as a reader reads it: its plain words (`plain_text`) and its sentences (`sentences`),
written once for the offline answerer, the claim check, selections, snippets and the question
rules."""

from __future__ import annotations

import re

# A sentence ends at . ! or ? (and the citation markers right after it, which stay with it)
# before a space and something that can start a sentence: a capital, a digit, a quote, an
# opening bracket or parenthesis, or Markdown emphasis or code.
_SENTENCE_END = re.compile(
    r"(?<=[.!?])((?:\s*\[\d{1,3}(?:\s*,\s*\d{1,3})*\])*)\s+(?=[A-Z0-9\"'(*`_\[])")
_INLINE = re.compile(r"\*\*|__|`|!\[[^\]]*\]\([^)]*\)")  # emphasis, code marks, images
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")  # a list item's bullet or number
# a heading's #s or an admonition's ::: (outside code: there a "# " line is a comment)
_MARKUP_LINE = re.compile(r"^\s*#{1,6}\s+|^\s*:::\w*\s*")
_FENCE = re.compile(r"^\s*(```|~~~)")


def sentences(text: str) -> list[str]:
    """The sentences of a line or paragraph, in order, each keeping the markers that follow
    its full stop ("It spins. [1] Then …" → "It spins. [1]", "Then …"). Whitespace inside a
    sentence is kept as written (the claim check rebuilds the answer from them)."""
    parts = _SENTENCE_END.split(text)
    # re.split with a group alternates sentence, trailing markers, sentence, …
    out = []
    for i in range(0, len(parts), 2):
        trail = parts[i + 1] if i + 1 < len(parts) else ""
        sentence = (parts[i] + (trail or "")).strip()
        if sentence:
            out.append(sentence)
    return out


def plain_text(markdown: str, keep_lines: bool = False) -> str:
    """Markdown as the words a reader sees: no emphasis or code marks, no images, links as their
    text, no list bullets, heading #s or admonition fences (a "# " line in a code block is a
    comment and stays); the lines joined with single spaces
    (keep_lines: each line on its own, so a table row or list item stays one line)."""
    lines, in_code = [], False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
        line = _BULLET.sub("", _LINK.sub(r"\1", _INLINE.sub("", line)))
        lines.append(line if in_code else _MARKUP_LINE.sub("", line))
    if keep_lines:
        return "\n".join(" ".join(ln.split()) for ln in lines)
    return " ".join(" ".join(lines).split())
