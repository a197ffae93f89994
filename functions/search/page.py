"""MCP's `fetch_page`: one page of the book as Markdown, from the index, with no model.

The page is put back together from its chunks in order: each heading as a Markdown heading
linked to its exact URL (`## [Loop jitter](/book/docs/loop#loop-jitter)`), each section's text
under it once (the words a long paragraph's pieces share are not repeated). It is the text
`search_book` reads, so every link in it is one the index cites.
"""

from __future__ import annotations

import re

_HEADING_LINE = re.compile(r"^#{1,6} [^\n]*\n*")
MIN_OVERLAP = 20  # characters two pieces of a split paragraph share at least


def _pieces(payload: dict) -> list[tuple[dict, str]]:
    """(heading, its text) for each heading whose text the chunk holds."""
    content = str(payload.get("content") or "")
    sections = [s for s in payload.get("sections") or [] if isinstance(s, dict)]
    if not sections:  # an index written before chunks recorded their headings
        sections = [{"anchor": payload.get("anchor") or "", "title": payload.get("section_title"),
                     "url": payload.get("url"), "level": payload.get("heading_level"),
                     "start": 0}]
    out = []
    for n, section in enumerate(sections):
        end = sections[n + 1].get("start", len(content)) if n + 1 < len(sections) else len(content)
        text = content[int(section.get("start") or 0):end].strip()
        out.append((section, _HEADING_LINE.sub("", text, count=1).strip()))
    return out


def _without_overlap(before: str, text: str) -> str:
    """text without its start when that repeats the end of `before` (split paragraphs overlap)."""
    head = text[:MIN_OVERLAP]
    if len(head) < MIN_OVERLAP:
        return text
    at = before.find(head, max(0, len(before) - 4 * len(text) - 4000))
    while at >= 0:
        shared = len(before) - at
        if text.startswith(before[at:]):
            return text[shared:].lstrip()
        at = before.find(head, at + 1)
    return text


def page_markdown(url: str, retriever) -> dict | None:
    """{"title", "url", "markdown", "sections": [{title, url}]} for the page of `url`; None
    when the book has no such page."""
    payloads = retriever.page_chunks(url)
    if not payloads:
        return None
    first = payloads[0]
    page_url = str(first.get("page_url") or "")
    lines = [f"# [{first.get('doc_title') or ''}]({page_url})"]
    headings: list[dict] = []
    last_anchor, last_text = None, ""
    for payload in payloads:
        for section, text in _pieces(payload):
            anchor = section.get("anchor") or ""
            if anchor != last_anchor:
                if anchor:
                    level = min(6, max(2, int(section.get("level") or 2)))
                    link = section.get("url") or f"{page_url}#{anchor}"
                    lines.append(f"{'#' * level} [{section.get('title') or ''}]({link})")
                    headings.append({"title": section.get("title") or "", "url": link})
                last_anchor, last_text = anchor, ""
            text = _without_overlap(last_text, text)
            if text:
                lines.append(text)
                last_text = f"{last_text}\n\n{text}"
    return {"title": first.get("doc_title") or "", "url": page_url,
            "markdown": "\n\n".join(lines) + "\n", "sections": headings}
