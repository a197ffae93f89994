"""Answer confidence from the dense similarities of the chunks used, with per-model thresholds.

Confidence is the highest cosine similarity between the question and the chunks the answer is
built from (after re-ranking), blended with the mean of the top three so that one lucky
chunk counts less than consistent support: 0.7 * best + 0.3 * mean(top 3).

Cosine levels differ by model, so the thresholds are per model (LOW_CONFIDENCE_THRESHOLD
overrides `low`; `none` then stays the same distance below it). Below `low` the reader gets a
disclaimer and related sections instead of a guess; below `none`, "I couldn't find this".

- all-MiniLM-L6-v2, calibrated on the sample textbook (samples/textbook, 107 chunks from
  `textbook-chat index`) through this retrieval path, `python -m tests.functions.calibration`:
  34 questions the book answers scored 0.230–0.748 (median 0.586); 20 it does not answer
  scored 0.067–0.491 (median 0.167), the highest being near-topic robotics questions (SLAM,
  inverse kinematics, stereo calibration). low = 0.35 flags 17/20 unanswered (85%) and 2/34
  answered (6%); none = 0.20 sits below every answered one and above 13/20 unanswered.
  tests/functions/test_calibration.py keeps these rates from regressing.
- text-embedding-3-small / -large: relevant matches commonly score 0.3–0.6 and unrelated text
  0.05–0.25, so low = 0.30, none = 0.15 (not measured here: no network; recalibrate with
  the same script against the real API and set LOW_CONFIDENCE_THRESHOLD).
- text-embedding-ada-002 compresses cosines into 0.7–0.9: low = 0.78.
- other models (tests' fake embedders): a middle ground; pass LOW_CONFIDENCE_THRESHOLD.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from functions.retrieval import chunk_text
from functions.search_types import SearchHit
from functions.sparse import coverage, terms

# (low, none): below `low` the answer is low confidence; below `none` nothing is relevant.
THRESHOLDS: dict[str, tuple[float, float]] = {
    "all-MiniLM-L6-v2": (0.35, 0.20),
    "text-embedding-3-small": (0.30, 0.15),
    "text-embedding-3-large": (0.30, 0.15),
    "text-embedding-ada-002": (0.78, 0.70),
}
DEFAULT_THRESHOLDS = (0.35, 0.18)
# How far the lexical support of the best hit moves the dense score, per model: calibrated
# for MiniLM only; models not measured here keep the dense-only rule until recalibrated.
COVERAGE_WEIGHTS: dict[str, float] = {"all-MiniLM-L6-v2": 0.5}
COVERAGE_PIVOT = 0.75  # coverage that leaves the score unchanged (also used without a query)


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
    """Share of the question's content terms found in the best hit's title, headings and text."""
    if not hits or query is None:
        return COVERAGE_PIVOT
    return coverage(set(terms(query)), chunk_text(hits[0]))


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
