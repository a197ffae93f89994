"""Warnings for the author: a doc that indexes but is probably not what they meant (a page with
no text, a code fence never closed), or that Docusaurus will not build (an MDX tag or
`{expression}` never closed)."""

from __future__ import annotations

from functions.search.contract import Chunk
from indexer.model import Document, Problem

_TEXT_KINDS = ("paragraph", "list", "quote", "table")  # blocks MDX parses as text and JSX


def doc_warnings(doc: Document, chunks: list[Chunk], mdx: bool = False) -> list[Problem]:
    """Things that index but are probably not what the author meant; with `mdx`, the first
    JSX tag or expression left open, on which `docusaurus build` (and `start`) fails."""
    out = []
    if not chunks:
        out.append(Problem(doc.source, None, "has no text to index (empty, or headings only); "
                           "readers' questions cannot be answered from it"))
    for section in doc.sections:
        for block in section.blocks:
            lines = block.text.strip().splitlines()
            if block.kind != "code" or not lines:
                continue
            opener = lines[0].lstrip()
            fence = opener[: len(opener) - len(opener.lstrip(opener[:1]))] if opener[:1] in "`~" else ""
            if len(fence) >= 3 and (len(lines) == 1 or not lines[-1].strip().startswith(fence)):
                out.append(Problem(doc.source, block.line, f"this {fence} code fence is never "
                                   "closed, so the rest of the page is shown as code; close it"))
    if mdx:
        out.extend(_unclosed_jsx(doc))
    return out


def _unclosed_jsx(doc: Document) -> list[Problem]:
    from indexer.jsx_flow import unclosed_jsx  # markdown-it's: only where a doc was parsed

    for section in doc.sections:
        for block in section.blocks:
            if block.kind not in _TEXT_KINDS:
                continue
            for offset, opening in unclosed_jsx(block.text):
                what = "`{` expression" if opening.lstrip().startswith("{") else "JSX tag"
                return [Problem(doc.source, block.line + offset, (
                    f"MDX: this {what} (`{opening.strip()}`) is never closed, so Docusaurus "
                    "cannot build the page; close it, or write `\\<` or `\\{` for the "
                    "character itself"))]
    return []
