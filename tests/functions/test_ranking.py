"""How a hit is ranked (functions.search.ranking): the fusion re-score, page boost, section cap."""

from __future__ import annotations

import pytest

from functions.search.ranking import PAGE_BOOST, hybrid_score, page_boost, page_key, rerank
from functions.search.types import SearchHit


def hit(i: int, score: float, page: str = "/p", anchor: str = "a") -> SearchHit:
    return SearchHit(i, score, 0.5, {"page_url": page, "doc_path": page, "anchor": anchor})


def test_page_boost_lifts_the_readers_page():
    hits = [hit(1, 0.5, "/a"), hit(2, 0.4, "/b")]
    assert [h.point_id for h in rerank(hits, "https://x.io/b/#top")] == [2, 1]
    assert [h.point_id for h in rerank(hits, None)] == [1, 2]


def test_one_section_cannot_flood_the_answer():
    hits = [hit(i, 1 - i / 10, anchor="same") for i in range(5)] + [hit(9, 0.1, anchor="other")]
    picked = rerank(hits, top_k=5)
    assert [h.point_id for h in picked] == [0, 1, 9]


def test_hybrid_score_blends_cosine_and_term_coverage():
    assert hybrid_score(0.5, [1, 2], [2, 3]) == pytest.approx(0.7 * 0.5 + 0.3 * 0.5)
    assert hybrid_score(0.5, [1, 2], [1, 2, 9]) == pytest.approx(0.35 + 0.3)
    assert hybrid_score(0.5, [], [1]) == 0.5  # a question with no content words: cosine only


def test_page_key():
    assert page_key("https://s.io/book/docs/x/?q=1#h") == "/book/docs/x" == page_key("/book/docs/x")


def test_page_boost_is_one_factor_for_the_readers_page_only():
    # the offline answerer weighs its blocks' chunks by this same factor
    assert page_boost(hit(1, 0.5, "/b/"), page_key("https://x.io/b#t")) == PAGE_BOOST == 1.5
    assert page_boost(hit(1, 0.5, "/a"), page_key("/b")) == 1.0
    assert page_boost(hit(1, 0.5, "/b"), page_key(None)) == 1.0


def test_word_forms_meet_at_one_term():
    from functions.search.sparse import terms

    # "How do I wire the MOSFET?" finds the section "Wiring the MOSFET"
    assert set(terms("wire wires wired wiring")) == {terms("wire")[0]}
    assert terms("update")[0] == terms("updating")[0] == terms("updated")[0]
    assert terms("degree")[0] == terms("degrees")[0] != terms("degre")[0]  # "ee" stays


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_the_stored_sparse_vectors_follow_the_stemmer():
    """A change of the stemmer re-derives every stored sparse vector on the next sync."""
    from pathlib import Path

    from functions.search import sparse
    from indexer.build import settings_fingerprint
    from indexer.model import ChunkOptions, SiteSettings

    before = settings_fingerprint(Path("."), SiteSettings(), ChunkOptions())
    old, sparse.STEMMER_VERSION = sparse.STEMMER_VERSION, sparse.STEMMER_VERSION + 1
    try:
        assert settings_fingerprint(Path("."), SiteSettings(), ChunkOptions()) != before
    finally:
        sparse.STEMMER_VERSION = old


def test_a_recap_yields_to_the_detailed_section_it_restates():
    from functions.search.ranking import RECAP_WEIGHT, recap_weight

    def section(i: int, score: float, title: str, doc: str = "ch/motors.md") -> SearchHit:
        return SearchHit(i, score, score, {"page_url": f"/{doc}", "doc_path": doc,
                                           "anchor": title.lower(), "section_title": title})

    summary = section(1, 0.60, "Summary")
    detail = section(2, 0.59, "Choosing a gear ratio")
    assert [h.point_id for h in rerank([summary, detail])] == [2, 1]
    # only close calls change: a recap well ahead stays ahead
    assert [h.point_id for h in rerank([section(1, 0.70, "Key Takeaways"), detail])] == [1, 2]
    assert recap_weight(section(3, 0.5, "Wrap-up")) == RECAP_WEIGHT
    assert recap_weight(section(4, 0.5, "Setup", doc="ch/index.mdx")) == RECAP_WEIGHT
    assert recap_weight(section(5, 0.5, "Setup", doc="ch/intro.md")) == RECAP_WEIGHT
    # an Overview or Introduction section is not a recap (it measured worse so)
    assert recap_weight(section(6, 0.5, "Overview")) == 1.0
    assert recap_weight(section(7, 0.5, "Chapter 3 Summary")) == RECAP_WEIGHT
    assert recap_weight(section(8, 0.5, "Summary and next steps")) == RECAP_WEIGHT
    # a topic that starts with the word is no recap, nor a page named like one
    assert recap_weight(section(9, 0.5, "Summary statistics")) == 1.0
    assert recap_weight(section(10, 0.5, "Gear trains", doc="ch/index-funds.md")) == 1.0


def test_a_tie_of_fused_scores_at_the_cut_is_cut_in_one_order():
    from functions.search.ranking import rank

    def points(order):  # (id, fused score, dense vector, sparse indices, payload)
        return [(i, {1: 0.5, 2: 0.3, 3: 0.3, 4: 0.1}[i], [1.0, 0.0], [], {}) for i in order]

    # ids 2 and 3 tie at the cut of 2: whatever order the engine returned them in, 2 is kept
    for order in ([1, 2, 3, 4], [1, 3, 2, 4], [3, 4, 2, 1]):
        assert [h.point_id for h in rank([1.0, 0.0], ([], []), "hybrid", points(order), 2)] \
            == [1, 2]
