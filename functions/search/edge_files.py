"""The embedded index's files on disk: room to write them, and which one was damaged.

The engine maps its files into memory and preallocates them in 32 MB pieces: on a full disk a
write into such a piece kills the process with SIGBUS ("Bus error"), which nothing can catch.
So every write is preceded by a look at the free space (`require_room`), and a sync records the
size of every file it left (`file_sizes`), so a file cut short later is named (`damaged_file`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from functions.errors import StoreUnavailableError

MB = 1024 * 1024
MIN_FREE = 64 * MB  # two of the engine's 32 MB pieces (its write-ahead log and a storage file)
PER_POINT = 16 * 1024  # a point's vectors, payload and index entries, generously


class DiskFull(StoreUnavailableError):
    """Too little free space to write the embedded index safely."""


def free_bytes(path: Path) -> int:
    """Free space for an unprivileged writer on the disk that holds path (or would)."""
    for folder in (path, *path.parents):
        if folder.exists():
            st = os.statvfs(folder)
            return st.f_bavail * st.f_frsize
    return 0


def room_needed(points: int = 0) -> int:
    return MIN_FREE + points * PER_POINT


def require_room(path: Path, need: int = MIN_FREE) -> None:
    """Refuse, before the engine writes, when the disk holding path has less than need free."""
    free = free_bytes(path)
    if free < need:
        raise DiskFull(
            f"The disk holding the local index at {path} is full: {free / MB:.0f} MB free, and "
            f"writing the index needs at least {need / MB:.0f} MB (its engine preallocates 32 MB "
            "files). Free some space on that disk, or set QDRANT_PATH to a folder on another "
            "one, then run the command again; the index was not changed.")


def file_sizes(shard_dir: Path) -> dict[str, int]:
    """Every file of a shard and its size, but for those the engine rewrites or removes on
    every open (its write-ahead log, journals)."""
    return {rel: st.st_size for rel, st in _kept_files(shard_dir)}


def file_stamps(shard_dir: Path) -> dict[str, tuple[int, int]]:
    """The same files' sizes and modification times: what changed since a check (GET /health
    reads the whole index again only then)."""
    return {rel: (st.st_size, st.st_mtime_ns) for rel, st in _kept_files(shard_dir)}


def _kept_files(shard_dir: Path) -> Iterator[tuple[str, os.stat_result]]:
    for root, _dirs, files in os.walk(shard_dir):
        rel_root = Path(root).relative_to(shard_dir)
        if rel_root.parts[:1] == ("wal",):
            continue
        for name in files:
            if "journal" in name:  # folded into its file and removed when the shard loads
                continue
            try:
                yield (rel_root / name).as_posix(), (Path(root) / name).stat()
            except OSError:  # removed while we looked
                continue


def damaged_file(shard_dir: Path, recorded: Mapping[str, int] | None) -> str | None:
    """The first file the last sync recorded that is now missing or shorter (None: none is)."""
    for rel, size in sorted((recorded or {}).items()):
        try:
            now = (shard_dir / rel).stat().st_size
        except OSError:
            return rel
        if now < int(size):
            return rel
    return None
