"""Confidence levels from dense similarities, per-model thresholds and the override."""

from __future__ import annotations

from functions.answers.confidence import assess, score, thresholds
from functions.search.types import SearchHit


def hits(*sims: float) -> list[SearchHit]:
    return [SearchHit(i, 0.0, s, {}) for i, s in enumerate(sims)]


def test_score_blends_best_and_top_three():
    assert score(hits(0.8, 0.5, 0.2)) == 0.7 * 0.8 + 0.3 * 0.5
    assert score([]) == 0.0


def test_levels_per_model():
    assert assess(hits(0.7, 0.6), "all-MiniLM-L6-v2").level == "ok"
    assert assess(hits(0.5, 0.45), "text-embedding-3-small").level == "ok"
    assert assess(hits(0.5, 0.45), "text-embedding-ada-002").level == "none"
    assert assess([], "all-MiniLM-L6-v2").level == "none"


def test_override_moves_both_thresholds():
    low, none = thresholds("all-MiniLM-L6-v2", 0.5)
    assert low == 0.5 and none < low
    assert assess(hits(0.45), "all-MiniLM-L6-v2", 0.5).low


def test_question_words_missing_from_the_best_hit_lower_confidence():
    text = {"doc_title": "IMU", "heading_path": ["Sensors", "Gyroscope"],
            "content": "A gyroscope drifts; a complementary filter corrects the drift."}
    found = [SearchHit(0, 0.0, 0.42, text)]
    on_book = assess(found, "all-MiniLM-L6-v2", query="Why does a gyroscope drift?")
    off_book = assess(found, "all-MiniLM-L6-v2", query="How are capital gains taxed on stocks?")
    assert on_book.level == "ok" and off_book.low
    assert on_book.confidence > 0.42 > off_book.confidence
    # no question text (or a model without a calibrated weight): the dense-only rule
    assert assess(found, "all-MiniLM-L6-v2").confidence == 0.42
    assert assess(found, "fake-model", query="capital gains stocks").confidence == 0.42


def test_a_comparison_is_covered_by_its_two_sides_together():
    def section(title: str, content: str, sim: float) -> SearchHit:
        return SearchHit(0, 0.0, sim, {"doc_title": "Edge inference", "section_title": title,
                                       "heading_path": ["Edge inference", title],
                                       "content": content})

    quantizing = section("Model quantization", "Quantization stores weights as int8.", 0.45)
    pruning = section("Compression", "Pruning removes connections, saving power.", 0.42)
    summary = section("Summary", "Pruning and quantization both help.", 0.41)
    question = "What is the difference between quantization and pruning for saving power?"
    apart = assess([quantizing, summary, pruning], "all-MiniLM-L6-v2", query=question)
    # the pruning section names no compared term in its heading: only the best hit counts
    assert apart.low
    pruning_named = section("Pruning", "Pruning removes connections, saving power.", 0.42)
    together = assess([quantizing, pruning_named], "all-MiniLM-L6-v2", query=question)
    assert together.level == "ok" and together.confidence > apart.confidence
    # the same two hits for a question that compares nothing: the best hit alone
    alone = assess([quantizing, pruning_named], "all-MiniLM-L6-v2",
                   query="How does quantization and pruning save power?")
    assert alone.confidence < together.confidence
