"""Eval metrics on tiny hand-made runs."""

from __future__ import annotations

import pytest

from indexer.evaluate.metrics import (
    NOT_INDEXED,
    Outcome,
    hit_at,
    mrr,
    percentile,
    rank_of,
    summarize,
)
from indexer.evaluate.questions import Question

P = "/b/docs/page"


def q(qid: str, anchor: str | None, kind: str = "concept", page: str = P) -> Question:
    url = f"{page}#{anchor}" if anchor else None
    return Question(qid, f"question {qid}?", url, page if anchor else None, kind, line=int(qid[1:]))


def out(question: Question, anchors: list[str], *, low=False, cites=None, ms=10.0, page=P):
    urls = [f"{page}#{a}" if "/" not in a else a for a in anchors]
    return Outcome(
        question=question,
        ranking=urls,
        pages=[u.split("#")[0] for u in urls],
        citations=[f"{P}#{c}" for c in (cites or [])],
        low_confidence=low,
        latency_ms=ms,
    )


INDEX = {f"{P}#{a}" for a in "abcdefghijk"} | {"/b/docs/other#x"}


def test_rank_of_is_one_based_first_match_within_k():
    urls = ["u1", "u2", "u3", "u3"]
    assert rank_of("u3", urls) == 3
    assert rank_of("u3", urls, k=2) is None
    assert rank_of("zz", urls) is None
    assert rank_of(None, urls) is None


def test_hit_at_rank_3_gives_mrr_one_third():
    run = summarize([out(q("q1", "c"), ["a", "b", "c", "d"])], INDEX)
    assert run["mrr_at_10"] == pytest.approx(1 / 3)
    assert run["hit_at_1"] == 0.0
    assert run["hit_at_5"] == 1.0
    assert run["page_hit_at_5"] == 1.0


def test_mrr_averages_and_ignores_ranks_past_10():
    ranks = [1, 2, None, 11]
    assert mrr(ranks) == pytest.approx((1 + 0.5) / 4)
    assert hit_at(ranks, 1) == 0.25
    assert hit_at([], 5) is None


def test_section_miss_can_still_be_a_page_hit():
    other = "/b/docs/other#x"
    run = summarize(
        [
            out(q("q1", "a"), ["b", "c"]),  # right page, wrong section
            out(q("q2", "a"), [other]),  # wrong page
        ],
        INDEX,
    )
    assert run["hit_at_5"] == 0.0
    assert run["page_hit_at_5"] == 0.5
    assert [m["id"] for m in run["misses"]] == ["q1", "q2"]
    assert run["misses"][0]["reason"] == "expected section not in the top 10"
    assert run["misses"][0]["retrieved"] == [f"{P}#b", f"{P}#c"]


def test_rank_6_is_a_miss_with_its_rank():
    run = summarize([out(q("q1", "f"), list("abcdefg"))], INDEX)
    assert run["hit_at_5"] == 0.0
    assert run["mrr_at_10"] == pytest.approx(1 / 6)
    (miss,) = run["misses"]
    assert (miss["rank"], miss["reason"]) == (6, "expected section ranked 6")


def test_abstention_shares():
    run = summarize(
        [
            out(q("q1", None, "unanswerable"), ["a"], low=True),
            out(q("q2", None, "unanswerable"), ["b"], low=True),
            out(q("q3", None, "unanswerable"), ["c"], low=False),
            out(q("q4", "a"), ["a"], low=True),
            out(q("q5", "b"), ["b"]),
            out(q("q6", "c", "fact"), ["c"]),
            out(q("q7", "d", "fact"), ["d"]),
        ],
        INDEX,
    )
    assert run["abstain_unanswerable"] == pytest.approx(2 / 3)
    assert run["abstain_answerable"] == pytest.approx(1 / 4)
    # unanswerable questions do not count in retrieval scores
    assert run["hit_at_1"] == 1.0
    assert {m["id"]: m["reason"] for m in run["misses"]} == {
        "q3": "answered, but the book does not cover it",
        "q4": "found, but flagged low confidence",
    }
    assert run["by_kind"]["unanswerable"] == {"n": 3, "abstain_unanswerable": pytest.approx(2 / 3)}
    assert run["by_kind"]["fact"]["n"] == 2
    assert run["by_kind"]["concept"]["abstain_answerable"] == 0.5


def test_citation_validity_counts_every_returned_citation():
    run = summarize(
        [
            out(q("q1", "a"), ["a"], cites=["a", "b"]),
            out(q("q2", "b"), ["b"], cites=["b", "made-up"]),
        ],
        INDEX,
    )
    assert run["citation_validity"] == pytest.approx(3 / 4)
    assert summarize([out(q("q1", "a"), ["a"])], INDEX)["citation_validity"] is None


def test_expected_section_not_indexed_is_reported_apart_not_as_miss():
    gone = q("q2", "renamed-heading")
    run = summarize([out(q("q1", "a"), ["a"]), out(gone, ["a", "b"])], INDEX)
    assert run["hit_at_5"] == 1.0
    assert run["misses"] == []
    assert run["not_indexed"] == [
        {"id": "q2", "line": 2, "expected": f"{P}#renamed-heading", "reason": NOT_INDEXED}
    ]
    assert run["by_kind"]["concept"]["not_indexed"] == 1
    assert run["by_kind"]["concept"]["n"] == 1


def test_no_scorable_questions_gives_none_not_zero_division():
    run = summarize([out(q("q1", "zz"), ["a"])], INDEX)
    assert run["hit_at_5"] is None and run["mrr_at_10"] is None


def test_latency_percentiles():
    assert percentile([10, 20, 30, 40], 50) == 25
    assert percentile(list(range(1, 101)), 95) == pytest.approx(95.05)
    assert percentile([], 50) is None
    run = summarize([out(q(f"q{i}", "a"), ["a"], ms=float(i)) for i in range(1, 21)], INDEX)
    assert run["latency_ms"] == {"p50": 10.5, "p95": pytest.approx(19.05)}
