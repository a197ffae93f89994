"""Docusaurus doc ids and page URLs: the docs plugin's rules, or a build manifest's permalinks."""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from functions.search.contract import CURRENT_VERSION, Editions
from indexer.model import Problem, SiteSettings

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
    version: str = ""  # docs version name ("current", "1.0"); "" when not from a manifest
    locale: str = ""
    doc_path: str = ""  # path inside its version's docs folder: the same in every version
    file: Path | None = None  # the source on disk (None when the docs folder is not known)
    content_dir: Path | None = None  # the folder doc_path is relative to (partials live there)
    default: bool = True  # current version, default locale: keeps the ids of an unversioned book
    untranslated: bool = False  # another locale's page served with the default locale's text
    default_locale: str = ""  # the site's (served at baseUrl)
    root_version: bool = False  # its version is the one served at the docs root (lastVersion)

    @property
    def edition(self) -> str:
        """"" for the default edition, else "version@locale" (part of non-default point ids)."""
        return "" if self.default else f"{self.version}@{self.locale}"


# i18n/<locale>/docusaurus-plugin-content-docs[-<id>]/<current|version-X>/<doc path>
_I18N_SOURCE = re.compile(r"^(i18n/[^/]+/[^/]+/(?:current|version-[^/]+))/(.+)$")
# [<id>_]versioned_docs/version-X/<doc path>
_VERSIONED_SOURCE = re.compile(r"^((?:[^/]+_)?versioned_docs/version-[^/]+)/(.+)$")


def load_manifest(path: Path, docs_dir: Path | str = "docs") -> dict[str, ManifestDoc]:
    """Read the site plugin's build manifest, and the manifests of the site's other locales
    beside it (`manifest.<locale>.json`); every version and locale of every doc.

    Keys: the doc path (relative to the docs dir) for the current version in the default
    locale, as in an unversioned book; `<locale>:<site-relative source>` for the others.
    docs_dir is the docs folder on disk (its files tell where "@site/<docs path>/" ends) or
    the docs path relative to the site ("docs").
    """
    docs: dict[str, ManifestDoc] = {}
    given = _read_manifest(Path(path))
    default_locale = given.get("defaultLocale") or given.get("locale") or ""
    site_root = _site_root(given, docs_dir)
    for data, where in _locale_group(Path(path), given, default_locale):
        try:
            for doc in _entries(data, docs_dir, site_root, default_locale):
                key = doc.doc_path if doc.default else f"{doc.locale}:{_site_relative(doc, site_root)}"
                docs[key] = doc
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise _unreadable(where, err) from None
    return docs


def _unreadable(path: Path, err) -> Problem:
    return Problem(str(path), None, f"cannot read the build manifest ({err}); rebuild the "
                   "site with the textbook-chat plugin or drop --manifest")


def _read_manifest(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data["docs"], list):
            raise ValueError("no `docs` list")
        return data
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise _unreadable(path, err) from None


def locale_manifest(path: Path, locale: str) -> Path:
    """manifest.json -> manifest.<locale>.json (the plugin's name for another locale's build)."""
    return path.with_name(f"{path.stem}.{locale}{path.suffix or '.json'}")


def _locale_group(path: Path, given: dict, default_locale: str) -> list[tuple[dict, Path]]:
    """The manifests of every locale of one build (the default locale's first), from any one
    of them: manifest.json and the manifest.<locale>.json files beside it."""
    own = given.get("locale") or default_locale
    main = path
    if own != default_locale and path.stem.endswith(f".{own}"):
        main = path.with_name(path.stem[: -len(own) - 1] + path.suffix)
    group: list[tuple[dict, Path]] = []
    locales = [default_locale, *(loc for loc in given.get("locales") or [] if loc != default_locale)]
    for locale in dict.fromkeys([*locales, own]):
        other = main if locale == default_locale else locale_manifest(main, locale)
        if locale == own:
            group.append((given, path))
        elif isinstance(locale, str) and other.is_file():
            group.append((_read_manifest(other), other))
    return group


def _site_root(data: dict, docs_dir: Path | str) -> Path | None:
    """The folder "@site/" stands for, found from the docs folder on disk."""
    if not isinstance(docs_dir, Path):
        return None
    for doc in data.get("docs") or []:
        parts = str(doc.get("source", "")).removeprefix("@site/").split("/")
        for i in range(len(parts)):  # i = 0: docs_dir is the site folder itself
            if (docs_dir / "/".join(parts[i:])).is_file():
                root = docs_dir
                for _ in range(i):
                    root = root.parent
                return root
    return docs_dir.parent


def _entries(data: dict, docs_dir: Path | str, site_root: Path | None, default_locale: str):
    trailing = data.get("trailingSlash")
    site = SiteSettings(
        base_url=data.get("baseUrl") or "/",
        route_base_path=data.get("routeBasePath", "docs"),
        trailing_slash=trailing if isinstance(trailing, bool) else None,
    )
    locale = data.get("locale") or default_locale
    docs_prefix = _docs_prefix(docs_dir, site_root)
    root = _root_version(data["docs"], normalize_url([site.base_url, site.route_base_path]))
    for doc in data["docs"]:
        permalink = doc["permalink"]
        rest = str(doc["source"]).removeprefix("@site/")
        content, doc_path = _split_source(rest, docs_prefix)
        version = str(doc.get("version") or CURRENT_VERSION)
        yield ManifestDoc(
            doc["id"], permalink, apply_trailing_slash(permalink, site), doc.get("title", ""),
            doc.get("frontMatter") or {}, version=version, locale=locale, doc_path=doc_path,
            file=site_root / rest if site_root else None,
            content_dir=site_root / content if site_root else None,
            default=version == CURRENT_VERSION and locale == default_locale,
            untranslated=locale != default_locale and not rest.startswith("i18n/"),
            default_locale=default_locale, root_version=version == root,
        )


def _root_version(docs: list[dict], docs_root: str) -> str:
    """The version Docusaurus serves at the docs root (the docs plugin's `lastVersion`): every
    other version's pages sit under `<docs root>/<its path>` ("next" for the current version,
    else its name: plugin-content-docs versions/version.ts), so it is the one whose pages do
    not. When that does not single one out (custom version paths), the plugin's default:
    the newest release (listed right after "current"), else "current"."""
    names = list(dict.fromkeys(str(d.get("version") or CURRENT_VERSION) for d in docs))
    root = docs_root.rstrip("/") + "/"

    def under_own_path(name: str) -> bool:
        label = "next" if name == CURRENT_VERSION else name
        return any(str(d.get("permalink", "")).rstrip("/") + "/" == root + label + "/"
                   or str(d.get("permalink", "")).startswith(root + label + "/")
                   for d in docs if str(d.get("version") or CURRENT_VERSION) == name)

    at_root = [n for n in names if not under_own_path(n)]
    if len(at_root) == 1:
        return at_root[0]
    released = [n for n in names if n != CURRENT_VERSION]
    return released[0] if released else CURRENT_VERSION


def editions(routes: Mapping[str, ManifestDoc] | None) -> Editions:
    """The versions and locales of a manifest's docs (in the manifest's order) and the ones
    served at the docs root and at baseUrl; none without a manifest."""
    docs = list((routes or {}).values())
    if not docs:
        return Editions()
    default_locale = docs[0].default_locale or docs[0].locale
    root = next((d.version for d in docs if d.root_version and d.locale == default_locale),
                next((d.version for d in docs if d.root_version), docs[0].version))
    return Editions(tuple(dict.fromkeys(d.version for d in docs if d.version)),
                    tuple(dict.fromkeys(d.locale for d in docs if d.locale)), root, default_locale)


def _docs_prefix(docs_dir: Path | str, site_root: Path | None) -> str:
    if isinstance(docs_dir, Path):
        if site_root is not None:
            try:
                return docs_dir.resolve().relative_to(site_root.resolve()).as_posix()
            except ValueError:
                pass
        return docs_dir.name
    return str(docs_dir).strip("/").removeprefix("./")


def _split_source(rest: str, docs_prefix: str) -> tuple[str, str]:
    """'versioned_docs/version-1.0/02-basics/01-setup.md' -> ('versioned_docs/version-1.0',
    '02-basics/01-setup.md'); the same for i18n/ translations and the docs folder itself."""
    for pattern in (_I18N_SOURCE, _VERSIONED_SOURCE):
        match = pattern.match(rest)
        if match:
            return match.group(1), match.group(2)
    prefix = docs_prefix.strip("/") + "/"
    if rest.startswith(prefix):
        return prefix.rstrip("/"), rest[len(prefix):]
    head, _, tail = rest.partition("/")
    return head, tail or rest


def _site_relative(doc: ManifestDoc, site_root: Path | None) -> str:
    if doc.file is not None and site_root is not None:
        return doc.file.relative_to(site_root).as_posix()
    return f"{doc.version}/{doc.doc_path}"

