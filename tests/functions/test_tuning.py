"""Every tunable number of the answer layer lives in functions.answers.tuning, with its reason and
what set it; no answer module keeps a number of its own."""

from __future__ import annotations

import ast
import dataclasses
import importlib
from pathlib import Path

import pytest

from functions.answers.tuning import TUNING, AnswerTuning, Tunable

ANSWERS = Path(__file__).resolve().parents[2] / "functions" / "answers"


def _numeric(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.Tuple):
        return bool(node.elts) and all(_numeric(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.values) and all(_numeric(v) for v in node.values)
    return False


def module_numbers(source: str) -> list[str]:
    """Module-level names assigned a number, a tuple or a dict of numbers."""
    out = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and _numeric(node.value):
            out += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and node.value is not None and _numeric(node.value):
            out.append(node.target.id)
    return out


def test_the_guard_sees_a_module_number():
    assert module_numbers("X = 4\nY: dict = {'a': (0.3, 0.1)}\nZ = (1, -2)\nW = 'text'") == [
        "X", "Y", "Z"]


@pytest.mark.parametrize("path", sorted(p for p in ANSWERS.glob("*.py") if p.name != "tuning.py"),
                         ids=lambda p: p.name)
def test_no_answer_module_keeps_a_number_of_its_own(path):
    assert module_numbers(path.read_text(encoding="utf-8")) == [], (
        f"{path.name}: move the number to functions/answers/tuning.py with its reason and the "
        "command that set it, and read it from TUNING")


def test_every_tunable_says_why_and_what_set_it():
    table = TUNING.table()
    assert len(table) == len(dataclasses.fields(AnswerTuning)) >= 40
    for name, value, reason, set_by in table:
        assert value is not None and reason.strip() and set_by.strip(), name
    with pytest.raises(dataclasses.FrozenInstanceError):
        TUNING.sources = Tunable(5, "", "")  # type: ignore[misc]


def test_the_modules_read_the_record():
    checks = {"extractive": {"SOURCES": "sources", "BLOCK_WEIGHTS": "block_weights",
                             "MAX_CHARS": "max_chars"},
              "confidence": {"THRESHOLDS": "thresholds", "SIDES": "sides"},
              "selection": {"ANSWERS_SHARE": "answers_share"},
              "claims": {"THRESHOLD": "claim_threshold"},
              "chat": {"RESPELL_ROUNDS": "respell_rounds"}}
    for module, names in checks.items():
        loaded = importlib.import_module(f"functions.answers.{module}")
        for const, field in names.items():
            assert getattr(loaded, const) is getattr(TUNING, field).value, (module, const)
