"""Reading Docusaurus settings out of docusaurus.config.js|ts without Node."""

from __future__ import annotations

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
    assert any("`baseUrl` is not a plain value" in w for w in config.warnings)
    assert any("markdown.format 'md'" in w for w in config.warnings)


def test_site_dir_lookup(tmp_path, capsys):
    assert load_site_config(tmp_path).warnings[0].startswith("no docusaurus.config")
    (tmp_path / "docusaurus.config.js").write_text("module.exports = {baseUrl: '/b/'};")
    assert read_site_config(tmp_path).base_url == "/b/"
    assert capsys.readouterr().err == ""
