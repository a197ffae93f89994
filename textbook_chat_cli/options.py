"""Options several commands share, each turned into typed settings once: the site's Docusaurus
settings and the chunking limits (into an `indexer.job.IndexJob`), a port number, a count, and
whether a local `serve` or `mcp` applies the published API's rate limits."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from functions.errors import ConfigError
from functions.settings import Settings
from indexer.using import say_stderr

if TYPE_CHECKING:
    from indexer.job import IndexJob
from indexer.model import ChunkOptions, OptionError

DEFAULT_CHUNKING = ChunkOptions()
CHUNK_FLAGS = {"split_levels": "--split-levels", "max_tokens": "--max-tokens",
               "min_tokens": "--min-tokens", "overlap_tokens": "--overlap"}
TRAILING_SLASH = {"true": True, "false": False, "unset": None}
RATE_LIMITS = ("RATE_LIMIT_PER_MINUTE", "RATE_LIMIT_PER_DAY", "SEARCH_RATE_LIMIT_PER_MINUTE",
               "SEARCH_RATE_LIMIT_PER_DAY")


def _levels(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give heading levels like 2,3,4") from None


def positive_int(raw: str) -> int:
    """A count such as --days or --keep: a whole number of at least 1."""
    try:
        number = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{number} must be 1 or more")
    return number


def port(raw: str) -> int:
    try:
        number = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a port number") from None
    if not 0 < number < 65536:
        raise argparse.ArgumentTypeError(f"{number} is not a port number (1-65535)")
    return number


def add_site_options(p: argparse.ArgumentParser) -> None:
    """The docs folder's site settings and chunking limits (index, check, release stage)."""
    g = p.add_argument_group(
        "Docusaurus settings (default: the site's docusaurus.config.*, run with the site's own "
        "Node modules when installed, else read by pattern; else Docusaurus defaults)")
    g.add_argument("--site-dir", type=Path, default=os.environ.get("TEXTBOOK_CHAT_SITE_DIR"),
                   help="the site folder holding docusaurus.config.js|ts (default: the docs "
                        "folder's parent when it holds one)")
    g.add_argument("--manifest", type=Path, default=os.environ.get("TEXTBOOK_CHAT_MANIFEST"),
                   help="build manifest written by docusaurus-plugin-textbook-chat on `docusaurus "
                        "start` and `build` (exact permalinks; default: "
                        "SITE_DIR/.textbook-chat/manifest.json when it exists)")
    g.add_argument("--base-url", default=os.environ.get("TEXTBOOK_CHAT_BASE_URL"))
    g.add_argument("--route-base-path", default=os.environ.get("TEXTBOOK_CHAT_ROUTE_BASE_PATH"))
    g.add_argument("--trailing-slash", choices=tuple(TRAILING_SLASH),
                   default=os.environ.get("TEXTBOOK_CHAT_TRAILING_SLASH"))
    g.add_argument("--markdown-format", choices=("mdx", "detect"),
                   default=os.environ.get("TEXTBOOK_CHAT_MARKDOWN_FORMAT"))
    d = DEFAULT_CHUNKING
    levels = ",".join(map(str, d.split_levels))
    c = p.add_argument_group("chunking")
    c.add_argument("--split-levels", type=_levels, default=d.split_levels,
                   help=f"heading levels that start a chunk (default {levels})")
    c.add_argument("--max-tokens", type=int, default=d.max_tokens,
                   help="default %(default)s")
    c.add_argument("--min-tokens", type=int, default=d.min_tokens,
                   help="sections smaller than this join a neighbour (default %(default)s)")
    c.add_argument("--overlap", dest="overlap_tokens", metavar="OVERLAP", type=int,
                   default=d.overlap_tokens,
                   help="default %(default)s")


def chunk_options(args: argparse.Namespace) -> ChunkOptions:
    """The chunking flags as ChunkOptions, whose own rules are the only ones checked."""
    try:
        return ChunkOptions(**{name: getattr(args, name) for name in CHUNK_FLAGS})
    except OptionError as exc:
        value = getattr(args, exc.field)
        shown = ",".join(map(str, value)) if isinstance(value, tuple) else value
        raise ConfigError(f"{CHUNK_FLAGS[exc.field]} {shown}: {exc}") from None


def index_job(args: argparse.Namespace, say: Callable[[str], None] | None = None,
              docs_dir: Path | None = None) -> IndexJob:
    """The docs folder (args.docs_dir unless given) and its site options (add_site_options)
    as one resolved IndexJob."""
    if args.site_dir is not None and not args.site_dir.is_dir():  # a typo: not the defaults
        raise ConfigError(f"--site-dir {args.site_dir} is not a folder: give the site folder "
                          "holding docusaurus.config.js (by default, the docs folder's parent).")
    from indexer.job import (  # here: the indexer's parsers (`ask` needs none)
        SiteOverrides,
        resolve_job,
    )

    overrides = SiteOverrides(
        base_url=args.base_url or None, route_base_path=args.route_base_path,
        trailing_slash=TRAILING_SLASH[args.trailing_slash] if args.trailing_slash else "keep",
        markdown_format=args.markdown_format or None)
    return resolve_job(docs_dir or args.docs_dir, args.site_dir, args.manifest, overrides,
                       chunk_options(args), say)


def add_rate_limit_option(p: argparse.ArgumentParser, command: str) -> None:
    """`--rate-limit` (env TEXTBOOK_CHAT_RATE_LIMIT): the one switch of `serve` and `mcp`."""
    p.add_argument("--rate-limit", action="store_true",
                   default=bool(os.environ.get("TEXTBOOK_CHAT_RATE_LIMIT")),
                   help="apply the published API's per-reader limits, RATE_LIMIT_PER_MINUTE and "
                        "RATE_LIMIT_PER_DAY (10 and 200 unless set; setting either also applies "
                        f"them). Without it a local {command} limits no one (env "
                        "TEXTBOOK_CHAT_RATE_LIMIT=1)")


def local_env(rate_limit: bool) -> dict[str, str]:
    """The settings a local `serve` or `mcp` runs with: the published API's per-reader limits
    (10 a minute, 200 a day) would cut off an author who chats all day with `serve --watch` or
    an assistant, so they apply only when asked: `--rate-limit`, or one of RATE_LIMITS set."""
    env = dict(os.environ)
    if not rate_limit and not any(name in env for name in RATE_LIMITS):
        env.update(dict.fromkeys(RATE_LIMITS, "0"))  # 0: that limit is off
    return env


def _per(minute: int, day: int) -> str:
    return ", ".join(f"{n} a {span}" if n > 0 else f"none a {span}"
                     for n, span in ((minute, "minute"), (day, "day")))


def say_rate_limits(settings: Settings, command: str) -> None:
    """Which limits a local `serve` or `mcp` applies, on stderr at start."""
    minute, day = settings.rate_limit_per_minute, settings.rate_limit_per_day
    searches = settings.search_rate_limit_per_minute, settings.search_rate_limit_per_day
    if max(minute, day, *searches) <= 0:
        say_stderr(f"textbook-chat {command}: no per-reader rate limits (a local {command}); "
                   "--rate-limit applies the published API's (10 a minute, 200 a day).")
        return
    search = _per(*searches)
    say_stderr(f"textbook-chat {command}: rate limits per reader: {_per(minute, day)} "
               f"(RATE_LIMIT_PER_MINUTE, RATE_LIMIT_PER_DAY); the widget's search as the reader "
               f"types: {search} (SEARCH_RATE_LIMIT_PER_MINUTE, _PER_DAY).")


def add_prune_option(parser) -> None:
    parser.add_argument("--prune", action="store_true",
                        help="allow deleting many pages at once (without it, a sync that would "
                             "delete over a quarter of the pages held is refused)")
