"""The `textbook-chat` command: index, check, demo, and the API's serve/ask/invoke/eval."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from functions.errors import TextbookChatError

EXAMPLES = """examples:
  textbook-chat demo                                  index the bundled sample book and ask it
  textbook-chat index website/docs                    baseUrl etc. from website/docusaurus.config.js
  textbook-chat index docs --base-url /my-book/ --dry-run --export chunks.jsonl
  textbook-chat check docs --site-dir website --build-dir website/build
  textbook-chat serve                                 the chat API on http://127.0.0.1:8787
  textbook-chat serve --watch website/docs            ... re-indexing every page you save
  textbook-chat ask "What is a PID controller?"
  textbook-chat release stage website/docs            a reindex readers see only after `switch`
"""


def _site_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Docusaurus settings (default: read from --site-dir, else Docusaurus defaults)")
    g.add_argument("--site-dir", type=Path, default=os.environ.get("TEXTBOOK_CHAT_SITE_DIR"),
                   help="the site folder holding docusaurus.config.js|ts")
    g.add_argument("--manifest", type=Path, default=os.environ.get("TEXTBOOK_CHAT_MANIFEST"),
                   help="build manifest written by docusaurus-plugin-textbook-chat (exact permalinks)")
    g.add_argument("--base-url", default=os.environ.get("TEXTBOOK_CHAT_BASE_URL"))
    g.add_argument("--route-base-path", default=os.environ.get("TEXTBOOK_CHAT_ROUTE_BASE_PATH"))
    g.add_argument("--trailing-slash", choices=("true", "false", "unset"),
                   default=os.environ.get("TEXTBOOK_CHAT_TRAILING_SLASH"))
    g.add_argument("--markdown-format", choices=("mdx", "detect"),
                   default=os.environ.get("TEXTBOOK_CHAT_MARKDOWN_FORMAT"))
    c = p.add_argument_group("chunking")
    c.add_argument("--split-levels", default="2,3,4", help="heading levels that start a chunk (default 2,3,4)")
    c.add_argument("--max-tokens", type=int, default=512)
    c.add_argument("--min-tokens", type=int, default=25,
                   help="sections smaller than this join a neighbour (default 25)")
    c.add_argument("--overlap", type=int, default=50)


class _Parser(argparse.ArgumentParser):
    """Every command's usage errors: one line naming the command and its --help, exit 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="textbook-chat",
        description="Chat with your Docusaurus textbook: cited, anchor-exact answers.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("index", help="index (sync) a docs folder into Qdrant", epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("docs_dir", type=Path, help="the Docusaurus docs folder")
    _site_args(p)
    p.add_argument("--dry-run", action="store_true", help="parse and chunk only: no embedding, no Qdrant")
    p.add_argument("--export", type=Path, help="write every chunk's payload as JSON lines to this file")
    p.add_argument("--recreate", action="store_true", help="drop and rebuild the collection (e.g. new model)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.set_defaults(func=lambda a: _run("indexer.commands", "cmd_index", a))

    p = sub.add_parser("check", help="check every chunk's anchor against a built site")
    p.add_argument("docs_dir", type=Path)
    _site_args(p)
    p.add_argument("--build-dir", type=Path, required=True, help="the Docusaurus build folder")
    p.set_defaults(func=lambda a: _run("indexer.commands", "cmd_check", a))

    p = sub.add_parser("demo", help="index the bundled sample textbook and ask it a few questions")
    p.add_argument("--question", action="append", help="ask this instead of the built-in questions")
    p.set_defaults(func=lambda a: _run("indexer.commands", "cmd_demo", a))

    for module in ("functions.cli_commands", "indexer.evaluate.cli", "functions.feedback_cli",
                   "indexer.release"):
        __import__(module, fromlist=["register"]).register(sub)
    serve = sub.choices["serve"]  # the indexer side of serve: re-sync while serving
    serve.add_argument("--watch", type=Path, metavar="DOCS_DIR",
                       default=os.environ.get("TEXTBOOK_CHAT_WATCH"),
                       help="index DOCS_DIR at start and re-index each change while serving "
                            "(site settings from docusaurus.config.* beside it)")
    serve.set_defaults(func=lambda a: _run("indexer.watch", "cmd_serve", a))
    return parser


def _run(module: str, name: str, args) -> int:
    return getattr(__import__(module, fromlist=[name]), name)(args)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except TextbookChatError as exc:
        print(f"textbook-chat: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("textbook-chat: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `textbook-chat eval ... --json | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
