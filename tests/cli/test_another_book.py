"""One book's index is never replaced by another: the rule is in the sync (indexer/plan.py
book_overlap), so `index`, `serve --watch` and the demo refuse alike, with one message and the
same ways out. Real embedded engine; embeddings from the fake OpenAI server over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from functions.search.store import QdrantStore
from functions.settings import Settings
from tests.ports import free_port
from textbook_chat_cli.main import main

TEXT = "{topic} is explained here with enough words to make a real section of a chapter. " * 3


def _book(root: Path, pages: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for name, topic in pages.items():
        (root / name).write_text(f"# {topic}\n\n## About {topic}\n\n{TEXT.format(topic=topic)}\n")
    return root


@pytest.fixture
def books(tmp_path, monkeypatch, fake_openai_env):
    monkeypatch.setenv("QDRANT_PATH", str(tmp_path / "qdrant"))
    monkeypatch.chdir(tmp_path)
    # Both books start with docs/intro.md, as every Docusaurus template does.
    mine = _book(tmp_path / "mine", {"intro.md": "Gears", "cams.md": "Cams", "belts.md": "Belts"})
    other = _book(tmp_path / "other", {"intro.md": "Boats", "sails.md": "Sails"})
    assert main(["index", "mine"]) == 0
    return mine, other


def _pages(collection: str = "textbook") -> set[str]:
    store = QdrantStore.open(Settings.from_env({"QDRANT_PATH": "qdrant",
                                                "QDRANT_COLLECTION": collection}))
    try:
        return {p["doc_path"] for _, p in store.scroll_payloads(["doc_path"])}
    finally:
        store.close()


# other's intro.md is not this book's intro.md: another title and text (names alone keep nothing)
REFUSAL = ("textbook-chat: The collection 'textbook' holds another book (3 pages, none of them "
           "in other); this sync would delete it. Index this book into its own collection "
           "(QDRANT_COLLECTION=name before the command), or replace the other book with "
           "--recreate.\n")


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_index_refuses_another_book_and_takes_both_ways_out(books, capsys, monkeypatch):
    capsys.readouterr()
    assert main(["index", "other"]) == 2
    assert capsys.readouterr().err.endswith(REFUSAL)
    assert _pages() == {"intro.md", "cams.md", "belts.md"}  # nothing deleted
    monkeypatch.setenv("QDRANT_COLLECTION", "other-book")
    assert main(["index", "other"]) == 0
    assert _pages("other-book") == {"intro.md", "sails.md"}
    monkeypatch.delenv("QDRANT_COLLECTION")
    assert main(["index", "other", "--recreate"]) == 0
    assert _pages() == {"intro.md", "sails.md"}


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_serve_watch_refuses_another_book_before_serving(books, capsys):
    capsys.readouterr()
    assert main(["serve", "--port", str(free_port()), "--watch", "other"]) == 2
    assert capsys.readouterr().err.endswith(REFUSAL)
    assert _pages() == {"intro.md", "cams.md", "belts.md"}
    assert main(["serve", "--recreate"]) == 2  # only with --watch
    assert "--recreate goes with --watch DOCS_DIR" in capsys.readouterr().err


def test_the_same_book_still_syncs_after_most_of_it_is_renamed(books, capsys):
    mine, _ = books
    for old, new in (("intro.md", "01-intro.md"), ("cams.md", "02-cams.md")):
        (mine / old).rename(mine / new)  # renumbered with their text
    assert main(["index", "mine", "--json"]) == 0
    assert _pages() == {"01-intro.md", "02-cams.md", "belts.md"}


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_serve_watch_on_another_book_leaves_the_sample_book_whole(books, capsys, monkeypatch):
    """The issue's case: the sample book indexed, then `serve --watch` on another book's docs
    with the same QDRANT_PATH and no collection named."""
    sample = Path(__file__).resolve().parents[2] / "samples" / "textbook"
    monkeypatch.setenv("QDRANT_COLLECTION", "sample")
    assert main(["index", str(sample / "docs"), "--site-dir", str(sample), "--json"]) == 0
    held = json.loads(capsys.readouterr().out)["chunks"]
    assert main(["serve", "--port", str(free_port()), "--watch", "mine"]) == 2
    err = capsys.readouterr().err
    assert ("textbook-chat: The collection 'sample' holds another book (11 pages, none of "
            "them in mine)") in err
    assert _count("sample") == held == 113


def _count(collection: str) -> int:
    store = QdrantStore.open(Settings.from_env({"QDRANT_PATH": "qdrant",
                                                "QDRANT_COLLECTION": collection}))
    try:
        return store.count()
    finally:
        store.close()


def test_another_books_text_under_the_same_file_names_is_refused(books, capsys):
    """The book is its content, not its file names: another book saved as intro.md, cams.md and
    belts.md replaced every point before ("3 deleted")."""
    mine, _ = books
    for name, topic in (("intro.md", "Boats"), ("cams.md", "Sails"), ("belts.md", "Oars")):
        (mine / name).write_text(f"# {topic}\n\n## About {topic}\n\n{TEXT.format(topic=topic)}\n")
    capsys.readouterr()
    assert main(["index", "mine"]) == 2
    assert "holds another book (3 pages, none of them in mine)" in capsys.readouterr().err
    assert _texts() == {"Gears", "Cams", "Belts"}  # nothing replaced


def _texts() -> set[str]:
    store = QdrantStore.open(Settings.from_env({"QDRANT_PATH": "qdrant"}))
    try:
        return {p["doc_title"] for _, p in store.scroll_payloads(["doc_title"])}
    finally:
        store.close()


@pytest.fixture
def eight_pages(books, tmp_path, monkeypatch):
    monkeypatch.setenv("QDRANT_COLLECTION", "eight")
    docs = _book(tmp_path / "eight", {f"p{n}.md": f"Topic {n}" for n in range(8)})
    assert main(["index", "eight"]) == 0
    for n in range(5, 8):  # three of eight pages gone at once (a folder half copied?)
        (docs / f"p{n}.md").unlink()
    return docs


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_index_deletes_many_pages_only_with_prune(eight_pages, capsys):
    capsys.readouterr()
    assert main(["index", "eight"]) == 2
    err = capsys.readouterr().err
    assert ("This sync would delete 3 of the 8 pages the collection 'eight' holds (p5.md, p6.md, "
            "p7.md): eight no longer has them. If they were removed on purpose, run the command "
            "again with --prune") in err
    assert len(_pages("eight")) == 8  # nothing deleted
    assert main(["index", "eight", "--json", "--prune"]) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] == 3
    assert _pages("eight") == {f"p{n}.md" for n in range(5)}


def test_serve_watch_deletes_many_pages_only_with_prune(eight_pages, capsys):
    capsys.readouterr()
    assert main(["serve", "--port", str(free_port()), "--watch", "eight"]) == 2
    assert "run the command again with --prune" in capsys.readouterr().err
    assert len(_pages("eight")) == 8
    assert main(["serve", "--prune"]) == 2  # only with --watch
    assert "--prune goes with --watch DOCS_DIR" in capsys.readouterr().err
