"""`textbook-chat index` and `check`: a docs folder into the index, or checked against a build."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from functions.errors import ConfigError
from functions.settings import Settings
from indexer import local_index
from indexer.build import export_jsonl, require_docs
from indexer.check import check_chunks
from indexer.job import build, index_docs, say_stderr, using_index
from indexer.report import print_summary
from indexer.sync import Summary
from textbook_chat_cli.options import add_prune_option, add_site_options, index_job

INDEX_EXAMPLES = """examples:
  textbook-chat index website/docs                    baseUrl etc. from website/docusaurus.config.js
  textbook-chat index docs --site-dir website --manifest website/.textbook-chat/manifest.json
  textbook-chat index docs --base-url /my-book/ --dry-run --export chunks.jsonl
  QDRANT_COLLECTION=other-book textbook-chat index ../other-book/docs   (a second book)
"""
CHECK_EXAMPLES = """examples:
  textbook-chat check website/docs --build-dir website/build
  textbook-chat check docs --build-dir build --manifest .textbook-chat/manifest.json
"""


def add_parsers(sub) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser("index", help="index (sync) a docs folder into Qdrant",
                       epilog=INDEX_EXAMPLES, formatter_class=fmt)
    p.add_argument("docs_dir", type=Path, help="the Docusaurus docs folder")
    add_site_options(p)
    p.add_argument("--dry-run", action="store_true", help="parse and chunk only: no embedding, no Qdrant")
    p.add_argument("--export", type=Path, help="write every chunk's payload as JSON lines to this file")
    p.add_argument("--recreate", action="store_true", help="drop and rebuild the collection (a new model, or to replace another book)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    add_prune_option(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("check", help="check every chunk's anchor against a built site",
                       epilog=CHECK_EXAMPLES, formatter_class=fmt)
    p.add_argument("docs_dir", type=Path)
    add_site_options(p)
    p.add_argument("--build-dir", type=Path, required=True, help="the Docusaurus build folder")
    p.set_defaults(func=cmd_check)


def cmd_index(args) -> int:
    job = index_job(args, say=say_stderr)
    if args.dry_run or args.export:
        built = build(job)
        require_docs(built, job.docs_dir, with_manifest=job.manifest is not None)
    if args.export:
        try:
            export_jsonl(built.chunks, args.export)
        except OSError as exc:
            raise ConfigError(f"--export {args.export}: cannot write it ({exc.strerror or exc}); "
                              "give a file path in an existing folder.") from None
    if args.dry_run:
        summary = Summary(files=built.files, chunks=len(built.chunks), failed=len(built.failed),
                          problems=built.failed, warnings=built.warnings)
        print_summary(summary, as_json=args.json, dry_run=True, export=args.export)
        return 1 if built.failed else 0
    settings = Settings.from_env(os.environ)
    say_stderr(using_index(settings))
    refuse_while_held(settings, job.docs_dir)
    summary = index_docs(job, settings, recreate=args.recreate, prune=args.prune)
    print_summary(summary, as_json=args.json, export=args.export)
    return 1 if summary.failed else 0


def refuse_while_held(settings: Settings, docs_dir: Path, command: str = "index") -> None:
    """The local index can be written by one process: while another holds it, name the one
    command that works (`ask` and `eval` read a copy meanwhile, see indexer/local_index.py)."""
    if not local_index.held(settings):
        return
    where = f"The local index at {settings.qdrant_path}"
    server = local_index.running_server(settings)
    if server and server.watch and Path(server.watch) == docs_dir.resolve():
        raise ConfigError(
            f"{where} is held by `textbook-chat serve --watch {docs_dir}` (pid {server.pid}), "
            f"which re-indexes {docs_dir} itself within ~2 s of each save: there is nothing to "
            "run (`ask` and `eval` work meanwhile).")
    if server:
        running = f"serve --watch {server.watch}" if server.watch else "serve"
        raise ConfigError(
            f"{where} is held by `textbook-chat {running}` (pid {server.pid}). Stop it (Ctrl+C "
            f"in its terminal) and run `textbook-chat serve --watch {docs_dir}`: it indexes "
            f"{docs_dir} now and again on every save, while serving.")
    raise ConfigError(
        f"{where} is in use by another textbook-chat process (an `index` run, or `ask`/`eval` "
        f"reading it): run `textbook-chat {command} {docs_dir}` again when it has finished.")


def cmd_check(args) -> int:
    if not args.build_dir.is_dir():
        raise ConfigError(f"--build-dir {args.build_dir} is not a folder: run `npm run build` first.")
    job = index_job(args, say=say_stderr)
    built = build(job, "Checking")
    result = check_chunks(built.chunks, args.build_dir, job.site.base_url)
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
    if built.chunks and not result.pages:  # every page missing: the wrong folder, or not built
        print(f"textbook-chat: nothing was checked: no page of {args.docs_dir} "
              f"({len(result.misses)} in all) is in {args.build_dir} (baseUrl "
              f"{job.site.base_url}). Give the "
              "build folder of this site (e.g. website/build), built with `npm run build`.",
              file=sys.stderr)
        return 1
    if not result.texts:
        print(f"textbook-chat: nothing was checked: {args.docs_dir} gave no chunks"
              f"{' that the manifest lists' if args.manifest else ''}. Give the docs folder "
              "(e.g. website/docs) and, for a versioned or translated site, --manifest.",
              file=sys.stderr)
        return 1
    return 1 if result.misses or built.failed else 0
