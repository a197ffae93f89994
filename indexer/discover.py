"""Which files are docs: .md/.mdx under a docs folder (minus partials, hidden and vendored
folders), or every version and locale a build manifest lists; one walk of the folder per run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from indexer.routes import ManifestDoc

DOC_SUFFIXES = (".md", ".mdx")
_SKIP_DIRS = {"node_modules", "build", ".docusaurus"}


def is_partial(rel: Path) -> bool:
    """Docusaurus builds no page for `_`-prefixed files or folders (they are imported partials)."""
    return any(part.startswith("_") for part in rel.parts)


def walk(docs_dir: Path) -> tuple[list[str], list[Path]]:
    """One walk of docs_dir: the relative posix paths of its candidate doc files, and its
    partials (.md/.mdx), each sorted for a stable order."""
    found, partial_files = [], []
    for path in docs_dir.rglob("*"):
        rel = path.relative_to(docs_dir)
        if path.suffix in DOC_SUFFIXES and is_partial(rel) and path.is_file():
            partial_files.append(path)
        if any(p.startswith(".") or p in _SKIP_DIRS for p in rel.parts[:-1]):
            continue
        if path.suffix.lower() in DOC_SUFFIXES and path.is_file() and not is_partial(rel):
            if rel.name.startswith("."):
                continue
            found.append(rel.as_posix())
    return sorted(found), sorted(partial_files)


def partials(docs_dir: Path) -> list[Path]:
    """Every partial (.md/.mdx) under docs_dir, sorted: the docs that import one change with it."""
    return walk(docs_dir)[1]


def discover(docs_dir: Path) -> list[str]:
    """Relative posix paths of candidate doc files, sorted for a stable order."""
    return walk(docs_dir)[0]


@dataclass(frozen=True)
class SourceFile:
    """One doc to index: which file, the docs folder of its version and locale, its route."""

    key: str  # names the doc in messages; unique in one run
    path: Path
    root: Path  # the docs folder doc_path is relative to (its partials resolve there)
    doc_path: str
    route: ManifestDoc | None = None


@dataclass(frozen=True)
class Discovered:
    """What one index run reads, from one walk of the docs folder: every doc to index, the
    files no page was built from, and the partials of each docs folder walked."""

    files: list[SourceFile]
    skipped: list[str]
    partials: dict[Path, list[Path]]

    def __len__(self) -> int:
        return len(self.files) + len(self.skipped)

    def partials_of(self, root: Path) -> list[Path]:
        """The partials of a docs folder (another version's folder is walked for them)."""
        return self.partials[root] if root in self.partials else partials(root)


def sources(docs_dir: Path, routes: Mapping[str, ManifestDoc] | None) -> Discovered:
    """Every doc to index, and the files of the docs folder that no page was built from.

    Without a build manifest: the files of docs_dir. With one: every doc of every version and
    locale it lists (the current version's in the docs folder's order first)."""
    if routes is None:
        docs, partial_files = walk(docs_dir)
        return Discovered([SourceFile(rel, docs_dir / rel, docs_dir, rel) for rel in docs], [],
                          {docs_dir: partial_files})
    listed, skipped = [], []
    # The current version's docs folder as the manifest places it (docs_dir may be the site).
    current = next((r.content_dir for r in routes.values() if r.default and r.content_dir), docs_dir)
    docs, partial_files = walk(current) if current.is_dir() else ([], [])
    for rel in docs:
        route = routes.get(rel)
        if route is None:
            skipped.append(rel)  # not in the manifest: Docusaurus built no page (draft, excluded)
        else:
            listed.append(rel)
    order = {rel: i for i, rel in enumerate(listed)}
    keys = sorted(routes, key=lambda k: (k not in order, order.get(k, 0)))
    found = []
    for key in keys:
        route = routes[key]
        path = route.file or docs_dir / route.doc_path
        root = route.content_dir or docs_dir
        found.append(SourceFile(key, path, root, route.doc_path or key, route))
    return Discovered(found, skipped, {current: partial_files} if current.is_dir() else {})
