"""MDX components are read as the text their reader sees (functions.answers.jsx_view)."""

from __future__ import annotations

import pytest

from functions.answers.jsx_view import parse_component, view
from functions.answers.reader_blocks import split_blocks

SPECS = '''<HardwareSpecs
  name="AI Acceleration Hardware"
  specs={{
    processor: "NVIDIA Jetson AGX Orin (64GB)",
    compute: "275 TOPS (INT8)", // a comment
    "power draw": '60W typical'
  }}
  pros={[
    "High performance per watt",
    "Compact",
  ]}
/>'''


def test_props_object_array_and_strings_are_read():
    tag, props, children = parse_component(SPECS)
    assert tag == "HardwareSpecs" and children == ""
    assert props["specs"] == {"processor": "NVIDIA Jetson AGX Orin (64GB)",
                              "compute": "275 TOPS (INT8)", "power draw": "60W typical"}
    assert props["pros"] == ["High performance per watt", "Compact"]


def test_a_spec_component_becomes_definition_lines_and_lists():
    blocks = view(SPECS)
    assert blocks[0] == ("definition", "**AI Acceleration Hardware**:\n"
                         "- **Processor**: NVIDIA Jetson AGX Orin (64GB)\n"
                         "- **Compute**: 275 TOPS (INT8)\n- **Power draw**: 60W typical", False)
    assert blocks[1] == ("list", "**Pros**:\n- High performance per watt\n- Compact", False)


def test_an_exercise_keeps_its_solution_and_marks_its_prompt():
    text = ('<Exercise\n  title="Spawn"\n  problem="Write a launch file that spawns the robot."\n'
            '  hints={["Use spawn_entity"]}\n  language="python"\n'
            '  solution={`from launch import LaunchDescription\n\ndef generate():\n'
            '    return LaunchDescription([])\n`}\n/>')
    got = view(text)
    assert ("paragraph", "Write a launch file that spawns the robot.", True) in got
    assert ("list", "**Hints**:\n- Use spawn_entity", True) in got
    code = [b for b in got if b[0] == "code"]
    assert code == [("code", "```python\nfrom launch import LaunchDescription\n\ndef generate():"
                     "\n    return LaunchDescription([])\n```", False)]


def test_a_quiz_is_all_noise():
    text = ('<Quiz\n  question="What does QoS durability decide?"\n'
            '  options={["Late joiners get old data", "Message size"]}\n'
            '  correctAnswer="Late joiners get old data"\n/>')
    blocks = split_blocks(text)
    assert blocks and all(b.noise for b in blocks)


def test_children_are_markdown_blocks_and_style_props_are_left_out():
    text = ('<Callout type="note" title="Integration">\nThe brain has three layers.\n\n'
            '- perception\n- planning\n</Callout>\n\nAfter the callout.')
    got = [(b.kind, b.text, b.noise) for b in split_blocks(text)]
    assert got == [("paragraph", "The brain has three layers.", False),
                   ("list", "- perception\n- planning", False),
                   ("paragraph", "After the callout.", False)]


def test_unreadable_props_are_skipped_never_guessed():
    # an interpolated template and a spread: not literal data; the readable prop survives
    text = ('<CodeExamples\n  description="A node that publishes joint states"\n'
            '  code={`x = ${value}`}\n  {...rest}\n/>')
    got = view(text)
    assert got == [("definition", "- **Description**: A node that publishes joint states", False)]
    assert view("<Broken a={") == []
    # an unclosed brace: the rest of the section stays one unquoted block
    assert [(b.kind, b.noise) for b in split_blocks("<Broken a={\n\nText after.")] == [
        ("jsx", True)]


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_pathological_props_never_fail_an_answer():
    deep = "<A x={" + "[" * 3000 + "]" * 3000 + "} />"
    assert view(deep) == []
    assert view('<A x="unterminated />') == []
    assert view("<A x={{a: `${b}`}} y=\"ok text\" />") == [("definition", "- **Y**: ok text",
                                                            False)]
    nested = "<A>\n" * 2000 + "text\n" + "</A>\n" * 2000
    assert [b.kind for b in split_blocks(nested)] == ["jsx"]
