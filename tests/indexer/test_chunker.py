"""Each chunking rule on hand-built documents (indexer/chunker.py, indexer/splitting.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from functions.search.contract import chunk_id, content_hash
from functions.tokens import count_tokens
from indexer.chunker import ChunkOptions, chunk_document
from indexer.model import Block, Document, Section, SiteSettings
from indexer.splitting import SEP, count, joint, split_block


def para(words: int, tag: str = "w") -> Block:
    """A paragraph of about `words` words in sentences of ten, each word marked with tag."""
    sentences = [
        " ".join(f"{tag}{i + j}" for j in range(min(10, words - i))).capitalize() + "."
        for i in range(0, words, 10)
    ]
    return Block("paragraph", " ".join(sentences), 1)


def doc(*sections: Section, doc_id: str = "sensors/pid", tags=("control",)) -> Document:
    return Document(
        source="02-sensors/pid.md",
        doc_id=doc_id,
        title="PID Control",
        url="/docs/sensors/pid",
        front_matter={},
        sections=list(sections),
        tags=list(tags),
    )


def sec(level: int, title: str, *blocks: Block, anchor: str | None = "auto") -> Section:
    if anchor == "auto":
        anchor = title.lower().replace(" ", "-") if level > 1 else None
    return Section(level=level, title=title, anchor=anchor, line=1, blocks=list(blocks))


SMALL = ChunkOptions(min_tokens=0)


def test_each_split_level_starts_a_chunk_with_exact_payload():
    d = doc(
        sec(1, "PID Control", para(80, "intro")),
        sec(2, "Tuning", para(80, "tun")),
        sec(3, "Ziegler Nichols", para(80, "zn")),
        sec(4, "Ultimate Gain", para(80, "ug")),
        sec(3, "Manual", para(80, "man")),
        sec(2, "Limits", para(80, "lim")),
    )
    chunks = chunk_document(d, SMALL)
    assert [(c.section_number, c.anchor, c.heading_level) for c in chunks] == [
        ("", "", 1),
        ("1", "tuning", 2),
        ("1.1", "ziegler-nichols", 3),
        ("1.1.1", "ultimate-gain", 4),
        ("1.2", "manual", 3),
        ("2", "limits", 2),
    ]
    c = chunks[3]
    assert c.heading_path == ["PID Control", "Tuning", "Ziegler Nichols", "Ultimate Gain"]
    assert c.section_title == "Ultimate Gain"
    assert c.url == "/docs/sensors/pid#ultimate-gain" and c.page_url == "/docs/sensors/pid"
    assert (c.doc_path, c.doc_id, c.doc_title, c.module) == (
        "02-sensors/pid.md",
        "sensors/pid",
        "PID Control",
        "sensors",
    )
    assert c.tags == ["control"] and c.embedding_model == "" and c.content_type == "text"
    assert c.content.startswith("#### Ultimate Gain\n\nUg0 ug1")
    assert c.embed_text == "PID Control > Tuning > Ziegler Nichols > Ultimate Gain\n\n" + c.content
    for i, chunk in enumerate(chunks):
        assert chunk.chunk_index == i
        assert chunk.chunk_id == chunk_id("02-sensors/pid.md", i)
        assert chunk.content_hash == content_hash(chunk.embed_text)
        assert chunk.token_count == count_tokens(chunk.embed_text)


def test_intro_before_first_h2_belongs_to_the_h1_section():
    chunks = chunk_document(doc(sec(1, "PID Control", para(60, "intro")), sec(2, "A", para(60))))
    intro = chunks[0]
    assert intro.anchor == "" and intro.url == "/docs/sensors/pid"
    assert intro.heading_path == ["PID Control"] and intro.section_number == ""
    assert intro.content.startswith("# PID Control\n\nIntro0")
    assert intro.embed_text.startswith("PID Control\n\n# PID Control")  # title not repeated


def test_page_without_h1_uses_the_doc_title():
    chunks = chunk_document(doc(sec(1, "", para(60, "top")), sec(2, "A", para(60))))
    assert chunks[0].heading_path == ["PID Control"] and chunks[0].content.startswith("Top0")


def test_deeper_headings_stay_inside_with_their_heading_line():
    d = doc(
        sec(1, "PID Control", para(60)),
        sec(4, "Gain", para(60, "g")),
        sec(5, "Detail", para(20, "d")),
        sec(6, "Finer", para(20, "f")),
    )
    (_, gain) = chunk_document(d, SMALL)
    assert gain.anchor == "gain" and gain.heading_path == ["PID Control", "Gain"]
    assert "\n\n##### Detail\n\nD0" in gain.content and "\n\n###### Finer\n\nF0" in gain.content
    assert "Detail" not in gain.heading_path


def test_split_levels_are_configurable():
    d = doc(sec(1, "T", para(60)), sec(2, "A", para(60, "a")), sec(3, "B", para(60, "b")))
    chunks = chunk_document(d, ChunkOptions(split_levels=(2,), min_tokens=0))
    assert [c.anchor for c in chunks] == ["", "a"]
    assert "\n\n### B\n\nB0" in chunks[1].content
    assert [c.anchor for c in chunk_document(d, SMALL)] == ["", "a", "b"]


def test_module_is_the_doc_id_without_a_folder():
    (chunk,) = chunk_document(doc(sec(1, "T", para(60)), doc_id="intro"))
    assert chunk.module == "intro"


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (Block("code", "```python\n" + "x = compute(1, 2)\n" * 30 + "```", 1), "code"),
        (Block("table", "| a | b |\n|---|---|\n" + "| one | two |\n" * 30, 1), "table"),
        (Block("list_item", "- an item with words in it", 1), "text"),
    ],
)
def test_content_type(block, expected):
    (chunk,) = chunk_document(doc(sec(1, "T", para(10), block)))
    assert chunk.content_type == expected


def test_a_long_section_splits_between_blocks_within_max():
    blocks = [para(60, f"b{k}x") for k in range(12)]
    chunks = chunk_document(doc(sec(1, "T", para(60)), sec(2, "Long", *blocks)), SMALL)
    long = [c for c in chunks if c.anchor == "long"]
    assert len(long) > 2
    for c in long:
        assert c.token_count <= 512
        assert c.url == "/docs/sensors/pid#long" and c.section_title == "Long"
    for block in blocks:  # every paragraph whole, in the first piece that has it
        holders = [c for c in long if block.text in c.content]
        assert holders, block.text[:30]
    assert long[0].content.startswith("## Long") and not long[1].content.startswith("## Long")


def test_overlap_is_a_sentence_tail_of_the_previous_piece_of_the_same_section():
    blocks = [para(60, f"b{k}x") for k in range(12)]
    chunks = [c for c in chunk_document(doc(sec(2, "Long", *blocks)), SMALL)]
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        first_para = nxt.content.split(SEP)[0]
        assert prev.content.endswith(first_para)  # the tail of the previous piece
        assert first_para[0].isupper() and 0 < count(first_para) <= 50
    no_overlap = chunk_document(doc(sec(2, "Long", *blocks)), ChunkOptions(overlap_tokens=0))
    texts = [p for c in no_overlap for p in c.content.split(SEP)]
    assert len(texts) == len(set(texts)) == len(blocks) + 1


def test_no_overlap_across_sections():
    d = doc(sec(2, "A", *[para(60, "a") for _ in range(12)]), sec(2, "B", para(60, "b")))
    b = [c for c in chunk_document(d, SMALL) if c.anchor == "b"]
    assert b[0].content.startswith("## B")


def test_huge_paragraph_splits_at_sentences_with_overlap():
    chunks = chunk_document(doc(sec(2, "Big", para(3000, "s"))), SMALL)
    assert len(chunks) > 5
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        assert nxt.token_count <= 512
        assert nxt.content.endswith(".") and nxt.content[0].isupper()  # cut between sentences
        overlap = nxt.content.split(SEP)[0]
        assert prev.content.endswith(overlap) and count(overlap) <= 50
    assert all(c.anchor == "big" for c in chunks)


def test_huge_code_block_splits_at_lines_and_keeps_its_fences():
    code = (
        "```python\n"
        + "\n".join(f"value_{i} = compute({i}, {i + 1})" for i in range(600))
        + "\n```"
    )
    chunks = chunk_document(doc(sec(2, "Code", Block("code", code, 1))), SMALL)
    assert len(chunks) > 3
    for c in chunks:
        body = c.content.removeprefix("## Code\n\n")
        assert body.startswith("```python\nvalue_") and body.endswith(")\n```")
        assert c.token_count <= 512 and c.content_type == "code"
    lines = [line for c in chunks for line in c.content.split("\n") if line.startswith("value_")]
    assert lines == [f"value_{i} = compute({i}, {i + 1})" for i in range(600)]  # no overlap


def test_huge_table_repeats_its_header():
    table = "| name | value |\n|---|---|\n" + "\n".join(f"| row{i} | {i} |" for i in range(500))
    chunks = chunk_document(doc(sec(2, "Table", Block("table", table, 1))), SMALL)
    assert len(chunks) > 2
    assert all("| name | value |\n|---|---|\n| row" in c.content for c in chunks)


def test_huge_line_without_sentences_splits_at_tokens():
    text = "".join(f"x{i}y" for i in range(3000))
    chunks = chunk_document(doc(sec(2, "Blob", Block("paragraph", text, 1))), SMALL)
    assert all(c.token_count <= 512 for c in chunks)
    assert "".join(c.content.removeprefix("## Blob\n\n") for c in chunks) == text


def test_small_section_merges_with_following_sibling_keeping_first_anchor():
    d = doc(
        sec(1, "T", para(60)),
        sec(2, "Parent", para(60, "p")),
        sec(3, "Small", para(5, "s")),
        sec(3, "Next", para(60, "n")),
    )
    chunks = chunk_document(d)
    merged = [c for c in chunks if "S0" in c.content]
    assert len(merged) == 1 and merged[0].anchor == "small"
    assert merged[0].url.endswith("#small") and merged[0].section_title == "Small"
    assert "### Small\n\nS0" in merged[0].content and "\n\n### Next\n\nN0" in merged[0].content
    assert "next" not in [c.anchor for c in chunks]


def test_small_sections_never_merge_across_parents():
    d = doc(
        sec(2, "A", para(60, "a")),
        sec(3, "A1", para(5, "aa")),
        sec(2, "B", para(60, "b")),
        sec(3, "B1", para(60, "bb")),
    )
    chunks = chunk_document(d, ChunkOptions(min_tokens=50))
    a1 = next(c for c in chunks if "Aa0" in c.content)
    assert "B0" not in a1.content and "Bb0" not in a1.content
    assert a1.anchor in ("a", "a1")


def test_last_small_child_joins_the_group_before_it():
    d = doc(sec(2, "A", para(60, "a")), sec(3, "A1", para(5, "aa")), sec(2, "B", para(60, "b")))
    chunks = chunk_document(d)
    assert [c.anchor for c in chunks] == ["a", "b"]
    assert chunks[0].content.endswith("### A1\n\nAa0 aa1 aa2 aa3 aa4.")


def test_heading_only_section_merges_into_its_first_child():
    d = doc(sec(1, "T", para(60)), sec(2, "Group", anchor="group"), sec(3, "Child", para(60, "c")))
    chunks = chunk_document(d)
    # The text is the child's, so the chunk cites the child's heading (the parent's stays in content).
    assert chunks[1].anchor == "child" and chunks[1].heading_path[-1] == "Child"
    assert chunks[1].content.startswith("## Group\n\n### Child\n\nC0")


def test_heading_only_section_before_a_long_child_is_cited_as_the_child():
    d = doc(sec(2, "Group"), sec(3, "Child", *[para(60, f"c{k}x") for k in range(12)]))
    chunks = chunk_document(d, SMALL)
    assert chunks[0].content.startswith("## Group\n\n### Child")
    assert {c.anchor for c in chunks} == {"child"}


def test_section_numbers_follow_the_tree_even_when_a_level_is_skipped():
    d = doc(sec(2, "A", para(60)), sec(4, "Deep", para(60)), sec(3, "B", para(60)))
    assert [c.section_number for c in chunk_document(d, SMALL)] == ["1", "1.1", "1.2"]


def test_heading_only_section_with_nothing_to_join_is_dropped():
    d = doc(sec(2, "A", para(60, "a")), sec(2, "Empty"), sec(2, "B", para(60, "b")))
    chunks = chunk_document(d)
    assert [c.anchor for c in chunks] == ["a", "b"] and "Empty" not in chunks[1].content
    assert chunk_document(doc(sec(1, "T"), sec(2, "Nothing"))) == []


def test_no_chunk_is_empty_or_headings_only():
    d = doc(sec(1, "T", Block("paragraph", "   ", 1)), sec(2, "A"), sec(5, "Deep"), sec(2, "B"))
    assert chunk_document(d) == []


def test_max_tokens_holds_for_the_embedded_text_with_a_long_heading_path():
    title = "A very long heading title that keeps going for quite a while"
    d = doc(sec(2, title, para(40)), sec(3, title + " again", para(2000, "z")))
    for c in chunk_document(d, ChunkOptions(max_tokens=128, min_tokens=0, overlap_tokens=20)):
        assert c.token_count == count_tokens(c.embed_text) <= 128


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"split_levels": (1, 2)}, "split_levels must be heading levels 2..6"),
        ({"split_levels": ()}, "split_levels must be heading levels 2..6"),
        ({"max_tokens": 10}, "max_tokens must be at least 64"),
        ({"min_tokens": 600}, "min_tokens must be between 0 and max_tokens"),
        ({"overlap_tokens": 300}, "overlap_tokens must be between 0 and max_tokens/2"),
    ],
)
def test_options_are_validated(kwargs, message):
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        ChunkOptions(**kwargs)


@pytest.mark.parametrize(
    "text",
    [
        "word",
        "end.",
        "end .",
        "end  .",
        "x…",
        "“quoted”",
        "日本語。",
        "e\u0301",
        "a | b |",
        "```",
        "$$",
        "2024",
        "emoji 🚀",
        "<|endoftext|>",
        "it's",
        "dogs'",
        "-->",
        "tab\t.",
    ],
)
@pytest.mark.parametrize("after", ["Next", "    indented", "- item", "| a |", "# H", "1. x"])
def test_joint_makes_token_counts_additive(text, after):
    assert count(text + SEP + after) == count(text) + joint(text) + count(after)


def test_split_block_pieces_fit_and_are_source_substrings():
    text = "Intro line.\n" + " ".join(f"Sentence {i} is here." for i in range(400)) + "\nEnd."
    pieces = split_block(text, "paragraph", 100, later=60)
    assert pieces[0][1] <= 100 and all(tokens <= 60 for _, tokens in pieces[1:])
    assert all(piece in text and count(piece) == tokens for piece, tokens in pieces)


# Golden files: Markdown in, pinned chunks out. Regenerate with UPDATE_GOLDEN=1 and review the diff.
FIXTURES = Path(__file__).parent / "fixtures" / "chunk"
PINNED = (
    "chunk_index",
    "anchor",
    "url",
    "section_number",
    "section_title",
    "heading_level",
    "heading_path",
    "module",
    "doc_id",
    "tags",
    "token_count",
    "content_type",
    "content",
)
GOLDEN = [
    ("basics.md", ChunkOptions(), "basics.json"),
    ("basics.md", ChunkOptions(split_levels=(2,)), "basics.h2-only.json"),
    ("merging.md", ChunkOptions(), "merging.json"),
    ("long.md", ChunkOptions(max_tokens=256, overlap_tokens=40), "long.json"),
]


@pytest.mark.parametrize(("source", "options", "golden"), GOLDEN)
def test_golden_markdown_to_chunks(source, options, golden):
    markdown = pytest.importorskip("indexer.markdown")
    text = (FIXTURES / source).read_text(encoding="utf-8")
    document = markdown.parse_text(text, f"robotics/{source}", SiteSettings())
    chunks = chunk_document(document, options)
    got = [{key: c.payload()[key] for key in PINNED} for c in chunks]
    path = FIXTURES / golden
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert got == json.loads(path.read_text(encoding="utf-8"))
    for c in chunks:
        assert c.token_count == count_tokens(c.embed_text) <= options.max_tokens


def test_a_chunk_lists_the_blocks_that_sit_in_an_admonition_with_its_title():
    from indexer import markdown

    text = ("# Tuning\n\nThe section's own text.\n\n:::tip Log everything while tuning\n"
            "Record every term.\n\n- and the output\n:::\n\n:::note[Bracketed title]\nA note.\n"
            ":::\n\n::::warning title=\"Careful\"\nInner.\n\n:::info\nNested.\n:::\n::::\n\n"
            ":::caution\nNo title.\n:::\n\nAfter the asides.\n")
    (chunk,) = chunk_document(markdown.parse_text(text, "robotics/tuning.md", SiteSettings()))
    assert chunk.asides == [
        {"title": "Log everything while tuning", "opens": "Record every term."},
        {"title": "Log everything while tuning", "opens": "- and the output"},
        {"title": "Bracketed title", "opens": "A note."},
        {"title": "Careful", "opens": "Inner."},
        {"title": "info", "opens": "Nested."},
        {"title": "caution", "opens": "No title."},
    ]
    assert "The section's own text." in chunk.content and ":::" not in chunk.content
    assert chunk.payload()["asides"] == chunk.asides
