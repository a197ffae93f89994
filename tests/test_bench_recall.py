"""benchmarks/bench_recall.py ranks a pool by each variant and counts sections once."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_recall  # noqa: E402


def test_the_expected_sections_rank_counts_each_section_once():
    pool = {1: {"cos": 0.9, "held": {"/a#x"}}, 2: {"cos": 0.8, "held": {"/a#x"}},
            3: {"cos": 0.7, "held": {"/b#y"}}, 4: {"cos": 0.6, "held": {"/c#z"}}}
    question = {"pool": pool, "expected": "/b#y"}
    assert bench_recall.rank_of(question, lambda c: c["cos"]) == 2  # /a#x's two chunks: one rank
    assert bench_recall.rank_of(question, lambda c: -c["cos"]) == 2  # /c#z, then /b#y
    assert bench_recall.rank_of({"pool": pool, "expected": "/nowhere"}, lambda c: c["cos"]) is None


def test_every_variant_reads_only_the_features_gathered():
    features = {"cos": 0.5, "share": 0.5, "rare_share": 0.5, "heading": 0.5, "block": 0.5,
                "recap": 1.0}
    for label, score in bench_recall.VARIANTS.items():
        assert isinstance(score(features), float), label


def test_whole_book_variants_rank_sections_once_and_change_the_order_they_claim():
    import numpy as np

    book = {"vectors": np.array([[1.0, 0.0], [0.99, 0.14], [0.0, 1.0]], dtype=np.float32),
            "held": [["/a#x"], ["/a#x"], ["/b#y"]], "adapters": {},
            "headings": np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32)}
    question = {"vector": np.array([0.8, 0.6], dtype=np.float32), "expected": "/b#y",
                "sentences": [np.array([0.0, 1.0], dtype=np.float32)]}
    plain = bench_recall.QUERY_VARIANTS["question's vector"]
    assert bench_recall.whole_book_rank(question, book, plain) == 2  # /a#x's two chunks: one rank
    best_sentence = bench_recall.QUERY_VARIANTS["best of its sentences"]
    assert bench_recall.whole_book_rank(question, book, best_sentence) == 1  # a sentence hits /b#y
    for label, variant in bench_recall.QUERY_VARIANTS.items():
        assert bench_recall.whole_book_rank(question, book, variant) in (1, 2), label
    assert bench_recall.whole_book_rank({**question, "expected": "/none"}, book, plain) is None
