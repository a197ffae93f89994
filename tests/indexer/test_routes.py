"""Doc ids and URLs by the Docusaurus docs-plugin rules, the build manifest, and slug collisions."""

from __future__ import annotations

import json

import pytest

from indexer.model import Problem, SiteSettings
from indexer.routes import (
    apply_trailing_slash,
    doc_route,
    load_manifest,
    strip_number_prefix,
)

SITE = SiteSettings("/book/", "docs")


@pytest.mark.parametrize(("name", "stripped"), [
    ("01-intro", "intro"), ("10_setup", "setup"), ("3.motors", "motors"), ("007 - spy", "spy"),
    ("2025-03-01-log", "2025-03-01-log"), ("2.0-release", "2.0-release"), ("12", "12"),
    ("01-", "01-"), ("1--x", "x"), ("intro", "intro"), ("v2-api", "v2-api"),
])
def test_number_prefixes(name, stripped):
    assert strip_number_prefix(name) == stripped


@pytest.mark.parametrize(("rel", "front_matter", "doc_id", "url"), [
    ("01-welcome.md", {}, "welcome", "/book/docs/welcome"),
    ("03-arms/02-joints.md", {}, "arms/joints", "/book/docs/arms/joints"),
    ("03-arms/05-more/01-deep.mdx", {}, "arms/more/deep", "/book/docs/arms/more/deep"),
    ("03-arms/README.md", {}, "arms/README", "/book/docs/arms/"),
    ("03-arms/index.mdx", {}, "arms/index", "/book/docs/arms/"),
    ("03-arms/03-arms.md", {}, "arms/arms", "/book/docs/arms/"),
    ("index.md", {}, "index", "/book/docs/"),
    ("03-arms/grip.md", {"slug": "hold"}, "arms/grip", "/book/docs/arms/hold"),
    ("03-arms/grip.md", {"slug": "../hold"}, "arms/grip", "/book/docs/hold"),
    ("03-arms/grip.md", {"slug": "/x/y"}, "arms/grip", "/book/docs/x/y"),
    ("03-arms/grip.md", {"id": "gripper"}, "arms/gripper", "/book/docs/arms/gripper"),
    ("03-arms/grip.md", {"id": "g", "slug": "s"}, "arms/g", "/book/docs/arms/s"),
    ("03-arms/index.md", {"slug": "overview"}, "arms/index", "/book/docs/arms/overview"),
    ("2025-01-02-notes.md", {}, "2025-01-02-notes", "/book/docs/2025-01-02-notes"),
    ("misc/Mixed Case.md", {}, "misc/Mixed Case", "/book/docs/misc/Mixed Case"),
])
def test_doc_routes(rel, front_matter, doc_id, url):
    route = doc_route(rel, front_matter, SITE)
    assert (route.doc_id, route.url) == (doc_id, url)


@pytest.mark.parametrize(("site", "rel", "url"), [
    (SiteSettings("/", "docs"), "a.md", "/docs/a"),
    (SiteSettings("/book/", "/"), "a.md", "/book/a"),
    (SiteSettings("/book/", "/"), "index.md", "/book/"),
    (SiteSettings("/book/", "/", False), "index.md", "/book/"),
    (SiteSettings("/book/", "docs", False), "index.md", "/book/docs"),
    (SiteSettings("/book/", "docs", False), "x/README.md", "/book/docs/x"),
    (SiteSettings("/book/", "docs", True), "a.md", "/book/docs/a/"),
    (SiteSettings("/book/", "docs", True), "x/README.md", "/book/docs/x/"),
    (SiteSettings("/", "/", False), "index.md", "/"),
    (SiteSettings("/book/", "guide/v1"), "a.md", "/book/guide/v1/a"),
])
def test_site_settings_and_trailing_slash(site, rel, url):
    route = doc_route(rel, {}, site)
    assert route.url == url
    assert route.permalink == doc_route(rel, {}, SiteSettings(site.base_url, site.route_base_path)).url


def test_apply_trailing_slash_keeps_query_free_paths_and_root():
    assert apply_trailing_slash("/book/", SiteSettings("/book/", trailing_slash=False)) == "/book/"
    assert apply_trailing_slash("/", SiteSettings("/", trailing_slash=True)) == "/"
    assert apply_trailing_slash("/b/x/", SiteSettings("/b/")) == "/b/x/"


def _manifest(tmp_path, trailing):
    data = {"version": 1, "siteUrl": "https://u.example", "baseUrl": "/book/",
            "trailingSlash": trailing, "routeBasePath": "docs",
            "docs": [{"source": "@site/docs/03-arms/02-joints.md", "id": "arms/joints",
                      "permalink": "/book/docs/arms/joints", "title": "Joints",
                      "version": "current", "locale": "en", "frontMatter": {"a": 1}},
                     {"source": "@site/docs/03-arms/README.md", "id": "arms/README",
                      "permalink": "/book/docs/arms/", "title": "Arms",
                      "version": "current", "locale": "en", "frontMatter": {}}]}
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(("trailing", "urls"), [
    (None, ["/book/docs/arms/joints", "/book/docs/arms/"]),
    (True, ["/book/docs/arms/joints/", "/book/docs/arms/"]),
    (False, ["/book/docs/arms/joints", "/book/docs/arms"]),
])
def test_manifest_served_url_is_permalink_with_trailing_slash(tmp_path, trailing, urls):
    routes = load_manifest(_manifest(tmp_path, trailing))
    assert list(routes) == ["03-arms/02-joints.md", "03-arms/README.md"]
    assert [r.url for r in routes.values()] == urls
    joints = routes["03-arms/02-joints.md"]
    assert (joints.doc_id, joints.title, joints.front_matter) == ("arms/joints", "Joints", {"a": 1})


def test_manifest_docs_dir_on_disk_finds_the_docs_prefix(tmp_path):
    docs = tmp_path / "site" / "content" / "docs"
    (docs / "03-arms").mkdir(parents=True)
    (docs / "03-arms" / "02-joints.md").write_text("# J\n")
    path = _manifest(tmp_path, None)
    text = path.read_text().replace("@site/docs/", "@site/content/docs/")
    path.write_text(text)
    assert "03-arms/02-joints.md" in load_manifest(path, docs)


def test_broken_manifest_is_a_clear_problem(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text("{not json")
    with pytest.raises(Problem, match="cannot read the build manifest"):
        load_manifest(path)
