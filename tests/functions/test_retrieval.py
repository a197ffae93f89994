"""Re-ranking (page boost, section diversity) and the Retriever over real local Qdrant."""

from __future__ import annotations

import pytest

from functions.errors import ModelMismatchError
from functions.retrieval import Retriever, check_model, page_key, rerank
from functions.search_types import SearchHit


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
    from functions.sparse import hybrid_score

    assert hybrid_score(0.5, [1, 2], [2, 3]) == pytest.approx(0.7 * 0.5 + 0.3 * 0.5)
    assert hybrid_score(0.5, [1, 2], [1, 2, 9]) == pytest.approx(0.35 + 0.3)
    assert hybrid_score(0.5, [], [1]) == 0.5  # a question with no content words: cosine only


def test_hybrid_candidates_are_ranked_by_hybrid_score(book_store):
    from tests.fakes.embedder import ContentEmbedder
    from tests.functions.conftest import DIM

    found = Retriever(book_store, ContentEmbedder(DIM)).candidates(
        "How does a complementary filter fuse the gyroscope?")
    scores = [h.score for h in found]
    assert scores == sorted(scores, reverse=True)
    assert all(0.7 * h.dense_score - 1e-9 <= h.score <= 0.7 * h.dense_score + 0.3 + 1e-9
               for h in found)


def test_page_key():
    assert page_key("https://s.io/book/docs/x/?q=1#h") == "/book/docs/x" == page_key("/book/docs/x")


def test_check_model():
    check_model({"embedding_model": "m", "embedding_dimension": 4}, "m", 4)
    with pytest.raises(ModelMismatchError, match="re-index"):
        check_model({"embedding_model": "m", "embedding_dimension": 4}, "other", 8)


@pytest.mark.parametrize(("built", "api", "deploy", "reindex"), [
    (("all-MiniLM-L6-v2", 384), ("text-embedding-3-small", 1536), "answers=offline", "answers: openai"),
    (("text-embedding-3-small", 1536), ("all-MiniLM-L6-v2", 384), "answers=openai", "answers: offline"),
])
def test_check_model_names_the_deployment_mode_that_matches_the_index(built, api, deploy, reindex):
    with pytest.raises(ModelMismatchError) as err:
        check_model({"embedding_model": built[0], "embedding_dimension": built[1]}, *api)
    message = str(err.value)
    assert f"--param=\"{deploy}\"" in message and f"`{reindex}`" in message, message
    assert repr(built[0]) in message and repr(api[0]) in message


@pytest.mark.parametrize("mode", ["hybrid", "dense", "sparse"])
def test_retriever_modes_find_the_section(book_store, mode):
    from tests.fakes.embedder import ContentEmbedder
    from tests.functions.conftest import DIM

    hits = Retriever(book_store, ContentEmbedder(DIM)).retrieve(
        "How does a complementary filter fuse the gyroscope?", mode=mode)
    assert hits[0].payload["anchor"] == "complementary-filter"
    assert 0 < hits[0].dense_score <= 1 and len(hits) == (3 if mode == "sparse" else 5)
