"""The `--baseline naive` index: the same text cut into fixed 512-token windows that ignore headings.

The text of each page is rebuilt from the main index (every chunk's `content` in `chunk_index`
order, its heading line put back, the overlap between pieces of one section removed), so the
baseline sees exactly the words our pipeline sees and needs no docs folder. Windows are
`WINDOW_TOKENS` cl100k tokens with `OVERLAP_TOKENS` overlap (LangChain's usual 512/50), cut with
no regard for headings, embedded as bare text (no title, no heading path).

A naive pipeline knows no headings, so it could only cite the page. To compare anchor-exact
hits at all, each window is credited with the section that holds the largest share of its
characters (ties: the earlier one). That rule favours the baseline: it knows where the headings
are, which the pipeline it stands for does not. (Crediting the section the window starts in
instead was measured too: it credits most windows to the page top and scores far lower.)
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from functions.search.contract import Chunk, chunk_id, content_hash
from functions.search.sparse import encode_document
from functions.tokens import encoding

WINDOW_TOKENS = 512
OVERLAP_TOKENS = 50
NAIVE_SUFFIX = "-naive"
_MAX_OVERLAP_CHARS = 4000


@dataclass(frozen=True)
class Segment:
    """A stretch of a rebuilt page that belongs to one indexed chunk."""

    start: int  # char offset in the page text
    payload: dict


@dataclass(frozen=True)
class Page:
    doc_path: str
    text: str
    segments: list[Segment]

    def payload_at(self, offset: int) -> dict:
        starts = [s.start for s in self.segments]
        return self.segments[max(bisect.bisect_right(starts, offset) - 1, 0)].payload

    def main_payload(self, start: int, end: int) -> dict:
        """The payload of the segment covering most of text[start:end]."""
        best, best_len = self.payload_at(start), -1
        bounds = [s.start for s in self.segments[1:]] + [len(self.text)]
        for seg, stop in zip(self.segments, bounds, strict=True):
            covered = min(end, stop) - max(start, seg.start)
            if covered > best_len:
                best, best_len = seg.payload, covered
        return best


def _heading_line(payload: dict) -> str:
    title = payload.get("section_title") or ""
    level = int(payload.get("heading_level") or 1)
    return f"{'#' * max(level, 1)} {title}" if title else ""


def _strip_overlap(previous: str, text: str) -> str:
    """Drop the start of text that repeats the end of previous (overlap between pieces)."""
    for k in range(min(len(previous), len(text), _MAX_OVERLAP_CHARS), 0, -1):
        if previous.endswith(text[:k]):
            return text[k:].lstrip()
    return text


def rebuild_pages(payloads: Iterable[dict]) -> list[Page]:
    """Each page's Markdown as one string, from the indexed chunks of the page."""
    by_doc: dict[str, list[dict]] = {}
    for p in payloads:
        by_doc.setdefault(p["doc_path"], []).append(p)
    pages = []
    for doc_path in sorted(by_doc):
        parts: list[str] = []
        segments: list[Segment] = []
        offset = 0
        previous = None
        for p in sorted(by_doc[doc_path], key=lambda p: p["chunk_index"]):
            content = p.get("content") or ""
            if previous is not None and previous.get("url") == p.get("url"):
                piece = _strip_overlap(previous.get("content") or "", content)
            else:
                heading = _heading_line(p)
                has_heading = content.lstrip().startswith("#")
                piece = content if has_heading or not heading else f"{heading}\n\n{content}"
            segments.append(Segment(offset, p))
            parts.append(piece)
            offset += len(piece) + 2
            previous = p
        pages.append(Page(doc_path, "\n\n".join(parts), segments))
    return pages


def windows(text: str, size: int = WINDOW_TOKENS, overlap: int = OVERLAP_TOKENS) -> Iterator[
    tuple[int, str]
]:
    """(start char offset, text) of each fixed token window over text."""
    enc = encoding()
    tokens = enc.encode(text, disallowed_special=())
    if not tokens:
        return
    _, offsets = enc.decode_with_offsets(tokens)
    step = size - overlap
    for start in range(0, max(len(tokens) - overlap, 1), step):
        piece = tokens[start : start + size]
        yield offsets[start], enc.decode(piece)


def naive_chunks(payloads: Iterable[dict], model_name: str = "") -> list[Chunk]:
    """The baseline's chunks: fixed windows of every page, url of the section each starts in."""
    chunks = []
    for page in rebuild_pages(payloads):
        for index, (start, text) in enumerate(windows(page.text)):
            p = page.main_payload(start, start + len(text))
            cid = chunk_id(page.doc_path, index)
            chunks.append(
                Chunk(
                    chunk_id=cid,
                    doc_path=page.doc_path,
                    doc_id=p.get("doc_id", ""),
                    doc_title=p.get("doc_title", ""),
                    module=p.get("module", ""),
                    heading_path=list(p.get("heading_path") or []),
                    section_title=p.get("section_title", ""),
                    section_number=p.get("section_number", ""),
                    heading_level=int(p.get("heading_level") or 1),
                    anchor=p.get("anchor") or "",
                    url=p["url"],
                    page_url=p["page_url"],
                    chunk_index=index,
                    token_count=len(encoding().encode(text, disallowed_special=())),
                    content=text,
                    content_hash=content_hash(text),
                    content_type="naive-window",
                    tags=list(p.get("tags") or []),
                    embedding_model=model_name,
                    embed_text=text,
                )
            )
    return chunks


def build_naive_index(source_store, target_store, embedder, batch: int = 64) -> int:
    """(Re)build the baseline collection from the main one; returns the number of windows."""
    fields = tuple(f for f in Chunk.__dataclass_fields__ if f != "embed_text")
    payloads = [p for _, p in source_store.scroll_payloads(fields)]
    chunks = [replace(c, embedding_model=embedder.model_name) for c in naive_chunks(payloads)]
    target_store.ensure_collection(embedder.model_name, embedder.dimension, recreate=True)
    items = []
    for start in range(0, len(chunks), batch):
        part = chunks[start : start + batch]
        vectors = embedder.embed_batch([c.embed_text for c in part])
        items += [
            (c.point_id, c.payload(), list(v), encode_document(c.embed_text))
            for c, v in zip(part, vectors, strict=True)
        ]
    if items:
        target_store.upsert(items)
    return len(chunks)
