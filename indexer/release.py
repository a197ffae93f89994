"""Releases of the index on a Qdrant server: readers never see a half-done or unchecked index.

Readers query an alias (QDRANT_COLLECTION, e.g. `textbook`). A reindex goes in three steps:

- `stage`: a new collection `<alias>--<UTC time>` is seeded with every point of the live one
  (vectors copied, nothing re-embedded), then synced with the docs as `index` does (only new
  text is embedded; a broken doc keeps its old points). The live index is not touched.
- checks run against the staged collection (`check`, and `eval` with QDRANT_COLLECTION set to it).
- `switch`: one atomic alias change points readers at it; the previous releases are kept
  (`--keep`), so `rollback` moves the alias back in one step. `discard` drops a staged release
  that failed its checks.

The first release on a collection made by `index` (a plain collection named like the alias)
copies it, then replaces it by the alias: queries in that moment (milliseconds) fail once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from functions.errors import ConfigError
from functions.search.contract import META_MODEL
from indexer.plan import AnotherBook

SEP = "--"
COPY_BATCH = 256


@dataclass
class Releases:
    alias: str
    live: str | None  # the collection readers see now (None: nothing yet)
    legacy: bool  # live is a plain collection named like the alias (made by `index`)
    names: list[str]  # every `<alias>--*` collection, oldest first

    def previous(self) -> str | None:
        """The newest release older than the live one."""
        older = [n for n in self.names if self.live is None or n < self.live]
        return older[-1] if older else None


NEEDS_SERVER = ("Releases need a Qdrant server: set QDRANT_URL (and QDRANT_API_KEY). The "
                "embedded index (QDRANT_PATH) is updated in place by `textbook-chat index`.")


def _client(store):
    client = getattr(store, "client", None)
    if client is None or not hasattr(client, "update_collection_aliases"):
        raise ConfigError(NEEDS_SERVER)
    return client


def releases(store) -> Releases:
    """The alias of `store.collection`, what it points at and every release collection."""
    client, alias = _client(store), store.collection
    aliases = {a.alias_name: a.collection_name for a in client.get_aliases().aliases}
    collections = {c.name for c in client.get_collections().collections}
    names = sorted(n for n in collections if n.startswith(alias + SEP))
    if alias in aliases:
        return Releases(alias, aliases[alias], False, names)
    return Releases(alias, alias if alias in collections else None, alias in collections, names)


def new_name(alias: str, now: datetime | None = None) -> str:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{alias}{SEP}{stamp}"


def stage(store, embedder, index, now: datetime | None = None,
          fresh: bool = False) -> tuple[str, object]:
    """Build the next release beside the live one; returns (its collection name, sync summary).

    `index(staged_store)` runs the sync (indexer.job.index_docs with that store). The release
    starts as a copy of the live one, so the sync refuses docs of another book (AnotherBook,
    naming the alias); `fresh` starts it empty instead (`release stage --recreate`).
    """
    _check_alias(store.collection)
    state = releases(store)
    name = new_name(state.alias, now)
    target = store.collection_store(name)
    target.ensure_collection(embedder.model_name, embedder.dimension)
    if state.live and not fresh:
        live = store.collection_store(state.live)
        meta = live.collection_meta()
        if meta.get(META_MODEL) == embedder.model_name:
            _copy_points(_client(store), state.live, name)
    try:
        summary = index(target)
    except BaseException as exc:
        _client(store).delete_collection(name)  # nothing half-built is left behind
        if isinstance(exc, AnotherBook):
            raise exc.named(state.alias) from None
        raise
    return name, summary


def switch(store, name: str, keep: int = 3) -> tuple[str | None, list[str]]:
    """Point the alias at `name` in one step; keep the `keep` newest releases up to it, delete
    older ones. Returns (the collection readers saw before, the collections deleted)."""
    from qdrant_client import models

    client, state = _client(store), releases(store)
    if name not in state.names:
        raise ConfigError(f"No staged release {name!r} for {state.alias!r}: run "
                          "`textbook-chat release stage` first (it prints the name).")
    if not store.collection_store(name).count():
        raise ConfigError(f"The staged release {name!r} is empty: refusing to publish it.")
    if state.legacy:  # a collection cannot share its name with an alias
        client.delete_collection(state.alias)
    ops = [models.CreateAliasOperation(
        create_alias=models.CreateAlias(collection_name=name, alias_name=state.alias))]
    if state.live and not state.legacy:
        ops.insert(0, models.DeleteAliasOperation(
            delete_alias=models.DeleteAlias(alias_name=state.alias)))
    client.update_collection_aliases(change_aliases_operations=ops)
    older = [n for n in state.names if n < name]
    drop = older[: max(0, len(older) - (keep - 1))]
    for old in drop:
        client.delete_collection(old)
    return state.live, drop


def rollback(store) -> tuple[str, str]:
    """Point the alias back at the previous release; returns (from, to)."""
    state = releases(store)
    target = state.previous()
    if not state.live or state.legacy or target is None:
        raise ConfigError(f"No earlier release of {state.alias!r} is kept to roll back to "
                          f"(releases: {', '.join(state.names) or 'none'}).")
    switch_to(store, target)
    return state.live, target


def switch_to(store, name: str) -> None:
    from qdrant_client import models

    _client(store).update_collection_aliases(change_aliases_operations=[
        models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=store.collection)),
        models.CreateAliasOperation(create_alias=models.CreateAlias(
            collection_name=name, alias_name=store.collection))])


def discard(store, name: str) -> bool:
    """Drop a staged release that was never published (never the live one)."""
    state = releases(store)
    if name == state.live:
        raise ConfigError(f"{name!r} is what readers see now: roll back before discarding it.")
    if name not in state.names:
        return False
    _client(store).delete_collection(name)
    return True


def _check_alias(alias: str) -> None:
    if SEP in alias or not re.fullmatch(r"[A-Za-z0-9_.-]{1,200}", alias):
        raise ConfigError(f"QDRANT_COLLECTION={alias!r}: use letters, digits, '.', '_' and single "
                          "'-' (a release is named <collection>--<time>).")


def _copy_points(client, source: str, dest: str) -> int:
    """Every point of `source` into `dest` with its vectors and payload (no re-embedding)."""
    from qdrant_client import models

    copied, offset = 0, None
    while True:
        points, offset = client.scroll(source, limit=COPY_BATCH, offset=offset,
                                       with_payload=True, with_vectors=True)
        if points:
            client.upsert(dest, points=[models.PointStruct(id=p.id, vector=p.vector,
                                                           payload=p.payload) for p in points])
            copied += len(points)
        if offset is None:
            return copied
