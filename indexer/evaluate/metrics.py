"""Pure scoring of an eval run: the answer a reader sees (its outcome: answered, closest or not
covered; does it cite the expected section, does it reach it, did it answer a question the book
does not), with hit@k, MRR@10, citation validity and latency beside it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from indexer.evaluate.questions import KINDS, Question

TOP_K = 10
NOT_CITABLE = "expected section cannot be cited (no indexed chunk holds that heading)"


@dataclass(frozen=True)
class Outcome:
    """What the chat path returned for one question."""

    question: Question
    ranking: list[str]  # url (page + '#' + anchor) of each retrieved chunk, best first
    pages: list[str]  # page_url of the same chunks
    citations: list[str]  # url of every citation in the answer shown
    low_confidence: bool  # the reader was told the book doesn't cover it
    latency_ms: float
    titles: list[str] = field(default_factory=list)  # section titles of the ranking, for misses
    answer: str = ""  # the answer text shown
    # every citable url each retrieved chunk holds (its own + merged short sections'); empty:
    # just the ranking's url
    held: list[tuple[str, ...]] = field(default_factory=list)
    outcome: str = ""  # answered | closest | not_covered ("": read from low_confidence)
    related: list[str] = field(default_factory=list)  # url of every related section shown

    @property
    def shown(self) -> str:
        """The outcome the reader saw (an answer without one: answered unless low confidence)."""
        return self.outcome or ("not_covered" if self.low_confidence else "answered")

    def holds(self, i: int) -> tuple[str, ...]:
        return self.held[i] if i < len(self.held) and self.held[i] else (self.ranking[i],)


def rank_of(expected: str | None, urls: Sequence[str], k: int = TOP_K) -> int | None:
    """1-based rank of the first url equal to expected within the top k, else None."""
    if expected is None:
        return None
    for i, url in enumerate(urls[:k], start=1):
        if url == expected:
            return i
    return None


def section_rank(o: Outcome, k: int = TOP_K) -> int | None:
    """1-based rank of the first retrieved chunk that holds the expected section."""
    expected = o.question.expected_url
    if expected is None:
        return None
    for i in range(min(k, len(o.ranking))):
        if expected in o.holds(i):
            return i + 1
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


def cites_expected(o: Outcome, citable: set[str]) -> bool:
    """The answer was shown (not refused) and one of its citations is the expected section;
    a section that cannot be cited is never cited."""
    url = o.question.expected_url
    return bool(url) and url in citable and not o.low_confidence and url in o.citations


def answered_right(o: Outcome, citable: set[str]) -> bool:
    """Answered (the answered outcome, not the closest passage) citing the expected section."""
    return o.shown == "answered" and cites_expected(o, citable)


def reached(o: Outcome, citable: set[str]) -> bool:
    """The reader lands on the expected section: answered citing it, or shown the closest
    passage with it among the sections linked."""
    url = o.question.expected_url
    return answered_right(o, citable) or (
        o.shown == "closest" and bool(url) and url in citable and url in [*o.citations,
                                                                          *o.related])


def answered_confidently(o: Outcome) -> bool:
    return o.shown == "answered" and not o.low_confidence


def _scores(outcomes: Sequence[Outcome], citable: set[str]) -> dict:
    answerable = [o for o in outcomes if o.question.answerable]
    unanswerable = [o for o in outcomes if not o.question.answerable]
    multi = [o for o in answerable if o.question.also_url]
    ranks = [section_rank(o) for o in answerable]
    page_ranks = [rank_of(o.question.expected_page, o.pages) for o in answerable]
    said = [o for o in answerable if o.shown == "answered"]
    return {
        "n": len(outcomes),
        "outcomes": {k: sum(o.shown == k for o in outcomes)
                     for k in ("answered", "closest", "not_covered")},
        "answered_cites_expected": _share(answered_right(o, citable) for o in said),
        "reached": _share(reached(o, citable) for o in answerable),
        "unanswerable_answered": _share(answered_confidently(o) for o in unanswerable),
        "answer_cites_expected": _share(cites_expected(o, citable) for o in answerable),
        "answer_cites_also": _share(
            not o.low_confidence and o.question.also_url in o.citations for o in multi),
        "abstain_answerable": _share(o.low_confidence for o in answerable),
        "abstain_unanswerable": _share(o.low_confidence for o in unanswerable),
        "hit_at_1": hit_at(ranks, 1),
        "hit_at_5": hit_at(ranks, 5),
        "mrr_at_10": mrr(ranks),
        "page_hit_at_5": hit_at(page_ranks, 5),
    }


def _miss(o: Outcome, reason: str) -> dict:
    return {
        "id": o.question.id,
        "line": o.question.line,
        "kind": o.question.kind,
        "question": o.question.question,
        "expected": o.question.expected_url,
        "reason": reason,
        "outcome": o.shown,
        "rank": section_rank(o),
        "retrieved": o.ranking[:5],
        "cited": o.citations,
        "low_confidence": o.low_confidence,
        "answer": o.answer,
    }


def miss_reason(o: Outcome, citable: set[str]) -> str | None:
    """Why the answer shown for this question is wrong, or None when it is right."""
    q = o.question
    if not q.answerable:
        return "answered, but the book does not cover it" if answered_confidently(o) else None
    if q.expected_url not in citable:
        return NOT_CITABLE
    if reached(o, citable):
        return None
    rank = section_rank(o)
    where = "not retrieved" if rank is None else f"retrieved at rank {rank}"
    if o.shown == "closest":
        return f"closest passage, without the expected section among those shown ({where})"
    if o.shown == "not_covered":
        return f"said not covered, but the book answers it (expected section {where})"
    return f"answered without citing the expected section ({where})"


def summarize(outcomes: Sequence[Outcome], citable: set[str],
              valid_citation=None) -> dict:
    """The report object. `citable`: every url a citation can have (chunk urls and the urls
    of the sections they hold). Every question is scored: one whose expected section cannot be
    cited is a miss, listed under `not_citable` too. `valid_citation(url) -> bool` checks each
    shown citation (default: it is citable; with a build folder: its id is on the built page).
    """
    valid_citation = valid_citation or (lambda url: url in citable)
    cited = [url for o in outcomes for url in o.citations]
    by_kind = {}
    # the corpora's kinds in their usual order, then any other label in the order first seen
    labels = dict.fromkeys(o.question.kind for o in outcomes)
    kinds = [k for k in KINDS if k in labels] + [k for k in labels if k not in KINDS]
    for kind in [k for k in kinds if k != "unanswerable"] + ["unanswerable"]:
        of_kind = [o for o in outcomes if o.question.kind == kind]
        if not of_kind:
            continue
        scores = _scores(of_kind, citable)
        if kind == "unanswerable":
            scores = {k: scores[k] for k in ("n", "outcomes", "unanswerable_answered",
                                             "abstain_unanswerable")}
        else:
            scores.pop("abstain_unanswerable")
            scores.pop("unanswerable_answered")
            if not any(o.question.also_url for o in of_kind):
                scores.pop("answer_cites_also")
            scores["not_citable"] = sum(1 for o in of_kind if o.question.expected_url not in citable)
        by_kind[kind] = scores
    totals = _scores(outcomes, citable)
    totals.pop("n")
    latencies = [o.latency_ms for o in outcomes]
    missed = []
    for o in outcomes:
        reason = miss_reason(o, citable)
        if reason:
            missed.append(_miss(o, reason))
    answerable = [o for o in outcomes if o.question.answerable]
    return {
        "n": len(outcomes),
        **totals,
        "citation_validity": _share(valid_citation(url) for url in cited),
        "by_kind": by_kind,
        "misses": missed,
        "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
        "not_citable": [
            {"id": o.question.id, "line": o.question.line, "expected": o.question.expected_url,
             "reason": NOT_CITABLE}
            for o in answerable if o.question.expected_url not in citable
        ],
    }


def unscorable(summary: dict) -> str | None:
    """Why nothing in a run could be scored (exit non-zero), or None."""
    if not summary["n"]:
        return "the question file has no questions"
    answerable = sum(s["n"] for k, s in summary["by_kind"].items() if k != "unanswerable")
    if answerable and len(summary["not_citable"]) == answerable:
        return (
            "no expected section of any question is in the index: the question file's URLs "
            "and the indexed URLs differ (index with the site's settings: --site-dir or "
            "--base-url / --route-base-path / --trailing-slash)"
        )
    return None
