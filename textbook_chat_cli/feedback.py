"""`textbook-chat feedback`: what readers asked that the book did not answer well, and their ratings."""

from __future__ import annotations

import argparse
import csv
import json
import os
import sqlite3
import sys
from pathlib import Path

from functions.errors import ConfigError
from functions.services.feedback import (
    DEFAULT_PATH,
    export_feedback,
    list_low_confidence,
    make_feedback_store,
)
from functions.settings import Settings
from textbook_chat_cli.options import positive_int

EXAMPLES = """examples:
  textbook-chat feedback                      # questions the book answers badly, most asked first
  textbook-chat feedback --all --format jsonl > answers.jsonl
  DYNAMODB_TABLE=textbook-chat-prod-TextbookChatTable-XYZ AWS_REGION=us-east-1 \\
      textbook-chat feedback --days 7          # the deployed stack's records (your AWS profile)
"""


def cmd_feedback(args) -> int:
    settings = Settings.from_env(os.environ)
    if args.table:
        settings = settings.with_(dynamodb_table=args.table)
    elif not Path(args.db or DEFAULT_PATH).is_file():  # a reader: it never creates the file
        return _no_file(args)
    try:
        store = make_feedback_store(settings, path=args.db)
    except sqlite3.DatabaseError as exc:  # not a SQLite file, or one of another program
        where = f"--db {args.db}" if args.db else DEFAULT_PATH
        raise ConfigError(f"{where}: not a feedback file ({exc}); give the SQLite file "
                          "`serve` and `ask` record in.") from None
    if args.all or args.rated:
        rows = export_feedback(store, args.days, rated_only=args.rated)
    else:
        rows = list_low_confidence(store, args.days)
    out = sys.stdout
    if args.format == "jsonl":
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    elif args.format == "csv":
        if rows:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows({k: json.dumps(v) if isinstance(v, list | dict) else v
                              for k, v in r.items()} for r in rows)
    elif args.all or args.rated:
        for r in rows:
            mark = {"up": "+", "down": "-"}.get(r["rating"] or "", " ")
            low = " (low confidence)" if r["low_confidence"] else ""
            print(f"{r['created_at']} {mark} {r['question']}{low}")
            if r["comment"]:
                print(f"    comment: {r['comment']}")
    else:
        if not rows:
            print(f"No low-confidence or down-rated questions in the last {args.days} days.")
        _print_groups(rows)
        selected = list_low_confidence(store, args.days, selection=True)
        if selected:
            print("\nRated down by readers who asked about a passage they selected (\"Ask about "
                  "this\"; about that passage, not a gap in the book):")
            _print_groups(selected, low=False)
    return 0


def _print_groups(groups: list[dict], low: bool = True) -> None:
    for g in groups:
        counts = f"low confidence {g['low_confidence']}, " if low else ""
        print(f"{g['asked']:>4}x  {g['question']}  ({counts}rated down {g['rated_down']}, "
              f"last {g['last_asked']})")
        for c in g["comments"][:3]:
            print(f"        comment: {c}")


def _no_file(args) -> int:
    """No local feedback file: a typo in --db is refused (exit 2); with the default path,
    nothing has been recorded in this folder yet."""
    if args.db:
        what = "a folder" if Path(args.db).is_dir() else "no such file"
        print(f"textbook-chat feedback: --db {args.db}: {what}; give the SQLite file "
              f"`serve` and `ask` record in (default {DEFAULT_PATH}, in the folder they ran "
              "in), or --table for the deployed stack.", file=sys.stderr)
        return 2
    if args.format == "text":
        print(f"No feedback recorded here yet: {DEFAULT_PATH} does not exist in this folder "
              "(`serve` and `ask` write it where they run; --table reads the deployed stack's).")
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser("feedback", help="what readers asked that the book did not answer well",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--days", type=positive_int, default=os.environ.get("TEXTBOOK_CHAT_DAYS", "30"),
                   help="look back this many days (default 30; records are kept 90)")
    p.add_argument("--all", action="store_true", help="every answer record, newest first")
    p.add_argument("--rated", action="store_true", help="only answers readers rated")
    p.add_argument("--format", choices=("text", "jsonl", "csv"), default="text")
    p.add_argument("--table", default=os.environ.get("DYNAMODB_TABLE"),
                   help="the deployed DynamoDB table (default: $DYNAMODB_TABLE, else local SQLite)")
    p.add_argument("--db", help="the local SQLite file (default .textbook-chat/feedback.sqlite3)")
    p.set_defaults(func=cmd_feedback)
