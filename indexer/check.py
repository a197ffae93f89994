"""Check chunk URLs against a real Docusaurus build: every page exists, every anchor is an id."""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

from functions.contract import Chunk


@dataclass(frozen=True)
class Miss:
    doc_path: str
    url: str
    reason: str

    def __str__(self) -> str:
        return f"{self.doc_path}: {self.url} — {self.reason}"


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" and value is not None:
                self.ids.add(value)


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


def html_ids(path: Path) -> set[str]:
    parser = _Ids()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return parser.ids


def check_chunks(chunks: list[Chunk], build_dir: Path, base_url: str) -> tuple[list[Miss], int]:
    """All misses, and how many distinct anchors were checked."""
    misses: list[Miss] = []
    cache: dict[str, set[str] | None] = {}
    checked: set[str] = set()
    for chunk in chunks:
        if chunk.page_url not in cache:
            f = page_file(build_dir, base_url, chunk.page_url)
            cache[chunk.page_url] = html_ids(f) if f else None
        ids = cache[chunk.page_url]
        if ids is None:
            if chunk.page_url not in {m.url for m in misses}:
                misses.append(Miss(chunk.doc_path, chunk.page_url, "page not found in the build"))
            continue
        if chunk.anchor and chunk.url not in checked:
            checked.add(chunk.url)
            if chunk.anchor not in ids:
                misses.append(Miss(chunk.doc_path, chunk.url, f"no element with id {chunk.anchor!r} on the page"))
    return misses, len(checked)
