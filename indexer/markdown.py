"""One Docusaurus Markdown/MDX file -> a Document: sections with Docusaurus heading ids and blocks.

Parsing follows what Docusaurus 3 compiles:
- `.mdx` files, and `.md` files when `markdown.format` is "mdx" (the default), are MDX: no
  indented code (a heading indented four spaces is still a heading), no HTML blocks (a JSX tag
  line such as `<TabItem>` is its own block and the Markdown between tags is Markdown), and
  `import`/`export` paragraphs are ES modules, not text.
- `.md` files with format "detect" are CommonMark (+ GFM tables, strikethrough, footnotes).
- Admonitions (`:::note Title` ... `:::`) are containers: their fence lines are dropped, their
  content (headings included) belongs to the page.
- An unclosed code fence runs to the end of the file, as in Docusaurus (accepted, no error).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path, PurePosixPath

from markdown_it import MarkdownIt
from mdit_py_plugins.container import container_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin

from indexer import routes
from indexer.blocks import units
from indexer.directives import text_directive
from indexer.discover import DOC_SUFFIXES, is_partial
from indexer.frontmatter import decode, split
from indexer.headings import heading_id
from indexer.jsx_flow import jsx_flow
from indexer.model import Block, Document, Section, SiteSettings
from indexer.slugger import Slugger

_ESM = re.compile(r"^(import\s+(?:[\w*{}\s,$]+\s+from\s+)?['\"]|export\s+(?:default|const|let|var|"
                  r"function|async|class|\{|\*))")
# A block that is one raw HTML/JSX heading: `<h2 id="x">Text</h2>` (the id is optional).
_RAW_HEADING = re.compile(
    r"\s*<h([1-6])(?:\s[^>]*?(?:\bid=(\"|')([^\"']+)\2)?[^>]*)?>(.*?)</h\1>\s*\Z", re.S)
_TAG = re.compile(r"<[^>]*>")


@cache
def parser(mdx: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    md.use(footnote_plugin).use(dollarmath_plugin, double_inline=True)
    md.use(container_plugin, name="admonition", marker=":",
           validate=lambda params, *_: bool(re.match(r"\s*[A-Za-z]", params)))
    md.inline.ruler.before("link", "text_directive", text_directive)
    md.core.ruler.at("inline", _inline_where_needed)
    if mdx:
        md.disable(["code", "html_block"])
        md.block.ruler.before("heading", "jsx_flow", jsx_flow,
                              {"alt": ["paragraph", "reference", "blockquote"]})
    return md


def _inline_where_needed(state) -> None:
    """Inline-parse only headings (their text makes the id) and footnote references: blocks keep
    their Markdown source, so the rest would be work thrown away (half of the parse time)."""
    previous = None
    for token in state.tokens:
        if token.type == "inline" and (previous == "heading_open" or "[^" in token.content):
            token.children = []
            state.md.inline.parse(token.content, state.md, state.env, token.children)
        previous = token.type


def is_mdx(path: Path | str, site: SiteSettings) -> bool:
    return site.markdown_format == "mdx" or str(path).endswith(".mdx")


def is_indexable(rel_path: str, front_matter: dict) -> bool:
    """Docusaurus builds no doc for `_`-prefixed files/folders (partials) or `draft: true`."""
    if is_partial(PurePosixPath(rel_path)) or not rel_path.endswith(DOC_SUFFIXES):
        return False
    return front_matter.get("draft") is not True


# Partials: `import Intro from './_intro.md'` then `<Intro />` renders that file in place.
# A reader takes an import path relative to the doc's folder, returns (file name, text) or None.
PartialReader = Callable[[str], "tuple[str, str] | None"]
_IMPORT_MD = re.compile(r"^import\s+([A-Za-z_$][\w$]*)\s+from\s+['\"](\.{1,2}/[^'\"]+\.mdx?)['\"]")
_USE = re.compile(r"\s*<([A-Za-z_$][\w$]*)(?:\s[^<>]*)?/>\s*\Z")
_MAX_PARTIAL_DEPTH = 5


def parse_document(path: Path, docs_dir: Path, site: SiteSettings,
                   route: routes.ManifestDoc | None = None) -> Document | None:
    """Parse one doc file; None for a draft (Docusaurus builds no page for it).

    route: the manifest entry of this doc, when a build manifest is used (resolved before
    parsing); without one the route follows from the path and front matter, as Docusaurus's.
    Raises Problem for files an author must fix.
    """
    rel = path.relative_to(docs_dir).as_posix()

    def read_partial(spec: str) -> tuple[str, str] | None:
        target = (path.parent / spec).resolve()
        if not target.is_file():
            return None  # Docusaurus fails the build on this; the page text is still indexable
        try:
            shown = target.relative_to(docs_dir.resolve()).as_posix()
        except ValueError:
            shown = spec
        return target.name, decode(target.read_bytes(), f"{shown} (imported by {rel})")

    return parse_text(decode(path.read_bytes(), rel), rel, site, route, read_partial)


def parse_text(text: str, rel: str, site: SiteSettings,
               route: routes.ManifestDoc | None = None,
               read_partial: PartialReader | None = None) -> Document | None:
    """Parse a doc from its text (rel: path relative to the docs dir, for routes and messages)."""
    source = split(text, rel)
    if not is_indexable(rel, source.front_matter):
        return None
    sections = _Builder(site, read_partial).sections(source.body, rel, source.body_line)
    if route is not None:
        doc_route = routes.DocRoute(route.doc_id, route.permalink, route.url)
    else:
        doc_route = routes.doc_route(rel, source.front_matter, site)
    first_h1 = next((s.title for s in sections if s.level == 1 and s.title), None)
    fallback = doc_route.doc_id.rsplit("/", 1)[-1]
    title = source.front_matter.get("title") or first_h1 or fallback
    tags = source.front_matter.get("tags") or []
    return Document(
        source=rel, doc_id=doc_route.doc_id, title=str(title), url=doc_route.url,
        front_matter=source.front_matter, sections=sections,
        tags=[str(t.get("label", t)) if isinstance(t, dict) else str(t) for t in tags]
        if isinstance(tags, list) else [str(tags)],
    )


class _Builder:
    """Turns one file's body into sections; partials get their own slugger, as in Docusaurus."""

    def __init__(self, site: SiteSettings, read_partial: PartialReader | None, folder: str = "",
                 depth: int = 0):
        self.site, self.read_partial, self.depth = site, read_partial, depth
        self.folder = folder  # of the file being parsed, relative to the doc's folder

    def sections(self, body: str, name: str, first_line: int) -> list[Section]:
        mdx = is_mdx(name, self.site)
        tokens = parser(mdx).parse(body)
        lines = body.split("\n")
        slugger = Slugger()
        imports: dict[str, str] = {}
        sections: list[Section] = []
        for kind, token, start, end, aside in units(tokens):
            line = first_line + start
            if kind == "footnotes":  # GFM renders the definitions under a generated h2
                sections.append(Section(2, "Footnotes", "footnote-label", line))
                continue
            if kind == "heading":
                level, inline = token
                hid = heading_id(inline, level, slugger, mdx)
                sections.append(Section(level, hid.title, hid.anchor, line))
                continue
            text = "\n".join(lines[start:end]).rstrip()
            if kind == "paragraph" and _ESM.match(lines[start]):
                if mdx:  # an ES module block renders nothing; remember Markdown imports
                    imports.update(m.groups() for m in map(_IMPORT_MD.match, lines[start:end]) if m)
                    continue
                text = "\n".join(x for x in lines[start:end] if not _ESM.match(x)).rstrip()
            if not text.strip():
                continue
            raw = _RAW_HEADING.match(text) if kind in ("html", "paragraph") else None
            if raw is not None:
                # Rendered with its own id or none; never slugged (only `heading` nodes are).
                title = " ".join(_TAG.sub("", raw.group(4)).split())
                anchor = (raw.group(3) or "").strip() or None
                sections.append(Section(int(raw.group(1)), title, anchor, line))
                continue
            use = _USE.match(text) if kind in ("html", "paragraph") else None
            partial = self._partial(imports.get(use.group(1))) if use else None
            if partial is not None:
                _splice(sections, partial, line)
                continue
            if not sections:
                sections.append(Section(1, "", None, line))
            sections[-1].blocks.append(Block(kind, text, line, aside))
        return sections

    def _partial(self, spec: str | None) -> list[Section] | None:
        if spec is None or self.read_partial is None or self.depth >= _MAX_PARTIAL_DEPTH:
            return None
        spec = posixpath.normpath(posixpath.join(self.folder, spec))
        found = self.read_partial(spec)
        if found is None:
            return None
        name, text = found
        body = split(text, spec)
        nested = _Builder(self.site, self.read_partial, posixpath.dirname(spec), self.depth + 1)
        return nested.sections(body.body, name, 1)


def _splice(sections: list[Section], partial: list[Section], line: int) -> None:
    """Insert a partial's sections where it is used; its lines point at the `<Partial />` line."""
    for section in partial:
        section.line = line
        for block in section.blocks:
            block.line = line
    if partial and partial[0].level == 1 and partial[0].anchor is None and not partial[0].title:
        intro = partial.pop(0)
        if not sections:
            sections.append(Section(1, "", None, line))
        sections[-1].blocks.extend(intro.blocks)
    sections.extend(partial)
