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
            {id: 'community', path: 'community', routeBasePath: 'community'}],
            [require.resolve('./changelog.js'), {routeBasePath: '/changelog'}],
            ['@docusaurus/plugin-content-docs', {path: './book/', routeBasePath: '/'}]],
});""")
    (tmp_path / "changelog.js").write_text("module.exports = () => ({name: 'changelog'});")
    config = load_site_config(tmp_path)
    assert config.how == "evaluated with node"
    assert config.site == SiteSettings("/robots-book/", "/", False, "detect")
    assert config.docs_path == "book"
    assert config.site_url == "https://robots-book.example"  # the site's address, for MCP
    assert config.warnings == []
    community = load_site_config(tmp_path, docs_dir="community")  # the second instance's folder
    assert (community.site.route_base_path, community.docs_path) == ("community", "community")
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


# The Docusaurus website's shape: a blog, a second docs instance, a changelog plugin and a blog
# instance each with a routeBasePath of its own, none of which is the docs'.
WEBSITE = """
import type {Config} from '@docusaurus/types';
const config: Config = {
  title: 'Docusaurus', url: 'https://docusaurus.io', baseUrl: '/',
  presets: [['classic', {
      docs: {path: 'docs', sidebarPath: 'sidebars.ts', versions: {current: {path: 'next'}}},
      blog: {path: 'blog', routeBasePath: '/blog'},
      pages: {remarkPlugins: []},
  } satisfies Preset.Options]],
  plugins: [
    ['content-docs', {id: 'community', path: 'community', routeBasePath: 'community'}],
    [require.resolve('./src/plugins/changelog/index.js'),
     {blogTitle: 'Changelog', routeBasePath: '/changelog', path: 'changelog'}],
    ['@docusaurus/plugin-content-blog', {id: 'news', routeBasePath: 'news'}],
  ],
  themeConfig: {navbar: {items: [{to: '/changelog', label: 'Changelog'}]}},
};
export default config;
"""


def test_the_docs_instance_s_own_options_win_over_other_plugins():
    config = parse_site_config(WEBSITE)
    assert config.site == SiteSettings("/", "docs", None, "mdx")  # not /changelog, /blog, community
    assert (config.docs_path, config.warnings) == ("docs", [])
    other = parse_site_config(WEBSITE, docs_dir="community")  # indexing the second instance
    assert (other.site.route_base_path, other.docs_path, other.warnings) == ("community", "community", [])
    listed = parse_site_config(WEBSITE.replace("presets: [['classic', {", "presets: ['classic'], x: [[{"))
    assert listed.site.route_base_path == "docs" and listed.warnings == []  # the preset's defaults
    rooted = parse_site_config(WEBSITE.replace("path: 'docs',", "path: 'docs', routeBasePath: '/',"))
    assert rooted.site.route_base_path == "/"


@pytest.mark.parametrize("change, unread", [
    ("docs: {path: 'docs',", "docs: {...shared, path: 'docs',"),  # the options partly code
    ("presets: [['classic', {", "presets: [['classic', presetOptions], {"),  # all code
    ("presets: [['classic', {", "presets: presets, x: [{"),  # the preset list is code
])
def test_docs_options_set_by_code_are_named_with_their_flags(change, unread):
    config = parse_site_config(WEBSITE.replace(change, unread), "docusaurus.config.ts")
    assert config.site.route_base_path == "docs"  # the default, said to be one
    assert any(w.startswith("docusaurus.config.ts: could not read `routeBasePath`") and
               w.endswith("pass --route-base-path if the site sets another") for w in config.warnings)


def test_a_config_spread_from_code_names_base_url_with_its_flag():
    config = parse_site_config("const shared = require('./shared');\n"
                               "export default {...shared, title: 'x', presets: ['classic']};")
    assert [w for w in config.warnings if "`baseUrl`" in w] == [
        "docusaurus.config.ts: could not read `baseUrl` (not in the file: it comes from code); "
        "using the Docusaurus default: pass --base-url if the site sets another"]
    shorthand = parse_site_config("const baseUrl = '/b/';\nexport default {title: 'x', baseUrl};")
    assert (shorthand.site.base_url, shorthand.warnings) == ("/b/", [])


def test_another_project_s_node_modules_above_the_site_is_not_the_site_s(tmp_path, monkeypatch):
    """textbook-chat's own `npm ci` (the deploy tooling) puts node_modules in the clone: a site
    inside it (the sample) is read by pattern, not evaluated with packages that are not its own."""
    (tmp_path / "node_modules" / "serverless").mkdir(parents=True)
    site = tmp_path / "samples" / "book"
    site.mkdir(parents=True)
    (site / "docusaurus.config.js").write_text(
        "const {themes} = require('prism-react-renderer');\nmodule.exports = {baseUrl: '/b/'};")
    monkeypatch.delenv("TEXTBOOK_CHAT_NODE", raising=False)
    config = load_site_config(site)
    assert (config.how, config.site.base_url, config.warnings) == (
        "every setting read from the file", "/b/", [])
    (tmp_path / "node_modules" / "@docusaurus" / "core").mkdir(parents=True)  # a workspace's
    if shutil.which("node"):
        assert "prism-react-renderer" in " ".join(load_site_config(site).warnings)  # now tried


@pytest.mark.corpora
def test_every_corpus_config_is_read_whole_without_node(monkeypatch):
    from tests.shared import shared_dir

    configs = sorted(p for p in (shared_dir() / "corpora").glob("*/docusaurus.config.*"))
    if not configs:
        pytest.skip("shared corpora not found (set TEXTBOOK_CHAT_SHARED)")
    monkeypatch.setenv("TEXTBOOK_CHAT_NODE", "off")
    trailing = {"unset": None, "true": True, "false": False}
    for path in configs:
        request = json.loads((path.parent / "truth.json").read_text(encoding="utf-8"))["request"]
        config = load_site_config(path.parent)
        assert config.site == SiteSettings(request["base_url"], request["route_base_path"],
                                           trailing[request["trailing_slash"]], request["format"]), path
        assert (config.how, config.warnings) == ("every setting read from the file", []), path


def _site_with_manifest(tmp_path, base="/b/"):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n")
    config = tmp_path / "docusaurus.config.js"
    config.write_text(f"module.exports = {{baseUrl: '{base}'}};")
    manifest = tmp_path / ".textbook-chat" / "manifest.json"
    manifest.parent.mkdir()
    manifest.write_text(json.dumps({
        "version": 1, "baseUrl": "/b/", "trailingSlash": None, "routeBasePath": "docs",
        "docs": [{"source": "@site/docs/a.md", "id": "a", "permalink": "/b/docs/a-page",
                  "title": "A", "version": "current", "locale": "en", "frontMatter": {}}]}))
    return docs, config, manifest


def test_a_manifest_older_than_the_config_is_not_used(tmp_path, capsys):
    """baseUrl changed without `npm start`: the old manifest's URLs would be credited to the
    config. It is set aside, with a message; --manifest still uses it, with the same warning.
    A config saved again with the same settings (a comment, a checkout) keeps it in use."""
    import os

    from indexer.job import resolve_job

    docs, config, manifest = _site_with_manifest(tmp_path, base="/new/")
    written = manifest.stat().st_mtime_ns
    os.utime(config, ns=(written + 10**9, written + 10**9))  # saved a second after the manifest
    lines = []
    job = resolve_job(docs, say=lines.append)
    assert job.manifest is None and job.routes is None
    assert job.site.base_url == "/new/"
    assert "permalinks from" not in lines[0] and "docusaurus.config.js" in lines[0]
    err = capsys.readouterr().err
    assert "manifest.json was written for baseUrl /b/ (the config says /new/): " in err
    assert "docusaurus.config.js changed since the site was last started or built" in err
    assert "Run `npm start` (or build) in the site to refresh it" in err
    given = resolve_job(docs, manifest=manifest)
    assert given.routes["a.md"].url == "/b/docs/a-page"  # asked for: used, and said
    assert "it is used, as --manifest asks" in capsys.readouterr().err
    manifest.write_text(manifest.read_text().replace('"/b/', '"/new/'))  # `npm start` wrote it
    os.utime(manifest, ns=(written + 2 * 10**9, written + 2 * 10**9))  # again, after the change
    job = resolve_job(docs)
    assert job.routes["a.md"].url == "/new/docs/a-page" and capsys.readouterr().err == ""
    config.write_text(config.read_text() + "// a comment\n")  # newer, the same settings
    job = resolve_job(docs)
    assert job.routes["a.md"].url == "/new/docs/a-page" and capsys.readouterr().err == ""


def test_another_site_s_manifest_is_not_used(tmp_path, capsys):
    import os

    from indexer.job import resolve_job

    docs, config, manifest = _site_with_manifest(tmp_path, base="/other-book/")
    os.utime(manifest, ns=(config.stat().st_mtime_ns + 10**9,) * 2)  # newer, but not this site's
    config.write_text("module.exports = {baseUrl: '/b/', trailingSlash: true};")
    os.utime(config, ns=(manifest.stat().st_mtime_ns - 10**9,) * 2)
    job = resolve_job(docs)
    assert job.manifest is None and job.site.trailing_slash is True
    err = capsys.readouterr().err
    assert "manifest.json was written for trailingSlash unset (the config says true): " in err
    assert "it is another site's, or " in err and "docusaurus.config.js changed since" in err


def test_a_linked_docs_folder_reads_its_own_site_s_config(tmp_path, capsys):
    """my-book/docs -> ../other/docs: the settings are my-book's, not the linked folder's site's."""
    from indexer.job import resolve_job

    other = tmp_path / "other"
    (other / "docs").mkdir(parents=True)
    (other / "docs" / "a.md").write_text("# A\n")
    (other / "docusaurus.config.js").write_text("module.exports = {baseUrl: '/other/'};")
    book = tmp_path / "my-book"
    book.mkdir()
    (book / "docusaurus.config.js").write_text("module.exports = {baseUrl: '/mine/'};")
    (book / "docs").symlink_to(other / "docs")
    job = resolve_job(book / "docs")
    assert job.site.base_url == "/mine/"
