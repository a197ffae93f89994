"""The one search query, built here as a Qdrant Query API request.

Every engine executes the same request: a Qdrant server over REST (functions.search.qdrant_http,
for the query path and the index side alike) and the embedded engine (functions.search.edge_store,
which translates it). Hybrid search is a dense + BM25 prefetch of PREFETCH each, fused with RRF;
how the points it returns are ranked is functions.search.ranking's, the same for every engine.
"""

from __future__ import annotations

from collections.abc import Sequence

from functions.search.contract import DENSE_VECTOR, SPARSE_VECTOR
from functions.search.types import SparseVec

PREFETCH = 40
# Qdrant's RRF gives the same score to a point ranked (3, 7) and one ranked (7, 3) and orders such
# ties differently from one call to the next; a hybrid search asks for this many more than it
# keeps, so ranking.rank() can cut the fused list at a tie in one fixed order (by point id).
TIE_SLACK = 10
MODES = ("hybrid", "dense", "sparse")


def filter_body(filters: dict[str, str | list[str]] | None) -> dict | None:
    """{"must": [...]} matching every given field (a list matches any of its values)."""
    conditions = [{"key": k, "match": {"any": list(v)} if isinstance(v, list) else {"value": v}}
                  for k, v in (filters or {}).items() if v]
    return {"must": conditions} if conditions else None


def query_body(dense: Sequence[float], sparse: SparseVec, limit: int,
               filters: dict[str, str] | None = None, mode: str = "hybrid") -> dict:
    """The Query API request for one search (pure; tests validate it against Qdrant's models)."""
    flt = filter_body(filters)
    sparse_q = {"indices": list(sparse[0]), "values": list(sparse[1])}
    vectors = [DENSE_VECTOR, SPARSE_VECTOR] if mode == "hybrid" else [DENSE_VECTOR]
    body: dict = {"limit": limit + (TIE_SLACK if mode == "hybrid" else 0), "with_payload": True,
                  "with_vector": vectors}
    if mode == "dense":
        body.update(query=list(dense), using=DENSE_VECTOR)
    elif mode == "sparse":
        body.update(query=sparse_q, using=SPARSE_VECTOR)
    else:
        body["prefetch"] = [
            {"query": list(dense), "using": DENSE_VECTOR, "limit": PREFETCH},
            {"query": sparse_q, "using": SPARSE_VECTOR, "limit": PREFETCH},
        ]
        if flt:
            for prefetch in body["prefetch"]:
                prefetch["filter"] = flt
        body["query"] = {"fusion": "rrf"}
    if flt:
        body["filter"] = flt
    return body

