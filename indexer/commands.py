"""What `index`, `check` and `demo` do: wiring settings, parsing, syncing and reporting."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from functions.errors import ConfigError
from functions.settings import Settings
from indexer.model import SiteSettings

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "samples" / "textbook"


def resolve_site(args, say=None) -> tuple[SiteSettings, dict | None]:
    """Site settings from flags, over docusaurus.config.* (--site-dir, else the docs folder's
    parent when it holds one), over Docusaurus defaults; plus the manifest's routes (source
    path -> served URL) when a manifest is given. `say` gets one line naming what was used."""
    from indexer.site_config import find_config, read_site_config

    site, source = SiteSettings(), "Docusaurus defaults"
    site_dir = Path(args.site_dir) if args.site_dir else None
    if site_dir is None and find_config(Path(args.docs_dir).resolve().parent):
        site_dir = Path(args.docs_dir).resolve().parent  # the usual website/docs layout
    if site_dir is not None:
        site = read_site_config(site_dir)
        config = find_config(site_dir)
        source = str(_shown(config)) if config else f"Docusaurus defaults (no config in {site_dir})"
    flags = []
    if args.base_url:
        base = args.base_url if args.base_url.startswith("/") else "/" + args.base_url
        site.base_url = base if base.endswith("/") else base + "/"
        flags.append("--base-url")
    if args.route_base_path is not None:
        site.route_base_path = args.route_base_path
        flags.append("--route-base-path")
    if args.trailing_slash:
        site.trailing_slash = {"true": True, "false": False, "unset": None}[args.trailing_slash]
        flags.append("--trailing-slash")
    if args.markdown_format:
        site.markdown_format = args.markdown_format
        flags.append("--markdown-format")
    routes = None
    if args.manifest:
        from indexer.model import ParseProblem
        from indexer.routes import load_manifest

        try:
            routes = load_manifest(Path(args.manifest), args.docs_dir)
        except ParseProblem as exc:
            raise ConfigError(str(exc)) from None
        if not args.base_url:  # the build's own baseUrl, which `check` strips off page URLs
            site.base_url = manifest_base_url(Path(args.manifest), site.base_url)
    elif site_dir is not None and _has_editions(site_dir):
        print(f"warning: {site_dir} has versions or translations, but without --manifest only "
              f"{args.docs_dir} is indexed. Pass --manifest .textbook-chat/manifest.json (the "
              "site plugin writes it at build time) to index every version and locale.",
              file=sys.stderr)
    if say:
        say(describe_site(site, source, flags, args.manifest))
    return site, routes


def _has_editions(site_dir: Path) -> bool:
    i18n = site_dir / "i18n"
    return (site_dir / "versions.json").is_file() or (
        i18n.is_dir() and any(i18n.glob("*/docusaurus-plugin-content-docs*")))


def manifest_base_url(path: Path, default: str) -> str:
    """The baseUrl the site was built with, from its build manifest."""
    try:
        base = json.loads(path.read_text(encoding="utf-8")).get("baseUrl")
    except (OSError, ValueError, AttributeError):
        return default
    return base if isinstance(base, str) and base.startswith("/") else default


def describe_site(site: SiteSettings, source: str, flags: list[str], manifest=None) -> str:
    trailing = {True: "true", False: "false", None: "unset"}[site.trailing_slash]
    line = (f"Site settings: baseUrl {site.base_url}, routeBasePath {site.route_base_path or '/'}, "
            f"trailingSlash {trailing}, markdown {site.markdown_format} (from {source}")
    line += f"; {', '.join(flags)} given)" if flags else ")"
    if manifest:
        line += f"; permalinks from {manifest}"
    elif source.startswith("Docusaurus defaults"):
        line += "; pass --site-dir SITE (the folder of docusaurus.config.js) if this is not your site"
    return line


def _shown(path: Path) -> Path:
    """A path as the author would type it: relative to the working folder when inside it."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def chunk_options(args):
    from indexer.chunker import ChunkOptions

    try:
        levels = tuple(sorted({int(x) for x in str(args.split_levels).split(",") if x.strip()}))
    except ValueError:
        raise ConfigError(f"--split-levels {args.split_levels!r}: give heading levels like 2,3,4") from None
    if not levels or any(lv < 2 or lv > 6 for lv in levels):
        raise ConfigError(f"--split-levels {args.split_levels!r}: levels must be between 2 and 6")
    if args.max_tokens < 64:
        raise ConfigError("--max-tokens must be at least 64")
    if not 0 <= args.min_tokens < args.max_tokens:
        raise ConfigError("--min-tokens must be between 0 and --max-tokens")
    if not 0 <= args.overlap <= args.max_tokens // 2:
        raise ConfigError("--overlap must be between 0 and half of --max-tokens")
    return ChunkOptions(
        split_levels=levels, max_tokens=args.max_tokens, min_tokens=args.min_tokens,
        overlap_tokens=args.overlap,
    )


def _check_docs_dir(docs_dir: Path) -> None:
    if not docs_dir.is_dir():
        raise ConfigError(f"{docs_dir} is not a folder: give the Docusaurus docs folder (e.g. website/docs).")


def doc_count(docs_dir: Path, routes) -> int:
    """How many docs a run reads: every version and locale of the manifest, or the folder's."""
    from indexer.discover import sources

    found, skipped = sources(docs_dir, routes)
    return len(found) + len(skipped)


def build(args, progress_label: str = "Reading"):
    from indexer.progress import bar
    from indexer.sync import build_chunks

    _check_docs_dir(args.docs_dir)
    site, routes = resolve_site(args, say=_say)
    options = chunk_options(args)
    with bar(doc_count(args.docs_dir, routes), progress_label, unit="file") as tick:
        built = build_chunks(args.docs_dir, site, options, routes=routes, progress=lambda _: tick(1))
    return site, built


def cmd_index(args) -> int:
    from indexer.report import print_summary
    from indexer.sync import Summary, export_jsonl

    if args.dry_run or args.export:
        site, built = build(args)
        from indexer.sync import require_docs

        require_docs(built, args.docs_dir, with_manifest=bool(args.manifest))
    if args.export:
        export_jsonl(built.chunks, args.export)
    if args.dry_run:
        summary = Summary(files=built.files, chunks=len(built.chunks), failed=len(built.failed),
                          problems=built.failed, warnings=built.warnings)
        print_summary(summary, as_json=args.json, dry_run=True, export=args.export)
        return 1 if built.failed else 0
    summary = index_docs(args, Settings.from_env(os.environ))
    print_summary(summary, as_json=args.json, export=args.export)
    return 1 if summary.failed else 0


def index_docs(args, settings: Settings, embedder=None, store=None, say=_say):
    """Sync args.docs_dir into the store of settings (or the given open store), with progress."""
    from datetime import UTC, datetime

    from functions.embeddings.factory import make_embedder
    from functions.store import QdrantStore
    from indexer.progress import bar
    from indexer.sync import sync_docs

    _check_docs_dir(args.docs_dir)
    site, routes = resolve_site(args, say=say)
    options = chunk_options(args)
    embedder = embedder or make_embedder(settings)
    own = store is None
    store = store or QdrantStore.open(settings)
    try:
        with bar(doc_count(args.docs_dir, routes), "Reading", unit="file") as tick_file, bar(
            None, "Embedding", unit="chunk"
        ) as tick_chunk:
            summary = sync_docs(
                args.docs_dir, site, options, store, embedder, routes=routes,
                recreate=args.recreate, progress=lambda _: tick_file(1), embed_progress=tick_chunk,
            )
        if getattr(store, "notice", None):  # the embedded index was rebuilt or moved over
            say(f"textbook-chat: {store.notice}")
        runtime = getattr(embedder, "runtime_label", None)  # the local model's: what computed it
        if summary.embedded and runtime:
            say(f"Embedded {summary.embedded} chunks with {embedder.model_name} on {runtime}.")
        store.mark_synced(datetime.now(UTC).isoformat(timespec="seconds"))
        return summary
    finally:
        if own:
            store.close()


def cmd_check(args) -> int:
    from indexer.check import check_chunks

    if not args.build_dir.is_dir():
        raise ConfigError(f"--build-dir {args.build_dir} is not a folder: run `npm run build` first.")
    site, built = build(args, "Checking")
    result = check_chunks(built.chunks, args.build_dir, site.base_url)
    for problem in built.failed:
        print(f"could not read {problem}", file=sys.stderr)
    for miss in result.misses:
        print(f"MISSING {miss}")
    editions = sorted({(c.version, c.locale) for c in built.chunks if c.version or c.locale})
    across = f" in {len(editions)} versions/locales" if len(editions) > 1 else ""
    print(
        f"{result.anchors} anchors and {result.texts} chunk texts on {result.pages} pages"
        f"{across} checked: {len(result.misses)} missing.",
        file=sys.stderr,
    )
    if not result.texts:
        print(f"textbook-chat: nothing was checked: {args.docs_dir} gave no chunks"
              f"{' that the manifest lists' if args.manifest else ''}. Give the docs folder "
              "(e.g. website/docs) and, for a versioned or translated site, --manifest.",
              file=sys.stderr)
        return 1
    return 1 if result.misses or built.failed else 0


DEMO_QUESTIONS = (
    "What does the derivative term of a PID controller do?",
    "How do I find the gyroscope bias when the robot starts?",
    "How do I bake a sourdough loaf?",
)
DEMO_COLLECTION = "sample-textbook"  # used only when the default collection holds another book
DEMO_FEEDBACK = ".textbook-chat/demo-feedback.sqlite3"  # not the readers' log


def cmd_demo(args) -> int:
    """Index the bundled sample book into the default index (the one `ask`, `serve` and `eval`
    read with no flags), then ask it questions; the demo's questions stay out of the readers'
    feedback log."""
    from argparse import Namespace

    from functions.app import create_app
    from functions.cli_commands import cmd_ask
    from functions.deps import Deps
    from functions.feedback import make_feedback_store
    from indexer.report import print_summary

    docs = SAMPLE_DIR / "docs"
    if not docs.is_dir():
        raise ConfigError(f"The sample textbook is missing at {docs}; run the demo from a clone.")
    ns = _default_index_args(docs, site_dir=SAMPLE_DIR)
    settings = Settings.from_env(os.environ)
    if _holds_another_book(settings, docs):
        print(f"The collection {settings.collection!r} holds another book; the demo uses "
              f"{DEMO_COLLECTION!r} beside it.", file=sys.stderr)
        settings = settings.with_(collection=DEMO_COLLECTION)
    where = settings.qdrant_url or settings.qdrant_path
    print(f"Indexing the sample textbook ({_shown(docs)}) into {where} "
          f"(collection {settings.collection!r}) ...", file=sys.stderr)
    summary = index_docs(ns, settings)
    print_summary(summary, as_json=False)
    from mangum import Mangum

    os.environ.setdefault("LOG_LEVEL", "ERROR")  # the answers, not the JSON request log
    deps = Deps(settings, env=os.environ,
                feedback=make_feedback_store(settings, os.environ, path=DEMO_FEEDBACK))
    handler = Mangum(create_app(deps, "chat", threaded=False), lifespan="off")
    for question in args.question or DEMO_QUESTIONS:
        print(f"\nQ: {question}", flush=True)
        asked = Namespace(question=question, selection=None, page_url=None, anchor=None, json=False)
        if cmd_ask(asked, handler=handler) != 0:
            return 1
    prefix = "" if settings.collection == Settings.from_env(os.environ).collection else (
        f"QDRANT_COLLECTION={settings.collection} ")
    print(
        "\nNext, with no flags (same index):\n"
        f"  {prefix}textbook-chat ask \"What is loop jitter?\"\n"
        f"  {prefix}textbook-chat serve      the API on http://127.0.0.1:8787 for the widget "
        "(GET /health shows the index)\n"
        f"  {prefix}textbook-chat eval {_shown(SAMPLE_DIR / 'questions.jsonl')}",
        file=sys.stderr,
    )
    return 0


def _holds_another_book(settings: Settings, docs: Path) -> bool:
    """True when the target collection already holds docs the sample book does not have (an
    author's book): the demo must not sync over it (a sync deletes docs it does not see)."""
    from functions.store import QdrantStore
    from indexer.discover import discover

    store = QdrantStore.open(settings)
    try:
        if not store.exists():
            return False
        ours = set(discover(docs))
        return any(p.get("doc_path") not in ours for _, p in store.scroll_payloads(["doc_path"]))
    finally:
        store.close()


def _default_index_args(docs: Path, site_dir: Path | None = None):
    import argparse

    return argparse.Namespace(
        docs_dir=docs, site_dir=site_dir, manifest=None, base_url=None, route_base_path=None,
        trailing_slash=None, markdown_format=None, split_levels="2,3,4", max_tokens=512,
        min_tokens=25, overlap=50, dry_run=False, export=None, recreate=False, json=False,
    )


def dump(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2)
