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
    aside: str | None = None  # in an admonition: its title, else its type ("tip"); else None


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


@dataclass(frozen=True)
class SiteSettings:
    """The Docusaurus settings that decide routes and ids."""

    base_url: str = "/"
    route_base_path: str = "docs"
    trailing_slash: bool | None = None
    markdown_format: str = "mdx"  # "mdx" | "detect"


@dataclass
class Problem(Exception):
    """A doc that cannot be indexed (raised by parsing, recorded by a build) or that the author
    should look at (a warning): where, and what to do."""

    source: str  # the file as the author knows it
    line: int | None
    reason: str
    key: str = ""  # the doc's key in the index (plan.doc_key), when it differs from source

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{where}: {self.reason}"


@dataclass(frozen=True)
class ChunkOptions:
    """Chunking limits (tokens of cl100k_base) and the heading levels that start a section."""

    split_levels: tuple[int, ...] = (2, 3, 4)
    max_tokens: int = 512
    min_tokens: int = 25
    overlap_tokens: int = 50

    def __post_init__(self) -> None:
        levels = tuple(sorted(set(self.split_levels)))
        if not levels or any(level not in range(2, 7) for level in levels):
            raise OptionError("split_levels",
                              f"split_levels must be heading levels 2..6, got {self.split_levels}")
        object.__setattr__(self, "split_levels", levels)
        if self.max_tokens < 64:
            raise OptionError("max_tokens", f"max_tokens must be at least 64, got {self.max_tokens}")
        if not 0 <= self.min_tokens <= self.max_tokens:
            raise OptionError("min_tokens", "min_tokens must be between 0 and max_tokens, got "
                              f"{self.min_tokens}")
        if not 0 <= self.overlap_tokens <= self.max_tokens // 2:
            raise OptionError("overlap_tokens", "overlap_tokens must be between 0 and "
                              f"max_tokens/2, got {self.overlap_tokens}")


class OptionError(ValueError):
    """A chunking limit out of range; `field` names the ChunkOptions field (the CLI its flag)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
