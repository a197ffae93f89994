"""Deterministic fake Embedders for tests and benchmarks: hashed word vectors (counted calls),
the same over content words only, and random vectors per text; no model."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from functions.search.sparse import terms

_WORD = re.compile(r"\w+")


@lru_cache(maxsize=65536)
def _word_vector(word: str, dimension: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "big")
    return np.random.default_rng(seed).standard_normal(dimension)


class FakeEmbedder:
    """Sum of per-word hashed random vectors, L2-normalised: texts sharing words are similar.

    `calls` counts embed_batch calls; `texts_embedded` lists every text embedded, in order.
    """

    def __init__(self, dimension: int = 16, model_name: str = "fake-embedder"):
        self.dimension = dimension
        self.model_name = model_name
        self.calls = 0
        self.texts_embedded: list[str] = []

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.texts_embedded.extend(texts)
        return [self._embed(text) for text in texts]

    def _embed(self, text: str) -> list[float]:
        words = [w.lower() for w in _WORD.findall(text)] or ["<empty>"]
        vec = np.sum([_word_vector(w, self.dimension) for w in words], axis=0)
        return (vec / np.linalg.norm(vec)).tolist()


class ContentEmbedder(FakeEmbedder):
    """FakeEmbedder over content words only: off-topic questions then score clearly lower."""

    def _embed(self, text: str) -> list[float]:
        return super()._embed(" ".join(terms(text)))


class RandomEmbedder:
    """A fixed random unit vector per whole text, with no notion of meaning (a floor for
    retrieval figures, zero cost for benchmarks); the same in every process, cached per text."""

    def __init__(self, dimension: int = 384, model_name: str = "random-embedder"):
        self.dimension = dimension
        self.model_name = model_name
        self.cache: dict[str, list[float]] = {}

    def vector(self, text: str) -> list[float]:
        if text not in self.cache:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            vec = np.random.default_rng(seed).standard_normal(self.dimension)
            self.cache[text] = (vec / np.linalg.norm(vec)).tolist()
        return self.cache[text]

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vector(text) for text in texts]
