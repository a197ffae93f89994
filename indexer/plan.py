"""Decide what a sync must do: a pure diff of the wanted chunks against what Qdrant holds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from functions.contract import Chunk


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
