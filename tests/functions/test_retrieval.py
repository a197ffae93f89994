"""The Retriever over real local Qdrant: the collection's model, hybrid candidates, editions."""

from __future__ import annotations

import pytest

from functions.errors import ModelMismatchError
from functions.search.retrieval import Retriever, check_model


def test_hybrid_candidates_are_ranked_by_hybrid_score(book_store):
    from tests.fakes.embedder import ContentEmbedder
    from tests.functions.conftest import DIM

    found = Retriever(book_store, ContentEmbedder(DIM)).candidates(
        "How does a complementary filter fuse the gyroscope?")
    scores = [h.score for h in found]
    assert scores == sorted(scores, reverse=True)
    assert all(0.7 * h.dense_score - 1e-9 <= h.score <= 0.7 * h.dense_score + 0.3 + 1e-9
               for h in found)


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


@pytest.mark.parametrize(("built", "api", "reindex"), [
    (("nomic-embed-text", 768), ("text-embedding-3-small", 1536), "answers: openai"),  # Ollama
    (("text-embedding-3-large", 3072), ("text-embedding-3-small", 1536), "answers: openai"),
    (("all-mpnet-base-v2", 768), ("all-MiniLM-L6-v2", 384), "answers: offline"),
])
def test_a_model_no_deployed_api_embeds_with_is_not_called_a_mode(built, api, reindex):
    """Each deployed mode embeds with one model: an index of another (a model served by Ollama,
    OpenAI's large model) is not said to match a mode whose API would refuse it too."""
    with pytest.raises(ModelMismatchError) as err:
        check_model({"embedding_model": built[0], "embedding_dimension": built[1]}, *api)
    message = str(err.value)
    assert "This index matches" not in message and "--param=" not in message, message
    assert f"re-index with the reindex workflow's `{reindex}`" in message, message
    assert "set EMBEDDING_PROVIDER/EMBEDDING_MODEL to the index's model" in message


def test_a_local_model_against_another_local_one_says_how_to_match_it():
    with pytest.raises(ModelMismatchError) as err:  # e.g. serve with EMBEDDING_MODEL changed
        check_model({"embedding_model": "all-MiniLM-L6-v2", "embedding_dimension": 384},
                    "all-mpnet-base-v2", 768)
    assert "EMBEDDING_PROVIDER/EMBEDDING_MODEL to the index's model" in str(err.value)
    assert "reindex workflow" not in str(err.value)


@pytest.mark.parametrize("mode", ["hybrid", "dense", "sparse"])
def test_retriever_modes_find_the_section(book_store, mode):
    from tests.fakes.embedder import ContentEmbedder
    from tests.functions.conftest import DIM

    hits = Retriever(book_store, ContentEmbedder(DIM)).retrieve(
        "How does a complementary filter fuse the gyroscope?", mode=mode)
    assert hits[0].payload["anchor"] == "complementary-filter"
    assert 0 < hits[0].dense_score <= 1 and len(hits) == (3 if mode == "sparse" else 5)
