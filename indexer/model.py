"""Plain data passed between parsing, routing, chunking and syncing."""

from __future__ import annotations

from dataclasses import dataclass, field

# Block kinds the chunker may split between (never inside, unless one block alone is too big).
BLOCK_KINDS = ("paragraph", "list_item", "table", "code", "math", "html", "quote", "other")


@dataclass
class Block:
    """One top-level Markdown block of a section, as source text."""

    kind: str  # one of BLOCK_KINDS
    text: str  # Markdown source of the block (import/export lines and ::: fences removed)
    line: int  # 1-based line in the source file (front matter included)


@dataclass
class Section:
    """Text under one heading down to the next heading (of any level)."""

    level: int  # 1..6; the page's intro (before the first heading / under the H1) is level 1
    title: str  # plain heading text as a reader sees it ("" for a page with no H1)
    anchor: str | None  # heading id in the built HTML; None for h1 / the page top
    line: int
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Document:
    """One built doc: its route and its sections in document order."""

    source: str  # path relative to the docs dir, posix, e.g. "02-basics/01-setup.md"
    doc_id: str  # Docusaurus doc id, e.g. "basics/setup"
    title: str  # front matter title, else first H1, else file name
    url: str  # page URL as served: baseUrl + route, trailingSlash applied, no '#'
    front_matter: dict
    sections: list[Section]
    tags: list[str] = field(default_factory=list)


@dataclass
class SiteSettings:
    """The Docusaurus settings that decide routes and ids."""

    base_url: str = "/"
    route_base_path: str = "docs"
    trailing_slash: bool | None = None
    markdown_format: str = "mdx"  # "mdx" | "detect"


@dataclass
class ParseProblem(Exception):
    """A document that cannot be indexed: where and what to do."""

    source: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{where}: {self.reason}"
