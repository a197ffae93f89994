"""The one sentence splitter and the one Markdown-to-plain-text function (functions/answers/text.py),
and the one comparison detector (functions/answers/question_kind.py)."""

from __future__ import annotations

import pytest

from functions.answers.question_kind import asks_quantity, compared_terms, compares
from functions.answers.text import plain_text, sentences


def test_split_keeps_markers_with_their_sentence():
    assert sentences("It varies. [1] Then it drifts [2]. 0.98 is typical.") == [
        "It varies. [1]", "Then it drifts [2].", "0.98 is typical."]
    assert sentences("Use e.g. a clock, v2.0 works [1].") == [
        "Use e.g. a clock, v2.0 works [1]."]


def test_a_sentence_starts_with_a_capital_a_digit_a_quote_or_markdown():
    assert sentences("One. **Two** here. `three()` runs. [Four](x) too. five is not.") == [
        "One.", "**Two** here.", "`three()` runs.", "[Four](x) too. five is not."]
    assert sentences("  ") == [] and sentences("No end") == ["No end"]


def test_whitespace_inside_a_sentence_is_kept():
    assert sentences("Call `a  b` now.  Then stop.") == ["Call `a  b` now.", "Then stop."]


def test_plain_text_is_the_words_a_reader_sees():
    markdown = ("## Setup\n\n- **Encoders** count `ticks` of [the shaft](/docs/shaft).\n"
                "1. ![a photo](x.png)Then wire them.\n:::tip\nKeep it short.\n:::")
    assert plain_text(markdown) == ("Setup Encoders count ticks of the shaft. Then wire them. "
                                    "Keep it short.")
    assert plain_text("| a | **b** |\n- item  one", keep_lines=True) == "| a | b |\nitem one"


def test_a_hash_line_in_code_is_a_comment_not_a_heading():
    code = "```yaml\n# config/physics.yaml\nstep: 0.001\n```\n# Heading"
    assert plain_text(code) == "yaml # config/physics.yaml step: 0.001 Heading"


@pytest.mark.parametrize("question", [
    "What is the speed versus accuracy trade-off?", "How do topics and services differ?",
    "Is a PID better than a bang-bang controller?", "Compare URDF and SDF.",
    "How does the loop period affect jitter?", "What is the relationship between torque and current?"])
def test_one_detector_of_comparisons(question):
    assert compares(question) and compared_terms(question)


def test_a_comparison_asks_for_no_number():
    assert asks_quantity("What is the maximum speed of the arm?")
    assert not asks_quantity("What is the maximum speed versus accuracy trade-off?")
    assert not compares("What is the maximum speed of the arm?")
