"""Two docs with the same page URL: the one indexed first keeps it, the other is refused with a
message naming both files and the fix (real Qdrant local mode, the index job itself)."""

from __future__ import annotations

import pytest

from functions.search.store import QdrantStore
from functions.settings import Settings
from indexer.chunker import ChunkOptions
from indexer.collisions import Claim, resolve
from indexer.model import SiteSettings
from indexer.sync import sync_docs
from tests.fakes.embedder import FakeEmbedder

PAGE = "---\nslug: /same\n---\n\n## {title}\n\n" + "Words about {title} and their sensors. " * 30


@pytest.fixture
def env(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    store = QdrantStore.open(Settings(qdrant_path=str(tmp_path / "qdrant"), collection="t"))
    yield docs, store
    store.close()


def _run(docs, store):
    return sync_docs(docs, SiteSettings(base_url="/"), ChunkOptions(), store, FakeEmbedder())


def _at(store, url: str) -> set[str]:
    return {p["doc_path"] for _, p in store.scroll_payloads(("doc_path", "page_url"))
            if p["page_url"] == url}


def test_the_first_indexed_page_keeps_the_url_even_when_it_sorts_last(env):
    docs, store = env
    (docs / "zeta.md").write_text(PAGE.format(title="Zeta"))
    assert _run(docs, store).failed == 0
    (docs / "alpha.md").write_text(PAGE.format(title="Alpha"))  # sorts first, comes later
    summary = _run(docs, store)
    assert summary.failed == 1
    [problem] = summary.problems
    assert problem.source == "alpha.md"
    assert "zeta.md" in problem.reason and "indexed first" in problem.reason
    assert "`slug:`" in problem.reason
    assert _at(store, "/docs/same") == {"zeta.md"}  # one page per URL, the first one
    assert _run(docs, store).failed == 1  # still refused on the next run, zeta still there
    assert _at(store, "/docs/same") == {"zeta.md"}


def test_same_run_keeps_the_first_discovered_and_a_fix_indexes_both(env):
    docs, store = env
    (docs / "a.md").write_text(PAGE.format(title="Alpha"))
    (docs / "b.md").write_text(PAGE.format(title="Beta"))
    summary = _run(docs, store)
    assert [p.source for p in summary.problems] == ["b.md"] and "a.md" in str(summary.problems[0])
    assert _at(store, "/docs/same") == {"a.md"}
    (docs / "b.md").write_text(PAGE.format(title="Beta").replace("/same", "/other"))
    assert _run(docs, store).failed == 0
    assert _at(store, "/docs/same") == {"a.md"} and _at(store, "/docs/other") == {"b.md"}


def test_a_page_moved_onto_a_taken_url_loses_its_old_points(env):
    docs, store = env
    (docs / "a.md").write_text(PAGE.format(title="Alpha"))
    (docs / "b.md").write_text(PAGE.format(title="Beta").replace("/same", "/b"))
    assert _run(docs, store).failed == 0
    (docs / "b.md").write_text(PAGE.format(title="Beta"))  # now claims a.md's URL
    summary = _run(docs, store)
    assert [p.source for p in summary.problems] == ["b.md"]
    assert _at(store, "/docs/same") == {"a.md"} and _at(store, "/docs/b") == set()


def test_resolve_prefers_the_indexed_holder_over_discovery_order():
    a, b, c = Claim("a", "a.md", "/x"), Claim("b", "b.md", "/x"), Claim("c", "c.md", "/y")
    assert [(r.claim.key, r.holder.key) for r in resolve([a, b, c], {})] == [("b", "a")]
    assert [(r.claim.key, r.holder.key) for r in resolve([a, b, c], {"b": "/x"})] == [("a", "b")]
    assert resolve([a, c], {"a": "/old"}) == []


def test_collisions_name_both_files():  # (was routes.find_collisions; one detector now)
    claims = [Claim(s, s, url) for s, url in (("a.md", "/d/x"), ("b.md", "/d/y"),
                                               ("c/index.md", "/d/x"))]
    problems = resolve(claims, indexed={})
    assert len(problems) == 1
    assert problems[0].claim.source == "c/index.md"
    assert "a.md" in problems[0].reason and "/d/x" in problems[0].reason
    assert "slug:" in problems[0].reason
