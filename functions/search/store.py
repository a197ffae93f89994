"""The index: QdrantStore.open picks the embedded engine (QDRANT_PATH, functions.search.edge_store) or a
Qdrant server through the official client (QDRANT_URL; the indexer's sync to a server)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Sequence

from functions.errors import StoreUnavailableError
from functions.search.contract import (
    DENSE_VECTOR,
    KEYWORD_INDEXES,
    META_DIMENSION,
    META_MODEL,
    META_SCHEMA,
    META_SYNCED_AT,
    SCHEMA_VERSION,
    SPARSE_VECTOR,
)
from functions.search.qdrant_access import (
    INDEX,
    collection_missing,
    same_model,
    search_failed,
    unreachable,
)
from functions.search.query import query_body
from functions.search.ranking import rank
from functions.search.types import SearchHit, SparseVec
from functions.settings import Settings


class QdrantStore:
    """One collection of a Qdrant server (or of a qdrant-client given to it): created with the
    model it was built for, synced point by point."""

    def __init__(self, client, collection: str, owner: bool = True):
        self.client = client
        self.collection = collection
        self.owner = owner
        self.notice: str | None = None  # (the embedded store's repairs; a server has none)

    @classmethod
    def open(cls, settings: Settings):
        """The store settings name, to index or evaluate (see open_index)."""
        return open_index(settings)

    def collection_store(self, name: str) -> QdrantStore:
        """Another collection through the same client (e.g. the eval's naive baseline)."""
        return QdrantStore(self.client, name, owner=False)

    def close(self) -> None:
        if self.owner:
            self.client.close()

    # --- collection -------------------------------------------------------------------------
    def exists(self) -> bool:
        try:
            return self.client.collection_exists(self.collection)
        except Exception as exc:  # network errors, auth errors
            raise unreachable(exc) from None

    def collection_meta(self) -> dict:
        try:
            if not self.client.collection_exists(self.collection):
                raise collection_missing(self.collection)
            info = self.client.get_collection(self.collection)
        except StoreUnavailableError:
            raise
        except Exception as exc:  # network errors, auth errors
            raise unreachable(exc) from None
        return dict(info.config.metadata or {})

    def ensure_collection(self, model: str, dimension: int, recreate: bool = False) -> bool:
        """Create the collection for this model; refuse another model unless recreate.
        Returns True when a new (empty) collection was created."""
        from qdrant_client import models

        if self.exists():
            if same_model(self.collection, self.collection_meta(), model, dimension, recreate) \
                    and not recreate:
                self._index_payload()  # a collection made before an index was added gets it
                return False
            self.client.delete_collection(self.collection)
        self.client.create_collection(
            self.collection,
            vectors_config={
                DENSE_VECTOR: models.VectorParams(size=dimension, distance=models.Distance.COSINE)
            },
            sparse_vectors_config={
                SPARSE_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)
            },
            metadata={META_MODEL: model, META_DIMENSION: dimension, META_SCHEMA: SCHEMA_VERSION},
        )
        self._index_payload()
        return True

    def _index_payload(self) -> None:
        """Keyword indexes on the filtered fields (creating an existing one is a no-op)."""
        from qdrant_client import models

        with warnings.catch_warnings():
            # Local mode says payload indexes have no effect there; a server uses them.
            warnings.simplefilter("ignore", UserWarning)
            for field in KEYWORD_INDEXES:
                self.client.create_payload_index(
                    self.collection, field, field_schema=models.PayloadSchemaType.KEYWORD
                )

    # --- sync -------------------------------------------------------------------------------
    def scroll_payloads(
        self, fields: Sequence[str], doc_paths: Sequence[str] | None = None
    ) -> Iterator[tuple[int, dict]]:
        """Every point's id and the given payload fields (only of doc_paths, when given)."""
        from qdrant_client import models

        flt = None
        if doc_paths is not None:
            flt = models.Filter(
                must=[
                    models.FieldCondition(key="doc_path", match=models.MatchAny(any=list(doc_paths)))
                ]
            )
        offset = None
        while True:
            points, offset = self.client.scroll(
                self.collection,
                limit=2048,
                offset=offset,
                with_payload=list(fields),
                with_vectors=False,
                scroll_filter=flt,
            )
            for p in points:
                yield int(p.id), dict(p.payload or {})
            if offset is None:
                return

    def dense_vectors(self, point_ids: Iterable[int]) -> dict[int, list[float]]:
        ids = list(point_ids)
        out: dict[int, list[float]] = {}
        for start in range(0, len(ids), 512):
            points = self.client.retrieve(
                self.collection,
                ids[start : start + 512],
                with_payload=False,
                with_vectors=[DENSE_VECTOR],
            )
            for p in points:
                out[int(p.id)] = list(p.vector[DENSE_VECTOR])
        return out

    def upsert(self, items: Sequence[tuple[int, dict, list[float], SparseVec]]) -> None:
        """items: (point id, payload, dense vector, sparse vector)."""
        from qdrant_client import models

        for start in range(0, len(items), 256):
            batch = items[start : start + 256]
            self.client.upsert(
                self.collection,
                points=[
                    models.PointStruct(
                        id=pid,
                        payload=payload,
                        vector={
                            DENSE_VECTOR: dense,
                            SPARSE_VECTOR: models.SparseVector(indices=sp[0], values=sp[1]),
                        },
                    )
                    for pid, payload, dense, sp in batch
                ],
                wait=True,
            )

    def delete(self, point_ids: Sequence[int]) -> None:
        from qdrant_client import models

        for start in range(0, len(point_ids), 1024):
            self.client.delete(
                self.collection,
                points_selector=models.PointIdsList(points=list(point_ids[start : start + 1024])),
                wait=True,
            )

    def count(self) -> int:
        return self.client.count(self.collection, exact=True).count

    def mark_synced(self, when: str) -> None:
        """Record the time of the last finished sync in the collection (GET /health shows it)."""
        try:
            self.client.update_collection(self.collection, metadata={META_SYNCED_AT: when})
        except Exception:  # noqa: BLE001 (an older server without metadata updates: not fatal)
            pass

    def index_status(self) -> dict:
        """The collection's metadata plus its point count (GET /health)."""
        meta = self.collection_meta()
        return {**meta, "points": self.count()}

    # --- query ------------------------------------------------------------------------------
    def search(
        self,
        dense: Sequence[float],
        sparse: SparseVec,
        limit: int,
        filters: dict[str, str] | None = None,
        mode: str = "hybrid",
    ) -> list[SearchHit]:
        from qdrant_client import models

        req = models.QueryRequest.model_validate(query_body(dense, sparse, limit, filters, mode))
        try:
            res = self.client.query_points(
                self.collection, query=req.query, using=req.using, prefetch=req.prefetch,
                query_filter=req.filter, limit=req.limit, with_payload=req.with_payload,
                with_vectors=req.with_vector)
        except Exception as exc:
            raise search_failed(exc) from None
        return rank(dense, sparse, mode, (
            (p.id, p.score, (p.vector or {}).get(DENSE_VECTOR),
             getattr((p.vector or {}).get(SPARSE_VECTOR), "indices", ()),
             dict(p.payload or {}))
            for p in res.points))


def open_index(settings: Settings, reader: bool = False):
    """The one chooser of the engine: the embedded engine in QDRANT_PATH (an EdgeStore), unless
    QDRANT_URL names a server. A `reader` (the query path: search and health only) reaches the
    server through the light REST client, the index side through qdrant-client; each with its
    policy of functions.search.qdrant_access."""
    if not settings.qdrant_url:
        from functions.search.edge_store import EdgeStore

        return EdgeStore.open(settings)
    if reader:
        from functions.search.qdrant_http import QdrantHttp

        return QdrantHttp(settings.qdrant_url, settings.collection, settings.qdrant_api_key)
    from qdrant_client import QdrantClient

    client = QdrantClient(url=settings.qdrant_url, api_key=settings.qdrant_api_key,
                          timeout=INDEX.timeout)
    return QdrantStore(client, settings.collection)
