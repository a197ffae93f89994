"""benchmarks/bench_claims (the claim check's separation, docs/answers.md "Model answers") still runs:
its passages, cases and scoring on the sample book, with a fake embedder."""

from __future__ import annotations

from pathlib import Path

from benchmarks import bench_claims
from functions.answers import claims
from tests.fakes.embedder import FakeEmbedder

ROOT = Path(__file__).resolve().parent.parent


def test_the_separation_benchmark_runs_on_the_sample_book():
    items = bench_claims.passages(ROOT / "samples" / "textbook")
    assert len(items) >= 10
    triples = bench_claims.cases(items, per_kind=20)
    assert {k for k, _, _ in triples} == set(bench_claims.KINDS)
    scored, _ = claims.score([s for _, s, _ in triples], [[p] for _, _, p in triples],
                             FakeEmbedder(64))
    rates = bench_claims.accepted([(k, *sc) for (k, _, _), sc in zip(triples, scored, strict=True)],
                                  claims.THRESHOLD, claims.MIN_LEXICAL, claims.LEXICAL_WEIGHT)
    assert rates["verbatim"] == 1.0 and rates["other_page"] < rates["verbatim"]
