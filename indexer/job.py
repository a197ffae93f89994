"""One index run: what it reads, resolved once into frozen settings, and running it with progress.

`resolve_job` turns a docs folder, an optional site folder and manifest, the author's overrides
and the chunking limits into an `IndexJob` (the site settings and, with a manifest, every doc's
route are known before any file is parsed); `build` parses and chunks it, `index_docs` syncs it
into a store. The CLI, `serve --watch`, `release stage`, the demo and the benchmarks all call
these.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from functions.errors import ConfigError
from functions.search.embeddings.factory import make_embedder
from functions.search.store import QdrantStore
from functions.settings import Settings
from indexer.build import BuildResult, build_chunks
from indexer.discover import sources
from indexer.frontmatter import decode, split
from indexer.local_index import writing
from indexer.model import ChunkOptions, Problem, SiteSettings
from indexer.progress import bar
from indexer.routes import editions, load_manifest
from indexer.site_config import find_config, load_site_config, site_address
from indexer.sync import Summary, sync_docs
from indexer.using import say_stderr, shown, using_index  # noqa: F401 (the CLI's, re-exported)

# Where docusaurus-plugin-textbook-chat writes the manifest by default (its `manifestPath`).
DEFAULT_MANIFEST = Path(".textbook-chat") / "manifest.json"


@dataclass(frozen=True)
class SiteOverrides:
    """Site settings the author gives on the command line; None keeps the config's value."""

    base_url: str | None = None
    route_base_path: str | None = None
    trailing_slash: bool | None | str = "keep"  # True/False/None (unset) override; "keep" does not
    markdown_format: str | None = None

    def flags(self) -> list[str]:
        given = [("--base-url", self.base_url is not None),
                 ("--route-base-path", self.route_base_path is not None),
                 ("--trailing-slash", self.trailing_slash != "keep"),
                 ("--markdown-format", self.markdown_format is not None)]
        return [flag for flag, on in given if on]


@dataclass(frozen=True)
class IndexJob:
    """What one index run reads: the docs folder, its site's settings, the manifest's routes
    (source path -> served URL; None without a manifest) and the chunking limits."""

    docs_dir: Path
    site: SiteSettings = field(default_factory=SiteSettings)
    chunking: ChunkOptions = field(default_factory=ChunkOptions)
    manifest: Path | None = None
    routes: dict | None = None
    site_url: str | None = None  # the site's address (config `url`, or the manifest's siteUrl)
    book: dict | None = None  # {"title", "site", "docs"}: which book (META_BOOK), names only


def resolve_job(docs_dir: Path, site_dir: Path | None = None, manifest: Path | None = None,
                overrides: SiteOverrides | None = None, chunking: ChunkOptions | None = None,
                say: Callable[[str], None] | None = None) -> IndexJob:
    """Site settings from overrides, over docusaurus.config.* (site_dir, else the docs folder's
    parent when it holds one), over Docusaurus defaults; plus the manifest's routes when a
    manifest is given. `say` gets one line naming what was used."""
    docs_dir, overrides = Path(docs_dir), overrides or SiteOverrides()
    check_docs_dir(docs_dir)
    site, source, site_url = SiteSettings(), "Docusaurus defaults", None
    site_dir = Path(site_dir) if site_dir else None
    beside = Path(os.path.abspath(docs_dir)).parent  # a linked docs folder is still this site's
    if site_dir is None and find_config(beside):
        site_dir = beside  # the usual website/docs layout
    config, found = None, None
    if site_dir is not None:
        config = load_site_config(site_dir, docs_dir=_relative(docs_dir, site_dir))
        for warning in config.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        site, found, site_url = config.site, find_config(site_dir), config.site_url
        source = (f"{shown(found)}, {config.how}" if found
                  else f"Docusaurus defaults (no config in {site_dir})")
    found_manifest = False
    if manifest is None and site_dir is not None and (site_dir / DEFAULT_MANIFEST).is_file():
        stale = stale_manifest(site_dir / DEFAULT_MANIFEST, found, config)
        if stale:  # the plugin's, beside the site, but written before the config changed
            print(f"warning: {stale}: its permalinks may be out of date, so they are not used "
                  f"(the URLs come from {found.name if found else 'the config'} instead). Run "
                  "`npm start` (or build) in the site to refresh it, or pass --manifest "
                  f"{shown(site_dir / DEFAULT_MANIFEST)} to use it anyway.", file=sys.stderr)
        else:
            manifest, found_manifest = site_dir / DEFAULT_MANIFEST, True
    elif manifest is not None and (stale := stale_manifest(Path(manifest), found, config)):
        print(f"warning: {stale}; it is used, as --manifest asks: its permalinks may be out of "
              "date until the site is started or built again.", file=sys.stderr)
    site = _overridden(site, overrides)
    routes = None
    if manifest:
        manifest = Path(manifest)
        try:
            routes = load_manifest(manifest, docs_dir)
        except Problem as exc:
            raise ConfigError(str(exc)) from None
        if overrides.base_url is None:  # the build's own baseUrl, which `check` strips off URLs
            site = replace(site, base_url=manifest_base_url(manifest, site.base_url))
        site_url = manifest_site_url(manifest) or site_url  # the build's own
        if found_manifest:
            _warn_unlisted(docs_dir, routes, manifest)
    elif site_dir is not None and _has_editions(site_dir):
        print(f"warning: {site_dir} has versions or translations, but without --manifest only "
              f"{docs_dir} is indexed. Pass --manifest .textbook-chat/manifest.json (the "
              "site plugin writes it at build time) to index every version and locale.",
              file=sys.stderr)
    if say:
        say(describe_site(site, source, overrides.flags(), manifest, found_manifest))
    book = book_record(docs_dir, site_dir, config.title if config else None)
    return IndexJob(docs_dir, site, chunking or ChunkOptions(), manifest, routes, site_url, book)


def _after(done, tick):
    """`tick`, ending the stage `done` first: its last line comes before the next stage's."""
    def ticked(n: int) -> None:
        done.finish()
        tick(n)
    return ticked


def book_record(docs_dir: Path, site_dir: Path | None, title: str | None) -> dict:
    """The index's record of which book it holds: the site's title, the site folder's name and
    the docs folder in it (names, not paths: GET /health shows the record)."""
    folder = Path(os.path.abspath(docs_dir))
    site = Path(os.path.abspath(site_dir)) if site_dir else folder.parent
    docs = _relative(folder, site) or folder.name
    return {"title": title or "", "site": site.name, "docs": docs}


def stale_manifest(manifest: Path, config_file: Path | None, config) -> str | None:
    """Why a build manifest does not describe the site as its config now stands (None if it
    does): the baseUrl, trailingSlash or docs routeBasePath it was built with is not the
    config's (the config changed since `npm start` or the build wrote it, or it is another
    site's). A setting the config computes by code counts only once the config has changed
    since: an environment-dependent baseUrl may differ between builds of one site."""
    try:
        built = json.loads(manifest.read_text(encoding="utf-8"))
        newer = config_file is not None and \
            config_file.stat().st_mtime_ns > manifest.stat().st_mtime_ns
    except (OSError, ValueError):
        return None  # load_manifest says what is wrong with it
    if config is None or not isinstance(built, dict):
        return None
    evaluated = config.how.startswith("evaluated")
    site, differ = config.site, []
    for label, ours, theirs in (
            ("baseUrl", site.base_url, built.get("baseUrl", site.base_url)),
            ("trailingSlash", site.trailing_slash, built.get("trailingSlash", site.trailing_slash)),
            ("routeBasePath", site.route_base_path.strip("/"),
             str(built.get("routeBasePath") or site.route_base_path).strip("/"))):
        uncertain = any(f"`{label}`" in w for w in config.warnings) or (evaluated and not newer)
        if ours != theirs and not uncertain:
            differ.append(f"{label} {_js(theirs)} (the config says {_js(ours)})")
    if not differ:
        return None
    why = (f"{shown(config_file)} changed since the site was last started or built" if newer
           else f"it is another site's, or {shown(config_file)} changed since")
    return f"{shown(manifest)} was written for {', '.join(differ)}: {why}"


def _js(value) -> str:
    return {True: "true", False: "false", None: "unset"}.get(value, value) \
        if not isinstance(value, str) else value


def _relative(docs_dir: Path, site_dir: Path) -> str | None:
    """The docs folder as the site's config names it (`docs`, `community`), or None if outside."""
    try:
        return Path(os.path.abspath(docs_dir)).relative_to(os.path.abspath(site_dir)).as_posix()
    except ValueError:
        return None


def _warn_unlisted(docs_dir: Path, routes: dict, manifest: Path) -> None:
    """A manifest found by default may predate pages the author has added since: say so."""
    unlisted = [rel for rel in sources(docs_dir, routes).skipped if not _draft(docs_dir / rel)]
    if unlisted:
        print(f"warning: {len(unlisted)} page(s) of {docs_dir} are not in {shown(manifest)} "
              f"({', '.join(unlisted[:3])}{', ...' if len(unlisted) > 3 else ''}): added since "
              "the site was last built or started, and not indexed. Run "
              "`npm start` (or build) in the site to refresh it, or pass --manifest FILE.",
              file=sys.stderr)


def _draft(path: Path) -> bool:
    """`draft: true`: a build lists no page for it, rightly (`docusaurus start` does)."""
    try:
        return split(decode(path.read_bytes(), str(path)), str(path)).front_matter.get("draft") is True
    except (OSError, Problem):
        return False


def _overridden(site: SiteSettings, given: SiteOverrides) -> SiteSettings:
    changes: dict = {}
    if given.base_url is not None:
        base = given.base_url if given.base_url.startswith("/") else "/" + given.base_url
        changes["base_url"] = base if base.endswith("/") else base + "/"
    if given.route_base_path is not None:
        changes["route_base_path"] = given.route_base_path
    if given.trailing_slash != "keep":
        changes["trailing_slash"] = given.trailing_slash
    if given.markdown_format is not None:
        changes["markdown_format"] = given.markdown_format
    return replace(site, **changes)


def _has_editions(site_dir: Path) -> bool:
    i18n = site_dir / "i18n"
    return (site_dir / "versions.json").is_file() or (
        i18n.is_dir() and any(i18n.glob("*/docusaurus-plugin-content-docs*")))


def manifest_site_url(path: Path) -> str | None:
    """The site's address (`url`) the site was built with, from its build manifest."""
    try:
        return site_address(json.loads(path.read_text(encoding="utf-8")).get("siteUrl"))
    except (OSError, ValueError, AttributeError):
        return None


def manifest_base_url(path: Path, default: str) -> str:
    """The baseUrl the site was built with, from its build manifest."""
    try:
        base = json.loads(path.read_text(encoding="utf-8")).get("baseUrl")
    except (OSError, ValueError, AttributeError):
        return default
    return base if isinstance(base, str) and base.startswith("/") else default


def describe_site(site: SiteSettings, source: str, flags: list[str], manifest=None,
                  found_manifest: bool = False) -> str:
    trailing = {True: "true", False: "false", None: "unset"}[site.trailing_slash]
    line = (f"Site settings: baseUrl {site.base_url}, routeBasePath {site.route_base_path or '/'}, "
            f"trailingSlash {trailing}, markdown {site.markdown_format} (from {source}")
    line += f"; {', '.join(flags)} given)" if flags else ")"
    if manifest:
        line += f"; permalinks from {shown(Path(manifest))}"
        if found_manifest:
            line += (" (found beside the site: the plugin writes it on `docusaurus start` and "
                     "`build`; --manifest FILE to use another)")
    elif source.startswith("Docusaurus defaults"):
        line += "; pass --site-dir SITE (the folder of docusaurus.config.js) if this is not your site"
    return line


def index_time(embedded: int, seconds: float, embedder) -> str:
    """`Embedded 776 chunks with all-MiniLM-L6-v2 on OpenVINO f32 in 432 s (557 s per 1,000
    chunks on this machine).` The whole sync's time (reading, embedding, writing) per chunk
    embedded: how the time grows with the book."""
    runtime = getattr(embedder, "runtime_label", None)  # the local model's: what computed it
    model = f"{embedder.model_name} on {runtime}" if runtime else getattr(embedder, "model_name", "")
    per = seconds / embedded * 1000
    return (f"Embedded {embedded} chunks with {model} in {seconds:.1f} s "
            f"({per:.0f} s per 1,000 chunks on this machine).")


def check_docs_dir(docs_dir: Path) -> None:
    if not docs_dir.is_dir():
        raise ConfigError(f"{docs_dir} is not a folder: give the Docusaurus docs folder (e.g. website/docs).")


def build(job: IndexJob, progress_label: str = "Reading") -> BuildResult:
    """Parse and chunk every doc of the job, with progress on stderr (no store involved)."""
    found = sources(job.docs_dir, job.routes)  # the run's one walk of the docs
    with bar(len(found), progress_label, unit="file") as tick:
        return build_chunks(job.docs_dir, job.site, job.chunking, routes=job.routes,
                            progress=lambda _: tick(1), found=found)


def refuse_live_release(store, docs_dir: Path) -> None:
    """A release alias is what readers query: a sync into it would change the live release in
    place (its recorded point count no longer matches, so `switch` back is refused)."""
    aliases = store.aliases() if hasattr(store, "aliases") else {}  # a server's (or none)
    if store.collection not in aliases:
        return
    raise ConfigError(
        f"The collection {store.collection!r} is a release alias readers query now (it points at "
        f"{aliases[store.collection]}): `index` would change the live release in place. "
        f"Run `textbook-chat release stage {docs_dir}`, then `textbook-chat release switch NAME` "
        "with the name it prints; nothing was changed.")


def index_docs(job: IndexJob, settings: Settings, embedder=None, store=None, recreate=False,
               say: Callable[[str], None] = say_stderr, prune: bool = False) -> Summary:
    """Sync the job's docs into the store of settings (or the given open store), with progress.
    prune: consent to delete a large share of the pages (indexer.sync)."""
    embedder = embedder or make_embedder(settings)
    own = store is None
    store = store or QdrantStore.open(settings)
    try:
        refuse_live_release(store, job.docs_dir)
        started = time.perf_counter()
        found = sources(job.docs_dir, job.routes)  # the run's one walk of the docs
        with writing(settings), bar(len(found), "Reading", unit="file") as tick_file, bar(
            None, "Embedding", unit="chunk"
        ) as tick_chunk, bar(None, "Embedding quotable blocks", unit="block") as tick_block:
            summary = sync_docs(
                job.docs_dir, job.site, job.chunking, store, embedder, routes=job.routes,
                recreate=recreate, progress=lambda _: tick_file(1), embed_progress=tick_chunk,
                found=found, prune=prune, block_progress=_after(tick_chunk, tick_block),
            )
            # inside the fence: a reader's copy (local_index.readable) never sees half a sync
            store.mark_synced(datetime.now(UTC).isoformat(timespec="seconds"),
                              editions(job.routes), site_url=job.site_url, book=job.book)
        if getattr(store, "notice", None):  # the embedded index was rebuilt or moved over
            say(f"textbook-chat: {store.notice}")
        if summary.embedded:  # what the author's next, bigger index will cost on this machine
            say(index_time(summary.embedded, time.perf_counter() - started, embedder))
        return summary
    finally:
        if own:
            store.close()
