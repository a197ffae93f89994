"""Heading text and ids the way Docusaurus's remark `headings` plugin computes them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it.token import Token

from indexer.slugger import Slugger

# @docusaurus/utils parseMarkdownHeadingId: `{#id}` at the very end; JS `.` stops at line ends.
_DOT = r"[^\n\r\u2028\u2029]"
_LEGACY_ID = re.compile(rf"\s*\{{#((?:{_DOT}(?!\{{#|\}}))*{_DOT})\}}\Z")
# MDX `{/* #id */}` as the last thing of the heading: one comment, nothing else in the braces.
_COMMENT_EXPR = re.compile(r"(?<!\\)\{\s*/\*((?:(?!\*/).)*)\*/\s*\}\s*\Z", re.S)
_MDX_COMMENT = re.compile(r"\{\s*/\*.*?\*/\s*\}", re.S)
_MDX_STRING = re.compile(r"\{\s*(['\"])(.*?)\1\s*\}")


@dataclass
class HeadingId:
    """What one heading contributes to the page: visible title and id (None when there is none)."""

    title: str
    anchor: str | None


def heading_id(inline: Token, level: int, slugger: Slugger, mdx: bool) -> HeadingId:
    """Id of one heading; h1 takes a slugger slot but renders without an id."""
    children = inline.children or []
    comment_id = _comment_id(inline.content) if mdx else None
    slug_text = _to_string(children)
    legacy = _LEGACY_ID.search(slug_text)
    title = _title(children, mdx)
    if comment_id is not None:
        anchor: str | None = comment_id
        title = _title_without_comment(title)
    elif legacy is not None:
        anchor = legacy.group(1)
        title = _LEGACY_ID.sub("", title).strip() or title
    else:
        anchor = slugger.slug(slug_text) or None  # "" takes a slot but renders no id
    return HeadingId(title, None if level == 1 else anchor)


def _comment_id(content: str) -> str | None:
    match = _COMMENT_EXPR.search(content)
    if match is None:
        return None
    first = match.group(1).strip().split(" ")[0]
    return first[1:] or None if first.startswith("#") else None


def _to_string(children: list[Token]) -> str:
    """mdast-to-string of the heading, without its top-level HTML (Docusaurus filters `html`)."""
    kept = [t for t in children if t.type != "html_inline"]
    if not kept:  # only HTML: Docusaurus falls back to the whole heading, HTML source included
        return "".join(t.content for t in children)
    return "".join(_plain(t) for t in kept)


def _plain(token: Token) -> str:
    kind = token.type
    if kind in ("text", "code_inline"):
        return token.content
    if kind in ("softbreak", "hardbreak"):
        return "\n"
    # a text directive (indexer/directives.py) is only its label, the tokens after it
    if kind == "math_inline":
        return f"${token.content}$"
    if kind == "image":  # the alt text is slugged, though it is not visible
        return "".join(_plain(t) for t in token.children or [])
    return ""  # html_inline, footnote_ref, *_open/*_close


def _title(children: list[Token], mdx: bool) -> str:
    parts = []
    for token in children:
        if token.type in ("text", "code_inline"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif token.type == "math_inline":
            parts.append(f"${token.content}$")
        elif token.type == "text_directive" and token.meta.get("simple"):
            parts.append(token.content)  # shown again as `:name` (Docusaurus unusedDirectives)
    text = "".join(parts)
    if mdx:
        text = _MDX_STRING.sub(lambda m: m.group(2), _MDX_COMMENT.sub("", text))
    return " ".join(text.split())


def _title_without_comment(title: str) -> str:
    return _COMMENT_EXPR.sub("", title).strip()
