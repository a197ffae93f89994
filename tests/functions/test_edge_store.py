"""The embedded engine (functions.search.edge_store): the same collection semantics and answers as
Qdrant's own (qdrant-client's engine stands in for a server), and every way its folder can be
wrong: an index of textbook-chat before the engine, a half-written or damaged one, one of a
newer version, two processes, a process killed mid-write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from functions.errors import ModelMismatchError, StoreUnavailableError
from functions.search.edge_store import EdgeStore, has_index
from functions.search.sparse import encode_document, encode_query
from functions.search.store import QdrantStore
from functions.settings import Settings
from tests.fakes.embedder import ContentEmbedder, FakeEmbedder
from tests.functions.conftest import DIM
from textbook_chat_cli.main import main

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ["How does a complementary filter fuse the gyroscope?", "loop jitter",
             "What is a PID controller?", "encoder ticks per revolution", "zzz unknown words"]


def open_edge(path: Path, collection: str = "t") -> EdgeStore:
    store = QdrantStore.open(Settings(qdrant_path=str(path), collection=collection))
    assert isinstance(store, EdgeStore)
    return store


@pytest.mark.parametrize("mode", ["hybrid", "dense", "sparse"])
@pytest.mark.parametrize("filters", [None, {"module": "Sensors"}, {"doc_path": ["a.md", "x"]}])
def test_same_ranking_as_qdrants_engine(book_store, server_store, mode, filters):
    embedder = ContentEmbedder(DIM)
    for q in QUESTIONS:
        dense, sparse = embedder.embed_batch([q])[0], encode_query(q)
        ours = book_store.search(dense, sparse, 10, filters, mode)
        theirs = server_store.search(dense, sparse, 10, filters, mode)
        assert [h.point_id for h in ours] == [h.point_id for h in theirs], q
        assert [round(h.score, 4) for h in ours] == [round(h.score, 4) for h in theirs], q
        assert [h.payload for h in ours] == [h.payload for h in theirs]


def test_sync_operations_round_trip(tmp_path):
    store = open_edge(tmp_path / "q")
    try:
        assert not store.exists() and not has_index(tmp_path / "q", "t")
        assert store.ensure_collection("fake", 4) is True
        assert store.ensure_collection("fake", 4) is False
        payload = {"doc_path": "a.md", "tags": ["x", "y"], "token_count": 12, "section_number": None,
                   "heading_path": ["A", "B"], "score": 0.5, "content": "motors and encoders"}
        items = [(i, {**payload, "doc_path": f"{i % 2}.md"}, [1.0, float(i), 0.0, 0.5],
                  encode_document("motors and encoders")) for i in range(1, 8)]
        store.upsert(items)
        assert store.count() == 7
        assert dict(store.scroll_payloads(["doc_path", "tags"], doc_paths=["1.md"])) == {
            i: {"doc_path": "1.md", "tags": ["x", "y"]} for i in (1, 3, 5, 7)}
        full = dict(store.scroll_payloads(list(payload)))
        assert full[2] == {**payload, "doc_path": "0.md"}
        vectors = store.dense_vectors([1, 2, 99])
        assert set(vectors) == {1, 2} and len(vectors[2]) == 4
        store.delete([1, 2])
        assert store.count() == 5
        store.mark_synced("2026-01-02T03:04:05+00:00")
        assert store.index_status() == {"embedding_model": "fake", "embedding_dimension": 4,
                                        "schema_version": 1, "synced_at": "2026-01-02T03:04:05+00:00",
                                        "points": 5}
        with pytest.raises(ModelMismatchError, match="--recreate"):
            store.ensure_collection("other", 4)
        assert store.ensure_collection("other", 8, recreate=True) is True
        assert store.count() == 0 and store.collection_meta()["embedding_model"] == "other"
    finally:
        store.close()
    reopened = open_edge(tmp_path / "q")  # the lock went with close()
    assert reopened.count() == 0 and has_index(tmp_path / "q", "t")
    reopened.close()


def test_a_sync_reads_the_payloads_once_and_health_again_only_after_a_change(tmp_path,
                                                                             monkeypatch):
    """The integrity check's scan is the sync's read of every payload; GET /health reads the
    whole index the first time and again only when a file changed (it was every call)."""
    from functions.search import edge_files
    from indexer.chunker import ChunkOptions
    from indexer.model import SiteSettings
    from indexer.sync import sync_docs

    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("gears", "cams"):
        (docs / f"{name}.md").write_text(f"# {name}\n\n## About {name}\n\n{DOC}")
    store, embedder = open_edge(tmp_path / "q"), FakeEmbedder()
    scans: list[tuple] = []  # whole reads of every point's payload (no doc filter)
    whole = EdgeStore._scroll

    def counted(self, fields, doc_paths=None):
        if doc_paths is None:
            scans.append(tuple(fields))
        return whole(self, fields, doc_paths)

    monkeypatch.setattr(EdgeStore, "_scroll", counted)
    try:
        def sync():
            return sync_docs(docs, SiteSettings(), ChunkOptions(), store, embedder)

        sync()  # a new collection: nothing to read
        store.mark_synced("2026-01-02T03:04:05+00:00")
        scans.clear()
        again = sync()
        assert again.unchanged == again.chunks > 0 and again.embedded == 0
        assert len(scans) == 1, scans  # was 2: the check's scan, then the sync's own
        scans.clear()
        points = store.index_status()["points"]
        assert points == again.chunks and len(scans) == 1
        for _ in range(3):
            assert store.index_status()["points"] == points
        assert len(scans) == 1, scans  # nothing changed: the files' sizes and times say so
        (docs / "cams.md").write_text("# cams\n\n## Cam followers\n\n" + DOC)
        assert sync().embedded > 0
        store.mark_synced("2026-01-02T03:05:05+00:00")
        scans.clear()
        assert store.index_status()["points"] > 0 and len(scans) == 1  # changed: read again
        [payload_file] = (tmp_path / "q" / "edge" / "t").glob("segments/*/payload_storage/page_0.dat")
        with open(payload_file, "r+b") as fh:
            fh.truncate(4096)
        with pytest.raises(StoreUnavailableError, match="was cut short"):
            store.index_status()
        assert edge_files.damaged_file(tmp_path / "q" / "edge" / "t",
                                       json.loads((tmp_path / "q" / "edge" / "t.json")
                                                  .read_text())["files"]) is not None
    finally:
        store.close()


def test_collection_store_shares_the_folder(tmp_path):
    store = open_edge(tmp_path / "q")
    try:
        other = store.collection_store("t-naive")
        other.ensure_collection("fake", 4)
        with pytest.raises(StoreUnavailableError, match="does not exist yet"):
            store.collection_meta()
        with pytest.raises(StoreUnavailableError, match="QDRANT_COLLECTION"):
            store.collection_store("../escape").exists()
    finally:
        store.close()


# --- bad input ---------------------------------------------------------------------------------
DOC = "## Setup\n\n" + "Encoders count the ticks of a motor shaft to measure its speed. " * 12


def _docs(base: Path) -> Path:
    docs = base / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(DOC)
    (docs / "b.md").write_text(DOC.replace("Setup", "Wiring").replace("Encoders", "Wires"))
    return docs


@pytest.fixture
def cli_env(tmp_path, monkeypatch):
    """`textbook-chat index` against tmp_path/qdrant with a fake model named as the local one."""
    monkeypatch.setenv("QDRANT_PATH", str(tmp_path / "qdrant"))
    for name in ("QDRANT_URL", "QDRANT_COLLECTION", "OPENAI_API_KEY", "EMBEDDING_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    embedder = FakeEmbedder(384, model_name="all-MiniLM-L6-v2")
    # only where `index` calls it (indexer.job.index_docs), never in the factory: a module first
    # imported while the factory is patched (`main` imports every command's, e.g.
    # textbook_chat_cli/release.py) keeps the fake for every later test in this process; a
    # `release stage` there then built its live release with this model, and the next stage,
    # in a subprocess with the real one, copied nothing (tests/leaks.py now says so at once)
    monkeypatch.setattr("indexer.job.make_embedder", lambda *a, **k: embedder)
    return _docs(tmp_path), tmp_path / "qdrant", embedder


def _index(docs: Path, capsys) -> tuple[dict, str]:
    code = main(["index", str(docs), "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "Traceback" not in out.err
    return json.loads(out.out), out.err


def test_an_index_of_the_older_textbook_chat_is_moved_over_with_its_vectors(cli_env, capsys):
    docs, qdrant, embedder = cli_env
    from indexer.job import index_docs, resolve_job
    from tests.functions.qdrant_rest import qdrant_rest

    engine = QdrantClient(path=str(qdrant))  # qdrant-client's local mode, written as a server
    with qdrant_rest(engine) as (url, _):
        old = QdrantStore.open(Settings(qdrant_url=url, collection="textbook"))
        index_docs(resolve_job(docs), Settings(), embedder=embedder, store=old)
        points = dict(old.scroll_payloads(["content_hash"]))
        old.close()
    engine.close()
    # a reader (serve, ask) is told, in one line, what to run
    reader = open_edge(qdrant, "textbook")
    with pytest.raises(StoreUnavailableError) as exc:
        reader.collection_meta()
    reader.close()
    assert "older textbook-chat" in str(exc.value) and "textbook-chat index" in str(exc.value)
    assert "\n" not in str(exc.value)
    calls = embedder.calls
    summary, err = _index(docs, capsys)
    assert "Moved the index" in err and "vectors kept" in err
    assert embedder.calls == calls and summary["embedded"] == 0  # nothing embedded again
    store = open_edge(qdrant, "textbook")
    try:
        assert dict(store.scroll_payloads(["content_hash"])) == points
        assert store.collection_meta()["synced_at"]
    finally:
        store.close()


def _break(qdrant: Path, how: str) -> None:
    edge = qdrant / "edge"
    if how == "half-written":  # stopped after the engine's files, before the metadata
        (edge / "textbook.json").unlink()
    elif how == "cut-metadata":
        (edge / "textbook.json").write_text('{"embedding_mo')
    elif how == "damaged":
        for segment in (edge / "textbook" / "segments").iterdir():
            (segment / "segment.json").write_text("not json")
    elif how == "older-format":
        meta = json.loads((edge / "textbook.json").read_text())
        (edge / "textbook.json").write_text(json.dumps({**meta, "format": 0}))


# three indexing runs each (~1.5-9 s with fsyncs on a busy disk): one kind in the quick loop
SLOW = pytest.mark.slow


@pytest.mark.parametrize("how", ["damaged", pytest.param("half-written", marks=SLOW),
                                 pytest.param("cut-metadata", marks=SLOW),
                                 pytest.param("older-format", marks=SLOW)])
@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_a_broken_index_is_named_to_readers_and_rebuilt_by_index(cli_env, capsys, how):
    docs, qdrant, _ = cli_env
    first, _ = _index(docs, capsys)
    _break(qdrant, how)
    reader = open_edge(qdrant, "textbook")
    # a damaged file is named with --recreate (test_damaged_index.py), the rest: index again
    with pytest.raises(StoreUnavailableError, match="run `textbook-chat index DOCS_DIR"):
        reader.count()
    reader.close()
    summary, err = _index(docs, capsys)
    assert "rebuilding it now" in err
    assert summary["chunks"] == first["chunks"] and summary["embedded"] == first["embedded"]
    _, err = _index(docs, capsys)  # repaired: the next run is a no-op
    assert "rebuilding" not in err


@pytest.mark.slow  # two indexing runs (~1-2 s)
def test_an_index_of_a_newer_version_is_kept(cli_env, capsys):
    docs, qdrant, _ = cli_env
    _index(docs, capsys)
    meta_file = qdrant / "edge" / "textbook.json"
    meta_file.write_text(json.dumps({**json.loads(meta_file.read_text()), "format": 99,
                                     "engine": "qdrant-edge-py 9.0"}))
    assert main(["index", str(docs)]) == 2
    err = capsys.readouterr().err
    assert "newer textbook-chat (qdrant-edge-py 9.0)" in err and "--recreate" in err
    assert "Traceback" not in err
    assert json.loads(meta_file.read_text())["format"] == 99  # nothing dropped
    summary, _ = _index_recreate(docs, capsys)
    assert summary["chunks"] > 0


def _index_recreate(docs: Path, capsys):
    code = main(["index", str(docs), "--json", "--recreate"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out), out.err


HOLD = """
import sys
sys.path.insert(0, {root!r})
from functions.settings import Settings
from functions.search.store import QdrantStore
store = QdrantStore.open(Settings(qdrant_path={path!r}, collection="t"))
store.ensure_collection("fake", 4)
store.upsert([(i, {{"doc_path": "a.md"}}, [1.0, i, 0, 0], ([1], [1.0])) for i in range(1, 51)])
{then}
"""


def _child(path: Path, then: str) -> subprocess.Popen:
    code = textwrap.dedent(HOLD.format(root=str(ROOT), path=str(path), then=then))
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def test_two_processes_one_index(tmp_path):
    child = _child(tmp_path / "q", "print('ready', flush=True); sys.stdin.read(); store.close()")
    try:
        assert child.stdout.readline().strip() == "ready"
        with pytest.raises(StoreUnavailableError, match="in use by another textbook-chat process"):
            open_edge(tmp_path / "q")
    finally:
        child.communicate("", timeout=60)
    store = open_edge(tmp_path / "q")  # free again once the other process is gone
    assert store.count() == 50
    store.close()


def test_a_process_killed_mid_write_loses_nothing_it_wrote(tmp_path):
    child = _child(tmp_path / "q", "import os; os._exit(9)")  # no close, no flush
    assert child.wait(timeout=60) == 9
    store = open_edge(tmp_path / "q")
    try:
        assert store.count() == 50
        assert store.search([1.0, 3.0, 0, 0], ([1], [1.0]), 1, mode="dense")[0].point_id == 3
    finally:
        store.close()
    assert os.path.exists(tmp_path / "q" / "edge" / "t.json")
