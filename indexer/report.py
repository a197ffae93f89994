"""The end-of-run summary, written for a textbook author (or as one JSON object)."""

from __future__ import annotations

import json
import sys


def print_summary(summary, as_json: bool = False, dry_run: bool = False, export=None) -> None:
    if as_json:
        print(json.dumps(summary.as_dict()))
    for problem in summary.problems:
        print(f"could not index {problem}", file=sys.stderr)
    for warning in getattr(summary, "warnings", []):
        print(f"warning: {warning}", file=sys.stderr)
    if as_json:
        return
    out = sys.stdout
    if dry_run:
        print(f"Dry run: {summary.files} files read, {summary.chunks} chunks (nothing embedded or stored).",
              file=out)
    else:
        print(
            f"{summary.files} files, {summary.chunks} chunks: {summary.embedded} embedded, "
            f"{summary.reused} reused, {summary.unchanged} unchanged, {summary.deleted} deleted, "
            f"{summary.failed} failed.",
            file=out,
        )
    if export:
        print(f"Chunks written to {export}.", file=out)
    if summary.failed:
        print(
            f"{summary.failed} file(s) could not be indexed (listed above); their earlier chunks "
            "were kept. Fix them and run again.",
            file=out,
        )
