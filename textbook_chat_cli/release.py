"""`textbook-chat release stage|switch|rollback|discard|status` (indexer/release.py does the work)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from functions.errors import ConfigError
from functions.search.embeddings.factory import make_embedder
from functions.search.store import QdrantStore
from functions.settings import Settings
from indexer import release
from indexer.job import index_docs, using_index
from indexer.report import print_summary
from textbook_chat_cli.options import add_prune_option, add_site_options, index_job, positive_int


def add_parsers(sub) -> None:
    p = sub.add_parser("release", help="publish a reindex atomically on a Qdrant server "
                       "(stage, check, switch; rollback)", description=release.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = p.add_subparsers(dest="step", metavar="STEP", required=True)
    s = steps.add_parser("stage", help="index DOCS into a new collection beside the live one; "
                         "prints its name")
    s.add_argument("docs_dir", type=Path, help="the Docusaurus docs folder")
    add_site_options(s)
    s.add_argument("--recreate", action="store_true",
                   help="start the release empty instead of from the live one (a new model, or "
                        "to replace another book); readers still see the live one until `switch`")
    add_prune_option(s)
    s = steps.add_parser("switch", help="point readers at a staged release (one atomic step)")
    s.add_argument("name", help="the staged collection `stage` printed")
    s.add_argument("--keep", type=positive_int, default=3, help="releases kept, live one included (3)")
    for step, what in (("rollback", "point readers back at the previous release"),
                       ("status", "the live release and the kept ones")):
        steps.add_parser(step, help=what)
    s = steps.add_parser("discard", help="drop a staged release that failed its checks, or "
                         "--incomplete: every release whose stage did not finish")
    s.add_argument("name", nargs="?")
    s.add_argument("--incomplete", action="store_true",
                   help="drop every incomplete release (stages that were stopped); run it when no "
                        "stage of this collection is running")
    p.set_defaults(func=cmd_release)


def cmd_release(args) -> int:
    settings = Settings.from_env(os.environ)
    if not settings.qdrant_url:
        raise ConfigError(release.NEEDS_SERVER)
    _say(using_index(settings))  # every step works on this collection's releases
    store = QdrantStore.open(settings)
    try:
        store.exists()  # a server that cannot be reached (or refuses the key): one line, first
        return run_step(args, settings, store)
    finally:
        store.close()


def _say(line: str) -> None:
    print(line, file=sys.stderr)  # stdout holds only results


def run_step(args, settings: Settings, store) -> int:
    if args.step == "stage":
        job = index_job(args, say=_say)
        embedder = make_embedder(settings)
        name, summary = release.stage(
            store, embedder, lambda target: index_docs(job, settings, embedder, target, say=_say,
                                                       prune=args.prune),
            fresh=args.recreate, say=_say)
        with contextlib.redirect_stdout(sys.stderr):
            print_summary(summary)
        _github_output(collection=name)
        _job_summary(name, summary)
        print(name)
        return 0  # broken docs kept their old points: reported, not blocking
    if args.step == "switch":
        done = release.switch(store, args.name, keep=args.keep)
        if done.before == args.name:
            _say(f"Readers already see {args.name}; deleted "
                 f"{', '.join(done.dropped) or 'no old releases'}.")
            return 0
        _say(f"Readers now see {args.name} (before: {done.before or 'nothing'}); "
             f"deleted {', '.join(done.dropped) or 'no old releases'}.")
        if done.gap_ms is not None:
            _say(f"The plain collection {store.collection!r} made by `index` was replaced by the "
                 f"alias: for {done.gap_ms:.0f} ms (deleting it, then creating the alias) no "
                 "index was live and a query then failed. Qdrant refuses an alias named like a "
                 "collection, and deleting a collection is not an alias change, so this one "
                 "gap cannot be avoided; every later switch is a single atomic alias change.")
        return 0
    if args.step == "rollback":
        was, now = release.rollback(store)
        _say(f"Rolled back: readers see {now} again (was {was}).")
        return 0
    if args.step == "discard":
        if args.incomplete == bool(args.name):
            raise ConfigError("release discard: give the staged release's NAME, or "
                              "--incomplete (not both).")
        if args.incomplete:
            dropped = release.discard_incomplete(store)
            _say(f"Discarded {len(dropped)} incomplete release{'s' if len(dropped) != 1 else ''}"
                 f"{': ' + ', '.join(dropped) if dropped else ''}.")
            return 0
        _say(f"Discarded {args.name}." if release.discard(store, args.name)
             else f"No staged release {args.name!r}: nothing to discard.")
        return 0
    for line in release.describe(release.releases(store)):
        print(line)
    return 0


def _github_output(**values: str) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.writelines(f"{k}={v}\n" for k, v in values.items())


def _job_summary(name: str, summary) -> None:
    """The run's page on GitHub: what was staged, and every doc that could not be indexed."""
    lines = [f"### Index release `{name}`", "",
             f"{summary.files} files, {summary.chunks} chunks: {summary.embedded} embedded, "
             f"{summary.reused} reused, {summary.deleted} deleted, {summary.failed} failed.", ""]
    if summary.problems:
        lines += ["**These docs could not be indexed; readers keep their previous text until "
                  "they are fixed:**", ""] + [f"- {p}" for p in summary.problems] + [""]
        for problem in summary.problems:  # an annotation on the run, without failing it
            print(f"::warning title=textbook-chat::could not index {problem}")
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
