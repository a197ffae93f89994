"""The MiniLM thresholds keep separating what the sample textbook answers from what it does not."""

from __future__ import annotations

import pytest

from functions.answers.confidence import thresholds
from tests.functions.calibration import (
    ANSWERED,
    NOT_ANSWERED,
    indexed_retriever,
    retrieval_scores,
)

pytestmark = pytest.mark.slow


def test_minilm_thresholds_on_the_sample_textbook(tmp_path):
    from functions.search.embeddings.local import LocalMiniLM

    embedder = LocalMiniLM()
    low, none = thresholds(embedder.model_name)
    retriever = indexed_retriever(str(tmp_path / "qdrant"), embedder)
    answered = retrieval_scores(retriever, ANSWERED)
    unanswered = retrieval_scores(retriever, NOT_ANSWERED)
    retriever.backend.close()
    assert sum(s < low for s in answered) / len(answered) <= 0.10
    assert sum(s < low for s in unanswered) / len(unanswered) >= 0.75
    assert all(s >= none for s in answered)
