"""Selected-text answers: only from the selection, capped in tokens, cited to page#anchor."""

from __future__ import annotations

import pytest

from functions.http_errors import ApiError
from functions.selection import NOT_IN_SELECTION, answer_selection, check_size, model_answer
from functions.validation import SelectionRequest

REQ = SelectionRequest("What is jitter?", "Jitter is the variation of the loop period.",
                       "https://s.io/docs/loop#old", "loop-jitter")


def test_extractive_answer_from_the_selection():
    out = answer_selection(REQ, None, None, 2000)
    assert out["answer"] == "Jitter is the variation of the loop period [1]."
    assert out["citations"][0]["url"] == "https://s.io/docs/loop#loop-jitter"


def test_refuses_beyond_the_selection():
    req = SelectionRequest("Who invented the telescope?", REQ.selected_text)
    out = answer_selection(req, None, None, 2000)
    assert out == {"answer": NOT_IN_SELECTION, "citations": [], "confidence": 0.0,
                   "low_confidence": True}


def test_token_cap():
    assert check_size("short", 10) == 5
    with pytest.raises(ApiError) as err:
        check_size("tokens " * 50, 20)
    assert err.value.status == 413 and "51 tokens" in err.value.message


def test_model_reply_interpretation():
    assert model_answer(REQ, "It varies [1][2].")["answer"] == "It varies [1]."
    assert model_answer(REQ, "It varies.")["low_confidence"] is True
    assert model_answer(REQ, NOT_IN_SELECTION)["citations"] == []
