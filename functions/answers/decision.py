"""Which of the three outcomes a question gets (functions.answers.types.OUTCOMES): one calibrated
probability over the signals retrieval and the block choice already have, and one cut for
"nothing near".

`signals()` reads a question's evidence into a few numbers (how close the best chunks are in
meaning, how close the best block is, how many of the question's words they hold, and how many
of its rare words the book never uses); `probability()` is a logistic model over them, fitted on
labelled questions of the development books (answerable or not, in the book's words and in
readers' own) to "the quote cites the section that answers", by `python
benchmarks/fit_decision.py`; it lives in functions/data/answer_policy.json, one policy per
embedding model, with that command, the books and the figures. A question is answered when the
probability reaches the policy's threshold; it is not covered when nothing is near (its chunks'
cosine under the policy's `near` and the best block holding under `near_terms` of its
words (by rarity): "shoot-through dead time" is near) or it names what the book never mentions; every other
question gets the closest passage. The model path also asks the model from `ask_model` up
(functions.answers.chat).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from functions.answers.confidence import score, support
from functions.search.types import SearchHit

POLICY_FILE = Path(__file__).resolve().parent.parent / "data" / "answer_policy.json"
FEATURES = ("cosine", "coverage", "passage", "passage_terms", "unknown", "gap", "peak")


@dataclass(frozen=True)
class Signals:
    """What the decision reads of one question's evidence."""

    cosine: float  # 0.7 * best + 0.3 * mean of the top-3 chunk cosines (confidence.score)
    coverage: float  # share of the question's content terms in the closest chunk (0.75: n/a)
    passage: float  # cosine of the question and the closest block of the candidate chunks
    passage_terms: float  # rarity-weighted share of the question's terms the best block holds
    unknown: int  # rare words of the question the whole book never uses ("laggy", "colcon")
    gap: float = 0.0  # best chunk cosine minus the mean of the next four
    peak: float = 0.0  # best block cosine minus the mean of all candidate blocks

    def values(self) -> tuple[float, ...]:
        return tuple(float(getattr(self, name)) for name in FEATURES)


@dataclass(frozen=True)
class AnswerPolicy:
    """The fitted decision: a logistic model over standardised signals, and where to cut it.
    Every number comes from the policy file, written by the command it names."""

    model: str  # the embedding model whose cosines it was fitted on
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    threshold: float  # answer at or above this probability
    ask_model: float  # with a model, ask it from here up (below: the offline outcome)
    near: float = 0.0  # below this `cosine` signal nothing in the book is near (not covered)…
    near_terms: float = 1.0  # … unless the best block holds this share of its words
    command: str = ""
    notes: dict = field(default_factory=dict, compare=False)

    def probability(self, signals: Signals) -> float:
        values = dict(zip(FEATURES, signals.values(), strict=True))
        z = self.bias + sum(w * (values[f] - m) / s for f, m, s, w in
                            zip(self.features, self.mean, self.scale, self.weights, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@dataclass(frozen=True)
class Decision:
    """What the chat path decided for a question, and why: shown by `ask --explain`."""

    action: str  # "answer" | "closest" | "refuse" (not covered) | "model" (ask the model)
    confidence: float  # the policy's probability (a model without one: the dense score)
    rule: str  # which rule decided, in words
    signals: Signals
    case: str = ""  # "not_mentioned": refused by name
    chosen: tuple[str, ...] = ()  # the sections the offline quote comes from (their urls)
    uncovered: tuple[str, ...] = ()  # parts of a multi-part question the book does not answer
    kind: str = ""  # what the question asks for (functions.answers.question_kind.Reading.kind)
    topic: str = ""  # a follow-up: the conversation's topic searched beside it
    # (functions.answers.prompt.follow_up_context; empty with a model's rewrite)…
    quoted_for: str = ""  # … and what its quote was chosen for (prompt.resolve)


@lru_cache(maxsize=1)
def policies() -> dict[str, AnswerPolicy]:
    """The fitted policies by embedding model name (read once)."""
    data = json.loads(POLICY_FILE.read_text(encoding="utf-8"))
    out = {}
    for model, p in data["policies"].items():
        out[model] = AnswerPolicy(
            model=model, features=tuple(p["features"]), mean=tuple(p["mean"]),
            scale=tuple(p["scale"]), weights=tuple(p["weights"]), bias=float(p["bias"]),
            threshold=float(p["threshold"]), ask_model=float(p["ask_model"]),
            near=float(p.get("near", 0.0)), near_terms=float(p.get("near_terms", 1.0)),
            command=data.get("command", ""), notes=p.get("notes", {}))
    return out


def policy_for(model: str) -> AnswerPolicy | None:
    """The policy fitted for this embedding model, or None (no fitted decision: the dense
    thresholds of functions.answers.confidence decide alone)."""
    return policies().get(model)


def signals(question: str | None, hits: Sequence[SearchHit], top_sem: float, top_lex: float,
            unknown: int, mean_sem: float = 0.0) -> Signals:
    """`question`: None for a follow-up that leans on the previous turn (its words are
    conversation, not the book's: coverage is then neutral). `top_sem`/`top_lex`: the best
    block's cosine and term share among the candidates (functions.answers.extractive). The
    closest chunk is the one with the highest cosine, which the reader's page never lifts."""
    closest = sorted(hits, key=lambda h: -h.dense_score)
    cos = [h.dense_score for h in closest]
    gap = cos[0] - sum(cos[1:5]) / len(cos[1:5]) if len(cos) > 1 else 0.0
    return Signals(cosine=round(score(hits), 4),
                   coverage=round(support(closest, question), 4),
                   passage=round(top_sem, 4), passage_terms=round(top_lex, 4), unknown=unknown,
                   gap=round(gap, 4), peak=round(top_sem - mean_sem, 4))
