"""Docusaurus doc ids and page URLs: the docs plugin's rules, or a build manifest's permalinks."""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from indexer.model import ParseProblem, SiteSettings

# plugin-content-docs numberPrefix.ts: "02-basics" -> "basics", but not "2024-01-15-x" or "1.2.3-x".
_IGNORED_PREFIX = re.compile(r"^\d+[-_.]\d+")
_NUMBER_PREFIX = re.compile(r"^(\d+)\s*[-_.]+\s*([^-_.\s].*)$", re.S)


def strip_number_prefix(name: str) -> str:
    if _IGNORED_PREFIX.match(name):
        return name
    match = _NUMBER_PREFIX.match(name)
    return match.group(2) if match else name


@dataclass(frozen=True)
class DocRoute:
    doc_id: str
    permalink: str  # as the docs plugin reports it (never trailing-slash normalised)
    url: str  # as served: trailingSlash applied


def doc_route(rel_path: str, front_matter: dict, site: SiteSettings) -> DocRoute:
    """Id and URL of the doc at rel_path (posix, relative to the docs dir)."""
    directory, file_name = posixpath.split(rel_path)
    stem = file_name.rsplit(".", 1)[0]
    dirs = [d for d in directory.split("/") if d]
    clean_dirs = [strip_number_prefix(d) for d in dirs]
    base_id = str(front_matter.get("id") or strip_number_prefix(stem))
    doc_id = "/".join([*clean_dirs, base_id])
    dir_slug = "/" + "".join(d + "/" for d in clean_dirs)
    slug = front_matter.get("slug")
    if isinstance(slug, str) and slug.startswith("/"):
        route = slug
    elif slug is None and _is_category_index(stem, dirs):
        route = dir_slug
    else:
        route = _resolve(str(slug) if slug is not None else base_id, dir_slug)
    permalink = normalize_url([site.base_url, site.route_base_path, route])
    return DocRoute(doc_id, permalink, apply_trailing_slash(permalink, site))


def _is_category_index(stem: str, dirs: list[str]) -> bool:
    names = {"index", "readme"} | ({dirs[-1].lower()} if dirs else set())
    return stem.lower() in names


def _resolve(slug: str, dir_slug: str) -> str:
    """Resolve a relative slug against the folder, like the `resolve-pathname` package."""
    joined = posixpath.normpath(posixpath.join(dir_slug, slug))
    return joined + "/" if slug.endswith("/") and joined != "/" else joined


def normalize_url(parts: Iterable[str]) -> str:
    """Join URL parts with single slashes, keeping a trailing slash of the last part."""
    joined = "/".join(p for p in parts if p)
    return "/" + re.sub(r"/{2,}", "/", joined).lstrip("/")


def apply_trailing_slash(path: str, site: SiteSettings) -> str:
    """@docusaurus/utils applyTrailingSlash: unset keeps the path; the root keeps its slash."""
    if site.trailing_slash is None or path in ("/", site.base_url):
        return path
    if site.trailing_slash:
        return path if path.endswith("/") else path + "/"
    return path.rstrip("/") or "/"


@dataclass(frozen=True)
class ManifestDoc:
    doc_id: str
    permalink: str
    url: str
    title: str
    front_matter: dict


def load_manifest(path: Path, docs_dir: Path | str = "docs") -> dict[str, ManifestDoc]:
    """Read the site plugin's build manifest; keys are sources relative to the docs dir.

    docs_dir is the docs folder on disk (its files tell where "@site/<docs path>/" ends) or
    the docs path relative to the site ("docs").
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        trailing = data.get("trailingSlash")
        site = SiteSettings(
            base_url=data.get("baseUrl") or "/",
            route_base_path=data.get("routeBasePath", "docs"),
            trailing_slash=trailing if isinstance(trailing, bool) else None,
        )
        docs = {}
        for doc in data["docs"]:
            permalink = doc["permalink"]
            docs[_relative_source(doc["source"], docs_dir)] = ManifestDoc(
                doc["id"], permalink, apply_trailing_slash(permalink, site),
                doc.get("title", ""), doc.get("frontMatter") or {})
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise ParseProblem(str(path), None, f"cannot read the build manifest ({err}); rebuild the "
                           "site with the textbook-chat plugin or drop --manifest") from None
    return docs


def _relative_source(source: str, docs_dir: Path | str) -> str:
    """'@site/docs/02-basics/01-setup.md' -> '02-basics/01-setup.md'."""
    rest = source.removeprefix("@site/")
    if isinstance(docs_dir, Path):
        parts = rest.split("/")
        for i in range(1, len(parts)):
            if (docs_dir / "/".join(parts[i:])).is_file():
                return "/".join(parts[i:])
        docs_dir = docs_dir.name
    prefix = str(docs_dir).strip("/").removeprefix("./") + "/"
    return rest[len(prefix):] if rest.startswith(prefix) else rest.split("/", 1)[-1]


def find_collisions(routes: Iterable[tuple[str, str]]) -> list[ParseProblem]:
    """Docs that would be served at the same URL: one problem per later file, naming both."""
    seen: dict[str, str] = {}
    problems = []
    for source, url in routes:
        first = seen.setdefault(url, source)
        if first != source:
            problems.append(ParseProblem(source, None, f"its URL {url} is also the URL of {first}; "
                                         "give one of them a different `slug:` in front matter"))
    return problems
