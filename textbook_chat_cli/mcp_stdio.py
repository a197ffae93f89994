"""`textbook-chat mcp`: the book as an MCP server on stdio, over the local index.

A desktop assistant or an editor starts it and writes one JSON-RPC message a line; each reply is
one line on stdout (logs go to stderr). The messages are answered by the deployed API's own code
(functions.api.mcp with functions.api.app's tools), so search_book and ask_book give what
`POST /mcp` gives on the same index.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import BinaryIO, TextIO

from functions.errors import ConfigError
from functions.settings import Settings
from indexer import local_index
from indexer.job import say_stderr, using_index
from textbook_chat_cli.options import add_rate_limit_option, local_env, say_rate_limits

MCP_EXAMPLES = """examples:
  textbook-chat mcp                                   the index in ./.textbook-chat/qdrant
  QDRANT_PATH=/path/to/book/.textbook-chat/qdrant textbook-chat mcp

In Claude Desktop's claude_desktop_config.json (see docs/http-api.md for VS Code):
  {"mcpServers": {"textbook": {"command": "textbook-chat", "args": ["mcp"],
                               "env": {"QDRANT_PATH": "/path/to/book/.textbook-chat/qdrant"}}}}
"""
LOCAL_CLIENT = "stdio"  # the rate limiter's key for the one local client


def lines(stdin: BinaryIO, cap: int):
    """Each line of stdin (without its newline), or None for one longer than `cap` bytes, whose
    rest is read and dropped in pieces of `cap`: a line never costs more memory than that."""
    while True:
        line = stdin.readline(cap + 1)
        if not line:
            return
        if len(line) <= cap or line.endswith(b"\n"):
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = stdin.readline(cap + 1)
        yield None


def serve_stdio(deps, stdin: BinaryIO, stdout: TextIO) -> int:
    """Answer each line of stdin until it closes. A message is at most as large as POST /mcp
    takes (functions.api.app BODY_CAPS); a longer line is answered with an error."""
    from functions.api import mcp
    from functions.api.app import BODY_CAPS, mcp_tools
    from functions.api.http_errors import from_exception, new_request_id

    run_tool = mcp_tools(deps)
    cap = BODY_CAPS["mcp"]
    for line in lines(stdin, cap):
        if line is None:
            reply = mcp.error_reply(None, mcp.INVALID_REQUEST, f"The message is larger than "
                                    f"{cap // 1024} KB; send a shorter one.",
                                    {"code": "too_large"})
        elif not line.strip():
            continue
        else:
            try:
                deps.settings  # noqa: B018 (a configuration error answers every message, as the API)
            except Exception as exc:  # noqa: BLE001
                err = from_exception(exc)
                rpc = mcp.from_api_error(err)
                reply = (mcp.failure_reply(line, err)
                         or mcp.error_reply(None, rpc.code, rpc.message, rpc.data))
            else:
                reply = mcp.handle(line, run_tool, LOCAL_CLIENT, new_request_id())
        if reply is not None:
            stdout.write(mcp.dumps(reply) + "\n")
            stdout.flush()
    return 0


def cmd_mcp(args) -> int:
    from functions.api.deps import Deps
    from textbook_chat_cli.api import missing_index_hint

    hint = missing_index_hint("mcp")
    if hint:  # it names where it looked
        print(hint, file=sys.stderr)
    try:
        settings = Settings.from_env(os.environ)
    except ConfigError:  # every message is answered with it, as the API does
        settings = None
    if settings and not hint:
        say_stderr(using_index(settings))
    with contextlib.ExitStack() as stack:
        # while `serve` or `index` holds the local index, a read-only copy of it
        readable = stack.enter_context(local_index.readable(settings)) if settings else None
        env = local_env(args.rate_limit)  # the published limits only when asked, as `serve`
        if readable is not None and readable is not settings:
            env["QDRANT_PATH"] = readable.qdrant_path
        deps = Deps.from_env(env)
        if deps.config_error is None:
            say_rate_limits(deps.settings, "mcp")
        print("textbook-chat mcp: answering MCP messages on stdin (tools: search_book, ask_book, "
              "fetch_page)", file=sys.stderr)
        return serve_stdio(deps, sys.stdin.buffer, sys.stdout)


def add_parsers(sub) -> None:
    import argparse

    p = sub.add_parser("mcp", help="serve the book to AI assistants (MCP over stdio)",
                       epilog=MCP_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_rate_limit_option(p, "mcp")
    p.set_defaults(func=cmd_mcp)
