"""Exact token budgets: joined blocks counted additively; an oversized block cut at lines, sentences, tokens."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from functions.tokens import encoding

SEP = "\n\n"  # blocks of a chunk are joined with one blank line
# Smallest inner budget worth re-wrapping a cut fence/table in its opening/closing lines.
_MIN_WRAPPED = 16
_SENTENCE_GAP = re.compile(r"(?<=[.!?。！？])\s+")
_FENCES = ("```", "~~~")


@lru_cache(maxsize=1 << 16)
def count(text: str) -> int:
    """cl100k_base tokens of text, special-token strings as plain text (same as count_tokens)."""
    return len(encoding().encode_ordinary(text))


def _symbol_tail(text: str) -> str:
    """The trailing run of non-letter/number/space characters (with one leading space), or ""."""
    end = i = len(text)
    while i > 0:
        ch = text[i - 1]
        if ch.isspace() or unicodedata.category(ch)[0] in "LN":
            break
        i -= 1
    if i == end:
        return ""
    if i > 0 and text[i - 1] == " ":
        i -= 1
    return text[i:]


@lru_cache(maxsize=4096)
def _symbol_joint(tail: str) -> int:
    return count(tail + SEP) - count(tail)


def joint(text: str) -> int:
    """Tokens that SEP adds after text, so that count(a + SEP + b) == count(a) + joint(a) + count(b).

    Exact for texts without trailing whitespace and without leading newlines: cl100k_base splits
    text into pieces by a regex before BPE, and across a blank line the only piece that changes is
    a trailing run of punctuation, which swallows the newlines (`.` + `\\n\\n` is one token).
    """
    tail = _symbol_tail(text)
    return _symbol_joint(tail) if tail else 1  # "\n\n" alone is one token


def clean(text: str) -> str:
    """A block's text as the chunker joins it: no trailing whitespace, no leading blank lines."""
    return text.rstrip().lstrip("\r\n")


def _line_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans = []
    pos = start
    while pos < end:
        newline = text.find("\n", pos, end)
        stop = end if newline == -1 else newline
        right = stop
        while right > pos and text[right - 1].isspace():
            right -= 1
        if right > pos and not text[pos:right].isspace():
            spans.append((pos, right))
        pos = stop + 1
    return spans


def _sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, pos = [], start
    for gap in _SENTENCE_GAP.finditer(text, start, end):
        if gap.start() > pos:
            spans.append((pos, gap.start()))
        pos = gap.end()
    if pos < end:
        spans.append((pos, end))
    return spans


def _token_spans(text: str, start: int, end: int, budget: int) -> list[tuple[int, int]]:
    """Windows of about budget tokens, cut at token starts that are character boundaries."""
    enc = encoding()
    tokens = enc.encode_ordinary(text[start:end])
    _, offsets = enc.decode_with_offsets(tokens)
    offsets.append(end - start)
    spans, k = [], 0
    while k < len(tokens):
        stop = min(k + budget, len(tokens))
        # Re-tokenising a cut piece can cost a token more; step back until it fits exactly.
        while stop > k + 1 and count(text[start + offsets[k] : start + offsets[stop]]) > budget:
            stop -= 1
        left, right = start + offsets[k], start + offsets[stop]
        while left < right and text[left].isspace():
            left += 1
        while right > left and text[right - 1].isspace():
            right -= 1  # a piece never ends in whitespace: keeps joint() exact
        if right > left:
            spans.append((left, right))
        k = stop
    return spans


def segments(text: str, start: int, end: int, budget: int) -> list[tuple[int, int]]:
    """Non-blank lines of text[start:end]; a line over budget cut at sentences, then tokens."""
    out = []
    for s, e in _line_spans(text, start, end):
        if count(text[s:e]) <= budget:
            out.append((s, e))
            continue
        for ss, se in _sentence_spans(text, s, e):
            if count(text[ss:se]) <= budget:
                out.append((ss, se))
            else:
                out.extend(_token_spans(text, ss, se, budget))
    return out


def _wrapper(text: str, kind: str) -> tuple[str, str, int, int]:
    """(head, tail, body_start, body_end): lines repeated around every piece of a cut block."""
    lines = text.split("\n")
    if len(lines) < 3:
        return "", "", 0, len(text)
    first, last = lines[0], lines[-1]
    opener = first.lstrip()
    if kind in ("code", "math") and (opener.startswith(_FENCES) or opener.rstrip() == "$$"):
        marker = opener[:2]
        closed = last.strip().startswith(marker)
        body_end = len(text) - len(last) - 1 if closed else len(text)
        return first, (last if closed else ""), len(first) + 1, body_end
    if kind == "table":
        head = lines[0] + "\n" + lines[1]
        return head, "", len(head) + 1, len(text)
    return "", "", 0, len(text)


def split_block(text: str, kind: str, budget: int, later: int = 0) -> list[tuple[str, int]]:
    """Cut one block over budget into pieces of at most budget tokens: (text, tokens) each.

    Cuts between lines; a line over budget between sentences; a sentence over budget between
    tokens. A fenced code/math block keeps its fence lines and a table its header in every piece.
    Pieces after the first get at most `later` tokens (if given), leaving room for an overlap.
    """
    head, tail, start, end = _wrapper(text, kind)
    wrapping = count(head + "\n" + tail) + 2
    if not head or budget - wrapping < _MIN_WRAPPED:
        head, tail, start, end, wrapping = "", "", 0, len(text), 0
    later = min(later or budget, budget)
    spans = segments(text, start, end, later - wrapping)
    sizes = [count(text[s:e]) for s, e in spans]
    pieces, i = [], 0
    while i < len(spans):
        cap = later if pieces else budget
        inner = cap - wrapping
        j, estimate = i + 1, sizes[i]
        while j < len(spans) and estimate + 1 + sizes[j] <= inner:
            estimate += 1 + sizes[j]
            j += 1
        while True:  # the estimate ignores merges across line ends: check the exact count
            piece = _wrap(head, text[spans[i][0] : spans[j - 1][1]], tail)
            tokens = count(piece)
            if tokens <= cap or j == i + 1:
                break
            j -= 1
        if tokens > cap:  # a wrapped single span: drop the wrapper
            piece = text[spans[i][0] : spans[i][1]]
            tokens = count(piece)
        pieces.append((piece, tokens))
        i = j
    return pieces


def _wrap(head: str, body: str, tail: str) -> str:
    return "\n".join(part for part in (head, body, tail) if part)


def tail_options(text: str, limit: int) -> list[tuple[str, int]]:
    """Suffixes of text starting at a line or sentence start, up to limit tokens, shortest first."""
    # A token is rarely longer than 16 characters: only the end of a long text can be a tail.
    window = max(0, len(text) - 16 * limit)
    starts = [
        s
        for ls, le in _line_spans(text, window, len(text))
        for s, _ in _sentence_spans(text, ls, le)
    ]
    if window and starts:
        starts.pop(0)  # may begin mid-sentence
    options = []
    for s in reversed(starts):
        tail = text[s:]
        tokens = count(tail)
        if tokens > limit:
            break
        options.append((tail, tokens))
    return options


PROSE = frozenset({"paragraph", "list_item", "quote", "other"})


@dataclass
class Item:
    """One heading line, block, or piece of a cut block, with its exact token cost."""

    unit: int  # index of the section it belongs to
    kind: str  # a block kind, or "heading"
    text: str
    tokens: int = 0
    joint: int = 0  # tokens SEP costs after it
    brk: bool = False  # a later piece of a cut block: it starts a new chunk
    # The heading this text sits under (a folded deeper heading included): what a quote of
    # it cites. None for the page top / an H1, which have no id.
    anchor: str | None = None
    title: str = ""
    aside: str | None = None  # the admonition it sits in (indexer.model.Block.aside)


def size(items: list[Item]) -> int:
    """Exact tokens of the items joined with SEP."""
    return sum(item.tokens for item in items) + sum(item.joint for item in items[:-1])


def pack(items: list[Item], limit_of: Callable[[int], int], overlap: int) -> list[list[Item]]:
    """Greedy pieces of at most limit_of(first item's unit) tokens, cut only between items.

    A piece never ends on a heading when text follows; a piece continuing the same section
    opens with the tail (<= overlap tokens, at a sentence or line start) of the one before.
    """
    pieces: list[list[Item]] = []
    i, n = 0, len(items)
    while i < n:
        limit = limit_of(items[i].unit)
        lead = _overlap(pieces, items, i, limit, overlap)
        piece = [lead] if lead else []
        used = lead.tokens if lead else 0
        j = i
        while j < n:
            item = items[j]
            add = item.tokens + (piece[-1].joint if piece else 0)
            if j > i and (item.brk or used + add > limit):
                break
            piece.append(item)
            used += add
            j += 1
        while i < j < n and items[j - 1].kind == "heading":
            piece.pop()
            j -= 1
        if j == i:  # headings too long to fit with the text after them: drop one
            i += 1
            continue
        if any(item.kind != "heading" for item in piece[1 if lead else 0 :]):
            pieces.append(piece)
        i = j
    return pieces


def _overlap(pieces, items: list[Item], i: int, limit: int, overlap: int) -> Item | None:
    if not overlap or not pieces:
        return None
    last, first = pieces[-1][-1], items[i]
    if last.unit != first.unit or last.kind not in PROSE:
        return None
    k = i  # the piece must still hold the headings and the first text after the overlap
    while k < len(items) - 1 and items[k].kind == "heading":
        k += 1
    start = size(items[i : k + 1])
    for text, tokens in reversed(tail_options(last.text, overlap)):
        cost = joint(text)
        if tokens + cost + start <= limit:
            return Item(first.unit, last.kind, text, tokens, cost, anchor=last.anchor,
                        title=last.title)
    return None
