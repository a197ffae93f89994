"""Every URL and heading id of real Docusaurus 3.10.2 builds (../shared/corpora truth files).

For each truth file (three corpora, plus tricky-docs built with other baseUrl, routeBasePath,
trailingSlash and markdown.format settings) every doc is parsed with that build's settings and
compared in full:
- the served URL (trailingSlash applied), the doc id and the page title;
- the page's rendered headings, in order, as (level, id): our sections that are headings, plus
  the `<header><h1>` the theme adds from the title when the Markdown has no H1. Nothing in the
  truth is skipped: partial headings (own slugger), raw `<h2 id>` headings, headings without id
  (`## 🚀`, `<h3>` without id) and the generated footnotes heading are all sections of ours.
- the manifest route (DESIGN.md contract) gives the same URLs as the build.
"""

from __future__ import annotations

import json

import pytest

from indexer.collisions import Claim, resolve
from indexer.markdown import is_indexable, parse_document
from indexer.model import Document, SiteSettings
from indexer.routes import load_manifest
from indexer.site_config import load_site_config
from tests.shared import shared_dir

SHARED = shared_dir()
CORPORA = SHARED / "corpora"
TRUTH_FILES = sorted(CORPORA.glob("*/truth.json")) + sorted(CORPORA.glob("*/variants/*.json"))
TRAILING = {"unset": None, "true": True, "false": False}

pytestmark = pytest.mark.corpora


def _truth_ids():
    return [str(p.relative_to(CORPORA)) for p in TRUTH_FILES] or ["absent"]


@pytest.fixture(params=TRUTH_FILES or [None], ids=_truth_ids())
def truth(request):
    if request.param is None:
        pytest.skip(f"shared corpora not found at {CORPORA} (set TEXTBOOK_CHAT_SHARED)")
    data = json.loads(request.param.read_text(encoding="utf-8"))
    req = data["request"]
    site = SiteSettings(req["base_url"], req["route_base_path"], TRAILING[req["trailing_slash"]],
                        req["format"])
    docs_dir = CORPORA / request.param.relative_to(CORPORA).parts[0] / "docs"
    data["truth_file"] = request.param
    return data, site, docs_dir


def rendered_headings(doc: Document) -> list[tuple[int, str | None]]:
    """(level, id) of each heading the built page shows, in order."""
    headings = [(s.level, s.anchor) for s in doc.sections
                if not (s.level == 1 and s.anchor is None and s.title == "")]  # our page-top intro
    if not any(level == 1 for level, _ in headings):
        headings.insert(0, (1, None))  # the theme's <header><h1>{title}</h1>
    return headings


def test_every_url_and_heading_id_matches_the_build(truth):
    data, site, docs_dir = truth
    url_misses, heading_misses, n_headings = [], [], 0
    for entry in data["docs"]:
        doc = parse_document(docs_dir / entry["source"], docs_dir, site)
        assert doc is not None, f"{entry['source']} was built but we skip it"
        if (doc.url, doc.doc_id, doc.title) != (entry["url"], entry["id"], entry["title"]):
            url_misses.append((entry["source"], doc.url, entry["url"], doc.doc_id, entry["id"]))
        expected = [(h["level"], h["id"]) for h in entry["headings"]]
        n_headings += len(expected)
        got = rendered_headings(doc)
        if got != expected:
            heading_misses.append((entry["source"], got, expected))
    assert not url_misses, f"{len(url_misses)}/{len(data['docs'])} URLs differ: {url_misses}"
    assert not heading_misses, f"heading ids differ (of {n_headings}): {heading_misses}"


def test_the_same_docs_are_built(truth):
    data, site, docs_dir = truth
    ours = set()
    for path in sorted(docs_dir.rglob("*.md*")):
        rel = path.relative_to(docs_dir).as_posix()
        if is_indexable(rel, {}) and parse_document(path, docs_dir, site) is not None:
            ours.add(rel)
    assert ours == {d["source"] for d in data["docs"]}


def test_manifest_routes_give_the_served_urls(truth, tmp_path):
    data, site, docs_dir = truth
    manifest = {
        "version": 1, "siteUrl": "https://example.com", "baseUrl": data["site"]["baseUrl"],
        "trailingSlash": data["site"]["trailingSlash"], "routeBasePath": site.route_base_path,
        "docs": [{"source": "@site/docs/" + d["source"], "id": d["id"], "permalink": d["permalink"],
                  "title": d["title"], "version": "current", "locale": "en",
                  "frontMatter": d["frontMatter"]} for d in data["docs"]],
    }
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    routes = load_manifest(path, docs_dir)
    assert {rel: r.url for rel, r in routes.items()} == {d["source"]: d["url"] for d in data["docs"]}
    for entry in data["docs"][:5]:
        doc = parse_document(docs_dir / entry["source"], docs_dir, site, route=routes[entry["source"]])
        assert (doc.url, doc.doc_id) == (entry["url"], entry["id"])
    assert resolve([Claim(rel, rel, r.url) for rel, r in routes.items()], indexed={}) == []


def test_site_config_gives_the_build_settings(truth):
    data, site, docs_dir = truth
    if data["truth_file"].parent != docs_dir.parent or not (docs_dir.parent / "docusaurus.config.ts").is_file():
        pytest.skip("this build's settings are not in a docusaurus.config of its own")
    config = load_site_config(docs_dir.parent)
    assert config.site == site
    assert config.docs_path == "docs"
