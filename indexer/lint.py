"""Warnings for the author: a doc that indexes but is probably not what they meant (a page with
no text, a code fence never closed)."""

from __future__ import annotations

from functions.search.contract import Chunk
from indexer.model import Document, Problem


def doc_warnings(doc: Document, chunks: list[Chunk]) -> list[Problem]:
    """Things that index but are probably not what the author meant."""
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
    return out
