"""Sync against real Qdrant local mode with a counting fake embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from functions.errors import ModelMismatchError
from functions.search.store import QdrantStore
from functions.settings import Settings
from indexer.build import build_chunks
from indexer.chunker import ChunkOptions
from indexer.model import SiteSettings
from indexer.sync import sync_chunks, sync_docs
from tests.fakes.embedder import FakeEmbedder

PARA = "A paragraph about {topic} with enough words to be a real section of a real textbook chapter. " * 4

INTRO = """---
title: Intro
---

# Intro

{p0}

## Goals

{p1}

## Scope

{p2}
"""

SENSORS = """---
title: Sensors
---

## Encoders

{p3}

### Calibration

{p4}
"""


def write_docs(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def base_files() -> dict[str, str]:
    p = {f"p{i}": PARA.format(topic=f"topic number {i}") for i in range(6)}
    return {"01-intro.md": INTRO.format(**p), "02-sensors/01-encoders.md": SENSORS.format(**p)}


@pytest.fixture
def env(tmp_path):
    docs = write_docs(tmp_path / "docs", base_files())
    settings = Settings(qdrant_path=str(tmp_path / "qdrant"), collection="t")
    store = QdrantStore.open(settings)
    yield docs, store
    store.close()


def run(docs: Path, store, embedder, **kw):
    return sync_docs(docs, SiteSettings(base_url="/book/"), ChunkOptions(), store, embedder, **kw)


def test_sync_chunks_alone_reparses_everything_yet_writes_nothing(env):
    docs, store = env
    run(docs, store, FakeEmbedder())
    built = build_chunks(docs, SiteSettings(base_url="/book/"), ChunkOptions())
    emb = FakeEmbedder()
    s = sync_chunks(built, store, emb)
    assert emb.calls == 0 and s.unchanged == s.chunks and s.deleted == 0


def test_changed_partial_reparses_pages(env):
    docs, store = env
    (docs / "_shared").mkdir()
    (docs / "_shared" / "_note.md").write_text("Shared words.\n")
    run(docs, store, FakeEmbedder())
    assert run(docs, store, FakeEmbedder()).unchanged > 0
    (docs / "_shared" / "_note.md").write_text("Other shared words.\n")
    s = run(docs, store, FakeEmbedder())
    assert s.embedded == 0 and s.reused == s.chunks  # re-parsed; new source hash, same vectors


def test_second_run_embeds_and_writes_nothing(env):
    docs, store = env
    first = FakeEmbedder()
    s1 = run(docs, store, first)
    assert s1.embedded == s1.chunks > 0 and s1.failed == 0
    count = store.count()
    second = FakeEmbedder()
    s2 = run(docs, store, second)
    assert second.calls == 0
    assert (s2.embedded, s2.reused, s2.deleted, s2.unchanged) == (0, 0, 0, s1.chunks)
    assert store.count() == count


def test_edit_re_embeds_only_new_text(env):
    docs, store = env
    run(docs, store, FakeEmbedder())
    path = docs / "01-intro.md"
    path.write_text(path.read_text().replace("## Scope", "## New part\n\n" + PARA.format(topic="fresh") + "\n## Scope"))
    emb = FakeEmbedder()
    s = run(docs, store, emb)
    # the new chunk and its one paragraph as the answer quotes it (the shifted chunks' blocks:
    # read from the points whose vectors are reused)
    assert len(emb.texts_embedded) == 2 and all("fresh" in t for t in emb.texts_embedded)
    assert emb.texts_embedded[1].startswith("Intro > New part: A paragraph about fresh")
    assert s.embedded == 1 and s.reused >= 1  # Scope shifted index: vector reused, not re-embedded
    urls = {p["url"] for _, p in store.scroll_payloads(["url"])}
    assert "/book/docs/intro#new-part" in urls


def test_deleted_doc_and_section_points_are_deleted(env):
    docs, store = env
    run(docs, store, FakeEmbedder())
    (docs / "02-sensors/01-encoders.md").unlink()
    s = run(docs, store, FakeEmbedder())
    assert s.deleted >= 1
    assert {p["doc_path"] for _, p in store.scroll_payloads(["doc_path"])} == {"01-intro.md"}


def test_broken_file_keeps_its_old_points_and_others_still_index(env):
    docs, store = env
    run(docs, store, FakeEmbedder())
    before = {pid for pid, p in store.scroll_payloads(["doc_path"]) if p["doc_path"] == "01-intro.md"}
    (docs / "01-intro.md").write_text("---\ntitle: [unclosed\n---\n\n## X\n\ntext\n")
    (docs / "03-new.md").write_text("## Fresh page\n\n" + PARA.format(topic="new page"))
    s = run(docs, store, FakeEmbedder())
    assert s.failed == 1 and "01-intro.md" in str(s.problems[0])
    after = {pid for pid, p in store.scroll_payloads(["doc_path"]) if p["doc_path"] == "01-intro.md"}
    assert after == before
    assert any(p["doc_path"] == "03-new.md" for _, p in store.scroll_payloads(["doc_path"]))


def test_other_model_is_refused_unless_recreate(env):
    docs, store = env
    run(docs, store, FakeEmbedder(dimension=16, model_name="model-a"))
    with pytest.raises(ModelMismatchError, match="--recreate"):
        run(docs, store, FakeEmbedder(dimension=8, model_name="model-b"))
    s = run(docs, store, FakeEmbedder(dimension=8, model_name="model-b"), recreate=True)
    assert s.embedded == s.chunks
    assert store.collection_meta()["embedding_model"] == "model-b"


def test_cli_json_summary_has_exactly_the_keys(tmp_path, monkeypatch, capsys):
    from textbook_chat_cli.main import main

    docs = write_docs(tmp_path / "docs", base_files())
    out = tmp_path / "chunks.jsonl"
    code = main(["index", str(docs), "--dry-run", "--export", str(out), "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert list(summary) == ["files", "chunks", "embedded", "reused", "unchanged", "deleted", "failed"]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == summary["chunks"] and all(r["url"].startswith("/docs/") for r in rows)
