"""The eval table on every real corpus (../shared/corpora or $TEXTBOOK_CHAT_CORPORA), in one command:

    pytest tests/test_corpora_benchmark.py -s

Each corpus is indexed with its own site settings, local MiniLM and local Qdrant in a temporary
folder; hybrid, dense, sparse and the naive baseline are evaluated in the same run and printed.
Skipped cleanly where no corpus is present.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bench_eval", ROOT / "benchmarks" / "bench_eval.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

CORPORA = bench.find_corpora(bench.corpora_root())
# Issue 5's bar; TEXTBOOK_CHAT_BENCH_ONLY_PRINT=1 prints the table without asserting it.
ASSERT = os.environ.get("TEXTBOOK_CHAT_BENCH_ONLY_PRINT", "") in ("", "0")

pytestmark = [pytest.mark.corpora, pytest.mark.slow]


# The runs asserted below: naive-dense is left out (bench_eval.py still prints it), and the runs
# hybrid is compared with are asked only the answerable questions (only their MRR is read).
RUNS = tuple(r for r in bench.RUNS if r[0] != "naive-dense")
COMPARED = ("dense", "sparse", "naive-hybrid")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("corpora-qdrant")


@pytest.mark.skipif(not CORPORA, reason=f"no corpora under {bench.corpora_root()}")
@pytest.mark.parametrize("corpus", CORPORA, ids=[c.name for c in CORPORA])
def test_corpus_eval_table(corpus, workdir):
    # each text embedded once for this corpus's runs, kept in this run's tmp dir (not the checkout)
    runs = bench.bench_corpus(corpus, workdir, runs=RUNS, cache=workdir / f"{corpus.name}-vectors",
                              sets=bench.SETS, answerable_only=COMPARED)
    print(f"\n== {corpus.name}\n{bench.comparison_table(runs)}")
    hybrid = runs["hybrid"]
    print("issue 37 targets: " + ("all met" if not bench.target_gaps(runs)
                                  else "; ".join(bench.target_gaps(runs))))
    assert hybrid["not_citable"] == [], "every expected section of the corpus must be citable"
    assert hybrid["citation_validity"] in (None, 1.0)
    if not ASSERT:
        return
    # The measured floors, a little under the figures (the issue-10 targets are printed above).
    floor = bench.FLOORS.get(corpus.name) or {}
    for run, bar in ((hybrid, floor), (runs.get("hybrid para"), floor.get("para"))):
        if run is None or not bar:
            continue
        assert (run["answered_cites_expected"] or 0.0) >= bar["answered_cites_expected"]
        assert run["reached"] >= bar["reached"]
        assert (run["unanswerable_answered"] or 0.0) <= bar["unanswerable_answered_max"]
    assert hybrid["hit_at_5"] >= 0.93
    for other in COMPARED:
        assert hybrid["mrr_at_10"] > runs[other]["mrr_at_10"], f"hybrid must beat {other}"
