"""The quotable blocks embedded at index time (payload `block_vectors`): a sync stores them for a
local model, an offline answer then embeds only the question and quotes what it quoted when it
embedded every block itself; an index without them, or with vectors that no longer match the
text the answer code builds, is answered the slow way, never wrongly."""

from __future__ import annotations

from dataclasses import replace

import pytest

from functions.answers.extractive import block_texts, compose
from functions.answers.question_kind import read
from functions.search.contract import (
    BLOCK_VECTORS,
    block_key,
    pack_block_vectors,
    unpack_block_vectors,
)
from functions.search.store import QdrantStore
from functions.search.types import SearchHit
from functions.settings import Settings
from indexer.build import build_chunks
from indexer.chunker import ChunkOptions
from indexer.model import SiteSettings
from indexer.sync import sync_chunks
from tests.fakes.embedder import FakeEmbedder
from tests.indexer.test_sync import write_docs

PAGE = """---
title: Encoders
---

# Encoders

An encoder turns the rotation of a shaft into pulses that a controller counts.

## Quadrature

Two channels A and B are a quarter period apart, so the order of their edges tells the
direction of rotation:

- A rises before B: forward
- B rises before A: backward

## Gray code

Absolute encoders number their positions in Gray code, so neighbouring positions differ in
one bit and a reading taken mid-change is off by one step at most.

## Quiz

1. What does a quadrature encoder count?
"""

QUESTIONS = ("How does an encoder tell the direction of rotation?",
             "Why do absolute encoders use Gray code?", "What does a controller count?")


@pytest.fixture
def indexed(tmp_path):
    """The page synced into a real embedded index with a counting fake model: the store, the
    model, and every point's payload with its block vectors."""
    docs = write_docs(tmp_path / "docs", {"encoders.md": PAGE})
    built = build_chunks(docs, SiteSettings(base_url="/book/"), ChunkOptions(min_tokens=0))
    store = QdrantStore.open(Settings(qdrant_path=str(tmp_path / "qdrant"), collection="t"))
    model = FakeEmbedder(dimension=32)
    sync_chunks(built, store, model)
    fields = [*built.chunks[0].payload(), BLOCK_VECTORS]
    payloads = [p for _, p in sorted(store.scroll_payloads(fields))]
    yield store, model, payloads
    store.close()


def hits_of(payloads: list[dict]) -> list[SearchHit]:
    return [SearchHit(i, 1.0 - i / 10, 0.9 - i / 20, p) for i, p in enumerate(payloads)]


def counting(model: FakeEmbedder):
    asked: list[str] = []

    def embed(texts: list[str]) -> list[list[float]]:
        asked.extend(texts)
        return model.embed_batch(texts)

    return embed, asked


def test_a_sync_stores_every_block_a_quote_may_embed_as_the_model_gives_it(indexed):
    _, model, payloads = indexed
    assert payloads and all(BLOCK_VECTORS in p for p in payloads)
    for p in payloads:
        texts = block_texts(p)
        stored = unpack_block_vectors(p)
        assert set(stored) == {block_key(t) for t in texts} and texts
        for t in texts:  # float16: within 1e-3 of the model's own vector
            assert max(abs(a - b) for a, b in zip(stored[block_key(t)], model._embed(t),
                                                  strict=True)) < 1e-3
    quiz = [t for p in payloads for t in block_texts(p) if "> Quiz:" in t]
    assert quiz  # skipped blocks too: quoted when the reader asks for the quiz


def test_an_answer_embeds_only_the_question_and_quotes_what_embedding_every_block_quotes(indexed):
    _, model, payloads = indexed
    without = [{k: v for k, v in p.items() if k != BLOCK_VECTORS} for p in payloads]
    for question in QUESTIONS:
        embed, asked = counting(model)
        fast = compose(read(question), hits_of(payloads), embed)
        assert asked == [question]
        embed, asked = counting(model)
        slow = compose(read(question), hits_of(without), embed)
        assert len(asked) > 2  # the question and every candidate block
        assert fast.text == slow.text and fast.text
        assert [h.payload["url"] for h in fast.closest] == [h.payload["url"] for h in slow.closest]
        assert fast.top_sem == pytest.approx(slow.top_sem, abs=1e-3)
        assert fast.mean_sem == pytest.approx(slow.mean_sem, abs=1e-3)


def test_vectors_that_no_longer_match_are_not_used(indexed):
    _, model, payloads = indexed
    question = QUESTIONS[1]
    embed, asked = counting(model)
    expected = compose(read(question), hits_of(payloads), embed).text
    # the page renamed since the index was written: every block's text (and key) is another
    renamed = [{**p, "doc_title": "Rotary encoders"} for p in payloads]
    embed, asked = counting(model)
    assert compose(read(question), hits_of(renamed), embed).text == expected
    assert len(asked) > 1 and all(t.startswith("Rotary encoders > ") for t in asked[1:])
    # another model's vectors (another size) under the right keys are embedded again too
    other = FakeEmbedder(dimension=8)
    resized = [{**p, BLOCK_VECTORS: pack_block_vectors(block_texts(p), other.embed_batch(
        block_texts(p)))} for p in payloads]
    embed, asked = counting(model)
    assert compose(read(question), hits_of(resized), embed).text == expected
    assert len(asked) > 1


@pytest.mark.parametrize("damaged", [
    "not a dict", {"keys": "abc", "f16": ""}, {"keys": ["a", "b"], "f16": "AAAA"},
    {"keys": ["a"], "f16": "not base64!"}, {}, None])
def test_a_damaged_block_vectors_field_reads_as_none(damaged):
    assert unpack_block_vectors({BLOCK_VECTORS: damaged}) == {}
    payload = {"content": "## Gray code\n\nNeighbouring positions differ in one bit.",
               "section_title": "Gray code", "doc_title": "Encoders", "url": "/e#gray-code",
               BLOCK_VECTORS: damaged}
    model = FakeEmbedder(dimension=16)
    composed = compose(read("Why Gray code?"), hits_of([payload]), model.embed_batch)
    assert "differ in one bit" in composed.text


def test_an_openai_index_stores_none_and_an_edit_reuses_what_is_stored(indexed, tmp_path):
    store, model, payloads = indexed

    class Paid(FakeEmbedder):
        paid = True

    docs = write_docs(tmp_path / "docs2", {"encoders.md": PAGE})
    built = build_chunks(docs, SiteSettings(base_url="/book/"), ChunkOptions(min_tokens=0))
    other = QdrantStore.open(Settings(qdrant_path=str(tmp_path / "q2"), collection="t"))
    try:
        sync_chunks(built, other, Paid(dimension=32))
        assert not any(BLOCK_VECTORS in p for _, p in other.scroll_payloads([BLOCK_VECTORS]))
    finally:
        other.close()
    # the same text under new point ids (the page moved): vectors and blocks read back, no
    # model call
    moved = replace(built, chunks=[replace(c, chunk_id=c.chunk_id[::-1]) for c in built.chunks])
    again = FakeEmbedder(dimension=32)
    sync_chunks(moved, store, again, prune=True)
    assert again.texts_embedded == []
    fields = [*built.chunks[0].payload(), BLOCK_VECTORS]
    assert sorted(k for _, p in store.scroll_payloads(fields) for k in unpack_block_vectors(p)) \
        == sorted(k for p in payloads for k in unpack_block_vectors(p))
