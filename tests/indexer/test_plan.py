"""plan_sync: the pure diff between wanted chunks and stored payloads."""

from __future__ import annotations

from dataclasses import replace

from functions.search.contract import Chunk, chunk_id, content_hash
from indexer.plan import AnotherBook, BookOverlap, LargeDeletion, book_overlap, plan_sync


def make_chunk(doc: str, index: int, text: str, url_suffix: str = "") -> Chunk:
    return Chunk(
        chunk_id=chunk_id(doc, index), doc_path=doc, doc_id=doc.removesuffix(".md"), doc_title="T",
        module="m", heading_path=["T", f"S{index}"], section_title=f"S{index}", section_number=str(index),
        heading_level=2, anchor=f"s{index}", url=f"/b/{doc}#s{index}{url_suffix}", page_url=f"/b/{doc}",
        chunk_index=index, token_count=3, content=text, content_hash=content_hash(text),
        content_type="text", tags=[], embedding_model="fake", embed_text=text,
    )


def stored(chunks):
    return {c.point_id: c.payload() for c in chunks}


def test_unchanged_chunks_need_nothing():
    chunks = [make_chunk("a.md", i, f"text {i}") for i in range(3)]
    plan = plan_sync(chunks, stored(chunks))
    assert len(plan.unchanged) == 3
    assert plan.embed == plan.reuse == plan.delete == []


def test_inserted_section_reuses_vectors_of_shifted_chunks():
    old = [make_chunk("a.md", i, f"text {i}") for i in range(3)]
    new = [make_chunk("a.md", 0, "text 0"), make_chunk("a.md", 1, "brand new"),
           make_chunk("a.md", 2, "text 1"), make_chunk("a.md", 3, "text 2")]
    plan = plan_sync(new, stored(old))
    assert [c.content for c in plan.embed] == ["brand new"]
    assert sorted(c.content for c in plan.reuse) == ["text 1", "text 2"]
    assert [c.content for c in plan.unchanged] == ["text 0"]
    assert plan.delete == []


def test_payload_change_without_text_change_is_rewritten_not_embedded():
    old = [make_chunk("a.md", 0, "same")]
    new = [make_chunk("a.md", 0, "same", url_suffix="-x")]
    plan = plan_sync(new, stored(old))
    assert plan.embed == [] and len(plan.reuse) == 1 and plan.unchanged == []


def test_deleted_doc_points_go_but_failed_doc_points_stay():
    a = [make_chunk("a.md", 0, "a0")]
    b = [make_chunk("b.md", 0, "b0"), make_chunk("b.md", 1, "b1")]
    c = [make_chunk("c.md", 0, "c0")]
    plan = plan_sync(a, stored(a + b + c), keep_docs=["c.md"])
    assert sorted(plan.delete) == sorted(x.point_id for x in b)


def test_same_new_text_twice_is_embedded_once():
    new = [make_chunk("a.md", 0, "dup"), make_chunk("b.md", 0, "dup")]
    plan = plan_sync(new, {})
    assert len(plan.embed) == 1 and len(plan.reuse) == 1


def test_a_store_holding_none_of_the_folders_pages_is_another_book():
    held = stored([make_chunk("kites.md", 0, "kites fly")])
    overlap = book_overlap([make_chunk("boats.md", 0, "boats sail")], held)
    assert overlap == BookOverlap(held=1, kept=0) and overlap.another_book
    assert not book_overlap([make_chunk("boats.md", 0, "boats sail")], {}).another_book  # empty


def test_a_shared_intro_page_does_not_make_two_books_one():
    """Every Docusaurus template starts with docs/intro.md: one page in common of four held is
    still another book."""
    mine = [make_chunk(f"{p}.md", 0, f"my {p}") for p in ("intro", "gears", "cams", "belts")]
    theirs = [make_chunk("intro.md", 0, "their intro"), make_chunk("pid.md", 0, "pid")]
    overlap = book_overlap(theirs, stored(mine))
    assert overlap == BookOverlap(held=4, kept=1) and overlap.another_book


def test_renamed_pages_with_their_text_and_unparsed_docs_are_the_same_book():
    held = [make_chunk(f"0{i}-ch.md", 0, f"chapter {i}") for i in range(1, 5)]
    renumbered = [make_chunk(f"0{i + 1}-ch.md", 0, f"chapter {i}") for i in range(1, 3)]
    # two files renumbered with their text, one not re-parsed (unchanged), one failed to parse
    overlap = book_overlap(renumbered, stored(held), keep_docs=["03-ch.md", "04-ch.md"])
    assert overlap == BookOverlap(held=4, kept=4) and not overlap.another_book
    # deleting half the pages of a book is an edit; deleting more is a replacement
    assert not book_overlap(held[:2], stored(held)).another_book
    assert book_overlap(held[:1], stored(held)).another_book


def test_another_books_text_under_the_same_file_names_is_another_book():
    """The issue's case: another book's text saved under the book's own 12 file names."""
    mine = [make_chunk(f"{p:02d}.md", 0, f"my page {p}") for p in range(12)]
    theirs = [replace(make_chunk(f"{p:02d}.md", 0, f"their page {p}"), doc_title=f"Boat {p}")
              for p in range(12)]
    overlap = book_overlap(theirs, stored(mine))
    assert overlap == BookOverlap(held=12, kept=0) and overlap.another_book
    # the same pages rewritten under their own titles are an edit of this book
    rewritten = [make_chunk(f"{p:02d}.md", 0, f"my page {p}, rewritten") for p in range(12)]
    assert book_overlap(rewritten, stored(mine)) == BookOverlap(held=12, kept=12)


def test_deleting_a_large_share_of_the_pages_needs_consent():
    held = stored([make_chunk(f"{p:02d}.md", 0, f"page {p}") for p in range(11)])
    kept6 = [make_chunk(f"{p:02d}.md", 0, f"page {p}") for p in range(6)]
    overlap = book_overlap(kept6, held)  # the folder: 6 of 11 pages kept
    assert not overlap.another_book and overlap.large_deletion
    assert overlap.gone == ("06.md", "07.md", "08.md", "09.md", "10.md")
    assert str(LargeDeletion("textbook", overlap, "docs")) == (
        "This sync would delete 5 of the 11 pages the collection 'textbook' holds (06.md, 07.md, "
        "08.md, ...): docs no longer has them. If they were removed on purpose, run the command "
        "again with --prune; if not, check that docs is the whole docs folder. Nothing was "
        "changed.")
    kept9 = [make_chunk(f"{p:02d}.md", 0, f"page {p}") for p in range(9)]
    assert not book_overlap(kept9, held).large_deletion  # 2 of 11: an edit
    one = stored([make_chunk(f"{p}.md", 0, f"page {p}") for p in range(2)])
    assert not book_overlap([make_chunk("0.md", 0, "page 0")], one).large_deletion  # one page


def test_the_refusal_is_one_line_with_both_ways_out():
    message = str(AnotherBook("textbook", BookOverlap(113, 0), "other/docs"))
    assert message == (
        "The collection 'textbook' holds another book (113 pages, none of them in other/docs); "
        "this sync would delete it. Index this book into its own collection "
        "(QDRANT_COLLECTION=name before the command), or replace the other book with --recreate.")
    assert "only 1 of them" in str(AnotherBook("t", BookOverlap(4, 1), "d").named("book"))
