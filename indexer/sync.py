"""Sync: make the store hold exactly the chunks a build made. Vectors are reused by content hash,
only new text is embedded, what is gone is deleted, and the points of docs that failed or were
not re-parsed are kept. The only part of the indexer that talks to the store."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from functions.search.contract import (
    BLOCK_VECTORS,
    SYNC_FIELDS,
    Chunk,
    block_key,
    pack_block_vectors,
)
from functions.search.embeddings import Embedder
from functions.search.sparse import encode_document
from indexer.build import BuildResult, build_chunks, require_docs
from indexer.checkpoint import checkpoint
from indexer.discover import Discovered
from indexer.model import ChunkOptions, Problem, SiteSettings
from indexer.plan import (
    AnotherBook,
    LargeDeletion,
    SyncPlan,
    book_overlap,
    payload_doc_key,
    plan_sync,
)

SUMMARY_KEYS = ("files", "chunks", "embedded", "reused", "unchanged", "deleted", "failed")
EMBED_BATCH = 64
_LIGHT_FIELDS = SYNC_FIELDS  # of every point: what changed, which book, which pages


@dataclass
class Summary:
    files: int = 0
    chunks: int = 0
    embedded: int = 0
    reused: int = 0
    unchanged: int = 0
    deleted: int = 0
    failed: int = 0
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in SUMMARY_KEYS}


def sync_docs(
    docs_dir: Path,
    site: SiteSettings,
    chunk_options: ChunkOptions,
    store,
    embedder: Embedder,
    routes: dict | None = None,
    recreate: bool = False,
    progress: Callable[[str], None] | None = None,
    embed_progress: Callable[[int], None] | None = None,
    found: Discovered | None = None,
    prune: bool = False,
    block_progress: Callable[[int], None] | None = None,
) -> Summary:
    """The whole index job against one store: files already indexed unchanged are skipped.
    found: the run's discovery, when the caller already walked the docs (indexer.job);
    prune: consent to delete a large share of the pages (sync_chunks); embed_progress and
    block_progress: called with each batch's count of chunks and of quotable blocks embedded."""
    store.ensure_collection(embedder.model_name, embedder.dimension, recreate=recreate)
    stored = dict(store.scroll_payloads(_LIGHT_FIELDS))
    hashes: dict[str, set[str]] = {}
    for payload in stored.values():
        hashes.setdefault(payload_doc_key(payload), set()).add(payload.get("source_hash", ""))
    known = {doc: next(iter(hs)) for doc, hs in hashes.items() if len(hs) == 1}
    indexed = {payload_doc_key(p): p["page_url"] for p in stored.values() if p.get("page_url")}
    built = build_chunks(docs_dir, site, chunk_options, routes, progress, known=known,
                         indexed=indexed, found=found)
    require_docs(built, docs_dir, with_manifest=routes is not None)  # before anything is deleted
    return sync_chunks(built, store, embedder, progress=embed_progress, stored=stored,
                       prune=prune, block_progress=block_progress)


def sync_chunks(
    built: BuildResult,
    store,
    embedder: Embedder,
    recreate: bool = False,
    progress: Callable[[int], None] | None = None,
    stored: Mapping[int, dict] | None = None,
    prune: bool = False,
    block_progress: Callable[[int], None] | None = None,
) -> Summary:
    """Write the built chunks to the store: reuse vectors by content hash, embed only new text,
    delete what is gone, keep the points of docs that failed or were not re-parsed. A store
    holding another book is refused (plan.book_overlap) before anything is embedded or written:
    `recreate` (which empties it first) is the way to replace it. A sync that would delete a
    large share of the pages is refused too (LargeDeletion) unless `prune`."""
    if stored is None:
        store.ensure_collection(embedder.model_name, embedder.dimension, recreate=recreate)
        stored = dict(store.scroll_payloads(_LIGHT_FIELDS))
    wanted = [replace(c, embedding_model=embedder.model_name) for c in built.chunks]
    keep = set(built.failed_docs) | set(built.unchanged_docs)
    overlap = book_overlap(wanted, stored, keep)
    if overlap.another_book:
        raise AnotherBook(store.collection, overlap, built.docs_dir or "the docs folder")
    if overlap.large_deletion and not prune:
        raise LargeDeletion(store.collection, overlap, built.docs_dir or "the docs folder")
    rebuilt = sorted({c.doc_path for c in wanted})
    full = dict(store.scroll_payloads(_PAYLOAD_FIELDS, doc_paths=rebuilt)) if rebuilt else {}
    plan = plan_sync(wanted, stored, full, keep_docs=keep)
    unchanged = set(built.unchanged_docs)
    kept = sum(1 for p in stored.values() if payload_doc_key(p) in unchanged)
    vectors = _vectors_for(plan, store, embedder, progress)
    known = store.block_vectors(set(plan.reuse_from.values())) if plan.reuse_from else {}
    blocks = block_vectors([c.payload() for c in plan.reuse + plan.embed], embedder, known,
                           progress=block_progress)
    items = [
        (c.point_id, {**c.payload(), **blocks[k]}, vectors[c.content_hash],
         encode_document(c.embed_text))
        for k, c in enumerate(plan.reuse + plan.embed)
    ]
    if items:
        store.upsert(items)
        checkpoint("sync-upserted")
    if plan.delete:
        store.delete(plan.delete)
    return Summary(
        files=built.files,
        chunks=len(wanted) + kept,
        embedded=len(plan.embed),
        reused=len(plan.reuse),
        unchanged=len(plan.unchanged) + kept,
        deleted=len(plan.delete),
        failed=len(built.failed),
        problems=list(built.failed),
        warnings=list(built.warnings),
    )


def _vectors_for(plan: SyncPlan, store, embedder: Embedder, progress) -> dict[str, list[float]]:
    vectors: dict[str, list[float]] = {}
    stored = store.dense_vectors(set(plan.reuse_from.values())) if plan.reuse_from else {}
    for h, pid in plan.reuse_from.items():
        if pid in stored:
            vectors[h] = stored[pid]
    todo = plan.embed
    for start in range(0, len(todo), EMBED_BATCH):
        batch = todo[start : start + EMBED_BATCH]
        for chunk, vec in zip(batch, embedder.embed_batch([c.embed_text for c in batch]), strict=True):
            vectors[chunk.content_hash] = list(vec)
        if progress:
            progress(len(batch))
    return vectors


def block_vectors(payloads: list[dict], embedder,
                  known: Mapping[str, Sequence[float]] | None = None,
                  progress: Callable[[int], None] | None = None) -> list[dict]:
    """For each payload, {BLOCK_VECTORS: ...}: its quotable blocks embedded, so an offline
    answer embeds only the question (~0.4 s of CPU less per question on 2 cores); a block whose
    key `known` holds (stored by the points whose text is reused) is not embedded again. {} with
    a paid (OpenAI) embedder, whose answers embed the blocks only when no model answers."""
    if getattr(embedder, "paid", False):
        return [{} for _ in payloads]
    from functions.answers.extractive import block_texts

    texts = [block_texts(p) for p in payloads]
    known = known or {}
    vectors: dict[str, Sequence[float]] = {
        t: known[block_key(t)] for ts in texts for t in ts if block_key(t) in known}
    todo = list(dict.fromkeys(t for ts in texts for t in ts if t not in vectors))
    for start in range(0, len(todo), EMBED_BATCH):
        batch = todo[start : start + EMBED_BATCH]
        vectors.update(zip(batch, embedder.embed_batch(batch), strict=True))
        if progress:  # a stage of its own: about as long as the chunks' on a new book
            progress(len(batch))
    return [{BLOCK_VECTORS: pack_block_vectors(ts, [vectors[t] for t in ts])} if ts else {}
            for ts in texts]


# Everything in the payload, so a changed URL or title is written even when the text is not.
_PAYLOAD_FIELDS = tuple(
    f for f in Chunk.__dataclass_fields__ if f != "embed_text"
)
