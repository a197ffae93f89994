"""The naive baseline: pages rebuilt from indexed chunks, fixed windows, section credit."""

from __future__ import annotations

from functions.tokens import count_tokens
from indexer.evaluate.naive import naive_chunks, rebuild_pages, windows

PAGE = "/b/docs/p"


def payload(index: int, anchor: str, title: str, content: str, level: int = 2) -> dict:
    return {
        "doc_path": "p.md", "doc_id": "p", "doc_title": "P", "module": "p",
        "heading_path": ["P", title], "section_title": title, "section_number": "",
        "heading_level": level, "anchor": anchor,
        "url": f"{PAGE}#{anchor}" if anchor else PAGE, "page_url": PAGE,
        "chunk_index": index, "content": content, "tags": [],
    }


def test_rebuild_restores_headings_and_drops_piece_overlap():
    chunks = [
        payload(1, "a", "Alpha", "## Alpha\n\nfirst part of alpha. shared tail"),
        payload(0, "", "P", "Intro text.", level=1),
        payload(2, "a", "Alpha", "shared tail and the second part."),
        payload(3, "b", "Beta", "Beta body without its heading line."),
    ]
    (page,) = rebuild_pages(chunks)
    assert page.text == (
        "# P\n\nIntro text.\n\n## Alpha\n\nfirst part of alpha. shared tail\n\n"
        "and the second part.\n\n## Beta\n\nBeta body without its heading line."
    )
    assert page.payload_at(0)["anchor"] == ""
    assert page.payload_at(page.text.index("## Beta"))["anchor"] == "b"


def test_windows_are_fixed_size_with_overlap():
    text = " ".join(f"word{i}" for i in range(3000))
    found = list(windows(text, size=512, overlap=50))
    assert all(count_tokens(piece) <= 512 for _, piece in found)
    assert found[0][0] == 0
    assert len(found) >= count_tokens(text) // 462
    assert text.endswith(found[-1][1].strip())


def test_each_window_is_credited_to_the_section_holding_most_of_it():
    long_b = " ".join(f"beta{i}" for i in range(150))
    chunks = [payload(0, "a", "Alpha", "short alpha."), payload(1, "b", "Beta", long_b)]
    (window,) = naive_chunks(chunks)
    assert window.url == f"{PAGE}#b"
    assert window.content_type == "naive-window"
    assert window.embed_text == window.content
