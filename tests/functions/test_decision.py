"""The one decision to answer (functions.answers.decision, functions.answers.chat.decide): the
fitted policy's probability, its threshold, the band where a model is asked, and the rules that
stay beside it."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from functions.answers.chat import Evidence, decide
from functions.answers.decision import FEATURES, POLICY_FILE, Signals, policies, policy_for
from functions.answers.extractive import Composed
from functions.answers.question_kind import read

MINILM = "all-MiniLM-L6-v2"


def signals_at(policy, z: float) -> Signals:
    """Signals whose standardised values all equal `z` (the policy's mean at 0)."""
    values = {f: m + z * s for f, m, s in zip(policy.features, policy.mean, policy.scale,
                                              strict=True)}
    return Signals(**{f: values[f] for f in FEATURES})


def band(policy, low: float, high: float) -> Signals:
    """Signals whose probability lies in [low, high)."""
    for step in range(-400, 400):
        found = signals_at(policy, step / 100)
        if low <= policy.probability(found) < high:
            return found
    raise AssertionError(f"no signals with p in [{low}, {high})")


def evidence(found: Signals, absent=(), text="Quoted [1].") -> Evidence:
    return Evidence(read("What is it?"), "What is it?", "", [], False, list(absent), [],
                    Composed(text), found)


def test_the_policy_file_names_its_command_and_every_signal():
    data = json.loads(POLICY_FILE.read_text())
    assert data["command"].endswith("benchmarks/fit_decision.py --write")
    policy = policy_for(MINILM)
    assert policy is policies()[MINILM] and policy.features == FEATURES
    assert 0 < policy.ask_model <= policy.threshold < 1
    assert policy.notes["fitted_on"] == ["pai-ali"]
    assert policy_for("fake-embedder") is None  # no fitted decision: the dense thresholds


def test_answered_at_the_threshold_the_closest_passage_below_and_the_model_asked_in_between():
    policy = policy_for(MINILM)
    sure = band(policy, policy.threshold, 1.01)
    middle = band(policy, policy.ask_model, policy.threshold)
    low = replace(band(policy, 0.0, policy.ask_model), cosine=policy.near + 0.01)
    assert decide(evidence(sure), MINILM, None, with_model=False).action == "answer"
    offline = decide(evidence(middle), MINILM, None, with_model=False)
    assert offline.action == "closest" and offline.rule.startswith("policy p=")
    assert decide(evidence(low), MINILM, None, with_model=False).action == "closest"
    # with a model, the middle band is the model's to answer or decline (its reply is checked)
    assert decide(evidence(middle), MINILM, None, with_model=True).action == "model"
    assert decide(evidence(low), MINILM, None, with_model=True).action == "closest"
    # nothing near (the chunks' cosine under the policy's `near`): not covered, whatever p says
    far = replace(sure, cosine=policy.near - 0.01)
    for with_model in (False, True):
        decision = decide(evidence(far), MINILM, None, with_model=with_model)
        assert decision.action == "refuse" and "nothing near" in decision.rule
    # LOW_CONFIDENCE_THRESHOLD is the probability to answer at
    assert decide(evidence(middle), MINILM, policy.ask_model, with_model=False).action == "answer"


def test_a_name_the_book_never_mentions_refuses_whatever_the_probability():
    policy = policy_for(MINILM)
    decision = decide(evidence(band(policy, 0.95, 1.01), absent=["Isaac Lab"]), MINILM, None,
                      with_model=True)
    assert (decision.action, decision.case) == ("refuse", "not_mentioned")
    assert decision.confidence <= 0.2


@pytest.mark.parametrize("with_model", [False, True])
def test_a_model_without_a_fitted_policy_keeps_the_dense_thresholds(with_model):
    decision = decide(evidence(signals_at(policy_for(MINILM), 0)), "fake-embedder", None,
                      with_model)
    assert decision.rule.startswith("dense score") and decision.action == "refuse"  # no hits
