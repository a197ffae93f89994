"""The index: open_index picks the embedded engine (QDRANT_PATH, functions.search.edge_store) or a
Qdrant server (QDRANT_URL) through the one REST client, functions.search.qdrant_http; QdrantStore
is what the index side (sync, release, eval) does with a server's collection."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from functions.errors import StoreUnavailableError
from functions.search.contract import (
    BLOCK_VECTORS,
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
    Editions,
    unpack_block_vectors,
)
from functions.search.qdrant_access import INDEX, QUERY, same_model
from functions.search.types import SearchHit, SparseVec
from functions.settings import Settings

if TYPE_CHECKING:
    from functions.search.qdrant_http import QdrantHttp

WAIT = {"wait": "true"}  # a write returns once it is applied, as the sync's next read needs


class QdrantStore:
    """One collection of a Qdrant server, through its client (functions.search.qdrant_http):
    created with the model it was built for, synced point by point; the server's aliases and
    collections for a release (indexer.release)."""

    def __init__(self, http: QdrantHttp):
        self.http = http
        self.collection = http.collection
        self.notice: str | None = None  # (the embedded store's repairs; a server has none)

    @classmethod
    def open(cls, settings: Settings):
        """The store settings name, to index or evaluate (see open_index)."""
        return open_index(settings)

    def collection_store(self, name: str) -> QdrantStore:
        """Another collection of the same server (a release, the eval's naive baseline)."""
        return QdrantStore(self.http.for_collection(name))

    def close(self) -> None:
        self.http.close()

    # --- collection -------------------------------------------------------------------------
    def exists(self) -> bool:
        return bool((self.http.call("GET", "/exists") or {}).get("exists"))

    def collection_meta(self) -> dict:
        return self.http.collection_meta()

    def ensure_collection(self, model: str, dimension: int, recreate: bool = False) -> bool:
        """Create the collection for this model; refuse another model unless recreate.
        Returns True when a new (empty) collection was created."""
        if self.exists():
            if same_model(self.collection, self.collection_meta(), model, dimension, recreate) \
                    and not recreate:
                self._index_payload()  # a collection made before an index was added gets it
                return False
            self.drop()
        self.http.call("PUT", "", {
            "vectors": {DENSE_VECTOR: {"size": dimension, "distance": "Cosine"}},
            "sparse_vectors": {SPARSE_VECTOR: {"modifier": "idf"}},
            "metadata": {META_MODEL: model, META_DIMENSION: dimension, META_SCHEMA: SCHEMA_VERSION},
        })
        self._index_payload()
        return True

    def _index_payload(self) -> None:
        """Keyword indexes on the filtered fields (creating an existing one is a no-op)."""
        for field in KEYWORD_INDEXES:
            self.http.call("PUT", "/index", {"field_name": field, "field_schema": "keyword"},
                           params=WAIT)

    def drop(self) -> None:
        """Delete the collection."""
        self.http.call("DELETE")

    def set_meta(self, **meta) -> None:
        """Add to the collection's metadata (keys not given are kept)."""
        self.http.call("PATCH", "", {"metadata": meta})

    # --- sync -------------------------------------------------------------------------------
    def page(self, limit: int, offset=None, *, fields: Sequence[str] | None = None,
             vectors: bool = False, doc_paths: Sequence[str] | None = None):
        """One page of points (Qdrant's JSON: id, payload, vector) from `offset`, with the next
        page's offset (None after the last). fields: the payload's to return (None: all)."""
        body: dict = {"limit": limit, "with_payload": list(fields) if fields is not None else True,
                      "with_vector": vectors}
        if offset is not None:
            body["offset"] = offset
        if doc_paths is not None:
            body["filter"] = {"must": [{"key": "doc_path", "match": {"any": list(doc_paths)}}]}
        result = self.http.call("POST", "/points/scroll", body) or {}
        return result.get("points") or [], result.get("next_page_offset")

    def scroll_payloads(
        self, fields: Sequence[str], doc_paths: Sequence[str] | None = None
    ) -> Iterator[tuple[int, dict]]:
        """Every point's id and the given payload fields (only of doc_paths, when given)."""
        offset = None
        while True:
            points, offset = self.page(2048, offset, fields=fields, doc_paths=doc_paths)
            for p in points:
                yield int(p["id"]), dict(p.get("payload") or {})
            if offset is None:
                return

    def dense_vectors(self, point_ids: Iterable[int]) -> dict[int, list[float]]:
        ids = list(point_ids)
        out: dict[int, list[float]] = {}
        for start in range(0, len(ids), 512):
            points = self.http.call("POST", "/points", {
                "ids": ids[start : start + 512], "with_payload": False,
                "with_vector": [DENSE_VECTOR]}) or []
            for p in points:
                out[int(p["id"])] = list(p["vector"][DENSE_VECTOR])
        return out

    def block_vectors(self, point_ids: Iterable[int]) -> dict[str, tuple[float, ...]]:
        """The blocks these points store embedded (BLOCK_VECTORS), by block key."""
        ids = list(point_ids)
        out: dict[str, tuple[float, ...]] = {}
        for start in range(0, len(ids), 512):
            for p in self.http.call("POST", "/points", {
                    "ids": ids[start : start + 512], "with_payload": [BLOCK_VECTORS],
                    "with_vector": False}) or []:
                out.update(unpack_block_vectors(p.get("payload") or {}))
        return out

    def upsert(self, items: Sequence[tuple[int, dict, list[float], SparseVec]]) -> None:
        """items: (point id, payload, dense vector, sparse vector)."""
        for start in range(0, len(items), 256):
            self.put([{"id": pid, "payload": payload,
                       "vector": {DENSE_VECTOR: list(dense),
                                  SPARSE_VECTOR: {"indices": list(sp[0]), "values": list(sp[1])}}}
                      for pid, payload, dense, sp in items[start : start + 256]])

    def put(self, points: list[dict]) -> None:
        """Write points as Qdrant's JSON has them (id, payload, vector), e.g. another
        collection's page."""
        self.http.call("PUT", "/points", {"points": points}, params=WAIT)

    def delete(self, point_ids: Sequence[int]) -> None:
        for start in range(0, len(point_ids), 1024):
            self.http.call("POST", "/points/delete",
                           {"points": list(point_ids[start : start + 1024])}, params=WAIT)

    def count(self) -> int:
        return int((self.http.call("POST", "/points/count", {"exact": True}) or {})["count"])

    def mark_synced(self, when: str, editions: Editions | None = None,
                    site_url: str | None = None, book: dict | None = None) -> None:
        """Record the time of the last finished sync in the collection (GET /health shows it)
        and the versions and locales it indexed (and the site's address when known)."""
        extra = {META_EDITIONS: editions.as_meta()} if editions is not None else {}
        if site_url:  # the site's address: MCP's tools give absolute URLs with it
            extra[META_SITE_URL] = site_url
        if book:  # which book (its title and docs folder): every command names it
            extra[META_BOOK] = book
        try:
            self.set_meta(**{META_SYNCED_AT: when, **extra})
        except StoreUnavailableError:  # an older server without metadata updates: not fatal
            pass

    def index_status(self) -> dict:
        """The collection's metadata plus its point count (GET /health)."""
        return {**self.collection_meta(), "points": self.count()}

    # --- the server's collections and aliases (releases) ------------------------------------
    def collection_names(self) -> set[str]:
        result = self.http.call("GET", "/collections", server=True) or {}
        return {c["name"] for c in result.get("collections") or []}

    def aliases(self) -> dict[str, str]:
        """Each alias of the server and the collection it points at."""
        result = self.http.call("GET", "/aliases", server=True) or {}
        return {a["alias_name"]: a["collection_name"] for a in result.get("aliases") or []}

    def point_alias(self, alias: str, *, drop_first: bool) -> None:
        """Point `alias` at this collection in one atomic request (dropping its old target
        first when `drop_first`: an alias already in use)."""
        actions = [{"create_alias": {"collection_name": self.collection, "alias_name": alias}}]
        if drop_first:
            actions.insert(0, {"delete_alias": {"alias_name": alias}})
        self.http.call("POST", "/collections/aliases", {"actions": actions}, server=True)

    # --- query ------------------------------------------------------------------------------
    def search(self, dense: Sequence[float], sparse: SparseVec, limit: int,
               filters: dict[str, str] | None = None, mode: str = "hybrid") -> list[SearchHit]:
        return self.http.search(dense, sparse, limit, filters, mode)


def open_index(settings: Settings, reader: bool = False):
    """The one chooser of the engine: the embedded engine in QDRANT_PATH (an EdgeStore), unless
    QDRANT_URL names a server, reached through the one REST client with its caller's policy
    (functions.search.qdrant_access): a `reader` (the query path: search and health only) gets
    the client itself with QUERY's, the index side a QdrantStore over it with INDEX's."""
    if not settings.qdrant_url:
        from functions.search.edge_store import EdgeStore

        return EdgeStore.open(settings)
    from functions.search.qdrant_http import QdrantHttp

    http = QdrantHttp(settings.qdrant_url, settings.collection, settings.qdrant_api_key,
                      policy=QUERY if reader else INDEX)
    return http if reader else QdrantStore(http)
