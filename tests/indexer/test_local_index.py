"""indexer/local_index.py on the real embedded engine: a reader's copy while another holder has
the index open, the write fence, and what `serve` records about itself."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from functions.errors import ConfigError
from functions.search.store import QdrantStore
from functions.settings import Settings
from indexer import local_index
from indexer.model import ChunkOptions, SiteSettings
from indexer.sync import sync_docs
from tests.fakes.embedder import FakeEmbedder
from tests.indexer.test_sync import base_files, write_docs


@pytest.fixture
def indexed(tmp_path):
    settings = Settings(qdrant_path=str(tmp_path / "qdrant"), collection="book")
    store = QdrantStore.open(settings)
    sync_docs(write_docs(tmp_path / "docs", base_files()), SiteSettings(base_url="/b/"),
              ChunkOptions(), store, FakeEmbedder())
    store.mark_synced("2026-11-25T00:00:00+00:00")
    yield settings, store  # `store` holds the folder, as `serve` does
    store.close()


def _copies() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("textbook-chat-read-*")}


def test_a_reader_gets_a_small_private_copy_while_another_holder_has_it_open(indexed):
    settings, holder = indexed
    assert local_index.held(settings)
    before = _copies()
    with pytest.raises(Exception, match="in use by another textbook-chat process"):
        QdrantStore.open(settings)  # what `ask` met before
    with local_index.readable(settings) as copy:
        assert copy.qdrant_path != settings.qdrant_path and copy.collection == "book"
        files = [p for p in Path(copy.qdrant_path).rglob("*") if p.is_file()]
        on_disk = sum(p.stat().st_blocks * 512 for p in files)
        apparent = sum(p.stat().st_size for p in files)
        assert on_disk * 20 < apparent  # the engine's preallocated files keep their holes
        reader = QdrantStore.open(copy)
        try:
            assert reader.count() == holder.count() == 5
            assert reader.collection_meta() == holder.collection_meta()
        finally:
            reader.close()
    assert _copies() == before  # deleted afterwards


def test_with_no_other_holder_the_index_is_read_in_place(indexed):
    settings, holder = indexed
    holder.close()
    assert not local_index.held(settings)
    with local_index.readable(settings) as same:
        assert same is settings


def test_a_copy_waits_for_a_sync_in_progress_and_says_so_after_its_wait(indexed, monkeypatch):
    settings, _holder = indexed
    monkeypatch.setattr(local_index, "WAIT_SECONDS", 0.0)
    with local_index.writing(settings):  # a sync (here: this process's) is writing
        with pytest.raises(ConfigError, match="has been written by another textbook-chat process "
                                              "for over 0 s"):
            with local_index.readable(settings):
                pass
    with local_index.readable(settings) as copy:  # the sync has finished
        assert copy.qdrant_path != settings.qdrant_path


def test_serve_records_itself_while_it_runs(tmp_path):
    settings = Settings(qdrant_path=str(tmp_path / "qdrant"))
    assert local_index.running_server(settings) is None
    with local_index.record_server(settings, tmp_path / "docs", "http://127.0.0.1:8787"):
        assert local_index.running_server(settings) == local_index.Server(  # where `ask` asks it
            os.getpid(), str((tmp_path / "docs").resolve()), "http://127.0.0.1:8787", "textbook")
    assert local_index.running_server(settings) is None
    # a serve killed without cleaning up: its record names a process that is gone
    record = Path(settings.qdrant_path) / local_index.SERVER_FILE
    record.write_text('{"pid": 999999999, "watch": null}')
    assert local_index.running_server(settings) is None


def test_a_reader_copies_while_a_serve_runs_that_has_not_opened_the_index_yet(indexed):
    """A plain `serve` opens the index on its first question: a reader holding it then would
    make that question fail, so the reader copies."""
    settings, holder = indexed
    holder.close()
    with local_index.record_server(settings, None), local_index.readable(settings) as copy:
        assert copy.qdrant_path != settings.qdrant_path
        assert not local_index.held(settings)  # the folder stays free for serve
