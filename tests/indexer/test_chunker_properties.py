"""Chunk invariants on random documents: limits, no empty chunks, text from its own sections."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from functions.search.contract import chunk_id, content_hash
from functions.tokens import count_tokens
from indexer.chunker import ChunkOptions, chunk_document
from indexer.model import Block, Document, Section

# 120 random documents chunked and checked (~12 s); the golden chunker tests run in the quick loop
pytestmark = pytest.mark.slow

# Words chosen to stress token counting at block joins: punctuation, accents, CJK, emoji.
WORDS = (
    "gain loop sensor Robot x² café e\u0301 日本語 🚀 1234567 it's dogs' “quoted” — ... !! (a) "
    "<|endoftext|> --> a|b F♯"
).split()
END = st.sampled_from([".", "?", "!", "", "…", ".)"])


@st.composite
def sentence(draw) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=25))
    return " ".join(words).capitalize() + draw(END)


@st.composite
def block(draw) -> Block:
    kind = draw(
        st.sampled_from(
            [
                "paragraph",
                "paragraph",
                "list_item",
                "code",
                "table",
                "math",
                "quote",
                "huge",
                "blob",
            ]
        )
    )
    if kind == "huge":  # one paragraph far over any limit, in one line or many
        joiner = draw(st.sampled_from([" ", "\n"]))
        return Block(
            "paragraph", joiner.join(draw(st.lists(sentence(), min_size=40, max_size=120))), 1
        )
    if kind == "blob":  # a single line with no sentence end at all
        return Block(
            "paragraph",
            "z" + "".join(draw(st.lists(st.sampled_from(WORDS), min_size=200, max_size=600))),
            1,
        )
    if kind == "code":
        lines = draw(
            st.lists(
                st.sampled_from(["x = f(1)", "    return y  ", "", "for i in r:", "// note"]),
                min_size=1,
                max_size=250,
            )
        )
        return Block("code", "```python\n" + "\n".join(lines) + "\n```", 1)
    if kind == "table":
        rows = [f"| {draw(sentence())} | {i} |" for i in range(draw(st.integers(1, 80)))]
        return Block("table", "| Col | N |\n|---|---|\n" + "\n".join(rows), 1)
    if kind == "math":
        return Block(
            "math",
            "$$\n" + "\n".join(draw(st.lists(sentence(), min_size=1, max_size=5))) + "\n$$",
            1,
        )
    text = " ".join(draw(st.lists(sentence(), min_size=1, max_size=8)))
    prefix = {"list_item": "- ", "quote": "> "}.get(kind, "")
    return Block(kind, prefix + text, 1)


@st.composite
def document(draw) -> Document:
    sections = [
        Section(
            1,
            draw(st.sampled_from(["", "Intro Page"])),
            None,
            1,
            draw(st.lists(block(), max_size=2)),
        )
    ]
    level = 1
    for i in range(draw(st.integers(0, 14))):
        level = draw(st.integers(2, min(6, level + 1)))
        title = draw(
            st.sampled_from(["Tuning", "Why?", "Gain — K_p", "Setup (Linux)", "Ziegler–Nichols"])
        )
        sections.append(
            Section(level, f"{title} {i}", f"s{i}", i + 2, draw(st.lists(block(), max_size=3)))
        )
    return Document("m/doc.md", "m/doc", "Doc Title", "/docs/m/doc", {}, sections, ["t"])


OPTIONS = st.builds(
    ChunkOptions,
    split_levels=st.sampled_from([(2, 3, 4), (2,), (2, 3), (3, 5)]),
    max_tokens=st.sampled_from([64, 100, 256, 512]),
    min_tokens=st.sampled_from([0, 20, 50]),
    overlap_tokens=st.sampled_from([0, 10, 30]),
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def _is_wrapper(line: str) -> bool:
    return line.startswith(("```", "$$", "|---", "| Col | N |", "#"))


def _source_lines(sections: list[Section]) -> str:
    return "\n".join(b.text for s in sections for b in s.blocks)


@SETTINGS
@given(doc=document(), options=OPTIONS)
def test_every_chunk_fits_and_comes_from_its_sections(doc: Document, options: ChunkOptions):
    chunks = chunk_document(doc, options)
    index = {s.anchor: i for i, s in enumerate(doc.sections)}
    starts = [index[c.anchor or None] for c in chunks]
    top = options.split_levels[0]
    bounds = [
        i for i, s in enumerate(doc.sections) if s.level in options.split_levels or s.level < top
    ]
    assert starts == sorted(starts)  # document order
    for n, c in enumerate(chunks):
        assert c.chunk_index == n and c.chunk_id == chunk_id("m/doc.md", n)
        assert c.token_count == count_tokens(c.embed_text) <= options.max_tokens
        assert c.content_hash == content_hash(c.embed_text)
        lines = [line for line in c.content.split("\n") if line.strip()]
        assert any(not line.startswith("#") for line in lines), "empty or heading-only chunk"
        # Its sections: from its own down to that of the next chunk with another anchor, which
        # it may open (a heading-only section merged into a child whose text goes on).
        later = [s for s in starts[n + 1 :] if s != starts[n]]
        end = min([b for b in bounds if later and b > later[0]], default=len(doc.sections))
        begin = starts[n]  # a heading-only section opens the chunk of the child it merged into
        while begin > 0 and not any(b.text.strip() for b in doc.sections[begin - 1].blocks):
            begin -= 1
        own = doc.sections[begin:end]
        source = _source_lines(own)
        headings = {"#" * s.level + " " + s.title for s in own}
        for line in lines:
            assert (
                line in headings if line.startswith("#") and line not in source else line in source
            )


@SETTINGS
@given(doc=document(), options=OPTIONS)
def test_no_text_is_lost_and_anchors_stay_unique(doc: Document, options: ChunkOptions):
    options = ChunkOptions(options.split_levels, options.max_tokens, options.min_tokens, 0)
    chunks = chunk_document(doc, options)
    runs = [c.anchor for n, c in enumerate(chunks) if n == 0 or chunks[n - 1].anchor != c.anchor]
    assert len(runs) == len(set(runs))  # an anchor's chunks are consecutive, never repeated later
    joined = "".join(
        "".join(line.split())
        for c in chunks
        for line in c.content.split("\n")
        if not _is_wrapper(line)
    )
    for s in doc.sections:
        for b in s.blocks:
            for line in b.text.split("\n"):
                if not _is_wrapper(line):
                    assert "".join(line.split()) in joined
