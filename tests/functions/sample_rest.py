"""The sample textbook indexed with the local MiniLM, served over HTTP by the Qdrant REST
stand-in (tests/functions/qdrant_rest.py): what a deployed offline API talks to, on 127.0.0.1.
Used by tests/functions/test_offline_package.py and benchmarks/bench_cold_start.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "textbook"
COLLECTION = "sample"
OTHER_MODEL = "openai-sample"  # an (empty) collection built for OpenAI's embeddings


def sample_questions(answerable: bool = True) -> list[dict]:
    rows = [json.loads(line) for line in (SAMPLE / "questions.jsonl").read_text().splitlines()
            if line.strip()]
    return [q for q in rows if bool(q.get("expected_url")) == answerable]


@contextmanager
def sample_book_rest(read_only_key: str | None = None, embedder=None) -> Iterator[str]:
    """Yields the stand-in's base URL; collections COLLECTION (the sample book, local MiniLM)
    and OTHER_MODEL (empty, made for text-embedding-3-small). read_only_key: an `api-key`
    the stand-in refuses every write to (tests/functions/qdrant_rest.py). embedder: the local
    MiniLM to index with (tests pass tests/minilm.py's, which embeds each text once a process)."""
    from qdrant_client import QdrantClient

    from functions.search.embeddings.factory import make_embedder
    from functions.search.store import open_index
    from functions.settings import Settings
    from indexer.build import build_chunks
    from indexer.chunker import ChunkOptions
    from indexer.site_config import read_site_config
    from indexer.sync import sync_chunks
    from tests.functions.qdrant_rest import qdrant_rest

    client = QdrantClient(location=":memory:")
    built = build_chunks(SAMPLE / "docs", read_site_config(SAMPLE), ChunkOptions())
    assert not built.failed, built.failed
    try:
        with qdrant_rest(client, read_only_key) as (url, _):
            store = open_index(Settings(qdrant_url=url, collection=COLLECTION))
            sync_chunks(built, store, embedder or make_embedder(Settings()), recreate=True)
            store.collection_store(OTHER_MODEL).ensure_collection("text-embedding-3-small", 1536)
            store.close()
            yield url
    finally:
        client.close()
