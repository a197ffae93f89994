"""Answer confidence: dense similarity of the chunks used, moved by the question words they hold.

score(): the highest cosine similarity between the question and the chunks the answer is built
from (after re-ranking), blended with the mean of the top three so that one lucky chunk counts
less than consistent support: 0.7 * best + 0.3 * mean(top 3).
combined(): score() + w * (coverage - 0.75), where coverage is the share of the question's
content terms (functions.search.sparse.terms) found in the best hit's title, heading path and text. A
question whose key words the book never uses ("ros2 bag", "capital gains") is off-book even when
its topic is close enough for the cosine; w is per model (0.5 for MiniLM; 0 = dense-only rule for
models not measured here). Coverage 0.75 leaves the score unchanged, as does calling without a
question, so `low`/`none` keep their dense-scale meaning.

Cosine levels differ by model, so the thresholds are per model (LOW_CONFIDENCE_THRESHOLD
overrides `low`; `none` then stays the same distance below it). Below `low` the reader gets a
disclaimer and related sections instead of a guess; below `none`, "I couldn't find this".

The figures these values come from, and the commands that reproduce them (benchmarks/bench_eval.py
on three books, `python -m tests.functions.calibration` on the sample), are in
benchmarks/calibration.md; tests/functions/test_calibration.py keeps MiniLM's from regressing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from functions.answers.question_kind import compared_terms, names_other_side
from functions.answers.tuning import TUNING
from functions.search.ranking import chunk_text
from functions.search.sparse import coverage, terms
from functions.search.types import SearchHit

# (low, none) per model, the lexical support's weight, its pivot: functions.answers.tuning
THRESHOLDS: dict[str, tuple[float, float]] = TUNING.thresholds.value
DEFAULT_THRESHOLDS = TUNING.default_thresholds.value
COVERAGE_WEIGHTS: dict[str, float] = TUNING.coverage_weights.value
COVERAGE_PIVOT = TUNING.coverage_pivot.value
SIDES = TUNING.sides.value


@dataclass(frozen=True)
class Assessment:
    confidence: float
    level: str  # "ok" | "low" | "none"

    @property
    def low(self) -> bool:
        return self.level != "ok"


def thresholds(model: str, override: float | None = None) -> tuple[float, float]:
    low, none = THRESHOLDS.get(model, DEFAULT_THRESHOLDS)
    if override is None:
        return low, none
    return override, max(0.0, override - (low - none))


def score(hits: Sequence[SearchHit]) -> float:
    sims = sorted((float(h.dense_score) for h in hits), reverse=True)
    if not sims:
        return 0.0
    top = sims[:3]
    return max(0.0, min(1.0, 0.7 * sims[0] + 0.3 * sum(top) / len(top)))


def support(hits: Sequence[SearchHit], query: str | None) -> float:
    """Share of the question's content terms found in the best hit's title, headings and text;
    for a comparison, in the best hit and a close one that is the other side together
    ("how do quantizing and pruning differ": each is its own section, and the answer quotes
    both)."""
    if not hits or query is None:
        return COVERAGE_PIVOT
    wanted = set(terms(query))
    share = coverage(wanted, chunk_text(hits[0]))
    compared = compared_terms(query)
    if compared:
        first = _named(hits[0])
        for hit in hits[1:SIDES]:
            if names_other_side(compared, _named(hit), first):
                share = max(share, coverage(wanted, f"{chunk_text(hits[0])} {chunk_text(hit)}"))
    return share


def _named(hit: SearchHit) -> tuple[str, str]:
    return str(hit.payload.get("doc_title", "")), str(hit.payload.get("section_title", ""))


def combined(hits: Sequence[SearchHit], query: str | None = None, weight: float = 0.0) -> float:
    """score() moved by how well the best hit covers the question's words (neutral at the pivot)."""
    return score(hits) + weight * (support(hits, query) - COVERAGE_PIVOT)


def assess(hits: Sequence[SearchHit], model: str, override: float | None = None,
           query: str | None = None) -> Assessment:
    low, none = thresholds(model, override)
    weight = COVERAGE_WEIGHTS.get(model, 0.0)
    value = max(0.0, min(1.0, combined(hits, query, weight))) if hits else 0.0
    level = "ok" if value >= low else ("low" if value >= none and hits else "none")
    return Assessment(round(value, 3), level)
