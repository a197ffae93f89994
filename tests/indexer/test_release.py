"""Releases: stage beside the live index, switch the alias atomically, roll back; against a Qdrant
server stand-in (tests/functions/qdrant_rest.py over qdrant-client's local mode, which keeps
aliases as a server does), through the index side's client."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from functions.errors import ConfigError
from functions.search.store import open_index
from functions.settings import Settings
from indexer import release
from indexer.chunker import ChunkOptions
from indexer.job import index_docs, resolve_job
from indexer.model import SiteSettings
from indexer.plan import LargeDeletion
from indexer.sync import sync_docs
from tests.fakes.embedder import FakeEmbedder
from tests.functions.qdrant_rest import qdrant_rest
from tests.indexer.test_sync import PARA, base_files, write_docs

T0 = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.fixture
def server(tmp_path):
    docs = write_docs(tmp_path / "docs", base_files())
    engine = QdrantClient(":memory:")
    with qdrant_rest(engine) as (url, _seen):
        # `book`: what the API queries (QDRANT_COLLECTION)
        store = open_index(Settings(qdrant_url=url, collection="book"))
        yield docs, store
        store.close()
    engine.close()


def _index(docs: Path, embedder):
    return lambda target: sync_docs(docs, SiteSettings(base_url="/b/"), ChunkOptions(), target,
                                    embedder)


def _texts(store) -> set[str]:
    """What a reader's query sees through the alias."""
    return {p["content"] for _, p in store.scroll_payloads(["content"])}


def _publish(docs, store, embedder, minutes: int):
    name, summary = release.stage(store, embedder, _index(docs, embedder),
                                  now=T0 + timedelta(minutes=minutes))
    return name, summary


def test_first_release_creates_the_alias_readers_query(server):
    docs, store = server
    name, summary = _publish(docs, store, FakeEmbedder(), 0)
    assert name == "book--20261101T000000000000Z" and summary.embedded > 0
    assert not store.exists()  # nothing is live until the switch
    assert release.switch(store, name) == release.Switched(None, [])
    assert store.count() == summary.chunks and release.releases(store).live == name


def test_a_staged_release_is_invisible_until_the_switch_and_reuses_vectors(server):
    docs, store = server
    first, _ = _publish(docs, store, FakeEmbedder(), 0)
    release.switch(store, first)
    old = _texts(store)
    (docs / "01-intro.md").write_text((docs / "01-intro.md").read_text().replace(
        "topic number 1", "a rewritten goal"))
    embedder = FakeEmbedder()
    second, summary = _publish(docs, store, embedder, 1)
    assert summary.embedded == 1 and summary.failed == 0  # only the changed section
    assert _texts(store) == old  # readers still see the old release while checks run
    assert release.switch(store, second) == release.Switched(first, [])
    new = _texts(store)
    assert new != old and any("a rewritten goal" in t for t in new)
    # a failed site deploy after the switch: one step back, and forward again
    assert release.rollback(store) == (second, first)
    assert _texts(store) == old
    release.switch(store, second)
    assert _texts(store) == new


def test_a_broken_doc_keeps_its_old_points_in_the_new_release(server):
    docs, store = server
    first, _ = _publish(docs, store, FakeEmbedder(), 0)
    release.switch(store, first)
    before = {t for t in _texts(store) if "topic number 1" in t}
    (docs / "01-intro.md").write_text("---\ntitle: [unclosed\n---\n\n## X\n\ntext\n")
    (docs / "03-new.md").write_text("## Fresh page\n\n" + PARA.format(topic="new page"))
    second, summary = _publish(docs, store, FakeEmbedder(), 1)
    assert summary.failed == 1 and "01-intro.md" in str(summary.problems[0])
    release.switch(store, second)
    assert before <= _texts(store) and any("new page" in t for t in _texts(store))


def test_a_failed_stage_leaves_nothing_and_the_live_index_untouched(server):
    docs, store = server
    first, _ = _publish(docs, store, FakeEmbedder(), 0)
    release.switch(store, first)
    old = _texts(store)

    def broken(target):
        raise ConfigError("nothing to index")

    with pytest.raises(ConfigError):
        release.stage(store, FakeEmbedder(), broken, now=T0 + timedelta(minutes=1))
    assert release.releases(store).names == [first] and _texts(store) == old


def test_discard_and_refusals(server):
    docs, store = server
    first, _ = _publish(docs, store, FakeEmbedder(), 0)
    with pytest.raises(ConfigError, match="No staged release"):
        release.switch(store, "book--nope")
    release.switch(store, first)
    with pytest.raises(ConfigError, match="roll back before"):
        release.discard(store, first)
    with pytest.raises(ConfigError, match="No earlier release"):
        release.rollback(store)
    second, _ = _publish(docs, store, FakeEmbedder(), 1)
    assert release.discard(store, second) and release.releases(store).names == [first]


def test_old_releases_are_pruned_to_keep(server):
    docs, store = server
    names = []
    for minute in range(4):
        name, _ = _publish(docs, store, FakeEmbedder(), minute)
        release.switch(store, name, keep=3)
        names.append(name)
    assert release.releases(store).names == names[1:]  # live + 2 to roll back to


def test_a_collection_made_by_index_becomes_the_first_release(server):
    docs, store = server
    sync_docs(docs, SiteSettings(base_url="/b/"), ChunkOptions(), store, FakeEmbedder())
    old = _texts(store)
    state = release.releases(store)
    assert state.legacy and state.live == "book"
    embedder = FakeEmbedder()
    name, summary = _publish(docs, store, embedder, 0)
    assert summary.embedded == 0  # copied from the live collection, nothing re-embedded
    release.switch(store, name)
    assert _texts(store) == old and not release.releases(store).legacy


def test_the_embedded_index_is_refused_with_what_to_set():
    class Embedded:  # the embedded engine's store has no server client
        collection = "book"

    with pytest.raises(ConfigError, match="QDRANT_URL"):
        release.releases(Embedded())
    with pytest.raises(ConfigError, match="QDRANT_COLLECTION"):
        release._check_alias("book--2")


def test_the_lambda_query_path_follows_the_alias(server):
    """functions/search/qdrant_http (what Lambda runs) against a Qdrant REST stand-in: the health
    check and searches name the alias and land on whatever release it points at."""
    from functions.search.qdrant_http import QdrantHttp
    from functions.search.sparse import encode_query

    docs, store = server
    embedder = FakeEmbedder()
    first, _ = _publish(docs, store, embedder, 0)
    release.switch(store, first)
    (docs / "03-new.md").write_text("## Fresh page\n\n" + PARA.format(topic="zebra crossings"))
    second, _ = _publish(docs, store, embedder, 1)
    question = "zebra crossings"
    api = QdrantHttp(store.http.url, "book")

    def top() -> str:
        hits = api.search(embedder.embed_batch([question])[0], encode_query(question), 1)
        return hits[0].payload["doc_path"]

    assert api.index_status()["points"] > 0 and top() != "03-new.md"
    release.switch(store, second)
    assert top() == "03-new.md"
    release.rollback(store)
    assert top() != "03-new.md"


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_the_command_stages_reports_broken_docs_in_the_job_summary_and_switches(
        server, tmp_path, monkeypatch, capsys):
    from textbook_chat_cli import release as release_cli
    from textbook_chat_cli.main import build_parser, main

    docs, store = server
    (docs / "01-intro.md").write_text("---\ntitle: [unclosed\n---\n\n## X\n\ntext\n")
    outputs, page = tmp_path / "github_output", tmp_path / "step_summary"
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(page))
    settings = Settings(collection="book", qdrant_url="http://unused")
    args = build_parser().parse_args(["release", "stage", str(docs), "--base-url", "/b/"])
    assert release_cli.run_step(args, settings, store) == 0  # a broken doc does not block
    name = capsys.readouterr().out.strip().splitlines()[-1]
    assert outputs.read_text() == f"collection={name}\n"
    assert "01-intro.md" in page.read_text() and "keep their previous text" in page.read_text()
    args = build_parser().parse_args(["release", "switch", name])
    assert release_cli.run_step(args, settings, store) == 0
    assert release.releases(store).live == name
    monkeypatch.delenv("QDRANT_URL", raising=False)
    assert main(["release", "status"]) == 2
    assert "QDRANT_URL" in capsys.readouterr().err


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_staging_another_book_is_refused_naming_the_alias_unless_fresh(server, tmp_path):
    from indexer.plan import AnotherBook

    docs, store = server
    first, _ = _publish(docs, store, FakeEmbedder(), 0)
    release.switch(store, first)
    old = _texts(store)
    other = write_docs(tmp_path / "other", {"boats.md": "## Sails\n\n" + PARA.format(topic="boats")})
    with pytest.raises(AnotherBook, match=r"^The collection 'book' holds another book \(2 pages, "
                       "none of them in"):
        _publish(other, store, FakeEmbedder(), 1)
    assert release.releases(store).names == [first] and _texts(store) == old
    name, summary = release.stage(store, FakeEmbedder(), _index(other, FakeEmbedder()),
                                  now=T0 + timedelta(minutes=2), fresh=True)
    assert summary.deleted == 0 and store.collection_store(name).count() == summary.chunks
    assert _texts(store) == old  # still invisible until the switch


def _r(name, state="complete", previous=None, was_live=True):
    return release.Release(name, state, 5, previous, was_live)


def test_rollback_and_pruning_follow_what_was_live_not_the_names():
    """Pure: b went live after a; c was staged and never published (a failed deploy); d went
    live after b. Rollback from d goes to b; keep=3 keeps d, b and a (live before), not c."""
    names = ["book--a", "book--b", "book--c", "book--d"]
    info = {"book--a": _r("book--a", previous=""), "book--b": _r("book--b", previous="book--a"),
            "book--c": _r("book--c", was_live=False), "book--d": _r("book--d", previous="book--b")}
    state = release.Releases("book", "book--d", False, names, info)
    assert state.previous() == "book--b"
    assert release.to_prune(state, keep=3) == ["book--c"]
    assert release.to_prune(state, keep=1) == ["book--a", "book--c"]  # never b: readers' last
    # an incomplete release is never a rollback target and always pruned once older than live
    info["book--b"] = _r("book--b", state="incomplete")
    assert state.previous() is None and release.to_prune(state, keep=9) == ["book--b"]
    # releases staged before marks: the newest older one that was or may have been live
    old = {n: release.Release(n, "unmarked") for n in names}
    assert release.Releases("book", "book--d", False, names, old).previous() == "book--c"


def test_rollback_never_goes_to_a_release_that_was_never_live(server):
    docs, store = server
    a, _ = _publish(docs, store, FakeEmbedder(), 0)
    release.switch(store, a)
    b, _ = _publish(docs, store, FakeEmbedder(), 1)
    release.switch(store, b)
    never, _ = _publish(docs, store, FakeEmbedder(), 2)  # its site deploy failed: not switched
    d, _ = _publish(docs, store, FakeEmbedder(), 3)
    assert release.switch(store, d) == release.Switched(b, [never])
    assert release.rollback(store) == (d, b)
    lines = release.describe(release.releases(store))
    assert lines[0] == f"book -> {b}"
    assert lines[1] == f"  {a}  complete, 5 points; readers' previous: `rollback` returns here"
    assert lines[3] == f"  {d}  complete, 5 points; was live"


def test_an_incomplete_release_is_shown_refused_and_discarded(server):
    """What a stage killed after its first copy batch leaves (the kill itself: test_release_kill)."""
    docs, store = server
    first, _ = _publish(docs, store, FakeEmbedder(), 0)
    release.switch(store, first)
    half = "book--20261101T010000000000Z"
    target = store.collection_store(half)
    target.ensure_collection("fake-embedder", 16)
    target.set_meta(**{release.META_STAGING: "2026-11-01T01:00:00"})
    release._copy_points(store, first, half)
    state = release.releases(store)
    assert state.release(half).state == "incomplete"
    assert release.describe(state)[-1].startswith(f"  {half}  INCOMPLETE: its stage did not finish")
    with pytest.raises(ConfigError, match=f"The release '{half}' is incomplete"):
        release.switch(store, half)
    with pytest.raises(ConfigError, match="No earlier release"):
        release.rollback(store)  # the only other release is the half-built one
    assert release.discard_incomplete(store) == [half]
    assert release.releases(store).names == [first]


def test_stage_deletes_many_pages_only_with_prune(server):
    docs, store = server
    for n in range(3, 8):
        (docs / f"extra-{n}.md").write_text(f"# Extra {n}\n\n## About {n}\n\n"
                                            + PARA.format(topic=f"extra page {n}"))
    first, _ = _publish(docs, store, FakeEmbedder(), 0)
    release.switch(store, first)
    for n in range(5, 8):  # three of seven pages gone at once
        (docs / f"extra-{n}.md").unlink()
    with pytest.raises(LargeDeletion, match=r"would delete 3 of the 7 pages the collection "
                                            r"'book' holds .* again with --prune"):
        _publish(docs, store, FakeEmbedder(), 1)
    assert release.releases(store).names == [first]  # the refused stage left nothing

    def pruned(target):
        return sync_docs(docs, SiteSettings(base_url="/b/"), ChunkOptions(), target,
                         FakeEmbedder(), prune=True)

    name, summary = release.stage(store, FakeEmbedder(), pruned, now=T0 + timedelta(minutes=2))
    assert summary.deleted > 0 and name in release.releases(store).names


def test_index_refuses_to_write_into_a_live_release(server):
    docs, store = server
    first, summary = _publish(docs, store, FakeEmbedder(), 0)
    release.switch(store, first)
    (docs / "03-new.md").write_text("## Fresh page\n\n" + PARA.format(topic="new page"))
    with pytest.raises(ConfigError, match=r"The collection 'book' is a release alias readers "
                                          r"query now .* Run `textbook-chat release stage "):
        index_docs(resolve_job(docs), Settings(qdrant_url=store.http.url, collection="book"),
                   embedder=FakeEmbedder(), say=lambda _: None)
    assert store.count() == summary.chunks  # readers' release untouched
    assert release.switch(store, first).before == first  # and still what it recorded


def test_a_stage_whose_release_is_discarded_meanwhile_says_so(server):
    docs, store = server
    first, _ = _publish(docs, store, FakeEmbedder(), 0)
    release.switch(store, first)

    def raced(target):  # `release discard --incomplete` in another terminal, mid-sync
        assert release.discard_incomplete(store) == [target.collection]
        return target.count()  # the sync's next request (it was embedding meanwhile)

    with pytest.raises(ConfigError, match=r"was deleted while it was being staged \(a `release "
                                          r"discard --incomplete` run meanwhile\?\): readers "
                                          r"stay on book--"):
        release.stage(store, FakeEmbedder(), raced, now=T0 + timedelta(minutes=1))
    assert release.releases(store).names == [first]


def test_stage_says_what_the_release_starts_from(server):
    """The author's line before the sync: the live release's points copied (how many), or
    empty and why (nothing live, --recreate, another model: every chunk is then embedded)."""
    docs, store = server
    said: list[str] = []

    def stage(embedder, minutes, fresh=False):
        name, summary = release.stage(store, embedder, _index(docs, embedder), fresh=fresh,
                                      now=T0 + timedelta(minutes=minutes), say=said.append)
        return name, summary

    first, summary = stage(FakeEmbedder(), 0)
    assert said[-1].startswith("No release is live yet: this one starts empty")
    release.switch(store, first)
    second, again = stage(FakeEmbedder(), 1)
    assert said[-1].startswith(f"Copied the live release {first} ({summary.chunks} points)")
    assert again.embedded == 0
    stage(FakeEmbedder(), 2, fresh=True)
    assert said[-1].startswith(f"--recreate: this release starts empty; readers stay on {first}")
    _, other = stage(FakeEmbedder(model_name="fake-embedder-2"), 3)
    assert said[-1] == (f"The live release {first} was built with 'fake-embedder', not "
                        "'fake-embedder-2': this one starts empty (every chunk is embedded with "
                        "the new model).")
    assert other.embedded == other.chunks == summary.chunks
    assert len(said) == 4
