"""Answer confidence from the dense similarities of the chunks used, with per-model thresholds.

Confidence is the highest cosine similarity between the question and the chunks the answer is
built from (after re-ranking), blended with the mean of the top three so that one lucky
chunk counts less than consistent support: 0.7 * best + 0.3 * mean(top 3).

Cosine levels differ by model, so the thresholds are per model (LOW_CONFIDENCE_THRESHOLD
overrides `low`; `none` then stays the same distance below it):
- all-MiniLM-L6-v2: calibrated on the sample textbook (samples/textbook) indexed with the
  local model: questions it answers scored CALIBRATION below, off-topic ones scored lower.
  Reproduce with `python -m functions.confidence samples/textbook` (see tests).
- text-embedding-3-small: relevant matches commonly score 0.3–0.6 and unrelated text
  0.05–0.25 (OpenAI's documented behaviour and our fake-free spot checks), so low = 0.30.
- unknown models: a conservative middle ground.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from functions.search_types import SearchHit

# (low, none): below `low` the answer is low confidence; below `none` nothing is relevant.
THRESHOLDS: dict[str, tuple[float, float]] = {
    "all-MiniLM-L6-v2": (0.40, 0.22),
    "text-embedding-3-small": (0.30, 0.15),
    "text-embedding-3-large": (0.30, 0.15),
    "text-embedding-ada-002": (0.78, 0.70),
}
DEFAULT_THRESHOLDS = (0.35, 0.18)


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


def assess(hits: Sequence[SearchHit], model: str, override: float | None = None) -> Assessment:
    low, none = thresholds(model, override)
    value = score(hits)
    level = "ok" if value >= low else ("low" if value >= none and hits else "none")
    return Assessment(round(value, 3), level)
