"""A retrieved chunk as the sections it holds: each with its own heading, anchor and text.

Short sections merged into one chunk keep their anchors (chunk payload `sections`), so a quote
cites the heading it sits under, not the first heading of the chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from functions.search.types import SearchHit


def split_hit(hit: SearchHit) -> list[SearchHit]:
    """One hit per section of the chunk, each payload narrowed to that section's url, anchor,
    title and text (a chunk without `sections` is returned whole)."""
    p = hit.payload
    content = str(p.get("content", ""))
    sections = [s for s in p.get("sections") or [] if isinstance(s, dict)]
    if len(sections) <= 1:
        return [hit]
    out = []
    for k, section in enumerate(sections):
        start = int(section.get("start") or 0)
        end = int(sections[k + 1].get("start") or len(content)) if k + 1 < len(sections) else None
        text = content[start:end].strip()
        if not text:
            continue
        title = str(section.get("title") or p.get("section_title", ""))
        out.append(replace(hit, payload={
            **p,
            "url": str(section.get("url") or p.get("url", "")),
            "anchor": str(section.get("anchor") or ""),
            "section_title": title,
            "content": text,
        }))
    return out or [hit]


def split_hits(hits: Sequence[SearchHit]) -> list[tuple[int, SearchHit]]:
    """(index of the chunk among hits, section hit) for every section of every hit."""
    return [(i, part) for i, hit in enumerate(hits) for part in split_hit(hit)]
