"""`textbook-chat eval QUESTIONS.jsonl`: score the current index; exit 1 when a threshold is missed."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from functions.settings import Settings
from indexer import local_index
from indexer.check import build_anchor_checker
from indexer.evaluate.metrics import unscorable
from indexer.evaluate.questions import QuestionFileError, read_questions
from indexer.evaluate.report import fmt, not_citable_lines, to_json, to_table
from indexer.evaluate.runner import run_eval
from indexer.job import say_stderr, using_index
from indexer.site_config import load_site_config
from textbook_chat_cli.api import missing_index_hint

EXAMPLES = """examples:
  textbook-chat eval questions.jsonl                       the answers shown, scored; misses listed
  textbook-chat eval questions.jsonl --build-dir build     citations checked against the built HTML
  textbook-chat eval questions.jsonl --json                one JSON object on stdout
  textbook-chat eval questions.jsonl --retrieval dense     dense-only instead of hybrid
  textbook-chat eval questions.jsonl --baseline naive      512-token windows that ignore headings
  textbook-chat eval questions.jsonl --min-hit5 0.9 --min-mrr 0.8   fail (exit 1) below these

Each line of QUESTIONS.jsonl: {"id", "question", "expected_url", "expected_page", "kind"} with
kind concept|fact|howto|keyword|structured|typo|multi|followup|unanswerable (expected_* null
for unanswerable); a followup has "history": [{"role", "content"}, ...], a multi question
"also": {"expected_url"} naming its second section.
Each question goes through the POST /chat path; the answer shown is scored: does it cite the
expected section (answer_cites_expected), was an answerable question refused, was an
unanswerable one refused. A question whose section cannot be cited counts as a miss.
The index is the one `textbook-chat index` wrote (QDRANT_PATH / QDRANT_URL, QDRANT_COLLECTION).
exit status: 0 ok, 1 a --min-* threshold missed or nothing could be scored, 2 no index, bad question
file or usage error.
"""

# flag -> (summary key, label)
THRESHOLDS = {
    "min_reached": ("reached", "expected section reached"),
    "min_cites": ("answer_cites_expected", "answers citing the expected section"),
    "min_hit1": ("hit_at_1", "section hit@1"),
    "min_hit5": ("hit_at_5", "section hit@5"),
    "min_mrr": ("mrr_at_10", "section MRR@10"),
}


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number between 0 and 1") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def add_parsers(subparsers) -> None:
    p = subparsers.add_parser(
        "eval",
        help="measure retrieval and answers against a question file",
        description="Run every question through the POST /chat path against the current index "
        "and report section- and page-level hit@k, MRR@10, abstention and citation validity.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("questions", type=Path, help="QUESTIONS.jsonl")
    p.add_argument("--retrieval", choices=("hybrid", "dense", "sparse"),
                   default=os.environ.get("TEXTBOOK_CHAT_RETRIEVAL") or "hybrid",
                   help="search mode (default hybrid: dense + BM25 fused with RRF)")
    p.add_argument("--baseline", choices=("naive",),
                   help="evaluate fixed 512-token windows that ignore headings instead, "
                        "indexed into COLLECTION-naive from the current index")
    p.add_argument("--collection", default=None,
                   help="collection to evaluate (default QDRANT_COLLECTION or 'textbook')")
    p.add_argument("--build-dir", type=Path, default=None,
                   help="the site's `docusaurus build` output: every citation shown must be a "
                        "page there with that id")
    p.add_argument("--base-url", default=None,
                   help="the site's baseUrl, for --build-dir (default: read from "
                        "docusaurus.config.* beside the build folder, else /)")
    p.add_argument("--min-reached", type=_share, metavar="X",
                   help="exit 1 if the share of answerable questions whose expected section the "
                        "reader reaches (answered citing it, or among the closest passage's "
                        "sections) < X")
    p.add_argument("--min-cites", type=_share, metavar="X",
                   help="exit 1 if the share of answers citing the expected section < X")
    p.add_argument("--min-hit1", type=_share, metavar="X", help="exit 1 if section hit@1 < X")
    p.add_argument("--min-hit5", type=_share, metavar="X", help="exit 1 if section hit@5 < X")
    p.add_argument("--min-mrr", type=_share, metavar="X", help="exit 1 if section MRR@10 < X")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.set_defaults(func=cmd_eval)


def missed_thresholds(summary: dict, limits: dict[str, float | None]) -> list[str]:
    """One message per threshold the run misses (a score of n/a misses every threshold)."""
    out = []
    for flag, minimum in limits.items():
        if minimum is None:
            continue
        key, label = THRESHOLDS[flag]
        value = summary[key]
        if value is None or value < minimum:
            out.append(f"{label} {fmt(value)} is below --{flag.replace('_', '-')} {minimum}")
    return out


def cmd_eval(args) -> int:
    try:
        questions = read_questions(args.questions)
    except QuestionFileError as exc:
        print(f"textbook-chat eval: {exc}", file=sys.stderr)
        return 2
    settings = Settings.from_env(os.environ)
    if args.collection:
        settings = settings.with_(collection=args.collection)
    valid = None
    if args.build_dir is not None:
        if not args.build_dir.is_dir():
            print(f"textbook-chat eval: --build-dir {args.build_dir} is not a folder; pass the "
                  "site's build output (run `npm run build` in the site first)", file=sys.stderr)
            return 2
        valid = _build_checker(args.build_dir, args.base_url)
    hint = None if args.baseline else missing_index_hint("eval", settings)
    if hint:  # it names where it looked
        print(f"{hint}.", file=sys.stderr)
        return 2
    say_stderr(using_index(settings))
    with local_index.readable(settings) as readable:  # a copy while e.g. `serve` holds it
        run = run_eval(questions, readable, mode=args.retrieval, baseline=args.baseline,
                       valid_citation=valid)
    summary = run.summary
    if args.json:
        for line in not_citable_lines(summary):  # the table lists them among the misses
            print(f"textbook-chat eval: {line}", file=sys.stderr)
        print(to_json(summary))
    else:
        title = (f"{len(questions)} questions, {args.retrieval} retrieval over "
                 f"{run.collection!r} ({run.chunks} chunks)")
        print(to_table(summary, title))
    failures = missed_thresholds(summary, {f: getattr(args, f) for f in THRESHOLDS})
    nothing = unscorable(summary)
    if nothing and summary["not_citable"]:
        nothing = _urls_differ(run, summary["not_citable"][0]["expected"])
    if nothing:
        failures.insert(0, f"nothing could be scored: {nothing}")
    for failure in failures:
        print(f"textbook-chat eval: FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


def _urls_differ(run, expected: str) -> str:
    """No question's section is in the index: show one URL of each side, so an author sees
    whether it is another book or the same book under other site settings."""
    indexed = next((url for o in run.outcomes for url in o.ranking if url), None)
    held = f", the index holds URLs like {indexed}" if indexed else ""
    return (f"none of the questions' sections is in the collection {run.collection!r}: they "
            f"are at URLs like {expected}{held}. Evaluate the book the questions are written for "
            "(QDRANT_COLLECTION=...), or index it with its site's settings (--site-dir or "
            "--base-url / --route-base-path / --trailing-slash)")


def _build_checker(build_dir: Path, base_url: str | None):
    if base_url is None:
        base_url = load_site_config(build_dir.resolve().parent).site.base_url or "/"
    return build_anchor_checker(build_dir, base_url)
