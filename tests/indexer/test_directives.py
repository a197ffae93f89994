"""MDX text directives in headings (indexer/directives.py): id and visible title of each heading
as a real Docusaurus 3.10.2 build gave them (tests/e2e/test_directive_headings.py builds the
same page and compares again), in .md and .mdx alike."""

from __future__ import annotations

import pytest

from indexer.headings import HeadingId, heading_id
from indexer.markdown import parser
from indexer.slugger import Slugger

# (heading source, id in the built HTML, visible text in the built HTML)
BUILT = [
    ('join:JitsiMeetConferenceOptions', 'join', 'join:JitsiMeetConferenceOptions'),
    ('Text :name directive', 'text--directive', 'Text :name directive'),
    ('Label :abbr[ROS **2**] here', 'label-ros-2-here', 'Label ROS 2 here'),
    ('Attrs :span{#x .y key="v w"} after', 'attrs-x-y-keyv-w-after', 'Attrs :span{#x .y key="v w"} after'),
    ('Both :kbd[Ctrl]{.key} end', 'both-ctrl-end', 'Both Ctrl end'),
    ('Double ::name colon', 'double-name-colon', 'Double ::name colon'),
    ('Time 10:30 and std::vector', 'time-1030-and-stdvector', 'Time 10:30 and std::vector'),
    ('Trailing dash a:b- c', 'trailing-dash-ab--c', 'Trailing dash a:b- c'),
    ('Escaped \\:name colon', 'escaped-name-colon', 'Escaped :name colon'),
    ('Code `a:b` span', 'code-ab-span', 'Code a:b span'),
    ('Empty attrs :x{} here', 'empty-attrs--here', 'Empty attrs :x here'),
    ('Link [a:b](https://example.org) and http://example.org', 'link-a-and-httpexampleorg', 'Link a:b and http://example.org'),
    ('Colon at end:', 'colon-at-end', 'Colon at end:'),
    ('Digits :h2o-x_1 ok', 'digits--ok', 'Digits :h2o-x_1 ok'),
    ('Nested :a[b :c[d]] e', 'nested-b-d-e', 'Nested b d e'),
    ('Two:one:two', 'twoone', 'Two:one:two'),
    ('Class only :span{.y} after', 'class-only--after', 'Class only after'),
    ('Id later :b{.c #d} x', 'id-later--x', 'Id later x'),
    ('Unclosed :a[label here', 'unclosed-label-here', 'Unclosed :a[label here'),
]


@pytest.mark.parametrize("mdx", [True, False], ids=["mdx", "md"])
@pytest.mark.parametrize(("source", "anchor", "title"), BUILT, ids=[row[0] for row in BUILT])
def test_directive_heading_as_docusaurus_builds_it(source, anchor, title, mdx):
    inline = parser(mdx).parse(f"## {source}\n")[1]
    assert heading_id(inline, 2, Slugger(), mdx) == HeadingId(title, anchor)


def test_a_directive_outside_headings_leaves_the_text_alone():
    tokens = parser(True).parse("Ratio 3:1 and note:Important here.\n")
    assert tokens[1].content == "Ratio 3:1 and note:Important here."
