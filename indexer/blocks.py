"""The top-level blocks and headings of a markdown-it token stream, in document order."""

from __future__ import annotations

import re

from markdown_it.token import Token

_LEAF_KINDS = {"fence": "code", "code_block": "code", "math_block": "math",
               "math_block_label": "math", "html_block": "html", "hr": "other"}
_OPEN_KINDS = {"paragraph_open": "paragraph", "table_open": "table", "blockquote_open": "quote"}


def units(tokens: list[Token], i: int = 0, end: int | None = None, aside: str | None = None):
    """Yield (kind, payload, start_line, end_line, aside), 0-based lines, end exclusive; aside:
    the title of the admonition the unit sits in (its type when it has none: "tip"), else None.

    kind is "heading" (payload: (level, inline token)), "footnotes" (where GFM puts its
    generated footnotes heading), or a Block kind (payload: the block's token).

    Admonitions are always transparent; a blockquote or list item is transparent only when it
    holds a heading (Docusaurus gives that heading an id like any other).
    """
    end = len(tokens) if end is None else end
    while i < end:
        tok = tokens[i]
        close = _close(tokens, i) if tok.nesting == 1 else i
        if tok.type == "heading_open":
            yield "heading", (int(tok.tag[1]), tokens[i + 1]), tok.map[0], tok.map[1], aside
        elif tok.type.startswith("container_admonition"):
            yield from units(tokens, i + 1, close, admonition_title(tok.info))
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            yield from _list_items(tokens, i + 1, close, aside)
        elif tok.type == "blockquote_open" and _has_heading(tokens, i, close):
            yield from units(tokens, i + 1, close, aside)
        elif tok.type == "footnote_block_open":
            first = next((t.map for t in tokens[i:close] if t.map), None)
            if first is not None:
                yield "footnotes", tok, first[0], first[0], aside
            yield from units(tokens, i + 1, close, aside)
        elif tok.type == "footnote_open":
            yield from units(tokens, i + 1, close, aside)
        elif tok.map is not None:
            kind = _LEAF_KINDS.get(tok.type) or _OPEN_KINDS.get(tok.type) or "other"
            yield kind, tok, tok.map[0], tok.map[1], aside
        i = close + 1


def admonition_title(info: str) -> str:
    """What an admonition shows above its text: its title (`:::tip Log everything`, also
    `:::tip[Log everything]` or `title="…"`), else its type ("tip")."""
    kind, _, rest = info.strip().partition(" ")
    kind, bracket, inline = kind.partition("[")
    title = (inline + " " + rest).rstrip("] ").strip() if bracket else rest.strip()
    title = re.sub(r'^title=(["\'])(.*)\1$', r"\2", title).strip()
    return " ".join(title.split()) or kind.lower()


def _list_items(tokens: list[Token], i: int, end: int, aside: str | None = None):
    while i < end:
        close = _close(tokens, i)
        item = tokens[i]
        if _has_heading(tokens, i, close):
            yield from units(tokens, i + 1, close, aside)
        elif item.map is not None:
            yield "list_item", item, item.map[0], item.map[1], aside
        i = close + 1


def _close(tokens: list[Token], i: int) -> int:
    level = tokens[i].level
    j = i + 1
    while j < len(tokens) and not (tokens[j].nesting == -1 and tokens[j].level == level):
        j += 1
    return j


def _has_heading(tokens: list[Token], i: int, close: int) -> bool:
    return any(t.type == "heading_open" for t in tokens[i:close])
