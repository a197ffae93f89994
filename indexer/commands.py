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


def resolve_site(args) -> tuple[SiteSettings, dict | None]:
    """Site settings from flags, over docusaurus.config.js|ts, over Docusaurus defaults;
    plus the manifest's routes (source path -> served URL) when a manifest is given."""
    site = SiteSettings()
    if args.site_dir:
        from indexer.site_config import read_site_config

        site = read_site_config(Path(args.site_dir))
    if args.base_url:
        base = args.base_url if args.base_url.startswith("/") else "/" + args.base_url
        site.base_url = base if base.endswith("/") else base + "/"
    if args.route_base_path is not None:
        site.route_base_path = args.route_base_path
    if args.trailing_slash:
        site.trailing_slash = {"true": True, "false": False, "unset": None}[args.trailing_slash]
    if args.markdown_format:
        site.markdown_format = args.markdown_format
    routes = None
    if args.manifest:
        from indexer.model import ParseProblem
        from indexer.routes import load_manifest

        try:
            routes = load_manifest(Path(args.manifest), args.docs_dir)
        except ParseProblem as exc:
            raise ConfigError(str(exc)) from None
    return site, routes


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


def build(args, progress_label: str = "Reading"):
    from indexer.progress import bar
    from indexer.sync import build_chunks

    _check_docs_dir(args.docs_dir)
    site, routes = resolve_site(args)
    options = chunk_options(args)
    from indexer.discover import discover

    total = len(discover(args.docs_dir))
    with bar(total, progress_label, unit="file") as tick:
        built = build_chunks(args.docs_dir, site, options, routes=routes, progress=lambda _: tick(1))
    return site, built


def cmd_index(args) -> int:
    from indexer.report import print_summary
    from indexer.sync import Summary, export_jsonl

    if args.dry_run or args.export:
        site, built = build(args)
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


def index_docs(args, settings: Settings, embedder=None):
    """Sync args.docs_dir into the store of settings, with progress bars."""
    from functions.embeddings.factory import make_embedder
    from functions.store import QdrantStore
    from indexer.discover import discover
    from indexer.progress import bar
    from indexer.sync import sync_docs

    _check_docs_dir(args.docs_dir)
    site, routes = resolve_site(args)
    options = chunk_options(args)
    embedder = embedder or make_embedder(settings)
    store = QdrantStore.open(settings)
    try:
        with bar(len(discover(args.docs_dir)), "Reading", unit="file") as tick_file, bar(
            None, "Embedding", unit="chunk"
        ) as tick_chunk:
            return sync_docs(
                args.docs_dir, site, options, store, embedder, routes=routes,
                recreate=args.recreate, progress=lambda _: tick_file(1), embed_progress=tick_chunk,
            )
    finally:
        store.close()


def cmd_check(args) -> int:
    from indexer.check import check_chunks

    if not args.build_dir.is_dir():
        raise ConfigError(f"--build-dir {args.build_dir} is not a folder: run `npm run build` first.")
    site, built = build(args, "Checking")
    misses, checked = check_chunks(built.chunks, args.build_dir, site.base_url)
    for problem in built.failed:
        print(f"could not read {problem}", file=sys.stderr)
    for miss in misses:
        print(f"MISSING {miss}")
    print(
        f"{checked} anchors on {len({c.page_url for c in built.chunks})} pages checked: "
        f"{len(misses)} missing.",
        file=sys.stderr,
    )
    return 1 if misses or built.failed else 0


def cmd_demo(args) -> int:
    """Index the bundled sample book with the embedded defaults, then ask it questions."""
    from indexer.report import print_summary

    docs = SAMPLE_DIR / "docs"
    if not docs.is_dir():
        raise ConfigError(f"The sample textbook is missing at {docs}; run the demo from a clone.")
    ns = _default_index_args(docs, site_dir=SAMPLE_DIR)
    # The demo keeps its own index so it never touches an author's collection.
    os.environ.setdefault("QDRANT_PATH", ".textbook-chat/demo-qdrant")
    os.environ.setdefault("QDRANT_COLLECTION", "sample-textbook")
    settings = Settings.from_env(os.environ)
    where = settings.qdrant_url or settings.qdrant_path
    print(f"Indexing the sample textbook ({docs}) into {where} ...", file=sys.stderr)
    summary = index_docs(ns, settings)
    print_summary(summary, as_json=False)
    questions = args.question or [
        "What does the derivative term of a PID controller do?",
        "How do I find the gyroscope bias when the robot starts?",
        "How do I bake a sourdough loaf?",
    ]
    from indexer.cli import main

    for question in questions:
        print(f"\nQ: {question}", flush=True)
        if main(["ask", question]) != 0:
            return 1
    print(
        "\nNext: `textbook-chat serve` runs this API on http://127.0.0.1:8787 for the widget.",
        file=sys.stderr,
    )
    return 0


def _default_index_args(docs: Path, site_dir: Path | None = None):
    import argparse

    return argparse.Namespace(
        docs_dir=docs, site_dir=site_dir, manifest=None, base_url=None, route_base_path=None,
        trailing_slash=None, markdown_format=None, split_levels="2,3,4", max_tokens=512,
        min_tokens=25, overlap=50, dry_run=False, export=None, recreate=False, json=False,
    )


def dump(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2)
