"""Check chunks against a real Docusaurus build: every page exists, every anchor is an id, and
every chunk's text is on the page it cites (so a version's text under another version's URL,
or an edited paragraph under an unchanged heading, is caught)."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

from functions.search.contract import Chunk


@dataclass(frozen=True)
class Miss:
    doc_path: str
    url: str
    reason: str

    def __str__(self) -> str:
        return f"{self.doc_path}: {self.url} — {self.reason}"


class _Page(HTMLParser):
    """The ids and the visible text of a built page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.text: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        for name, value in attrs:
            if name == "id" and value is not None:
                self.ids.add(value)

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


@dataclass(frozen=True)
class BuiltPage:
    ids: set[str]
    words: str  # " w1 w2 … " : the page's words, lowercased, between single spaces


# Markdown that is not shown as text, or shown differently: a break between checked runs.
_NOT_TEXT = re.compile(
    r"\]\([^)]*\)"  # link and image targets
    r"|<[^>\n]*>"  # HTML / JSX tags, autolinks
    r"|\{[^}\n]*\}"  # {#heading-id}, MDX expressions
    r"|\[\^[^\]]*\]"  # footnote references
    r"|^[ \t>]*(?:\d+[.)]|[-*+])[ \t]+"  # list markers (ordered numbers are drawn by CSS)
    r"|^[ \t]*(?:```|~~~|:::).*$"  # fence lines
    r"|\$[^$\n]*\$",  # inline math (KaTeX renders other characters)
    re.M,
)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
MIN_RUN_WORDS = 4  # shorter runs of words are too common to prove anything


def words(text: str) -> list[str]:
    return [w for w in (t.strip("_") for t in re.findall(r"\w+", text.lower())) if w]


_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+-]*)")
# Fenced languages a theme draws instead of printing (the diagram's source is not on the page).
NOT_PRINTED = {"mermaid", "math", "latex", "tex", "katex"}
_JSX_TAG = re.compile(r"</?[A-Za-z][\w.:-]*(?:\s[^<>]*)?/?>"  # a tag and its props
                      r"|<[A-Za-z][\w.:-]*\s[^<>]*$"  # a tag the chunk ends inside
                      r"|^[^<>]*=[\"'{][^<>]*/?>", re.S)  # a tag the chunk begins inside
_INDENTED = re.compile(r"^(?: {4}|\t)(?![ \t]*(?:[-*+]|\d+[.)])[ \t])")


def _visible(markdown: str) -> list[str]:
    """The chunk's Markdown in pieces a reader may see as text: fenced code as is (except
    diagrams and math), prose without MDX expressions and JSX tags with their attributes
    (a component decides what its props show)."""
    pieces: list[str] = []
    prose: list[str] = []
    fence, keep, code = "", True, []
    for line in markdown.splitlines():
        match = _FENCE.match(line)
        if fence:
            if match and match.group(1).startswith(fence) and not line.strip()[len(match.group(1)):]:
                pieces.extend(["\n".join(code)] if keep else [])
                fence, code = "", []
            else:
                code.append(line)
        elif match:
            pieces.append(_prose("\n".join(prose)))
            prose, fence, keep = [], match.group(1), match.group(2).lower() not in NOT_PRINTED
        elif not _INDENTED.match(line):
            prose.append(line)
        else:  # prose is never indented 4+; such lines are a prop's code or nested blocks
            prose.append("")
    if fence and keep:
        pieces.append("\n".join(code))
    pieces.append(_prose("\n".join(prose)))
    return pieces


def _prose(text: str) -> str:
    out, depth = [], 0
    for ch in text:  # balanced {…}: MDX expressions, never literal text
        if ch == "{":
            depth += 1
            out.append("\n\n") if depth == 1 else None
        elif ch == "}" and depth:
            depth -= 1
        elif ch == "}":  # the chunk began inside an expression (a prop): what came before is too
            out = ["\n\n"]
        elif not depth:
            out.append(ch)
    return _JSX_TAG.sub("\n\n", "".join(out))


def text_runs(markdown: str) -> list[list[str]]:
    """The runs of words a reader sees, in order, from a chunk's Markdown."""
    # Blocks are separate runs: the page may put text between them (an admonition's title).
    parts = (part for piece in _visible(html.unescape(markdown))
             for block in _BLANK_LINE.split(piece) for part in _NOT_TEXT.split(block))
    runs = [words(part) for part in parts]
    return [run for run in runs if len(run) >= MIN_RUN_WORDS]


def missing_text(content: str, page: BuiltPage) -> str | None:
    """The first run of the chunk's words that the page does not show, or None."""
    for run in text_runs(content):
        if f" {' '.join(run)} " not in page.words:
            return " ".join(run)
    return None


def page_file(build_dir: Path, base_url: str, page_url: str) -> Path | None:
    """The HTML file the static host serves for page_url, or None."""
    path = unquote(page_url)
    if base_url != "/" and path.startswith(base_url.rstrip("/")):
        path = path[len(base_url.rstrip("/")) :]
    rel = path.strip("/")
    candidates = (
        [build_dir / rel / "index.html"]
        if path.endswith("/") or rel == ""
        else [build_dir / f"{rel}.html", build_dir / rel / "index.html"]
    )
    return next((c for c in candidates if c.is_file()), None)


def read_page(path: Path) -> BuiltPage:
    parser = _Page()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return BuiltPage(parser.ids, f" {' '.join(words(' '.join(parser.text)))} ")


def html_ids(path: Path) -> set[str]:
    return read_page(path).ids


@dataclass
class CheckResult:
    misses: list[Miss]
    anchors: int  # distinct anchors checked
    texts: int  # chunks whose text was checked
    pages: int


def check_chunks(chunks: list[Chunk], build_dir: Path, base_url: str) -> CheckResult:
    """Every miss, and how much was checked: pages, anchors and chunk texts."""
    misses: list[Miss] = []
    cache: dict[str, BuiltPage | None] = {}
    checked: set[str] = set()
    texts = 0
    for chunk in chunks:
        if chunk.page_url not in cache:
            f = page_file(build_dir, base_url, chunk.page_url)
            cache[chunk.page_url] = read_page(f) if f else None
        page = cache[chunk.page_url]
        if page is None:
            if chunk.page_url not in {m.url for m in misses}:
                misses.append(Miss(chunk.doc_path, chunk.page_url, "page not found in the build"))
            continue
        # the chunk's own anchor and those of the short sections merged into it
        anchors = [(chunk.anchor, chunk.url)] + [
            (str(s.get("anchor") or ""), str(s.get("url") or "")) for s in chunk.sections]
        for anchor, url in anchors:
            if anchor and url not in checked:
                checked.add(url)
                if anchor not in page.ids:
                    misses.append(Miss(chunk.doc_path, url,
                                       f"no element with id {anchor!r} on the page"))
        texts += 1
        absent = missing_text(chunk.content, page)
        if absent is not None:
            shown = absent if len(absent) <= 80 else absent[:77] + "…"
            misses.append(Miss(chunk.doc_path, chunk.url, f"the page does not show this text of the "
                               f"chunk: {shown!r} (is it another version's or locale's text?)"))
    return CheckResult(misses, len(checked), texts, sum(1 for p in cache.values() if p))


def build_anchor_checker(build_dir: Path, base_url: str):
    """url -> True when the built site serves that page and the anchor is an id on it."""
    cache: dict[str, set[str] | None] = {}

    def exists(url: str) -> bool:
        page, _, anchor = url.partition("#")
        if page not in cache:
            f = page_file(build_dir, base_url, page)
            cache[page] = html_ids(f) if f else None
        ids = cache[page]
        return ids is not None and (not anchor or unquote(anchor) in ids)

    return exists
