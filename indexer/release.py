"""Releases of the index on a Qdrant server: a release is complete or invisible.

Readers query an alias (QDRANT_COLLECTION, e.g. `textbook`). A reindex goes in three steps:

- `stage`: a new collection `<alias>--<UTC time>` is seeded with every point of the live one
  (vectors copied, nothing re-embedded), then synced with the docs as `index` does (only new
  text is embedded; a broken doc keeps its old points). The live index is not touched. Its last
  write marks it complete (with its point count): a stage that was stopped before (killed, out of
  memory, a lost runner) leaves a release that `status` shows as incomplete and that `switch` and
  `rollback` never choose; `discard --incomplete` drops every such release.
- checks run against the staged collection (`check`, and `eval` with QDRANT_COLLECTION set to it).
- `switch`: one atomic alias change points readers at it. The release records the one readers
  were on before, so `rollback` goes back to a release that really was live (never to one staged
  and never published), and pruning (`--keep`) never deletes it. `discard` drops a staged release
  that failed its checks.

The first release on a collection made by `index` (a plain collection named like the alias) copies
it; the first switch then deletes it and creates the alias. Qdrant refuses an alias named like a
collection, and deleting a collection is not an alias change, so this takes two requests: queries
in between fail. The switch measures that gap and prints it (a few milliseconds: one request's
round trip). A switch stopped between the two leaves no index: `status` says so and names the
`switch` to run again.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from functions.errors import ConfigError
from functions.search.contract import META_MODEL
from functions.search.store import QdrantStore
from indexer.checkpoint import checkpoint
from indexer.plan import AnotherBook, LargeDeletion

SEP = "--"
COPY_BATCH = 256
# The release's own marks in its collection's metadata.
META_STAGING = "release_staging"  # when its stage began (written before any point)
META_COMPLETE = "release_complete"  # when its stage finished: the stage's last write
META_POINTS = "release_points"  # the points it held then
META_PREVIOUS = "release_previous"  # the collection readers were on before it went live
META_LIVE = "release_live"  # when readers were first switched to it


@dataclass(frozen=True)
class Release:
    """One `<alias>--<time>` collection and what its marks say."""

    name: str
    state: str  # complete | incomplete | unmarked (staged by a textbook-chat without marks)
    points: int | None = None  # recorded when it was completed
    # the collection readers were on before it went live ("": none; None: not recorded)
    previous: str | None = None
    was_live: bool = False

    @classmethod
    def from_meta(cls, name: str, meta: dict, count=None) -> Release:
        if META_COMPLETE in meta:
            state = "complete"
        elif META_STAGING in meta:
            state = "incomplete"
        else:  # older textbook-chat: complete unless empty (a stage stopped right after creating)
            state = "unmarked" if count and count() else "incomplete"
        points = meta.get(META_POINTS)
        return cls(name, state, int(points) if points is not None else None,
                   meta.get(META_PREVIOUS), META_LIVE in meta)

    @property
    def usable(self) -> bool:
        return self.state != "incomplete"


@dataclass
class Releases:
    alias: str
    live: str | None  # the collection readers see now (None: nothing yet)
    legacy: bool  # live is a plain collection named like the alias (made by `index`)
    names: list[str]  # every `<alias>--*` collection, oldest first
    info: dict[str, Release] = field(default_factory=dict)

    def release(self, name: str) -> Release:
        return self.info.get(name) or Release(name, "unmarked")

    def previous(self) -> str | None:
        """The release readers were on before the live one: the one it recorded when it went
        live; for a live release staged before marks, the newest older release that is
        complete and was live (or unmarked). None when it is gone or was never a release."""
        if self.live is None or self.legacy:
            return None
        recorded = self.release(self.live).previous
        if recorded is not None:
            return recorded if recorded in self.names and self.release(recorded).usable else None
        # staged before marks: the newest older release that was live (or may have been)
        older = [n for n in self.names if n < self.live and self.release(n).usable
                 and (self.release(n).was_live or self.release(n).state == "unmarked")]
        return older[-1] if older else None

    def interrupted(self) -> str | None:
        """With no index live: the complete release a stopped switch was publishing."""
        if self.live is not None:
            return None
        pending = [n for n in self.names if self.release(n).state == "complete"
                   and (self.release(n).was_live or self.release(n).previous is not None)]
        return pending[-1] if pending else None


NEEDS_SERVER = ("Releases need a Qdrant server: set QDRANT_URL (and QDRANT_API_KEY). The "
                "embedded index (QDRANT_PATH) is updated in place by `textbook-chat index`.")


def _server(store) -> QdrantStore:
    """The store of a server's collection (the embedded index has no releases)."""
    if not isinstance(store, QdrantStore):
        raise ConfigError(NEEDS_SERVER)
    return store


def releases(store) -> Releases:
    """The alias of `store.collection`, what it points at and every release with its marks."""
    server, alias = _server(store), store.collection
    aliases = server.aliases()
    collections = server.collection_names()
    names = sorted(n for n in collections if n.startswith(alias + SEP))
    info = {}
    for name in names:
        other = server.collection_store(name)
        info[name] = Release.from_meta(name, other.collection_meta(), other.count)
    if alias in aliases:
        return Releases(alias, aliases[alias], False, names, info)
    return Releases(alias, alias if alias in collections else None, alias in collections, names,
                    info)


def new_name(alias: str, now: datetime | None = None) -> str:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{alias}{SEP}{stamp}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _mark(store, name: str, **meta) -> None:
    _server(store).collection_store(name).set_meta(**meta)


def _drop(store, name: str) -> None:
    _server(store).collection_store(name).drop()


def stage(store, embedder, index, now: datetime | None = None, fresh: bool = False,
          say: Callable[[str], None] | None = None) -> tuple[str, object]:
    """Build the next release beside the live one; returns (its collection name, sync summary).

    `index(staged_store)` runs the sync (indexer.job.index_docs with that store). The release
    starts as a copy of the live one, so the sync refuses docs of another book (AnotherBook,
    naming the alias); `fresh` starts it empty instead (`release stage --recreate`). Marked
    complete by its last write; until then every command treats it as incomplete. `say` gets one
    line on what the release starts from (the live one's points, or nothing, and why).
    """
    _check_alias(store.collection)
    state = releases(store)
    name = new_name(state.alias, now)
    target = store.collection_store(name)
    target.ensure_collection(embedder.model_name, embedder.dimension)
    checkpoint("stage-created")
    _mark(store, name, **{META_STAGING: _now()})
    seeded = _seed(store, state.live, name, embedder.model_name, fresh)
    if say:
        say(seeded)
    checkpoint("stage-seeded")
    try:
        summary = index(target)
        checkpoint("stage-synced")
        _mark(store, name, **{META_COMPLETE: _now(), META_POINTS: target.count()})
    except BaseException as exc:
        gone = isinstance(exc, Exception) and _gone(store, name)
        if not gone:
            _drop(store, name)  # nothing half-built is left behind
        if isinstance(exc, (AnotherBook, LargeDeletion)):
            raise exc.named(state.alias) from None
        if gone:
            live = f"readers stay on {state.live}" if state.live else "nothing is published"
            raise ConfigError(
                f"The release {name!r} was deleted while it was being staged (a `release "
                f"discard --incomplete` run meanwhile?): {live}. Run `textbook-chat release "
                "stage` again, and `discard --incomplete` only when no stage is running.") \
                from None
        raise
    checkpoint("stage-complete")
    return name, summary


def _seed(store, live: str | None, name: str, model: str, fresh: bool) -> str:
    """Copy the live release's points into `name` when they are of `model`; what was done, in a
    line for the author (a release started empty embeds every chunk: the line says why)."""
    if live is None:
        return "No release is live yet: this one starts empty (every chunk is embedded)."
    if fresh:
        return f"--recreate: this release starts empty; readers stay on {live} until the switch."
    built = store.collection_store(live).collection_meta().get(META_MODEL)
    if built != model:
        return (f"The live release {live} was built with {built!r}, not {model!r}: this one "
                "starts empty (every chunk is embedded with the new model).")
    copied = _copy_points(store, live, name)
    return (f"Copied the live release {live} ({copied} points): only the text that changed is "
            "embedded.")


def _gone(store, name: str) -> bool | None:
    """Whether the collection `name` no longer exists (None: the server cannot say)."""
    try:
        return name not in _server(store).collection_names()
    except Exception:  # noqa: BLE001 (the original failure is what to report)
        return None


@dataclass(frozen=True)
class Switched:
    before: str | None  # the collection readers saw before
    dropped: list[str]  # releases deleted by pruning
    gap_ms: float | None = None  # first switch from a plain collection: how long no index was live


def switch(store, name: str, keep: int = 3) -> Switched:
    """Point the alias at the complete release `name` in one step, recording the collection
    readers were on; then prune to `keep` releases up to it (never the one readers were on)."""
    state = releases(store)
    if name not in state.names:
        raise ConfigError(f"No staged release {name!r} for {state.alias!r}: run "
                          "`textbook-chat release stage` first (it prints the name).")
    _check_switchable(store, state, name)
    if name == state.live:  # e.g. run again after a switch stopped before pruning
        if not state.release(name).was_live:  # stopped between the alias and its mark
            _mark(store, name, **{META_LIVE: _now()})
        return Switched(name, _prune(store, state, keep))
    before = state.live or state.release(name).previous  # a re-run after a stopped first switch
    _mark(store, name, **{META_PREVIOUS: before or ""})  # "was live" only once readers see it
    checkpoint("switch-recorded")
    gap = None
    target = store.collection_store(name)
    if state.legacy:  # a collection cannot share its name with an alias: two requests
        start = time.perf_counter()
        _drop(store, state.alias)
        checkpoint("switch-legacy-deleted")
        target.point_alias(state.alias, drop_first=False)
        gap = (time.perf_counter() - start) * 1000.0
    else:
        target.point_alias(state.alias, drop_first=bool(state.live))
    _mark(store, name, **{META_LIVE: _now()})
    checkpoint("switch-aliased")
    return Switched(before, _prune(store, releases(store), keep), gap)


def _prune(store, state: Releases, keep: int) -> list[str]:
    dropped = to_prune(state, keep)
    for n, old in enumerate(dropped, 1):
        _drop(store, old)
        checkpoint(f"switch-pruned-{n}")
    return dropped


def _check_switchable(store, state: Releases, name: str) -> None:
    release = state.release(name)
    live = f"readers stay on {state.live}" if state.live else "nothing is published"
    if release.state == "incomplete":
        raise ConfigError(
            f"The release {name!r} is incomplete: the stage that made it did not finish (it "
            f"was stopped or failed), so {live}. Drop it with `textbook-chat release discard "
            f"--incomplete` and stage again.")
    count = store.collection_store(name).count()
    if not count:
        raise ConfigError(f"The staged release {name!r} is empty: refusing to publish it.")
    if release.points is not None and count != release.points:
        raise ConfigError(f"The release {name!r} holds {count} points, but {release.points} "
                          f"when its stage finished: something wrote to it since; {live}. "
                          "Stage again.")


def to_prune(state: Releases, keep: int) -> list[str]:
    """Which releases a switch deletes: every incomplete release older than the live one, and
    the oldest others beyond `keep` (the live one included). Never the live release, never the
    one readers were on before it; releases that were live are kept before never-live ones."""
    if state.live is None or state.legacy:
        return []
    protected = {state.live, state.previous()} & set(state.names)
    older = [n for n in state.names if n < state.live and n not in protected]
    dead = [n for n in older if not state.release(n).usable]
    rest = [n for n in older if n not in dead]
    room = max(0, keep - len(protected))
    rank = sorted(rest, key=lambda n: (state.release(n).was_live
                                       or state.release(n).state == "unmarked", n), reverse=True)
    kept = set(rank[:room])
    return sorted(dead + [n for n in rest if n not in kept])


def rollback(store) -> tuple[str, str]:
    """Point the alias back at the release readers were on before; returns (from, to)."""
    state = releases(store)
    target = state.previous()
    if not state.live or state.legacy or target is None:
        was = state.release(state.live).previous if state.live and not state.legacy else None
        why = ("readers were on the plain collection made by `index` before, which the first "
               "switch replaced" if was == state.alias else
               f"readers were on {was!r} before, which is no longer kept" if was else
               "no earlier release was live")
        hint = (f" Nothing is live: run `textbook-chat release switch {state.interrupted()}` "
                "to finish the switch that was stopped." if state.interrupted() else "")
        raise ConfigError(f"No earlier release of {state.alias!r} to roll back to: {why} "
                          f"(releases: {', '.join(state.names) or 'none'}).{hint}")
    switch_to(store, target)
    return state.live, target


def switch_to(store, name: str) -> None:
    _server(store).collection_store(name).point_alias(store.collection, drop_first=True)


def discard(store, name: str) -> bool:
    """Drop a staged release that was never published (never the live one)."""
    state = releases(store)
    if name == state.live:
        raise ConfigError(f"{name!r} is what readers see now: roll back before discarding it.")
    if name not in state.names:
        return False
    _drop(store, name)
    return True


def discard_incomplete(store) -> list[str]:
    """Drop every incomplete release (stages that were stopped); returns their names. Run it
    when no stage of this alias is running (the workflow runs one at a time per book)."""
    state = releases(store)
    dropped = [n for n in state.names if not state.release(n).usable and n != state.live]
    for name in dropped:
        _drop(store, name)
    return dropped


def describe(state: Releases) -> Sequence[str]:
    """`release status`: what readers see, then each release and what it is."""
    if state.live is None:
        pending = state.interrupted()
        head = f"{state.alias} -> nothing" + (
            f": readers see no index. A switch to {pending} was stopped half-way; run "
            f"`textbook-chat release switch {pending}` to finish it." if pending else "")
    else:
        head = f"{state.alias} -> {state.live}" + (
            " (a plain collection, not yet a release)" if state.legacy else "")
    lines = [head]
    previous = state.previous()
    for name in state.names:
        r = state.release(name)
        what = {"complete": f"complete, {r.points} points" if r.points is not None else "complete",
                "incomplete": "INCOMPLETE: its stage did not finish; never published "
                              "(`release discard --incomplete` drops it)",
                "unmarked": "staged by an older textbook-chat"}[r.state]
        role = ("live" if name == state.live else "readers' previous: `rollback` returns here"
                if name == previous else "was live" if r.was_live else
                "never live" if r.state != "incomplete" else "")
        lines.append(f"  {name}  {what}{f'; {role}' if role else ''}")
    return lines


def _check_alias(alias: str) -> None:
    if SEP in alias or not re.fullmatch(r"[A-Za-z0-9_.-]{1,200}", alias):
        raise ConfigError(f"QDRANT_COLLECTION={alias!r}: use letters, digits, '.', '_' and single "
                          "'-' (a release is named <collection>--<time>).")


def _copy_points(store, source: str, dest: str) -> int:
    """Every point of `source` into `dest` with its vectors and payload (no re-embedding)."""
    src, dst = _server(store).collection_store(source), store.collection_store(dest)
    copied, offset, batches = 0, None, 0
    while True:
        points, offset = src.page(COPY_BATCH, offset, vectors=True)
        if points:
            dst.put(points)
            copied += len(points)
            batches += 1
            checkpoint(f"stage-copied-{batches}")
        if offset is None:
            return copied
