"""The embedded default index: Qdrant's in-process engine (qdrant-edge) in the QDRANT_PATH folder.

One engine shard per collection in `QDRANT_PATH/edge/<collection>/`, its metadata (model,
dimension, schema, engine, last sync) beside it in `<collection>.json`, written whole or not at
all. One process at a time holds the folder (a lock file). The query is functions.search.query's, the
same request a Qdrant server executes, translated here to the engine's objects.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import qdrant_edge as qe

from functions.errors import StoreUnavailableError
from functions.search import edge_files
from functions.search.contract import (
    DENSE_VECTOR,
    KEYWORD_INDEXES,
    META_BOOK,
    META_DIMENSION,
    META_EDITIONS,
    META_MODEL,
    META_SCHEMA,
    META_SITE_URL,
    META_SYNCED_AT,
    SCHEMA_VERSION,
    SPARSE_VECTOR,
    SYNC_FIELDS,
    Editions,
    unpack_block_vectors,
)
from functions.search.edge_layout import has_index, stored_meta  # noqa: F401 (re-exported)
from functions.search.qdrant_access import collection_missing, same_model, unusable_path
from functions.search.query import query_body
from functions.search.ranking import rank
from functions.search.types import SearchHit, SparseVec
from functions.settings import Settings

FORMAT = 1  # of the folder: bump when the layout or the shard's configuration changes
META_FORMAT = "format"
META_ENGINE = "engine"
META_FILES = "files"  # every shard file's size at the last sync: a file cut short is named
LOCK_FILE = ".textbook-chat.lock"
RRF_K = 2  # Qdrant's default for {"fusion": "rrf"} (server and qdrant-client alike)
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
REINDEX = "run `textbook-chat index DOCS_DIR` again to rebuild it"
RECREATE = "run `textbook-chat index DOCS_DIR --recreate` to rebuild it from the docs"


class Unreadable(StoreUnavailableError):
    """The collection's files are half-written, damaged or of an older format: `index` rebuilds
    them (the docs are the source), a reader is told to."""

    def __init__(self, message: str = "", *, detail: str | None = None, fix: str = REINDEX):
        super().__init__(message, detail=detail)
        self.fix = fix  # the part of the message `index` replaces when it rebuilds


def engine_version() -> str:
    try:
        return "qdrant-edge-py " + version("qdrant-edge-py")
    except PackageNotFoundError:  # pragma: no cover (a vendored copy)
        return "qdrant-edge-py"


class EdgeFolder:
    """QDRANT_PATH held by this process: the lock, and the shards opened so far."""

    def __init__(self, path: Path):
        self.path = path
        self.shards: dict[str, object] = {}
        self._lock_fd = _lock(path)

    def shard_dir(self, name: str) -> Path:
        if not _SAFE_NAME.match(name):
            raise StoreUnavailableError(
                f"The collection name {name!r} cannot name a folder: set QDRANT_COLLECTION to "
                "letters, digits, '.', '_' or '-' (at most 128).")
        return self.path / "edge" / name

    def meta_path(self, name: str) -> Path:
        return self.shard_dir(name).parent / f"{name}.json"

    def legacy_dir(self, name: str) -> Path:
        """Where qdrant-client's local mode (textbook-chat before the engine) kept a collection."""
        return self.path / "collection" / name

    def close(self) -> None:
        for shard in self.shards.values():
            shard.close()
        self.shards.clear()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the file releases its lock
            self._lock_fd = None


def _lock(path: Path) -> int:
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:  # read-only, a file in the way, no such drive: a setup error
        raise unusable_path(path, exc) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise StoreUnavailableError(
            f"The local index at {path} is in use by another textbook-chat process, e.g. "
            "`textbook-chat serve`. To edit pages while the API runs, serve with "
            "`textbook-chat serve --watch DOCS_DIR`: it re-indexes every saved change itself. "
            "Otherwise stop `serve` first, or set QDRANT_PATH to another folder."
        ) from None
    return fd


def _filter(body: dict | None):
    if not body:
        return None
    return qe.Filter(must=[
        qe.FieldCondition(key=c["key"], match=qe.MatchAny(list(c["match"]["any"]))
                          if "any" in c["match"] else qe.MatchValue(c["match"]["value"]))
        for c in body["must"]
    ])


def _scoring(query, using: str | None):
    if isinstance(query, dict) and query.get("fusion") == "rrf":
        return qe.Fusion.Rrf(k=RRF_K)
    if isinstance(query, dict):
        return qe.Query.Nearest(qe.SparseVector(query["indices"], query["values"]), using=using)
    return qe.Query.Nearest(list(query), using=using)


def edge_request(body: dict):
    """functions.search.query's Query API request as the engine's QueryRequest."""
    prefetches = [qe.Prefetch(limit=p["limit"], query=_scoring(p["query"], p["using"]),
                              filter=_filter(p.get("filter"))) for p in body.get("prefetch", ())]
    return qe.QueryRequest(
        limit=body["limit"], query=_scoring(body["query"], body.get("using")),
        prefetches=prefetches or None, with_vector=body["with_vector"],
        with_payload=body["with_payload"], filter=_filter(body.get("filter")))


def _doc_filter(doc_paths: Sequence[str] | None):
    return _filter({"must": [{"key": "doc_path", "match": {"any": list(doc_paths)}}]}
                   if doc_paths is not None else None)


class EdgeStore:
    """One collection of the embedded engine; the same methods as functions.search.store.QdrantStore."""

    def __init__(self, folder: EdgeFolder, collection: str, owner: bool = True):
        self.client = folder  # what collection_store() shares
        self.folder = folder
        self.collection = collection
        self.owner = owner
        self.notice: str | None = None  # what ensure_collection repaired, for the indexer to say
        self.written = False  # since open: a sync that changed nothing need not flush
        # SYNC_FIELDS of every point as verify() read them, for the sync's first scroll (the
        # payloads read once per sync, not twice); dropped at any write
        self._scanned: dict[int, dict] | None = None
        self._verified: dict[str, tuple[int, int]] | None = None  # the files verify() last read

    @classmethod
    def open(cls, settings: Settings) -> EdgeStore:
        return cls(EdgeFolder(Path(settings.qdrant_path)), settings.collection)

    def collection_store(self, name: str) -> EdgeStore:
        """Another collection in the same folder (e.g. the eval's naive baseline)."""
        return EdgeStore(self.folder, name, owner=False)

    def close(self) -> None:
        if self.owner:
            self.folder.close()

    # --- collection -------------------------------------------------------------------------
    @property
    def _dir(self) -> Path:
        return self.folder.shard_dir(self.collection)

    def _read_meta(self) -> dict | None:
        try:
            return json.loads(self.folder.meta_path(self.collection).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {}  # unreadable or cut short: treated as half-written

    def _write_meta(self, meta: dict) -> None:
        path = self.folder.meta_path(self.collection)
        tmp = path.with_name(path.name + ".tmp")
        try:
            tmp.write_text(json.dumps(meta, indent=1), encoding="utf-8")
            os.replace(tmp, path)  # whole or not at all
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            edge_files.require_room(self.folder.path)  # a full disk: said as such
            raise StoreUnavailableError(f"{self._where} cannot be written: {path} "
                                        f"({exc.strerror or exc}).") from None

    def exists(self) -> bool:
        return self._read_meta() is not None or self._dir.exists()

    def _shard(self):
        """The open shard; a clear StoreUnavailableError for every way the folder can be wrong."""
        shard = self.folder.shards.get(self.collection)
        if shard is not None:
            return shard
        meta = self._read_meta()
        problem = self._problem(meta)
        if problem:
            raise problem
        if edge_files.damaged_file(self._dir, meta.get(META_FILES)):
            raise self._damaged()
        edge_files.require_room(self.folder.path)  # loading writes its log: SIGBUS on a full disk
        try:
            shard = qe.EdgeShard.load(str(self._dir))
        except Exception as exc:  # noqa: BLE001 (the engine raises plain Exception)
            raise Unreadable(
                f"{self._where} cannot be opened by this textbook-chat's engine "
                f"({engine_version()}; it was written by {meta.get(META_ENGINE)}): it is damaged "
                f"or from another version; {REINDEX}.", detail=str(exc)) from None
        self.folder.shards[self.collection] = shard
        return shard

    @property
    def _where(self) -> str:
        return f"The local index at {self.folder.path} (collection {self.collection!r})"

    def _problem(self, meta: dict | None) -> StoreUnavailableError | None:
        """Why the collection's files cannot be opened as they are (None: try the engine)."""
        if meta is None and not self._dir.exists():
            if (self.folder.legacy_dir(self.collection) / "storage.sqlite").exists():
                return StoreUnavailableError(
                    f"{self._where} was written by an older textbook-chat; {REINDEX} (its "
                    "vectors are kept: nothing is embedded again).")
            return collection_missing(self.collection)
        if meta and int(meta.get(META_FORMAT, 0)) > FORMAT:
            return StoreUnavailableError(  # not Unreadable: the indexer must not drop it
                f"{self._where} was written by a newer textbook-chat ({meta.get(META_ENGINE)}); "
                "upgrade textbook-chat, or run `textbook-chat index DOCS_DIR --recreate` to "
                "rebuild it with this one.")
        if not meta or int(meta.get(META_FORMAT, 0)) < FORMAT:
            return Unreadable(
                f"{self._where} is half-written (a run was stopped while creating it) or from "
                f"an older textbook-chat; {REINDEX}.")
        return None

    def collection_meta(self) -> dict:
        self._shard()
        meta = self._read_meta() or {}
        return {k: v for k, v in meta.items() if k not in (META_FORMAT, META_ENGINE, META_FILES)}

    def _engine(self, call, *args):
        """One engine call; what it raises becomes one message naming the damaged file (or the
        full disk) and the fix, instead of the engine's own words."""
        try:
            return call(*args)
        except Exception as exc:  # noqa: BLE001 (the engine raises plain Exception)
            raise self._failure(exc) from None

    def _failure(self, exc: BaseException) -> StoreUnavailableError:
        text = str(exc)
        if "No space left" in text or "os error 28" in text:
            return edge_files.DiskFull(
                f"The disk holding the local index at {self.folder.path} is full: free some "
                "space on it (or set QDRANT_PATH to a folder on another disk), then "
                f"{RECREATE}.", detail=text)
        return self._damaged(detail=text)

    def _damaged(self, detail: str | None = None, fix: str = RECREATE) -> Unreadable:
        bad = edge_files.damaged_file(self._dir, (self._read_meta() or {}).get(META_FILES))
        what = (f"its file edge/{self.collection}/{bad} was cut short or removed since the last "
                "`index`" if bad else f"its files in edge/{self.collection}/ cannot be read")
        return Unreadable(f"{self._where} is damaged: {what}; {fix}.", detail=detail, fix=fix)

    def verify(self) -> None:
        """Read every part of the collection once (its files' sizes, every vector in a scan,
        every payload): raises Unreadable naming what is damaged. Run before a sync trusts what
        the collection holds (its scan of the payloads is the sync's first read of them), and
        by GET /health (index_status: again only when a file changed since)."""
        shard = self._shard()
        meta = self._read_meta() or {}
        if edge_files.damaged_file(self._dir, meta.get(META_FILES)):
            raise self._damaged()
        dimension = int(meta.get(META_DIMENSION) or 0)
        if dimension:
            probe = [1.0] + [0.0] * (dimension - 1)
            self._engine(shard.query, qe.QueryRequest(
                limit=1, query=qe.Query.Nearest(probe, using=DENSE_VECTOR),
                with_vector=False, with_payload=False))
        self._scanned = dict(self._scroll(SYNC_FIELDS))

    def ensure_collection(self, model: str, dimension: int, recreate: bool = False) -> bool:
        """Create the collection for this model; refuse another model unless recreate.
        A half-written or unreadable collection is rebuilt (its docs are indexed again), one
        written by textbook-chat before the engine is moved over with its vectors (self.notice
        says which). Returns True when a new (empty) collection was created."""
        if not recreate and not self._dir.exists() and self._read_meta() is None:
            moved = self._move_legacy()
            if moved is not None:
                self.notice = (f"Moved the index at {self.folder.path} (collection "
                               f"{self.collection!r}, {moved} chunks, vectors kept) to the "
                               "embedded engine; the old copy in its collection/ folder can be "
                               "deleted.")
        if self.exists() and not recreate:
            try:
                meta = self.collection_meta()
                self.verify()
            except Unreadable as exc:
                self.notice = str(exc).replace(exc.fix, "rebuilding it now from the docs")
                recreate = True
            else:
                if same_model(self.collection, meta, model, dimension, recreate=False):
                    return False
        self._create(model, dimension)
        return True

    def _drop(self) -> None:
        self._scanned = self._verified = None
        shard = self.folder.shards.pop(self.collection, None)
        if shard is not None:
            shard.close()
        self.folder.meta_path(self.collection).unlink(missing_ok=True)  # first: no meta = broken
        shutil.rmtree(self._dir, ignore_errors=True)

    def _create(self, model: str, dimension: int) -> None:
        edge_files.require_room(self.folder.path)
        self._drop()
        self._dir.parent.mkdir(parents=True, exist_ok=True)
        config = qe.EdgeConfig(
            vectors={DENSE_VECTOR: qe.EdgeVectorParams(size=dimension,
                                                        distance=qe.Distance.Cosine)},
            sparse_vectors={SPARSE_VECTOR: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            # Payloads in memory: a sync reads every point's hashes (5x faster than on disk, a
            # few MB per thousand chunks).
            payload_memory=qe.Memory.Cached,
        )
        shard = qe.EdgeShard.create(str(self._dir), config)
        self.written = True
        for field in KEYWORD_INDEXES:
            shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
        shard.flush()
        self.folder.shards[self.collection] = shard
        # Written last: a folder without it is a creation that was stopped half-way.
        self._write_meta({META_MODEL: model, META_DIMENSION: dimension,
                          META_SCHEMA: SCHEMA_VERSION, META_FORMAT: FORMAT,
                          META_ENGINE: engine_version()})

    def _move_legacy(self) -> int | None:
        """Copy a collection of qdrant-client's local mode into the engine (payloads and vectors
        as they are); None when there is none."""
        if not (self.folder.legacy_dir(self.collection) / "storage.sqlite").exists():
            return None
        from qdrant_client import QdrantClient

        old = QdrantClient(path=str(self.folder.path))
        try:
            meta = dict(old.get_collection(self.collection).config.metadata or {})
            self._create(str(meta.get(META_MODEL)), int(meta.get(META_DIMENSION) or 0))
            moved, offset = 0, None
            while True:
                points, offset = old.scroll(self.collection, limit=1024, offset=offset,
                                            with_payload=True, with_vectors=True)
                sparse = [p.vector.get(SPARSE_VECTOR) for p in points]
                self.upsert([(int(p.id), dict(p.payload or {}), list(p.vector[DENSE_VECTOR]),
                              (list(s.indices), list(s.values)) if s else ([], []))
                             for p, s in zip(points, sparse, strict=True)])
                moved += len(points)
                if offset is None:
                    break
        finally:
            old.close()
        if meta.get(META_SYNCED_AT):
            self.mark_synced(str(meta[META_SYNCED_AT]))
        self._shard().flush()
        return moved

    # --- sync -------------------------------------------------------------------------------
    def scroll_payloads(
        self, fields: Sequence[str], doc_paths: Sequence[str] | None = None
    ) -> Iterator[tuple[int, dict]]:
        """Every point's id and the given payload fields (only of doc_paths, when given)."""
        scanned, self._scanned = self._scanned, None  # verify's scan serves one read, unchanged
        if scanned is not None and doc_paths is None and set(fields) <= set(SYNC_FIELDS):
            for pid, payload in scanned.items():
                yield pid, {k: payload[k] for k in fields if k in payload}
            return
        yield from self._scroll(fields, doc_paths)

    def _scroll(self, fields: Sequence[str], doc_paths: Sequence[str] | None = None
                ) -> Iterator[tuple[int, dict]]:
        shard, flt, offset = self._shard(), _doc_filter(doc_paths), None
        while True:
            records, offset = self._engine(shard.scroll, qe.ScrollRequest(
                offset=offset, limit=4096, filter=flt, with_payload=list(fields),
                with_vector=False))
            for r in records:
                yield int(r.id), dict(r.payload or {})
            if offset is None:
                return

    def dense_vectors(self, point_ids: Iterable[int]) -> dict[int, list[float]]:
        ids = list(point_ids)
        shard = self._shard()
        out: dict[int, list[float]] = {}
        for start in range(0, len(ids), 1024):
            for r in self._engine(shard.retrieve, ids[start : start + 1024], False,
                                  [DENSE_VECTOR]):
                out[int(r.id)] = list(r.vector[DENSE_VECTOR])
        return out

    def block_vectors(self, point_ids: Iterable[int]) -> dict[str, tuple[float, ...]]:
        """The blocks these points store embedded (BLOCK_VECTORS), by block key."""
        ids = list(point_ids)
        shard = self._shard()
        out: dict[str, tuple[float, ...]] = {}
        for start in range(0, len(ids), 1024):
            for r in self._engine(shard.retrieve, ids[start : start + 1024], True, False):
                out.update(unpack_block_vectors(dict(r.payload or {})))
        return out

    def upsert(self, items: Sequence[tuple[int, dict, list[float], SparseVec]]) -> None:
        """items: (point id, payload, dense vector, sparse vector)."""
        shard = self._shard()
        edge_files.require_room(self.folder.path, edge_files.room_needed(len(items)))
        self.written = self.written or bool(items)
        self._scanned = None
        for start in range(0, len(items), 512):
            self._engine(shard.update, qe.UpdateOperation.upsert_points([
                qe.Point(pid, {DENSE_VECTOR: list(dense),
                               SPARSE_VECTOR: qe.SparseVector(list(sp[0]), list(sp[1]))}, payload)
                for pid, payload, dense, sp in items[start : start + 512]
            ]))

    def delete(self, point_ids: Sequence[int]) -> None:
        shard = self._shard()
        if point_ids:
            edge_files.require_room(self.folder.path)
        self.written = self.written or bool(point_ids)
        self._scanned = None
        for start in range(0, len(point_ids), 4096):
            self._engine(shard.update,
                         qe.UpdateOperation.delete_points(list(point_ids[start : start + 4096])))

    def count(self) -> int:
        return self._engine(self._shard().count, qe.CountRequest(exact=True))

    def mark_synced(self, when: str, editions: Editions | None = None,
                    site_url: str | None = None, book: dict | None = None) -> None:
        """Record the time of the last finished sync (GET /health shows it) and the versions
        and locales it indexed; the engine's writes are made durable first."""
        if self.written:
            self._engine(self._shard().flush)
        meta = {**(self._read_meta() or {}), META_FILES: edge_files.file_sizes(self._dir)}
        extra = {META_EDITIONS: editions.as_meta()} if editions is not None else {}
        if site_url:  # the site's address: MCP's tools give absolute URLs with it
            extra[META_SITE_URL] = site_url
        if book:  # which book (its title and docs folder): every command names it
            extra[META_BOOK] = book
        self._write_meta({**meta, META_SYNCED_AT: when, **extra})

    def index_status(self) -> dict:
        """The collection's metadata plus its point count (GET /health); raises Unreadable
        when a part of it is damaged. Every part is read (verify) the first time and again
        only when a file's size or time changed since, so a reader's health check stays cheap
        however large the book."""
        meta = self.collection_meta()
        files = edge_files.file_stamps(self._dir)
        if files != self._verified:  # read whole the first time and after any change
            self.verify()
            self._scanned = None  # no sync follows
            self._verified = files
        return {**meta, "points": self.count()}

    # --- query ------------------------------------------------------------------------------
    def search(self, dense: Sequence[float], sparse: SparseVec, limit: int,
               filters: dict[str, str] | None = None, mode: str = "hybrid") -> list[SearchHit]:
        shard = self._shard()
        points = self._engine(shard.query, edge_request(query_body(dense, sparse, limit,
                                                                    filters, mode)))
        return rank(dense, sparse, mode, (
            (p.id, p.score, (p.vector or {}).get(DENSE_VECTOR),
             getattr((p.vector or {}).get(SPARSE_VECTOR), "indices", ()),
             dict(p.payload or {}))
            for p in points), limit)
