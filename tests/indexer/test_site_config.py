"""Reading Docusaurus settings out of docusaurus.config.js|ts: evaluated by the site's own Node
modules when installed (tests/e2e builds a real site for that), else read by pattern."""

from __future__ import annotations

import json
import shutil

import pytest

from indexer.model import SiteSettings
from indexer.site_config import load_site_config, parse_site_config, read_site_config

TS_CONFIG = """
import type {Config} from '@docusaurus/types';
// baseUrl: '/commented-out/',
const BASE = "/robots/";
const config: Config = {
  title: 'Robots: a book',   /* url: 'x' */
  url: 'https://example.org',
  baseUrl: BASE,
  trailingSlash: false,
  markdown: {format: 'detect', mermaid: true},
  presets: [
    ['classic', {
      docs: {path: './book', routeBasePath: '/', sidebarPath: './sidebars.ts'},
      blog: {path: 'news', routeBasePath: 'news'},
      theme: {customCss: './src/css/custom.css'},
    } satisfies Preset.Options],
  ],
  themeConfig: {navbar: {items: [{to: '/blog', label: 'Blog'}]}},
};
export default config;
"""


def test_reads_literal_settings_from_a_ts_config():
    config = parse_site_config(TS_CONFIG)
    assert config.site == SiteSettings("/robots/", "/", False, "detect")
    assert config.docs_path == "book"
    assert config.site_url == "https://example.org"  # `url`, not a navbar item's
    assert config.warnings == []


def test_docs_plugin_options_and_defaults():
    config = parse_site_config("""module.exports = {
      baseUrl: '/x',
      plugins: [['@docusaurus/plugin-content-docs', {path: 'guides', routeBasePath: 'guides'}]],
    };""")
    assert config.site == SiteSettings("/x/", "guides", None, "mdx")
    assert config.docs_path == "guides"


def test_non_literal_values_warn_and_keep_the_default():
    config = parse_site_config("export default {baseUrl: process.env.BASE_URL || '/', "
                               "markdown: {format: 'md'}};", "docusaurus.config.js")
    assert config.site == SiteSettings()
    assert any("could not read `baseUrl` (not a plain value); using the Docusaurus default: "
               "pass --base-url" in w for w in config.warnings)
    assert any("markdown.format 'md'" in w for w in config.warnings)


def test_site_dir_lookup(tmp_path, capsys):
    assert load_site_config(tmp_path).warnings[0].startswith("no docusaurus.config")
    # no node_modules here: read by pattern, and nothing it could not read, so nothing to warn
    (tmp_path / "docusaurus.config.js").write_text("module.exports = {baseUrl: '/b/'};")
    assert read_site_config(tmp_path).base_url == "/b/"
    assert capsys.readouterr().err == ""


TEMPLATE_CONFIG = """
const projectName = 'robots-book';
const organizationName = "someone";
export default {
  url: `https://${organizationName}.github.io`,
  baseUrl: `/${projectName}/`,
  trailingSlash: false,
  presets: [['classic', {docs: {routeBasePath: "/", editUrl: `https://github.com/${organizationName}/${projectName}/tree/main/`}}]],
};
"""


def test_a_template_literal_is_one_value_and_swallows_nothing_after_it():
    config = parse_site_config(TEMPLATE_CONFIG)
    assert config.site == SiteSettings("/robots-book/", "/", False, "mdx")
    assert config.warnings == []


def test_a_template_of_an_unknown_value_is_named_with_its_flag():
    text = TEMPLATE_CONFIG.replace("const projectName = 'robots-book';", "")
    config = parse_site_config(text, "docusaurus.config.js")
    assert config.site == SiteSettings("/", "/", False, "mdx")  # the rest is still read
    assert config.warnings == ["docusaurus.config.js: could not read `baseUrl` (not a plain "
                               "value); using the Docusaurus default: pass --base-url if the "
                               "site sets another"]
    nested = parse_site_config("export default {baseUrl: `/${a ? `x` : `y`}/`, trailingSlash: true,"
                               " markdown: {format: `detect`}};")
    assert nested.site == SiteSettings("/", "docs", True, "detect")


def test_read_by_pattern_says_why_node_did_not_run(tmp_path, monkeypatch):
    (tmp_path / "docusaurus.config.js").write_text("module.exports = {baseUrl: process.env.B};")
    monkeypatch.setenv("TEXTBOOK_CHAT_NODE", "off")
    config = load_site_config(tmp_path)
    assert config.how == "read from the file, some settings missing (see the warnings above)"
    assert config.warnings[0] == ("docusaurus.config.js computes some settings with code, which is "
                                  "read only by running it with the site's packages; it was not "
                                  "run: Node.js is not installed")
    monkeypatch.delenv("TEXTBOOK_CHAT_NODE")
    (tmp_path / "docusaurus.config.js").write_text("module.exports = {baseUrl: process.env.B };")
    config = load_site_config(tmp_path)
    if shutil.which("node"):
        assert config.warnings[0].endswith("it was not run: the site's packages are not installed "
                                           "(`npm ci` in the site's folder installs them)")
    assert "pass --base-url" in config.warnings[1]
    # Every setting a plain value: what was read, and no nudge to install anything.
    (tmp_path / "docusaurus.config.js").write_text("module.exports = {baseUrl: '/b/'};")
    config = load_site_config(tmp_path)
    assert (config.how, config.warnings) == ("every setting read from the file", [])


@pytest.mark.skipif(not shutil.which("node"), reason="node is not installed")
def test_node_evaluates_a_plain_js_config_without_any_modules(tmp_path):
    """Node alone loads a .js config (no jiti needed); env and computed values are evaluated."""
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "docusaurus.config.js").write_text("""
const projectName = ['robots', 'book'].join('-');
module.exports = async () => ({
  url: `https://${projectName}.example/`,
  baseUrl: `/${projectName}`, trailingSlash: process.env.TC_TRAILING === '1',
  markdown: {format: 'detect'},
  presets: [['@docusaurus/preset-classic', {docs: false}]],
  plugins: [false, 'x', ['@docusaurus/plugin-content-docs',
            {path: './book/', routeBasePath: '/'}]],
});""")
    config = load_site_config(tmp_path)
    assert config.how == "evaluated with node"
    assert config.site == SiteSettings("/robots-book/", "/", False, "detect")
    assert config.docs_path == "book"
    assert config.site_url == "https://robots-book.example"  # the site's address, for MCP
    assert config.warnings == []
    (tmp_path / "docusaurus.config.js").write_text("throw new Error('no BASE_URL set');")
    config = load_site_config(tmp_path)
    assert config.how == "read from the file (see the warning above)"
    assert config.warnings == ["docusaurus.config.js did not run: Node could not load it: no BASE_URL set"]


def test_the_manifest_beside_the_site_is_used_by_default(tmp_path, capsys):
    """`docusaurus start`/`build` write .textbook-chat/manifest.json: index finds it without
    --manifest, says so, and names the pages it does not list (added since, or drafts)."""
    from indexer.job import resolve_job

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n")
    (docs / "new.md").write_text("# New\n")
    (docs / "wip.md").write_text("---\ndraft: true\n---\n# Not built\n")  # rightly not listed
    (tmp_path / "docusaurus.config.js").write_text("module.exports = {baseUrl: '/b/'};")
    (tmp_path / ".textbook-chat").mkdir()
    (tmp_path / ".textbook-chat" / "manifest.json").write_text(json.dumps({
        "version": 1, "baseUrl": "/b/", "trailingSlash": None, "routeBasePath": "docs",
        "docs": [{"source": "@site/docs/a.md", "id": "a", "permalink": "/b/docs/a-page",
                  "title": "A", "version": "current", "locale": "en", "frontMatter": {}}]}))
    lines = []
    job = resolve_job(docs, say=lines.append)
    assert job.manifest == tmp_path / ".textbook-chat" / "manifest.json"
    assert job.routes["a.md"].url == "/b/docs/a-page"
    assert "found beside the site" in lines[0]
    err = capsys.readouterr().err
    assert "1 page(s) of " in err and "(new.md)" in err
    given = resolve_job(docs, manifest=tmp_path / ".textbook-chat" / "manifest.json")
    assert given.routes == job.routes and capsys.readouterr().err == ""
