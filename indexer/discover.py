"""Which files under a docs folder are docs: .md/.mdx, minus partials, hidden and vendored folders."""

from __future__ import annotations

from pathlib import Path

DOC_SUFFIXES = (".md", ".mdx")
_SKIP_DIRS = {"node_modules", "build", ".docusaurus"}


def is_partial(rel: Path) -> bool:
    """Docusaurus builds no page for `_`-prefixed files or folders (they are imported partials)."""
    return any(part.startswith("_") for part in rel.parts)


def discover(docs_dir: Path) -> list[str]:
    """Relative posix paths of candidate doc files, sorted for a stable order."""
    found = []
    for path in docs_dir.rglob("*"):
        rel = path.relative_to(docs_dir)
        if any(p.startswith(".") or p in _SKIP_DIRS for p in rel.parts[:-1]):
            continue
        if path.suffix.lower() in DOC_SUFFIXES and path.is_file() and not is_partial(rel):
            if rel.name.startswith("."):
                continue
            found.append(rel.as_posix())
    return sorted(found)
