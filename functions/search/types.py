"""What a search returns and what every search backend offers (local SDK or HTTP)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

SparseVec = tuple[list[int], list[float]]


def cosine(a: Sequence[float], b: Sequence[float] | None) -> float:
    """Cosine similarity of the question and a chunk vector returned with a hit (0 if absent)."""
    if not b:
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = sum(x * x for x in a) ** 0.5
    nb = sum(y * y for y in b) ** 0.5
    return dot / (na * nb) if na and nb else 0.0


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
