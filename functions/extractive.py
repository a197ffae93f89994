"""The offline answerer: the sentences of the top sections that best match the question."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from functions.citations import strip_markers
from functions.sparse import terms

MAX_SENTENCES = 3
MAX_PER_SOURCE = 2
SOURCES = 3
_FENCE = re.compile(r"```.*?(```|$)", re.S)
_SKIP_LINE = re.compile(r"^\s*(\||#|:::|import |export |<)")
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_INLINE = re.compile(r"\*\*|__|`|!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def sentences(text: str) -> list[str]:
    """Prose sentences of Markdown: code, tables, headings and JSX are left out."""
    lines = []
    for line in _FENCE.sub("\n", text).splitlines():
        if _SKIP_LINE.match(line):
            lines.append("")
            continue
        lines.append(_BULLET.sub("", _LINK.sub(r"\1", _INLINE.sub("", line))))
    out = []
    for para in re.split(r"\n\s*\n", "\n".join(lines)):
        para = " ".join(para.split())
        # A sentence ending in ':' introduces a list or table that is not quoted: skip it.
        out += [
            strip_markers(s) for s in _SPLIT.split(para) if len(s) >= 20 and not s.endswith(":")
        ]
    return out


def _cite(sentence: str, n: int) -> str:
    if sentence[-1:] in ".!?":
        return f"{sentence[:-1]} [{n}]{sentence[-1]}"
    return f"{sentence} [{n}]"


def best_sentences(question: str, texts: Sequence[str], limit: int = MAX_SENTENCES,
                   per_source: int = MAX_PER_SOURCE) -> list[tuple[int, int, str]]:
    """(source index, position, sentence) of the best matches, in reading order."""
    wanted = set(terms(question))
    scored = []
    for src, text in enumerate(texts):
        for pos, sent in enumerate(sentences(text)):
            words = terms(sent)
            overlap = len(wanted & set(words))
            if overlap:
                # Favour overlap, then earlier sources, then shorter (denser) sentences.
                value = overlap / math.sqrt(len(words) + 1) + 0.15 / (src + 1)
                scored.append((value, src, pos, sent))
    scored.sort(key=lambda item: -item[0])
    picked: list[tuple[int, int, str]] = []
    used: dict[int, int] = {}
    for _, src, pos, sent in scored:
        if used.get(src, 0) < per_source:
            used[src] = used.get(src, 0) + 1
            picked.append((src, pos, sent))
        if len(picked) == limit:
            break
    return sorted(picked)


def answer(question: str, texts: Sequence[str]) -> str:
    """Best sentences of the first SOURCES texts, each cited as [n] (n = 1-based text index)."""
    texts = list(texts)[:SOURCES]
    picked = best_sentences(question, texts)
    if not picked:
        first = next(((i, s[0]) for i, t in enumerate(texts) if (s := sentences(t))), None)
        if first is None:
            return ""
        picked = [(first[0], 0, first[1])]
    return " ".join(_cite(sent, src + 1) for src, _, sent in picked)
