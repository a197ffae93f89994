"""How a hit is ranked: the one place, run alike by every engine and by the Lambda path.

1. rank(): an engine's points become SearchHits. Each gets its dense_score, the cosine of the
   question and the chunk (what confidence is made of). In hybrid mode Qdrant's RRF fusion only
   picks the candidates; they are re-scored by hybrid_score (0.7 * cosine + 0.3 * the share of
   the question's terms in the chunk) and sorted by it, ties keeping the RRF order. The
   embedded engine (functions.search.edge_store) and a server over REST (functions.search.qdrant_http,
   on Lambda and for the index side) both hand their points to rank().
2. rerank(): a chunk of the reader's page counts PAGE_BOOST times (page_boost()), a recap
   (recap_weight()) RECAP_WEIGHT times, then the best
   top_k are kept with at most MAX_PER_SECTION chunks of one section and one copy of the same
   text (the same section in two versions or locales). The boost moves `score` only.
3. What confidence (functions.answers.confidence) reads of the hits it is given: each hit's
   dense_score (set in rank(), never boosted) and chunk_text() of the best one, the text its
   word coverage is measured on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from urllib.parse import urlsplit

from functions.search.types import SearchHit, SparseVec
from functions.search.types import cosine as cosine_of

DENSE_WEIGHT = 0.7  # hybrid re-scoring of Qdrant's RRF candidates: cosine vs term coverage
PAGE_BOOST = 1.5  # a chunk on the reader's current page counts 1.5x (the selected-text boost)
MAX_PER_SECTION = 2  # one section may fill at most this many of the top_k slots
# A recap restates what the detailed sections say, and the detailed one is the better citation:
# a section titled Summary, Key takeaways, Recap, Conclusion(s) or Wrap-up, and a folder's
# overview page (index, intro, overview, README) count this much. Measured with
# benchmarks/bench_recall.py's pool on both development books and the sample (calibration.md):
# hit@1 .77 -> .80 and .80 -> .83 on the book-worded sets, .55 -> .60 and .30 -> .30 on the para
# sets, the sample unchanged; 0.9 loses a top-5 hit. Sections titled Overview or Introduction
# are not recaps: weighed so, pai-ali's para hit@1 fell .55 -> .50.
RECAP_WEIGHT = 0.95
# "Summary", "Chapter 3 summary", "Summary and next steps", "Key takeaways" (not "Summary statistics")
_RECAP_TITLE = re.compile(r"^\s*(?:[\w.-]+\s+){0,2}(?:summary|key takeaways?|recap|conclusions?|"
                          r"wrap-?up)(?:\s+(?:and|&)\s+.*)?\s*$", re.I)
_OVERVIEW_PAGE = re.compile(r"(?:^|/)(?:index|intro|overview|readme)\.mdx?$", re.I)


def hybrid_score(dense_score: float, query_indices, doc_indices) -> float:
    """0.7 * cosine + 0.3 * share of the query's terms present in the chunk's sparse vector."""
    wanted = set(query_indices)
    if not wanted:
        return dense_score
    share = len(wanted.intersection(doc_indices)) / len(wanted)
    return DENSE_WEIGHT * dense_score + (1 - DENSE_WEIGHT) * share


def rank(dense: Sequence[float], sparse: SparseVec, mode: str,
         points: Iterable[tuple[int, float, Sequence[float] | None, Sequence[int], dict]],
         limit: int | None = None) -> list[SearchHit]:
    """Hits from an engine's points (id, score, dense vector, sparse indices, payload), in the
    engine's order; in hybrid mode RRF picked the candidates: the best `limit` by fused score
    (ties in point id order, query.TIE_SLACK), ranked by cosine + coverage (stable: ties keep
    that order)."""
    if mode == "hybrid":
        points = sorted(points, key=lambda p: (-float(p[1]), int(p[0])))[:limit]
    hits = []
    for pid, score, vector, sparse_indices, payload in points:
        cosine = cosine_of(dense, vector)
        if mode == "hybrid":
            score = hybrid_score(cosine, sparse[0], sparse_indices)
        hits.append(SearchHit(int(pid), float(score), cosine, payload))
    if mode == "hybrid":
        hits.sort(key=lambda h: -h.score)
    return hits


def page_key(url: str | None) -> str:
    """A page's identity for matching: its path without fragment, query or trailing slash."""
    if not url:
        return ""
    return urlsplit(url).path.rstrip("/") or "/"


def page_boost(hit: SearchHit, current: str) -> float:
    """PAGE_BOOST for a chunk of the reader's page (current: its page_key), else 1.0."""
    on_page = bool(current) and page_key(hit.payload.get("page_url")) == current
    return PAGE_BOOST if on_page else 1.0


def recap_weight(hit: SearchHit) -> float:
    """RECAP_WEIGHT for a recap section or a folder's overview page, else 1.0."""
    p = hit.payload
    recap = _RECAP_TITLE.search(str(p.get("section_title") or "")) or _OVERVIEW_PAGE.search(
        str(p.get("doc_path") or ""))
    return RECAP_WEIGHT if recap else 1.0


def section_key(hit: SearchHit) -> tuple[str, str]:
    return (str(hit.payload.get("doc_path", "")), str(hit.payload.get("anchor", "")))


def chunk_text(hit: SearchHit) -> str:
    """What a chunk says: its page title, heading path and content (what was embedded)."""
    p = hit.payload
    return " ".join([str(p.get("doc_title", "")), *map(str, p.get("heading_path") or []),
                     str(p.get("content", ""))])


def rerank(hits: Sequence[SearchHit], page_url: str | None = None, top_k: int = 5,
           max_per_section: int = MAX_PER_SECTION) -> list[SearchHit]:
    """Boost chunks of the reader's page, then keep the best top_k with at most
    max_per_section chunks of any one section; scores are rank()'s (in hybrid mode
    hybrid_score of the RRF candidates) times the page boost and the recap weight."""
    current = page_key(page_url)
    boosted = []
    for order, hit in enumerate(hits):
        score = hit.score * page_boost(hit, current) * recap_weight(hit)
        boosted.append((-score, order, replace(hit, score=score)))
    boosted.sort(key=lambda item: item[:2])
    picked: list[SearchHit] = []
    per_section: dict[tuple[str, str], int] = {}
    seen_text: set[str] = set()  # the same section in two versions or locales: cited once
    for _, _, hit in boosted:
        key = section_key(hit)
        text = str(hit.payload.get("content_hash") or "")
        if per_section.get(key, 0) >= max_per_section or (text and text in seen_text):
            continue
        seen_text.add(text)
        per_section[key] = per_section.get(key, 0) + 1
        picked.append(hit)
        if len(picked) == top_k:
            break
    return picked
