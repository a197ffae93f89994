"""What a search returns and what every search backend offers (local SDK or HTTP)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

SparseVec = tuple[list[int], list[float]]


@dataclass(frozen=True)
class SearchHit:
    point_id: int
    score: float  # the fused (RRF) score, or the raw score in dense/sparse mode
    dense_score: float  # cosine similarity of the question and the chunk
    payload: dict


class SearchBackend(Protocol):
    def collection_meta(self) -> dict:
        """The collection's metadata (embedding_model, embedding_dimension); raises
        StoreUnavailableError when Qdrant is unreachable or the collection is missing."""
        ...

    def search(
        self,
        dense: Sequence[float],
        sparse: SparseVec,
        limit: int,
        filters: dict[str, str] | None = None,
        mode: str = "hybrid",
    ) -> list[SearchHit]:
        """Top `limit` chunks: 'hybrid' = dense + sparse prefetch fused with RRF in Qdrant."""
        ...
