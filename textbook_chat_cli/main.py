"""The `textbook-chat` command: index, check, demo, the API's serve/ask/invoke, mcp, eval,
feedback, release and the deployed api-url. Each command module adds its parsers and names its
function; main runs it."""

from __future__ import annotations

import argparse
import importlib
import sys

from functions.errors import TextbookChatError

# The command modules, in the order `--help` lists their commands.
MODULES = ("index", "demo", "api", "mcp_stdio", "evaluate", "feedback", "release", "deployed")
# Commands whose module alone is loaded: `ask` asks a running serve in about a second when it
# imports no indexer, store or model it does not use.
OWN_MODULE = {"serve": "api", "ask": "api", "invoke": "api"}

EXAMPLES = """examples:
  textbook-chat demo                                  index the bundled sample book and ask it
  textbook-chat index website/docs                    baseUrl etc. from website/docusaurus.config.js
  textbook-chat index docs --base-url /my-book/ --dry-run --export chunks.jsonl
  textbook-chat check docs --site-dir website --build-dir website/build
  textbook-chat serve                                 the chat API on http://127.0.0.1:8787
  textbook-chat serve --watch website/docs            ... re-indexing every page you save
  textbook-chat ask "What is a PID controller?"
  textbook-chat mcp                                   the book for an AI assistant (MCP, stdio)
  textbook-chat release stage website/docs            a reindex readers see only after `switch`
  textbook-chat api-url --stage prod                  after `serverless deploy`: the URL for the site
"""


class _Parser(argparse.ArgumentParser):
    """Every command's usage errors: one line naming the command and its --help, exit 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="textbook-chat",
        description="Chat with your Docusaurus textbook: cited, anchor-exact answers.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in [OWN_MODULE[command]] if command in OWN_MODULE else MODULES:
        importlib.import_module(f"textbook_chat_cli.{name}").add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv[0] if argv else None)
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
