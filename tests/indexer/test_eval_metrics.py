"""Eval metrics on tiny hand-made runs."""

from __future__ import annotations

import pytest

from indexer.evaluate.metrics import (
    NOT_CITABLE,
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


def out(question: Question, anchors: list[str], *, low=False, cites=None, ms=10.0, page=P,
        outcome="", related=()):
    urls = [f"{page}#{a}" if "/" not in a else a for a in anchors]
    return Outcome(
        question=question,
        ranking=urls,
        pages=[u.split("#")[0] for u in urls],
        citations=[f"{P}#{c}" for c in (cites or [])],
        low_confidence=low,
        latency_ms=ms,
        outcome=outcome,
        related=[f"{P}#{r}" for r in related],
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
    assert run["misses"][0]["reason"] == (
        "answered without citing the expected section (not retrieved)")
    assert run["misses"][0]["retrieved"] == [f"{P}#b", f"{P}#c"]


def test_rank_6_is_a_miss_with_its_rank():
    run = summarize([out(q("q1", "f"), list("abcdefg"))], INDEX)
    assert run["hit_at_5"] == 0.0
    assert run["mrr_at_10"] == pytest.approx(1 / 6)
    (miss,) = run["misses"]
    assert (miss["rank"], miss["reason"]) == (
        6, "answered without citing the expected section (retrieved at rank 6)")


def test_abstention_shares():
    run = summarize(
        [
            out(q("q1", None, "unanswerable"), ["a"], low=True),
            out(q("q2", None, "unanswerable"), ["b"], low=True),
            out(q("q3", None, "unanswerable"), ["c"], low=False),
            out(q("q4", "a"), ["a"], low=True),
            out(q("q5", "b"), ["b"], cites=["b"]),
            out(q("q6", "c", "fact"), ["c"], cites=["c"]),
            out(q("q7", "d", "fact"), ["d"], cites=["d"]),
        ],
        INDEX,
    )
    assert run["abstain_unanswerable"] == pytest.approx(2 / 3)
    assert run["abstain_answerable"] == pytest.approx(1 / 4)
    # unanswerable questions do not count in retrieval scores
    assert run["hit_at_1"] == 1.0
    assert {m["id"]: m["reason"] for m in run["misses"]} == {
        "q3": "answered, but the book does not cover it",
        "q4": "said not covered, but the book answers it (expected section retrieved at rank 1)",
    }
    assert run["by_kind"]["unanswerable"] == {
        "n": 3, "outcomes": {"answered": 1, "closest": 0, "not_covered": 2},
        "unanswerable_answered": pytest.approx(1 / 3), "abstain_unanswerable": pytest.approx(2 / 3)}
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


def test_expected_section_that_cannot_be_cited_is_a_miss_not_left_out():
    gone = q("q2", "renamed-heading")
    run = summarize([out(q("q1", "a"), ["a"], cites=["a"]), out(gone, ["a", "b"], cites=["a"])],
                    INDEX)
    assert run["answer_cites_expected"] == 0.5  # q2 counts, as a miss
    assert run["hit_at_5"] == 0.5
    assert [(m["id"], m["reason"]) for m in run["misses"]] == [("q2", NOT_CITABLE)]
    assert run["not_citable"] == [
        {"id": "q2", "line": 2, "expected": f"{P}#renamed-heading", "reason": NOT_CITABLE}
    ]
    assert run["by_kind"]["concept"]["not_citable"] == 1
    assert run["by_kind"]["concept"]["n"] == 2


def test_answer_cites_expected_needs_a_shown_answer_citing_that_section():
    run = summarize(
        [
            out(q("q1", "a"), ["a"], cites=["a"]),  # right
            out(q("q2", "b"), ["b"], cites=["c"]),  # retrieved, but the answer cites another
            out(q("q3", "c"), ["c"], cites=["c"], low=True),  # refused (citations don't count)
            out(q("q4", "d"), ["d", "e"], cites=["e", "d"]),  # one of two citations
        ],
        INDEX,
    )
    assert run["answer_cites_expected"] == 0.5
    assert run["hit_at_1"] == 1.0  # retrieval was perfect; the answer is what is scored
    assert [m["id"] for m in run["misses"]] == ["q2", "q3"]


def test_merged_short_section_counts_as_retrieved_and_citable():
    """A chunk that holds a merged short section: its url is citable and the chunk counts
    as retrieving it."""
    question = q("q1", "short")
    outcome = Outcome(question, [f"{P}#a"], [P], [f"{P}#short"], False, 1.0,
                      held=[(f"{P}#a", f"{P}#short")])
    run = summarize([outcome], INDEX | {f"{P}#short"})
    assert run["hit_at_1"] == 1.0
    assert run["answer_cites_expected"] == 1.0


def test_multi_question_reports_the_second_section():
    first = Question("q1", "two?", f"{P}#a", P, "multi", 1, also_url=f"{P}#b")
    second = Question("q2", "two?", f"{P}#c", P, "multi", 2, also_url=f"{P}#d")
    run = summarize([out(first, ["a", "b"], cites=["a", "b"]), out(second, ["c"], cites=["c"])],
                    INDEX)
    assert run["by_kind"]["multi"]["answer_cites_expected"] == 1.0
    assert run["by_kind"]["multi"]["answer_cites_also"] == 0.5


def test_nothing_scorable_is_reported():
    from indexer.evaluate.metrics import unscorable

    run = summarize([out(q("q1", "zz"), ["a"])], INDEX)
    assert run["answer_cites_expected"] == 0.0
    assert "settings" in unscorable(run)
    assert unscorable(summarize([out(q("q1", "a"), ["a"])], INDEX)) is None


def test_build_checker_decides_citation_validity():
    run = summarize([out(q("q1", "a"), ["a"], cites=["a", "b"])], INDEX,
                    valid_citation=lambda url: url.endswith("#a"))
    assert run["citation_validity"] == 0.5


def test_latency_percentiles():
    assert percentile([10, 20, 30, 40], 50) == 25
    assert percentile(list(range(1, 101)), 95) == pytest.approx(95.05)
    assert percentile([], 50) is None
    run = summarize([out(q(f"q{i}", "a"), ["a"], ms=float(i)) for i in range(1, 21)], INDEX)
    assert run["latency_ms"] == {"p50": 10.5, "p95": pytest.approx(19.05)}


def test_any_kind_label_is_reported_on_its_own_after_the_known_kinds():
    run = summarize(
        [
            out(q("q1", "a", "para-goal"), ["a"], cites=["a"]),
            out(q("q2", "b", "para-goal"), ["c"], low=True),
            out(q("q3", None, "unanswerable"), ["a"], low=True),
            out(q("q4", "c", "fact"), ["c"], cites=["c"]),
        ],
        INDEX,
    )
    assert list(run["by_kind"]) == ["fact", "para-goal", "unanswerable"]
    assert run["by_kind"]["para-goal"]["answer_cites_expected"] == 0.5
    assert run["by_kind"]["para-goal"]["abstain_answerable"] == 0.5
    assert "answer_cites_also" not in run["by_kind"]["para-goal"]


def test_three_outcomes_reached_and_answered_unanswerable():
    """The closest passage reaches the expected section when it is among the sections shown;
    only an answered (not closest) question counts as answered, for the answerable and the
    unanswerable alike."""
    run = summarize(
        [
            out(q("q1", "a"), ["a"], cites=["a"], outcome="answered"),  # answered, right
            out(q("q2", "b"), ["b"], cites=["c"], outcome="answered"),  # answered, wrong
            out(q("q3", "c"), ["d", "c"], cites=["d"], low=True, outcome="closest",
                related=["d", "e", "c"]),  # closest: the third section shown is the one
            out(q("q4", "d"), ["e"], cites=["e"], low=True, outcome="closest",
                related=["e", "f", "g"]),  # closest, the expected section not shown
            out(q("q5", "e"), ["e"], low=True, outcome="not_covered", related=["e"]),
            out(q("q6", None, "unanswerable"), ["a"], cites=["a"], low=True, outcome="closest",
                related=["a"]),
            out(q("q7", None, "unanswerable"), ["a"], cites=["a"], outcome="answered"),
            out(q("q8", None, "unanswerable"), ["a"], low=True, outcome="not_covered"),
        ],
        INDEX,
    )
    assert run["outcomes"] == {"answered": 3, "closest": 3, "not_covered": 2}
    assert run["answered_cites_expected"] == 0.5  # q1 of q1, q2
    assert run["reached"] == pytest.approx(2 / 5)  # q1, q3
    assert run["unanswerable_answered"] == pytest.approx(1 / 3)  # q7
    assert run["answer_cites_expected"] == 0.2  # a closest passage is not an answer
    assert {m["id"]: m["reason"] for m in run["misses"]} == {
        "q2": "answered without citing the expected section (retrieved at rank 1)",
        "q4": "closest passage, without the expected section among those shown "
              "(not retrieved)",
        "q5": "said not covered, but the book answers it (expected section retrieved at rank 1)",
        "q7": "answered, but the book does not cover it",
    }
    assert run["by_kind"]["concept"]["outcomes"] == {"answered": 2, "closest": 2,
                                                     "not_covered": 1}
