"""Embedding providers behind one small protocol: local MiniLM (default) and OpenAI."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Embedder(Protocol):
    """Turns texts into dense vectors. Providers are built once and reused."""

    model_name: str  # recorded in the collection metadata, e.g. "all-MiniLM-L6-v2"
    dimension: int

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order."""
        ...
