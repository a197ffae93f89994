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


def test_page_key():
    assert page_key("https://s.io/book/docs/x/?q=1#h") == "/book/docs/x" == page_key("/book/docs/x")


def test_check_model():
    check_model({"embedding_model": "m", "embedding_dimension": 4}, "m", 4)
    with pytest.raises(ModelMismatchError, match="re-index"):
        check_model({"embedding_model": "m", "embedding_dimension": 4}, "other", 8)


@pytest.mark.parametrize("mode", ["hybrid", "dense", "sparse"])
def test_retriever_modes_find_the_section(book_store, mode):
    from tests.functions.conftest import DIM, ContentEmbedder

    hits = Retriever(book_store, ContentEmbedder(DIM)).retrieve(
        "How does a complementary filter fuse the gyroscope?", mode=mode)
    assert hits[0].payload["anchor"] == "complementary-filter"
    assert 0 < hits[0].dense_score <= 1 and len(hits) == (3 if mode == "sparse" else 5)
