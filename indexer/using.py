"""Which index and which book a command uses, said in one line before anything else (light:
`ask` imports it before asking a running `serve`, so no parser or model loads)."""

from __future__ import annotations

import sys
from pathlib import Path

from functions.search.contract import META_BOOK
from functions.settings import Settings

SAMPLE_TITLE = "Signals, Sensors and Control"  # samples/textbook/docusaurus.config.js `title`


def shown(path: Path) -> Path:
    """A path as the author would type it: relative to the working folder when inside it."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path


def using_index(settings: Settings) -> str:
    """The line every command that reads or writes an index prints first (`index`, `serve`,
    `ask`, `eval`, `mcp`, `release`, `demo`, `invoke chat`): which index and collection it
    uses, so an answer from another book's index shows at once. A server is named by its setting
    only: QDRANT_URL may carry credentials, and CI logs are public."""
    if settings.qdrant_url:
        where = "Qdrant server (QDRANT_URL)"
    else:
        where = f"embedded at {shown(Path(settings.qdrant_path))}"
    line = f"Using index: {where}, collection {settings.collection!r}"
    book = book_in(settings)
    if book:
        line += f", {describe_book(book)}"
        if is_sample(book):  # scripts/demo.sh's index, in the clone: not the author's book
            line += (" (the bundled sample: for your own book, run the command in your book's "
                     "folder, e.g. `cd ../my-book`, or set QDRANT_PATH)")
    return line


def book_in(settings: Settings) -> dict | None:
    """Which book the embedded index holds, from its record (META_BOOK; read without opening
    the index). None for a server's index (naming it would cost a request) or an older index."""
    if settings.qdrant_url:
        return None
    from functions.search.edge_layout import stored_meta

    book = (stored_meta(settings.qdrant_path, settings.collection) or {}).get(META_BOOK)
    return book if isinstance(book, dict) else None


def describe_book(book: dict) -> str:
    """`book "Robots" (my-book/docs)`: the site's title and the docs folder it was read from."""
    folder = "/".join(str(part) for part in (book.get("site"), book.get("docs")) if part)
    title = book.get("title")
    return f"book {title!r} ({folder})" if title else f"book {folder}"


def is_sample(book: dict) -> bool:
    """The bundled sample textbook (samples/textbook), which `scripts/demo.sh` indexes."""
    return (book.get("site"), book.get("docs")) == ("textbook", "docs") and \
        book.get("title") == SAMPLE_TITLE


def say_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
