"""Citations: each `[n]` in an answer maps to a retrieved chunk; others are removed, renumbered."""

from __future__ import annotations

import re
from collections.abc import Sequence

from functions.answers.reader_blocks import readable_tables
from functions.answers.text import plain_text
from functions.answers.tuning import TUNING
from functions.search.types import SearchHit

# A marker follows a space or punctuation, never a word, bracket or backtick: `ticks[0]` and
# `x[1]` in code or prose are text, not citations.
_BEFORE = r"(?:\s+|(?<![\w\])`]))"
_MARKERS = re.compile(_BEFORE + r"(?:\[\d{1,3}(?:\s*,\s*\d{1,3})*\])+")  # adjacent: one group
_FENCED = re.compile(r"```.*?```", re.S)  # a snippet shows prose, not code
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s.*$", re.M)
# The space a removed marker leaves before a stop ("text [7]." → "text ."); a stop that opens a
# word keeps the space before it ("HTTP :80", ":::tip").
_SPACE_BEFORE_STOP = re.compile(r"[ \t]+([.,;:!?])(?=[\s)\]*_\"'”’]|$)")
SNIPPET_CHARS = TUNING.snippet_chars.value


def strip_markers(text: str) -> str:
    """Text quoted from a source with its own marker-like `[7]`s removed, so that only the
    answerer's markers can become citations."""
    return _MARKERS.sub("", text)


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """The start of a chunk's text as plain prose, cut at a word boundary; its headings are
    left out (the citation names the section), never glued to the text's first words; a table
    reads as its cells, row by row (functions.answers.reader_blocks.readable_tables)."""
    plain = plain_text(readable_tables(_HEADING_LINE.sub("", _FENCED.sub(" ", text))))
    if len(plain) <= limit:
        return plain
    return plain[:limit].rsplit(" ", 1)[0] + "…"


def citation(n: int, hit: SearchHit) -> dict:
    p = hit.payload
    return {
        "n": n,
        "title": str(p.get("doc_title", "")),
        "section_title": str(p.get("section_title", "")),
        "url": str(p.get("url", "")),
        "doc_path": str(p.get("doc_path", "")),
        "score": round(max(0.0, min(1.0, float(hit.dense_score))), 3),
        "snippet": snippet(str(p.get("content", ""))),
    } | ({"untranslated": True} if p.get("untranslated") else {})  # default-locale text


def link_citations(answer: str, hits: Sequence[SearchHit]) -> tuple[str, list[dict]]:
    """Keep markers that name a context block, renumber them 1..k in order of first use,
    and drop the rest; returns the new text and one citation per kept number."""
    renumber: dict[int, int] = {}

    def replace(match: re.Match) -> str:
        kept = []
        for raw in re.findall(r"\d+", match.group(0)):
            n = int(raw)
            if 1 <= n <= len(hits):
                new = renumber.setdefault(n, len(renumber) + 1)
                if new not in kept:
                    kept.append(new)
        leading = " " if match.group(0)[:1].isspace() else ""
        return leading + "".join(f"[{k}]" for k in kept) if kept else ""

    text = _outside_code(_MARKERS.sub(replace, answer),
                         lambda prose: _SPACE_BEFORE_STOP.sub(r"\1", prose)).strip()
    citations = [citation(new, hits[old - 1]) for old, new in sorted(renumber.items(),
                                                                      key=lambda kv: kv[1])]
    return text, citations


def related_topics(hits: Sequence[SearchHit], limit: int = 3) -> list[dict]:
    """Up to `limit` distinct sections (title + exact url, marked like citations when the
    reader's locale has them only in the default language) among the hits, best first."""
    seen, out = set(), []
    for hit in hits:
        url = str(hit.payload.get("url", ""))
        if not url or url in seen:
            continue
        seen.add(url)
        section = str(hit.payload.get("section_title") or "")
        doc = str(hit.payload.get("doc_title") or "")
        title = section if not doc or section == doc else f"{doc} › {section}"
        out.append({"title": title or url, "url": url}
                   | ({"untranslated": True} if hit.payload.get("untranslated") else {}))
        if len(out) == limit:
            break
    return out


# Links a model may write: Markdown links and images (inline or reference style), reference
# definitions, <autolinks>, HTML anchors, bare URLs, www. hosts and e-mail addresses (the
# widget's Markdown renders GFM autolinks live). Only our citations may link anywhere.
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.S)
_INLINE_LINK = re.compile(r"!?\[([^\]\n]*)\]\(\s*<?[^)\s>]*>?(?:\s+[\"'(][^)\n]*[\"')])?\s*\)")
_REF_LINK = re.compile(r"!?\[([^\]\n]*[^\]\d\s,][^\]\n]*)\]\[[^\]\n]*\]")
_REF_DEF = re.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*\S+.*(?:\n|$)", re.M)
_HTML_A = re.compile(r"<a\b[^>]*>(.*?)</a\s*>", re.I | re.S)
_ANGLE = re.compile(r"<(?:[a-z][a-z0-9+.-]*:|www\.)[^>\s]*>", re.I)
_BARE = re.compile(r"(?:\b[a-z][a-z0-9+.-]*://|\bwww\.)[^\s<>]*[^\s<>.,;:!?)\]'\"]"
                   r"|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b", re.I)


def strip_links(text: str) -> str:
    """Model text with every link turned into its words and every URL removed; code spans
    and fences stay as written (a URL in code is not clickable)."""
    return _outside_code(text, _unlink)


def _outside_code(text: str, change) -> str:
    """text with change() applied to its prose only: code spans and fences stay as written
    (`raw != state` keeps its space)."""
    out, last = [], 0
    for code in _CODE.finditer(text):
        out += [change(text[last:code.start()]), code.group(0)]
        last = code.end()
    out.append(change(text[last:]))
    return "".join(out)


def _unlink(text: str) -> str:
    text = _REF_DEF.sub("", text)
    text = _HTML_A.sub(r"\1", text)
    for _ in range(2):  # a link inside an image inside a link
        text = _INLINE_LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _BARE.sub("", _ANGLE.sub("", text))
    text = re.sub(r"\(\s*\)", "", text)  # "(see )" left by a removed URL
    return re.sub(r"[ \t]{2,}", " ", _SPACE_BEFORE_STOP.sub(r"\1", text))
