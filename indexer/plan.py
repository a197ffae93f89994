"""Decide what a sync must do: a pure diff of the wanted chunks against what Qdrant holds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from functions.contract import Chunk


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
    existing: Mapping[int, dict],
    keep_docs: Iterable[str] = (),
) -> SyncPlan:
    """wanted: every chunk of every doc that parsed; existing: point id -> stored payload;
    keep_docs: doc paths that failed this run, whose stored points must survive untouched."""
    keep = set(keep_docs)
    by_hash: dict[str, int] = {}
    for pid, payload in existing.items():
        h = payload.get("content_hash")
        if h and h not in by_hash:
            by_hash[h] = pid
    plan = SyncPlan()
    wanted_ids: set[int] = set()
    pending_hashes: set[str] = set()
    for chunk in wanted:
        pid = chunk.point_id
        wanted_ids.add(pid)
        stored = existing.get(pid)
        if stored is not None and stored == chunk.payload():
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
        for pid, payload in existing.items()
        if pid not in wanted_ids and payload.get("doc_path") not in keep
    )
    return plan
