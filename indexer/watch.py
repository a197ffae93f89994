"""`textbook-chat serve --watch DOCS` (run by textbook_chat_cli/api.py): the API syncs the book
into the index it serves from, at start and again whenever a page (or the site config) changes,
so an author can edit a page and ask about it without stopping anything.

Why in the server: local-mode Qdrant allows one process per index folder, so a separate
`textbook-chat index` cannot write while `serve` holds it. Here the server's own open store is
synced by a background thread; a lock keeps its calls and the readers' searches apart.
"""

from __future__ import annotations

import inspect
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

POLL_SECONDS = 1.0


def fingerprint(docs_dir: Path, *also: Path | None) -> tuple:
    """What a sync depends on that an author edits: every .md/.mdx (partials too), and the
    site's config and manifest (`docusaurus start` rewrites it when a page moves)."""
    files = [p for p in docs_dir.rglob("*") if p.suffix.lower() in (".md", ".mdx")]
    files += [path for path in also if path is not None and path.is_file()]
    out = []
    for path in sorted(files):
        try:
            st = path.stat()
        except OSError:  # deleted while we looked
            continue
        out.append((path.as_posix(), st.st_mtime_ns, st.st_size))
    return tuple(out)


class LockedStore:
    """A store whose every call runs under one lock (generators are read inside it), so a
    re-sync thread and the request threads never use local-mode Qdrant at the same time."""

    def __init__(self, store):
        self._store = store
        self._lock = threading.RLock()

    def __getattr__(self, name: str):
        attr = getattr(self._store, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            with self._lock:
                result = attr(*args, **kwargs)
                return iter(list(result)) if inspect.isgenerator(result) else result
        return call


class Watcher(threading.Thread):
    """Polls the docs folder; after a change that has settled, runs `sync()` once."""

    def __init__(self, docs_dir: Path, sync: Callable[[], str], files: tuple = (),
                 poll: float = POLL_SECONDS, say: Callable[[str], None] | None = None):
        super().__init__(name="textbook-chat-watch", daemon=True)
        self.docs_dir, self.files, self.poll, self.sync = docs_dir, tuple(files), poll, sync
        self.say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self.seen = fingerprint(docs_dir, *self.files)
        self.stopped = threading.Event()
        self.syncs = 0

    def run(self) -> None:
        while not self.stopped.wait(self.poll):
            now = fingerprint(self.docs_dir, *self.files)
            if now == self.seen:
                continue
            time.sleep(min(self.poll, 0.3))  # an editor writes in steps: let it finish
            self.seen = fingerprint(self.docs_dir, *self.files)
            try:
                self.say(f"textbook-chat serve: {self.sync()}")
            except Exception as exc:  # noqa: BLE001 (the server keeps serving the old index)
                self.say(f"textbook-chat serve: re-sync failed, still serving the previous "
                         f"index: {exc}")
            self.syncs += 1

    def stop(self) -> None:
        self.stopped.set()

