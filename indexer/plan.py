"""Decide what a sync must do: a pure diff of the wanted chunks against what Qdrant holds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from functions.errors import ConfigError
from functions.search.contract import Chunk


def doc_key(doc_path: str, version: str = "", locale: str = "") -> str:
    """Which doc a point belongs to: its doc path, qualified by version and locale when the
    book was indexed from a build manifest (the same file exists in every version)."""
    return f"{locale}:{version}:{doc_path}" if version or locale else doc_path


def payload_doc_key(payload: Mapping) -> str:
    return doc_key(str(payload.get("doc_path") or ""), str(payload.get("version") or ""),
                   str(payload.get("locale") or ""))


@dataclass
class SyncPlan:
    unchanged: list[Chunk] = field(default_factory=list)
    reuse: list[Chunk] = field(default_factory=list)  # vector exists under the same content_hash
    embed: list[Chunk] = field(default_factory=list)  # new text: needs an embedding
    delete: list[int] = field(default_factory=list)  # point ids to remove
    # content_hash -> a point id whose stored vector can be copied
    reuse_from: dict[str, int] = field(default_factory=dict)


def plan_sync(
    wanted: Iterable[Chunk],
    stored: Mapping[int, dict],
    full: Mapping[int, dict] | None = None,
    keep_docs: Iterable[str] = (),
) -> SyncPlan:
    """wanted: every chunk of the docs rebuilt this run; stored: point id -> at least
    doc_path and content_hash of every stored point; full: point id -> complete payload, for
    the points of rebuilt docs (default: stored); keep_docs: doc keys (doc_key) whose stored points must
    survive untouched (failed to parse this run, or unchanged and not re-parsed)."""
    full = stored if full is None else full
    keep = set(keep_docs)
    by_hash: dict[str, int] = {}
    for pid, payload in stored.items():
        h = payload.get("content_hash")
        if h and h not in by_hash:
            by_hash[h] = pid
    plan = SyncPlan()
    wanted_ids: set[int] = set()
    pending_hashes: set[str] = set()
    for chunk in wanted:
        pid = chunk.point_id
        wanted_ids.add(pid)
        old = full.get(pid)
        if old is not None and old == chunk.payload():
            plan.unchanged.append(chunk)
        elif chunk.content_hash in by_hash:
            plan.reuse.append(chunk)
            plan.reuse_from[chunk.content_hash] = by_hash[chunk.content_hash]
        elif chunk.content_hash in pending_hashes:
            plan.reuse.append(chunk)  # same new text twice in this run: embedded once
        else:
            pending_hashes.add(chunk.content_hash)
            plan.embed.append(chunk)
    plan.delete = sorted(
        pid
        for pid, payload in stored.items()
        if pid not in wanted_ids and payload_doc_key(payload) not in keep
    )
    return plan


@dataclass(frozen=True)
class BookOverlap:
    """How much of what a collection holds a sync would keep, page by page."""

    held: int  # pages (docs) the collection holds
    kept: int  # of them, pages the sync keeps: the same doc, or some of its text (a renamed file)
    # held pages it deletes: gone from the folder, their text not found under another name
    gone: tuple[str, ...] = field(default=(), compare=False)

    @property
    def another_book(self) -> bool:
        """A sync deletes what the folder lacks: one that would keep fewer than half of the
        pages held is replacing a book, not editing it (a Docusaurus book's `intro.md` alone
        must not make two books one)."""
        return self.held > 0 and self.kept * 2 < self.held

    @property
    def large_deletion(self) -> bool:
        """Deleting more than a quarter of the pages held (two at least) is not an edit made in
        passing: a folder half copied, or the wrong one; the author must say it is meant."""
        return len(self.gone) >= 2 and len(self.gone) * 4 > self.held


def book_overlap(wanted: Iterable[Chunk], stored: Mapping[int, dict],
                 keep_docs: Iterable[str] = ()) -> BookOverlap:
    """wanted, stored, keep_docs: as plan_sync takes them (stored needs doc_path, version,
    locale, content_hash and doc_title). A held page is kept when the sync keeps it untouched,
    rebuilds some of its text (under any name), or rebuilds a page of the same name and title:
    another book's text under the same file names keeps nothing. A held page is gone (deleted)
    when the folder lacks it and not all of its text is found under another name."""
    keep, hashes, titles = set(keep_docs), set(), set()
    for chunk in wanted:
        key = doc_key(chunk.doc_path, chunk.version, chunk.locale)
        titles.add((key, chunk.doc_title))
        hashes.add(chunk.content_hash)
    rebuilt = {key for key, _ in titles}
    held: dict[str, bool] = {}
    moved: dict[str, bool] = {}  # every chunk of the page found again: renamed with its text
    for payload in stored.values():
        key = payload_doc_key(payload)
        found = payload.get("content_hash") in hashes
        held[key] = (held.get(key, False) or key in keep or found
                     or (key, payload.get("doc_title")) in titles)
        moved[key] = moved.get(key, True) and found
    gone = tuple(sorted(key for key in held
                        if key not in keep and key not in rebuilt and not moved[key]))
    return BookOverlap(len(held), sum(held.values()), gone)


class AnotherBook(ConfigError):
    """A sync refused because the collection holds another book (the same one-line message and
    the same way out for every command that syncs: index, serve --watch, release stage, demo)."""

    def __init__(self, collection: str, overlap: BookOverlap, docs_dir: object):
        self.collection, self.overlap, self.docs_dir = collection, overlap, docs_dir
        held, kept = overlap.held, overlap.kept
        share = "none" if not kept else f"only {kept}"
        super().__init__(
            f"The collection {collection!r} holds another book ({held} page"
            f"{'s' if held != 1 else ''}, {share} of them in {docs_dir}); this sync would delete "
            f"it. Index this book into its own collection (QDRANT_COLLECTION=name before the "
            "command), or replace the other book with --recreate.")

    def named(self, collection: str) -> AnotherBook:
        """The same refusal naming another collection (a release names its alias)."""
        return AnotherBook(collection, self.overlap, self.docs_dir)


class LargeDeletion(ConfigError):
    """A sync refused because it would delete a large share of the book's pages (the same
    message and way out, --prune, for index, serve --watch and release stage)."""

    def __init__(self, collection: str, overlap: BookOverlap, docs_dir: object):
        self.overlap, self.docs_dir = overlap, docs_dir
        gone = overlap.gone
        shown = ", ".join(gone[:3]) + (", ..." if len(gone) > 3 else "")  # locale:version:path
        super().__init__(
            f"This sync would delete {len(gone)} of the {overlap.held} pages the collection "
            f"{collection!r} holds ({shown}): {docs_dir} no longer has them. If they were "
            "removed on purpose, run the command again with --prune; if not, check that "
            f"{docs_dir} is the whole docs folder. Nothing was changed.")

    def named(self, collection: str) -> LargeDeletion:
        return LargeDeletion(collection, self.overlap, self.docs_dir)
