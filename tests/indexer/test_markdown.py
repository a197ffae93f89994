"""Parsing golden files: fixtures/parse/*.md(x) -> pinned section trees in *.json beside them.

Each fixture is parsed as Docusaurus would with markdown.format "mdx" and "detect". To re-pin
after an intended change: UPDATE_GOLDEN=1 pytest tests/indexer/test_markdown.py, then review
the JSON diff.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.markdown import is_indexable, parse_document, parse_text
from indexer.model import Problem, SiteSettings

FIXTURES = Path(__file__).parent / "fixtures" / "parse"
SOURCES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".md", ".mdx"))


def _tree(path: Path) -> dict:
    out = {}
    for fmt in ("mdx", "detect"):
        doc = parse_document(path, FIXTURES, SiteSettings("/book/", "docs", None, fmt))
        data = asdict(doc)
        for section in data["sections"]:  # a block's admonition is pinned where it has one
            for block in section["blocks"]:
                if block["aside"] is None:
                    del block["aside"]
        out[fmt] = {k: data[k] for k in ("doc_id", "title", "url", "tags", "sections")}
    return out


@pytest.mark.parametrize("path", SOURCES, ids=[p.name for p in SOURCES])
def test_golden_section_tree(path):
    expected_file = path.with_suffix(path.suffix + ".json")
    got = _tree(path)
    if os.environ.get("UPDATE_GOLDEN"):
        expected_file.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", "utf-8")
    assert got == json.loads(expected_file.read_text("utf-8"))


def _doc(text: str, name: str = "page.mdx", fmt: str = "mdx"):
    return parse_text(text, name, SiteSettings("/", "docs", None, fmt))


def test_blocks_carry_file_lines_counting_front_matter():
    doc = _doc("---\ntitle: T\n---\n\nfirst\n\n## H\n\n- a\n- b\n")
    assert [(b.kind, b.line, b.text) for s in doc.sections for b in s.blocks] == [
        ("paragraph", 5, "first"), ("list_item", 9, "- a"), ("list_item", 10, "- b")]
    assert doc.sections[1].line == 7


def test_h1_takes_a_slot_and_explicit_ids_do_not():
    doc = _doc("# Title\n\n## Title\n\n## Other {#title-1}\n\n## Title\n")
    assert [s.anchor for s in doc.sections] == [None, "title-1", "title-1", "title-2"]


def test_heading_text_is_reduced_like_mdast_to_string():
    doc = _doc("## See [the `api`](x.md) ![alt](i.png) <b>now</b>\n", "p.md", "detect")
    assert doc.sections[0].anchor == "see-the-api-alt-now"
    assert doc.sections[0].title == "See the api now"


def test_drafts_and_partials_are_not_indexable():
    assert _doc("---\ndraft: true\n---\n# Draft\n") is None
    assert not is_indexable("_parts/_shared.md", {})
    assert not is_indexable("guide/_hidden/page.md", {})
    assert not is_indexable("page.md", {"draft": True})
    assert is_indexable("guide/page.mdx", {"draft": False})


@pytest.mark.parametrize(("data", "line", "words"), [
    (b"---\ntitle: [unclosed\n---\n# x\n", 3, "front matter is not valid YAML"),
    (b"---\n- a list\n---\n", 2, "front matter must be"),
    (b"---\ntitle: never closed\n\n# Body\n", 1, "never closed"),
    (b"# Caf\xe9\n\nok\n\n\xff\xfe", 1, "invalid UTF-8"),
    (b"# ok\n\nline two\n\xff", 4, "invalid UTF-8"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", None, "binary file"),
])
def test_bad_files_raise_parse_problem_with_line(tmp_path, data, line, words):
    path = tmp_path / "bad.md"
    path.write_bytes(data)
    with pytest.raises(Problem) as err:
        parse_document(path, tmp_path, SiteSettings())
    assert err.value.source == "bad.md"
    assert err.value.line == line
    assert words in err.value.reason


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_big_file_parses(tmp_path):
    part = "## Section {n}\n\nSome words about robots and motors.\n\n```py\n# code\n```\n\n"
    text = "".join(part.replace("{n}", str(i % 50)) for i in range(5_000))
    doc = _doc(text)
    assert len(doc.sections) == 5_000
    assert doc.sections[-1].anchor == "section-49-99"


def test_partials_render_in_place_with_their_own_slugger(tmp_path):
    (tmp_path / "_p" / "_q").mkdir(parents=True)
    (tmp_path / "page.mdx").write_text(
        "import A from './_p/_a.mdx';\nimport Gone from './_missing.md';\n\n"
        "## Shared\n\n<A />\n\n<Gone />\n")
    (tmp_path / "_p" / "_a.mdx").write_text("import B from './_q/_b.md';\n\nA text.\n\n## Shared\n\n<B />\n")
    (tmp_path / "_p" / "_q" / "_b.md").write_text("## From B\n\nB text.\n")
    doc = parse_document(tmp_path / "page.mdx", tmp_path, SiteSettings())
    assert [(s.anchor, s.line, [b.text for b in s.blocks]) for s in doc.sections] == [
        ("shared", 4, ["A text."]), ("shared", 6, []), ("from-b", 6, ["B text.", "<Gone />"])]


PIECES = ["# ", "## ", "    ", "```", "~~~", ":::note", ":::", "<Tabs>", "</Tabs>", "<!--", "-->",
          "{/* #x */}", "{#id}", "{", "}", "$$", "- ", "> ", "| a |", "[^1]", "[^1]: n", "import X from './_x.md';",
          "<X />", "export const a = 1;", "***", "<h2 id=\"r\">R</h2>", "text", "é", "🚀", "\n", "\n\n", "\t"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.sampled_from(["mdx", "detect"]))
def test_any_text_parses_and_anchors_are_strings(pieces, fmt):
    doc = _doc("".join(pieces), "p.md", fmt)
    for section in doc.sections:
        assert section.anchor is None or (isinstance(section.anchor, str) and section.anchor)
        assert all(block.text.strip() and block.line >= 1 for block in section.blocks)
