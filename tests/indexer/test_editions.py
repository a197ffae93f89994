"""Versioned and translated books: manifest keys, one point per section per edition, exact URLs,
re-runs that delete only what is gone, and unversioned books keeping their ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from functions.errors import ConfigError
from functions.search.contract import META_EDITIONS, Editions, chunk_id
from functions.search.store import QdrantStore
from functions.settings import Settings
from indexer.build import build_chunks
from indexer.chunker import ChunkOptions
from indexer.job import IndexJob, index_docs
from indexer.model import SiteSettings
from indexer.plan import LargeDeletion
from indexer.routes import editions, load_manifest
from indexer.sync import sync_docs
from tests.fakes.embedder import FakeEmbedder

PARA = "The robot must pass the stop test at least {n} times before it may drive alone in the lab. " * 3
SAFETY = "---\ntitle: Safety\n---\n\n# Safety\n\n## Stop test\n\n{text}\n\n## Checklist\n\n{check}\n"
CHECK = "Check the battery, the sensors and the emergency stop before every single run of the robot. " * 3
FR = ("---\ntitle: Sécurité\n---\n\n# Sécurité\n\n## Essai d'arrêt {#stop-test}\n\n"
      + "Le robot doit réussir l'essai d'arrêt au moins vingt fois avant de rouler seul. " * 3 + "\n")


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def entry(source: str, permalink: str, version: str) -> dict:
    return {"source": source, "id": "safety", "permalink": permalink, "title": "Safety",
            "version": version, "locale": None, "frontMatter": {"title": "Safety"}}


def versioned_site(root: Path, *, with_1_0: bool = True, last: str = "1.0") -> tuple[Path, Path]:
    """docs/ ("next": twenty times), versioned_docs/version-1.0 (ten times), an fr translation
    of next and an untranslated 1.0 page in fr; the manifests the plugin writes for it.
    `last`: the version served at the docs root (the docs plugin's lastVersion)."""
    write(root, {
        "docs/safety.md": SAFETY.format(text=PARA.format(n="twenty"), check=CHECK),
        "versioned_docs/version-1.0/safety.md": SAFETY.format(text=PARA.format(n="ten"), check=CHECK),
        "i18n/fr/docusaurus-plugin-content-docs/current/safety.md": FR,
    })
    out = root / ".textbook-chat"
    out.mkdir(exist_ok=True)
    common = {"version": 1, "siteUrl": "https://x.io", "trailingSlash": None, "routeBasePath": "docs",
              "defaultLocale": "en", "locales": ["en", "fr"]}
    path = {"current": "" if last == "current" or not with_1_0 else "next/",
            "1.0": "" if last == "1.0" else "1.0/"}
    en = [entry("@site/docs/safety.md", f"/book/docs/{path['current']}safety", "current")]
    fr = [entry("@site/i18n/fr/docusaurus-plugin-content-docs/current/safety.md",
                f"/book/fr/docs/{path['current']}safety", "current")]
    if with_1_0:
        en.append(entry("@site/versioned_docs/version-1.0/safety.md",
                        f"/book/docs/{path['1.0']}safety", "1.0"))
        fr.append(entry("@site/versioned_docs/version-1.0/safety.md",
                        f"/book/fr/docs/{path['1.0']}safety", "1.0"))
    (out / "manifest.json").write_text(json.dumps({**common, "baseUrl": "/book/", "locale": "en", "docs": en}))
    (out / "manifest.fr.json").write_text(json.dumps({**common, "baseUrl": "/book/fr/", "locale": "fr", "docs": fr}))
    return root / "docs", out / "manifest.json"


def test_manifest_keys_every_version_and_locale_apart(tmp_path):
    docs, manifest = versioned_site(tmp_path)
    routes = load_manifest(manifest, docs)
    assert sorted(routes) == ["en:versioned_docs/version-1.0/safety.md",
                              "fr:i18n/fr/docusaurus-plugin-content-docs/current/safety.md",
                              "fr:versioned_docs/version-1.0/safety.md", "safety.md"]
    current = routes["safety.md"]
    assert (current.version, current.locale, current.default, current.edition) == ("current", "en", True, "")
    assert current.file == tmp_path / "docs" / "safety.md"
    old = routes["en:versioned_docs/version-1.0/safety.md"]
    assert (old.doc_path, old.url, old.edition) == ("safety.md", "/book/docs/safety", "1.0@en")
    assert old.content_dir == tmp_path / "versioned_docs" / "version-1.0"
    translated = routes["fr:i18n/fr/docusaurus-plugin-content-docs/current/safety.md"]
    assert (translated.url, translated.untranslated) == ("/book/fr/docs/next/safety", False)
    assert routes["fr:versioned_docs/version-1.0/safety.md"].untranslated is True
    # Any locale's manifest finds the others: the plugin may pass either.
    assert sorted(load_manifest(manifest.with_name("manifest.fr.json"), docs)) == sorted(routes)


def test_each_edition_is_its_own_points_with_its_own_text_and_urls(tmp_path):
    docs, manifest = versioned_site(tmp_path)
    built = build_chunks(docs, SiteSettings(base_url="/book/"), ChunkOptions(),
                         routes=load_manifest(manifest, docs))
    assert built.failed == []
    stop = {(c.version, c.locale): c for c in built.chunks if c.anchor == "stop-test"}
    assert set(stop) == {("current", "en"), ("1.0", "en"), ("current", "fr"), ("1.0", "fr")}
    assert "twenty times" in stop["current", "en"].content and "ten times" in stop["1.0", "en"].content
    assert stop["1.0", "en"].url == "/book/docs/safety#stop-test"
    assert stop["current", "fr"].url == "/book/fr/docs/next/safety#stop-test"  # the explicit {#id}
    assert "vingt" in stop["current", "fr"].content and not stop["current", "fr"].untranslated
    assert stop["1.0", "fr"].untranslated and stop["1.0", "fr"].url == "/book/fr/docs/safety#stop-test"
    assert len({c.point_id for c in built.chunks}) == len(built.chunks)
    # The current version in the default locale keeps the ids of an unversioned book.
    assert stop["current", "en"].chunk_id == chunk_id("safety.md", stop["current", "en"].chunk_index)
    assert stop["1.0", "en"].chunk_id == chunk_id("safety.md", stop["1.0", "en"].chunk_index, "1.0@en")


@pytest.mark.parametrize(("last", "with_1_0", "default"), [
    ("1.0", True, "1.0"), ("current", True, "current"), ("current", False, "current")])
def test_editions_name_every_version_and_locale_and_the_one_at_the_docs_root(
        tmp_path, last, with_1_0, default):
    docs, manifest = versioned_site(tmp_path, with_1_0=with_1_0, last=last)
    found = editions(load_manifest(manifest, docs))
    versions = ("current", "1.0") if with_1_0 else ("current",)
    assert found == Editions(versions, ("en", "fr"), default, "en")
    assert editions(None) == Editions()


def test_a_custom_version_path_falls_back_to_the_newest_release(tmp_path):
    docs, manifest = versioned_site(tmp_path)
    data = json.loads(manifest.read_text())
    for doc in data["docs"]:  # versions: {current: {path: "dev"}, "1.0": {path: "v1"}}
        doc["permalink"] = doc["permalink"].replace("/docs/next/", "/docs/dev/").replace(
            "/docs/safety", "/docs/v1/safety")
    manifest.write_text(json.dumps(data))
    assert editions(load_manifest(manifest, docs)).default_version == "1.0"


def test_an_index_run_records_its_editions_for_the_api(tmp_path, store):
    docs, manifest = versioned_site(tmp_path / "site")
    settings = Settings(qdrant_path=str(tmp_path / "qdrant"), collection="t")
    job = IndexJob(docs, SiteSettings(base_url="/book/"), ChunkOptions(), manifest,
                   load_manifest(manifest, docs))
    index_docs(job, settings, FakeEmbedder(), store, say=lambda _: None)
    assert Editions.from_meta(store.collection_meta()) == Editions(
        ("current", "1.0"), ("en", "fr"), "1.0", "en")
    # Indexed again without the manifest: only the docs folder, and no versions or locales
    # (three of the four pages deleted: only with --prune).
    again = IndexJob(docs, SiteSettings(base_url="/book/"))
    with pytest.raises(LargeDeletion, match=r"delete 3 of the 4 pages .*\(en:1\.0:safety\.md, "):
        index_docs(again, settings, FakeEmbedder(), store, say=lambda _: None)
    index_docs(again, settings, FakeEmbedder(), store, say=lambda _: None, prune=True)
    assert store.collection_meta()[META_EDITIONS] == {
        "versions": [], "locales": [], "default_version": "", "default_locale": ""}


def test_unversioned_ids_do_not_change(tmp_path):
    write(tmp_path / "docs", {"safety.md": SAFETY.format(text=PARA.format(n="ten"), check=CHECK)})
    built = build_chunks(tmp_path / "docs", SiteSettings(base_url="/book/"), ChunkOptions())
    assert [c.chunk_id for c in built.chunks] == [chunk_id("safety.md", c.chunk_index) for c in built.chunks]
    assert {(c.version, c.locale) for c in built.chunks} == {("", "")}


@pytest.fixture
def store(tmp_path):
    store = QdrantStore.open(Settings(qdrant_path=str(tmp_path / "qdrant"), collection="t"))
    yield store
    store.close()


def test_one_run_indexes_every_edition_and_a_rerun_deletes_only_what_is_gone(tmp_path, store):
    docs, manifest = versioned_site(tmp_path / "site")
    site = SiteSettings(base_url="/book/")

    def index(prune=False):
        return sync_docs(docs, site, ChunkOptions(), store, FakeEmbedder(),
                         routes=load_manifest(manifest, docs), prune=prune)

    first = index()
    assert first.failed == 0 and first.deleted == 0
    # Text shared by editions is embedded once.
    assert first.embedded < first.chunks == store.count()
    again = index()
    assert (again.embedded, again.reused, again.deleted, again.unchanged) == (0, 0, 0, first.chunks)
    versioned_site(tmp_path / "site", with_1_0=False)  # version 1.0 dropped from the site
    with pytest.raises(LargeDeletion, match="--prune"):  # a whole version: said, not done
        index()
    dropped = index(prune=True)
    assert dropped.deleted == first.chunks - dropped.chunks > 0
    versions = {p["version"] for _, p in store.scroll_payloads(["version"])}
    assert versions == {"current"}


def test_indexing_nothing_is_an_error_not_an_empty_index(tmp_path, store):
    docs, manifest = versioned_site(tmp_path / "site")
    sync_docs(docs, SiteSettings(), ChunkOptions(), store, FakeEmbedder())
    held = store.count()
    empty = tmp_path / "empty"
    (empty / "img").mkdir(parents=True)
    with pytest.raises(ConfigError, match="nothing to index: .*holds no Markdown docs"):
        sync_docs(empty, SiteSettings(), ChunkOptions(), store, FakeEmbedder())
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**data, "docs": [], "locales": ["en"]}))
    with pytest.raises(ConfigError, match="none of the docs the build manifest lists"):
        sync_docs(docs, SiteSettings(), ChunkOptions(), store, FakeEmbedder(),
                  routes=load_manifest(manifest, docs))
    assert store.count() == held  # nothing was deleted


def test_a_docs_folder_that_is_not_the_manifests_says_so(tmp_path):
    docs, manifest = versioned_site(tmp_path / "site")
    elsewhere = tmp_path / "elsewhere" / "docs"
    elsewhere.mkdir(parents=True)
    built = build_chunks(elsewhere, SiteSettings(), ChunkOptions(), routes=load_manifest(manifest, elsewhere))
    assert built.chunks == [] and len(built.failed) == 4
    assert all("is not found at" in p.reason and "docs folder of the site" in p.reason for p in built.failed)
    # The site folder itself works as DOCS too: the manifest says where each file is.
    site = tmp_path / "site"
    built = build_chunks(site, SiteSettings(), ChunkOptions(), routes=load_manifest(manifest, site))
    assert built.failed == [] and len({(c.version, c.locale) for c in built.chunks}) == 4


def test_upgrading_an_unversioned_index_to_the_manifest_re_embeds_nothing(tmp_path, store):
    docs, manifest = versioned_site(tmp_path / "site", with_1_0=False)
    site = SiteSettings(base_url="/book/")
    before = sync_docs(docs, site, ChunkOptions(), store, FakeEmbedder())  # as before versions
    counting = FakeEmbedder()
    after = sync_docs(docs, site, ChunkOptions(), store, counting, routes=load_manifest(manifest, docs))
    assert after.deleted == 0 and after.failed == 0
    # The current English chunks keep their points and vectors (payloads gain version and
    # locale); only the French page is new text.
    assert (after.reused, after.embedded, after.chunks) == (before.chunks, 1, before.chunks + 1)
    assert counting.texts_embedded and all("vingt" in t for t in counting.texts_embedded)


def test_an_index_run_records_the_site_s_address_from_its_config_or_manifest(tmp_path, store):
    """docusaurus.config's `url` (read by pattern here: no Node modules), else nothing; the
    build manifest's `siteUrl` wins. MCP's tools make their URLs absolute with it."""
    from functions.search.contract import META_SITE_URL
    from indexer.job import resolve_job

    site = tmp_path / "site"
    write(site / "docs", {"intro.md": "# Intro\n\n## First steps\n\nRead this first, slowly.\n"})
    config = site / "docusaurus.config.js"
    config.write_text("module.exports = {title: 'B', url: 'https://robots.example/', "
                      "baseUrl: '/book/', themeConfig: {navbar: {items: [{url: 'https://x.example'}]}}};")
    settings = Settings(qdrant_path=str(tmp_path / "qdrant"), collection="t")
    job = resolve_job(site / "docs")
    assert job.site_url == "https://robots.example"
    index_docs(job, settings, FakeEmbedder(), store, say=lambda _: None)
    assert store.collection_meta()[META_SITE_URL] == "https://robots.example"
    (site / ".textbook-chat").mkdir()
    (site / ".textbook-chat" / "manifest.json").write_text(json.dumps({
        "version": 1, "siteUrl": "https://built.example", "baseUrl": "/book/",
        "trailingSlash": None, "routeBasePath": "docs", "locale": "en", "defaultLocale": "en",
        "locales": ["en"], "docs": [entry("intro.md", "/book/docs/intro", "current")]}))
    assert resolve_job(site / "docs").site_url == "https://built.example"
    config.write_text("module.exports = {baseUrl: '/book/'};")  # no url: none recorded
    (site / ".textbook-chat" / "manifest.json").unlink()
    assert resolve_job(site / "docs").site_url is None
