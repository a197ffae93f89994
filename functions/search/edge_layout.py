"""Where the embedded engine keeps a collection in QDRANT_PATH, read without the engine (light:
`ask` and the `Using index` line check it before loading anything): `edge/<collection>/` the
shard, `edge/<collection>.json` its metadata (functions.search.edge_store writes both)."""

from __future__ import annotations

import json
from pathlib import Path


def has_index(path: str | Path, collection: str) -> bool:
    """Whether QDRANT_PATH holds the collection in any form (without opening it)."""
    path = Path(path)
    return (path / "edge" / collection).exists() or (path / "edge" / f"{collection}.json").exists() \
        or (path / "collection" / collection / "storage.sqlite").exists()


def stored_meta(path: str | Path, collection: str) -> dict | None:
    """A collection's metadata read from its file, without opening (or locking) the folder;
    None when there is none or it cannot be read."""
    try:
        meta = json.loads((Path(path) / "edge" / f"{collection}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None
