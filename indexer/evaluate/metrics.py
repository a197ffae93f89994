"""Pure scoring of an eval run: hit@k, MRR@10, abstention, citation validity, latency."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from indexer.evaluate.questions import ANSWERABLE_KINDS, Question

TOP_K = 10
NOT_INDEXED = "expected section not indexed"


@dataclass(frozen=True)
class Outcome:
    """What the chat path returned for one question."""

    question: Question
    ranking: list[str]  # url (page + '#' + anchor) of each retrieved chunk, best first
    pages: list[str]  # page_url of the same chunks
    citations: list[str]  # url of every citation in the answer
    low_confidence: bool
    latency_ms: float
    titles: list[str] = field(default_factory=list)  # section titles of the ranking, for misses


def rank_of(expected: str | None, urls: Sequence[str], k: int = TOP_K) -> int | None:
    """1-based rank of the first url equal to expected within the top k, else None."""
    if expected is None:
        return None
    for i, url in enumerate(urls[:k], start=1):
        if url == expected:
            return i
    return None


def hit_at(ranks: Sequence[int | None], k: int) -> float | None:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else None


def mrr(ranks: Sequence[int | None], k: int = TOP_K) -> float | None:
    if not ranks:
        return None
    return sum(1.0 / r for r in ranks if r is not None and r <= k) / len(ranks)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100), as numpy's default."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def _share(flags: Iterable[bool]) -> float | None:
    flags = list(flags)
    return sum(flags) / len(flags) if flags else None


def _scores(outcomes: Sequence[Outcome]) -> dict:
    """Retrieval and abstention scores of outcomes whose expected section is indexed."""
    answerable = [o for o in outcomes if o.question.answerable]
    unanswerable = [o for o in outcomes if not o.question.answerable]
    ranks = [rank_of(o.question.expected_url, o.ranking) for o in answerable]
    page_ranks = [rank_of(o.question.expected_page, o.pages) for o in answerable]
    return {
        "n": len(outcomes),
        "hit_at_1": hit_at(ranks, 1),
        "hit_at_5": hit_at(ranks, 5),
        "mrr_at_10": mrr(ranks),
        "page_hit_at_5": hit_at(page_ranks, 5),
        "abstain_unanswerable": _share(o.low_confidence for o in unanswerable),
        "abstain_answerable": _share(o.low_confidence for o in answerable),
    }


def _miss(o: Outcome, reason: str, rank: int | None) -> dict:
    return {
        "id": o.question.id,
        "line": o.question.line,
        "kind": o.question.kind,
        "question": o.question.question,
        "expected": o.question.expected_url,
        "reason": reason,
        "rank": rank,
        "retrieved": o.ranking[:5],
        "cited": o.citations,
        "low_confidence": o.low_confidence,
    }


def misses(outcomes: Sequence[Outcome]) -> list[dict]:
    """Every question the run got wrong: expected section not in the top 5, an unanswerable
    question answered confidently, an answerable one flagged low-confidence."""
    out = []
    for o in outcomes:
        if not o.question.answerable:
            if not o.low_confidence:
                out.append(_miss(o, "answered, but the book does not cover it", None))
            continue
        rank = rank_of(o.question.expected_url, o.ranking)
        if rank is None or rank > 5:
            where = "not in the top 10" if rank is None else f"ranked {rank}"
            out.append(_miss(o, f"expected section {where}", rank))
        elif o.low_confidence:
            out.append(_miss(o, "found, but flagged low confidence", rank))
    return out


def summarize(outcomes: Sequence[Outcome], indexed_urls: set[str]) -> dict:
    """The report object: exactly the keys of issue 5, plus `not_indexed` kept apart by callers.

    Questions whose expected_url is not a chunk url of the index are left out of every score
    (they cannot be found); they are listed under `not_indexed` and counted per kind.
    """
    scored = [
        o for o in outcomes if not o.question.answerable or o.question.expected_url in indexed_urls
    ]
    skipped = [o for o in outcomes if o not in scored]
    cited = [url for o in outcomes for url in o.citations]
    by_kind = {}
    for kind in (*ANSWERABLE_KINDS, "unanswerable"):
        of_kind = [o for o in scored if o.question.kind == kind]
        gone = sum(1 for o in skipped if o.question.kind == kind)
        if not of_kind and not gone:
            continue
        scores = _scores(of_kind)
        if kind == "unanswerable":
            scores = {"n": scores["n"], "abstain_unanswerable": scores["abstain_unanswerable"]}
        else:
            scores.pop("abstain_unanswerable")
            scores["not_indexed"] = gone
        by_kind[kind] = scores
    totals = _scores(scored)
    totals.pop("n")
    latencies = [o.latency_ms for o in outcomes]
    return {
        **totals,
        "citation_validity": _share(url in indexed_urls for url in cited),
        "by_kind": by_kind,
        "misses": misses(scored),
        "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
        "not_indexed": [
            {"id": o.question.id, "line": o.question.line, "expected": o.question.expected_url,
             "reason": NOT_INDEXED}
            for o in skipped
        ],
    }
