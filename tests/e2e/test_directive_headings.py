"""Heading ids and titles with MDX text directives (`join:JitsiMeetConferenceOptions` -> `#join`),
checked against a real `docusaurus build` of a page of such headings, with the Docusaurus the
e2e site installed (its node_modules, found from a folder inside it)."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess

import pytest

from indexer.markdown import parse_document
from indexer.model import SiteSettings

pytestmark = [pytest.mark.npm, pytest.mark.slow]

HEADINGS = [
    "join:JitsiMeetConferenceOptions",
    "Text :name directive",
    "Label :abbr[ROS **2**] here",
    'Attrs :span{#x .y key="v w"} after',
    "Both :kbd[Ctrl]{.key} end",
    "Double ::name colon",
    "Time 10:30 and std::vector",
    "Trailing dash a:b- c",
    "Escaped \\:name colon",
    "Code `a:b` span",
    "Empty attrs :x{} here",
    "Link [a:b](https://example.org) and http://example.org",
    "Colon at end:",
    "Digits :h2o-x_1 ok",
    "Nested :a[b :c[d]] e",
    "Two:one:two",
    "Class only :span{.y} after",
    "Id later :b{.c #d} x",
    "Unclosed :a[label here",
]
CONFIG = """module.exports = {
  title: 'Directives', url: 'https://example.org', baseUrl: '/d/', onBrokenLinks: 'ignore',
  markdown: {format: '%s'},
  presets: [['classic', {docs: {routeBasePath: 'docs'}, blog: false, pages: false, theme: {}}]],
};
"""
_HEADING = re.compile(r"<h([2-6])([^>]*)>(.*?)</h\1>", re.S)
_ID = re.compile(r'\sid="([^"]*)"')
_TAG = re.compile(r"<[^>]+>")


def built_headings(page: str) -> list[tuple[str | None, str]]:
    article = page[page.index("<article"):page.index("</article>")]
    out = []
    for _, attrs, inner in _HEADING.findall(article):
        hid = _ID.search(attrs)
        text = html.unescape(_TAG.sub("", inner)).replace("\u200b", "")
        out.append((html.unescape(hid.group(1)) if hid else None, " ".join(text.split())))
    return out


@pytest.mark.parametrize("markdown_format", ["mdx", "detect"])
def test_directive_headings_match_a_real_build(built_site, markdown_format):
    """The same page as .md and .mdx; with format detect the .md one is CommonMark."""
    site = built_site.site_dir / f"directive-site-{markdown_format}"
    shutil.rmtree(site, ignore_errors=True)
    (site / "docs").mkdir(parents=True)
    (site / "docusaurus.config.js").write_text(CONFIG % markdown_format)
    body = "".join(f"\n## {h}\n\nText.\n" for h in HEADINGS)
    for name in ("md-page.md", "mdx-page.mdx"):
        (site / "docs" / name).write_text(f"# {name}\n{body}")
    docusaurus = built_site.site_dir / "node_modules" / "@docusaurus" / "core" / "bin" / "docusaurus.mjs"
    # without webpack's cache, which the site's other builds share: it mixed up the two formats
    env = {**os.environ, "DOCUSAURUS_NO_PERSISTENT_CACHE": "1"}
    done = subprocess.run(["node", str(docusaurus), "build", str(site)], cwd=site, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for source in ("md-page.md", "mdx-page.mdx"):
        name = source.split(".")[0]
        page = (site / "build" / "docs" / name / "index.html").read_text(encoding="utf-8")
        built = built_headings(page)
        doc = parse_document(site / "docs" / source, site / "docs",
                             SiteSettings("/d/", markdown_format=markdown_format))
        ours = [(s.anchor, s.title) for s in doc.sections if s.level == 2]
        assert len(built) == len(HEADINGS)
        assert ours == built, source
        assert built[0] == ("join", "join:JitsiMeetConferenceOptions")
