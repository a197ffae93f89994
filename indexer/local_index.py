"""The embedded index shared on one machine: one process holds QDRANT_PATH (serve, index), and
`ask` and `eval` still answer from a read-only copy of it.

The engine lets one process open a folder (its write-ahead log is locked, and so is our lock
file), so a reader cannot open it beside `serve`. Instead a reader copies the collection's
files (they are mostly holes: only the written bytes are copied, ~1 MB per hundred chunks) and
opens the copy. Writes are fenced: every sync holds WRITING_LOCK exclusively (`writing`), a
copy holds it shared, so a copy never sees half a sync. `serve` records what it is
(`record_server`), so `index` can name the one command that works while it runs.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from functions.errors import ConfigError
from functions.settings import Settings

WRITING_LOCK = ".textbook-chat.writing"
SERVER_FILE = ".textbook-chat.serve.json"
WAIT_SECONDS = 60.0  # for a sync in progress to finish before copying


def _local(settings: Settings) -> Path | None:
    return None if settings.qdrant_url else Path(settings.qdrant_path)


@contextlib.contextmanager
def writing(settings: Settings) -> Iterator[None]:
    """Held around every write to the embedded index (a no-op for a Qdrant server)."""
    path = _local(settings)
    if path is None:
        yield
        return
    path.mkdir(parents=True, exist_ok=True)
    fd = os.open(path / WRITING_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def held(settings: Settings) -> bool:
    """Whether another process holds the embedded index (serve, index, a running ask)."""
    from functions.search.edge_store import LOCK_FILE  # here: the engine loads with it (~40 ms)

    path = _local(settings)
    if path is None or not (path / LOCK_FILE).exists():
        return False
    fd = os.open(path / LOCK_FILE, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # releases the probe at once
    return False


@contextlib.contextmanager
def readable(settings: Settings) -> Iterator[Settings]:
    """Settings to read the index with: as they are, or, while another process holds it (or a
    `serve` runs that would open it on its next question), those of a private copy taken
    between two syncs (deleted afterwards)."""
    if not held(settings) and running_server(settings) is None:
        yield settings
        return
    path = Path(settings.qdrant_path)
    copy = Path(tempfile.mkdtemp(prefix="textbook-chat-read-"))
    try:
        fd = os.open(path / WRITING_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _wait_shared(fd, path)
            for name in (settings.collection, f"{settings.collection}.json"):
                source = path / "edge" / name
                if source.is_dir():
                    _copy_tree(source, copy / "edge" / name)
                elif source.is_file():
                    (copy / "edge").mkdir(parents=True, exist_ok=True)
                    _copy_sparse(source, copy / "edge" / name)
        except OSError as exc:  # e.g. a full disk under the temporary folder
            raise ConfigError(
                f"Could not copy the local index at {path} to read it beside the running "
                f"`serve` ({exc.strerror or exc}, in {copy.parent}): free some space there (or "
                "set TMPDIR to a folder on another disk), or ask through the running serve.") \
                from None
        finally:
            os.close(fd)
        yield settings.with_(qdrant_path=str(copy))
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def _wait_shared(fd: int, path: Path) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise ConfigError(
                    f"The local index at {path} has been written by another textbook-chat "
                    f"process for over {WAIT_SECONDS:.0f} s (an `index` run?): ask again when "
                    "it has finished.") from None
            time.sleep(0.05)


def _copy_tree(source: Path, dest: Path) -> None:
    for root, _dirs, files in os.walk(source):
        target = dest / Path(root).relative_to(source)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            _copy_sparse(Path(root) / name, target / name)


def _copy_sparse(source: Path, dest: Path) -> None:
    """Copy only the file's data, keeping its holes (the engine preallocates 32 MB files)."""
    with open(source, "rb") as src, open(dest, "wb") as out:
        size = os.fstat(src.fileno()).st_size
        for start, end in _data_ranges(src.fileno(), size):
            src.seek(start)
            out.seek(start)
            while start < end:
                block = src.read(min(end - start, 1 << 20))
                if not block:
                    break
                out.write(block)
                start += len(block)
        out.truncate(size)


def _data_ranges(fd: int, size: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each stretch of data; the whole file where holes cannot be asked for."""
    if not hasattr(os, "SEEK_DATA"):
        yield 0, size
        return
    offset = 0
    while offset < size:
        try:
            start = os.lseek(fd, offset, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # this file system cannot say: copy the rest
                yield offset, size
            return  # ENXIO: only a hole is left
        end = os.lseek(fd, start, os.SEEK_HOLE)
        yield start, end
        offset = end


@dataclass(frozen=True)
class Server:
    """What `serve` recorded about itself in QDRANT_PATH."""

    pid: int
    watch: str | None  # the docs folder `serve --watch` re-indexes (None: plain serve)
    url: str | None = None  # where it answers (http://127.0.0.1:8787): `ask` asks it there
    collection: str | None = None  # the collection it serves


def serve_url(host: str, port: int) -> str:
    """The address a client on this machine reaches a serve bound to host:port at."""
    host = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@contextlib.contextmanager
def record_server(settings: Settings, watch: Path | None, url: str | None = None) -> Iterator[None]:
    """Say, while `serve` runs, which serve holds the embedded index and where it answers
    (removed when it stops)."""
    path = _local(settings)
    if path is None:
        yield
        return
    path.mkdir(parents=True, exist_ok=True)
    record = path / SERVER_FILE
    record.write_text(json.dumps({"pid": os.getpid(),
                                  "watch": str(watch.resolve()) if watch else None,
                                  "url": url, "collection": settings.collection}),
                      encoding="utf-8")
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            if json.loads(record.read_text(encoding="utf-8")).get("pid") == os.getpid():
                record.unlink()


def running_server(settings: Settings) -> Server | None:
    """The `serve` that recorded itself, if that process still runs."""
    path = _local(settings)
    if path is None:
        return None
    try:
        data = json.loads((path / SERVER_FILE).read_text(encoding="utf-8"))
        pid = int(data["pid"])
        os.kill(pid, 0)  # raises when no such process
    except (OSError, TypeError, ValueError, KeyError):
        return None
    return Server(pid, data.get("watch"), data.get("url"), data.get("collection"))
