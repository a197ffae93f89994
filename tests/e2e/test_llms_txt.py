"""The book for readers' AI assistants, on a real Docusaurus build of the sample book with the packed
plugin: llms.txt and llms-full.txt checked link by link against the build, and the MCP tools of
`textbook-chat serve` (indexed from that build) returning only URLs whose page and heading id
the build serves."""

from __future__ import annotations

import html as html_lib
import json
import re

import httpx
import pytest

from tests.e2e.site_build import BASE_URL, LOCALE, RTL_LOCALE, SAMPLE, VERSION

pytestmark = [pytest.mark.npm, pytest.mark.slow]

SITE_URL = "https://example.github.io"  # samples/textbook/docusaurus.config.js `url`
LINK = re.compile(r"\[((?:[^\]\\]|\\.)*)\]\((\S+?)\)")
HEADING_LINK = re.compile(r"^(#{2,6}) \[((?:[^\]\\]|\\.)*)\]\((\S+?)\)$", re.M)


def page_html(built_site, url: str) -> str:
    """The built HTML a site URL (absolute or a path, with or without #anchor) is served from."""
    path = url.split("#", 1)[0].removeprefix(SITE_URL)
    assert path.startswith(BASE_URL), f"{url} is not under the site's baseUrl {BASE_URL}"
    rel = path[len(BASE_URL):].strip("/")
    file = built_site.build_dir / rel / "index.html"
    assert file.is_file(), f"{url}: the build has no page {file.relative_to(built_site.build_dir)}"
    return file.read_text(encoding="utf-8")


def ids_of(html: str) -> set[str]:
    return {html_lib.unescape(i) for i in re.findall(r'\sid="([^"]+)"', html)}


def doc_heading_ids(html: str) -> list[str]:
    """The ids of the headings inside the doc's Markdown (not the navbar's or the TOC's)."""
    start = html.index('class="theme-doc-markdown')
    end = html.find("<footer", start)
    body = html[start:end if end > 0 else len(html)]
    return [html_lib.unescape(i) for i in re.findall(r'<h[2-6][^>]*\sid="([^"]+)"', body)]


def lands(built_site, url: str) -> None:
    """url's page is in the build and, with an #anchor, that id is on it."""
    html = page_html(built_site, url)
    if "#" in url:
        anchor = url.split("#", 1)[1]
        assert anchor in ids_of(html), f"{url}: no id {anchor!r} on the built page"


def test_llms_txt_lists_every_page_with_its_exact_url(built_site):
    text = (built_site.build_dir / "llms.txt").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == "# Signals, Sensors and Control"
    assert lines[2] == "> A practical introduction to robotics"
    assert f"({SITE_URL}{BASE_URL}llms-full.txt)" in text
    links = LINK.findall(text[text.index("## Docs"):])
    listed = [url for name, url in links if name != "Markdown"]
    manifest = json.loads(built_site.manifest.read_text())
    assert sorted(listed) == sorted(SITE_URL + d["permalink"] for d in manifest["docs"])
    for url in listed:
        page_html(built_site, url)
    # each page's Markdown copy, beside it: its own part of llms-full.txt
    copies = [url for name, url in links if name == "Markdown"]
    assert sorted(copies) == sorted(url.rstrip("/") + ".md" for url in listed)  # docs/ -> docs.md
    full = (built_site.build_dir / "llms-full.txt").read_text(encoding="utf-8")
    for url in copies:
        copy = (built_site.build_dir / url.removeprefix(SITE_URL + BASE_URL)).read_text("utf-8")
        first, rest = copy.split("\n", 1)
        page = next(u for u in listed if u.rstrip("/") + ".md" == url)
        assert first == f"# [{first[3:].split(']')[0]}]({page})", first
        # the same text, its headings one level higher than in the full file (the page is H1)
        deeper = re.sub(r"^(#+) \[", r"#\1 [", copy, flags=re.M)
        assert "\n" + deeper.rstrip("\n") + "\n" in full, url


def test_llms_full_txt_keeps_tables_as_markdown_tables(built_site):
    """Every table of the book's Markdown is a table in llms-full.txt, its `| --- |` row kept."""
    full = (built_site.build_dir / "llms-full.txt").read_text(encoding="utf-8")
    tables = sum(len(re.findall(r"^\|[ :|-]*-{3}[ :|-]*\|?$", source.read_text("utf-8"), re.M))
                 for source in (SAMPLE / "docs").rglob("*.md*"))  # .md and .mdx
    assert tables >= 3 and full.count("\n| --- |") == tables, (tables, full.count("\n| --- |"))


def test_llms_full_txt_links_each_section_to_its_heading_on_the_page(built_site):
    text = (built_site.build_dir / "llms-full.txt").read_text(encoding="utf-8")
    pages = [(m.group(3), m.start()) for m in HEADING_LINK.finditer(text) if m.group(1) == "##"]
    manifest = json.loads(built_site.manifest.read_text())
    assert sorted(url for url, _ in pages) == sorted(SITE_URL + d["permalink"]
                                                    for d in manifest["docs"])
    sections = [(m.group(3), m.group(2)) for m in HEADING_LINK.finditer(text) if m.group(1) != "##"]
    for url, _ in sections:
        assert "#" in url, url
        lands(built_site, url)
    # every heading the built page links is a section of the file, in the page's order
    for url, _ in pages:
        ids = doc_heading_ids(page_html(built_site, url))
        assert [s.split("#", 1)[1] for s, _ in sections if s.split("#")[0] == url] == ids, url
    assert len(sections) > 50


def test_llms_full_txt_holds_the_books_own_text(built_site):
    text = (built_site.build_dir / "llms-full.txt").read_text(encoding="utf-8")
    words = set(re.findall(r"[a-z]{6,}", text.lower()))
    for source in sorted((SAMPLE / "docs").rglob("*.md"))[:5]:
        body = source.read_text(encoding="utf-8").split("---", 2)[-1]
        prose = [ln for ln in body.splitlines() if re.match(r"^[A-Z][a-z]+ [a-z]+ ", ln)]
        assert prose, source
        missing = set(re.findall(r"[a-z]{6,}", prose[0].lower())) - words
        assert not missing, f"{source.name}: {missing} not in llms-full.txt"


def _mcp(api: str, message: dict) -> dict:
    response = httpx.post(f"{api}/mcp", json={"jsonrpc": "2.0", "id": 1, **message}, timeout=120,
                          headers={"MCP-Protocol-Version": "2025-11-25"})
    assert response.status_code == 200, response.text
    return response.json()


def _questions() -> list[str]:
    rows = [json.loads(line) for line in (SAMPLE / "questions.jsonl").read_text().splitlines()
            if line.strip()]
    return [r["question"] for r in rows][:8]


def test_mcp_tools_return_only_urls_the_build_serves(real_api, built_site):
    seen = 0
    for question in _questions():
        found = _mcp(real_api, {"method": "tools/call", "params": {
            "name": "search_book", "arguments": {"query": question, "top_k": 5}}})
        asked = _mcp(real_api, {"method": "tools/call", "params": {
            "name": "ask_book", "arguments": {"question": question}}})
        urls = [s["url"] for s in found["result"]["structuredContent"]["sections"]]
        fields = asked["result"]["structuredContent"]
        urls += [c["url"] for c in fields["citations"]]
        urls += [r["url"] for r in fields.get("related_topics") or []]
        for url in urls:
            lands(built_site, url)
        seen += len(urls)
    assert seen >= 40


def test_fetch_page_links_every_heading_the_built_page_has(real_api, built_site):
    """fetch_page on the pages search_book finds: each heading linked to an id of the built
    page, in the page's order, each once."""
    pages = set()
    for question in _questions()[:4]:
        found = _mcp(real_api, {"method": "tools/call", "params": {
            "name": "search_book", "arguments": {"query": question, "top_k": 3}}})
        pages |= {s["url"].split("#")[0] for s in found["result"]["structuredContent"]["sections"]}
    assert len(pages) >= 2
    for url in sorted(pages):
        page = _mcp(real_api, {"method": "tools/call", "params": {
            "name": "fetch_page", "arguments": {"url": url}}})["result"]
        assert not page["isError"], page
        links = [m.group(3) for m in HEADING_LINK.finditer(page["structuredContent"]["markdown"])]
        for link in links:
            lands(built_site, link)
        ids = doc_heading_ids(page_html(built_site, url))
        anchors = [link.split("#", 1)[1] for link in links]
        assert anchors and anchors == [i for i in ids if i in anchors], (url, anchors, ids)


def test_each_locale_has_its_own_llms_txt_of_the_version_readers_land_on(versioned):
    """The versioned (1.0 + next), three-locale site: build/llms.txt, build/fr/llms.txt and
    build/ur/llms.txt list the 1.0 pages of their own language (served at the docs root), each
    link and anchor in the build."""
    manifests = versioned.manifest.parent
    for locale, prefix, manifest in (
            ("en", "", manifests / "manifest.json"),
            *((code, f"{code}/", manifests / f"manifest.{code}.json") for code in (LOCALE, RTL_LOCALE))):
        folder = versioned.build_dir / prefix
        text = (folder / "llms.txt").read_text(encoding="utf-8")
        assert f"(version {VERSION}, language {locale})" in text
        listed = [url for name, url in LINK.findall(text[text.index("## Docs"):])
                  if name != "Markdown"]
        docs = json.loads(manifest.read_text())["docs"]
        assert sorted(listed) == sorted(SITE_URL + d["permalink"] for d in docs
                                        if d["version"] == VERSION)
        assert all(u.startswith(f"{SITE_URL}{BASE_URL}{prefix}docs/") for u in listed)
        full = (folder / "llms-full.txt").read_text(encoding="utf-8")
        links = [m.group(3) for m in HEADING_LINK.finditer(full)]
        assert len(links) > len(listed)
        for url in listed + links:
            lands(versioned, url)
