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
    uses and the book it holds, so an answer from another book's index shows at once. A server
    is named by its setting only: QDRANT_URL may carry credentials, and CI logs are public."""
    if settings.qdrant_url:
        where = "Qdrant server (QDRANT_URL)"
    else:
        where = f"embedded at {shown(Path(settings.qdrant_path))}"
    line = f"Using index: {where}, collection {settings.collection!r}"
    book = book_in(settings)
    if book:
        line += f", {describe_book(book)}"
        if is_sample(book) and settings.qdrant_url:  # the demo, run against the server
            line += (" (the bundled sample: for your own book, set QDRANT_COLLECTION to the "
                     "collection your book was indexed into)")
        elif is_sample(book):  # scripts/demo.sh's index, in the clone: not the author's book
            line += (" (the bundled sample: for your own book, run the command in your book's "
                     "folder, e.g. `cd ../my-book`, or set QDRANT_PATH)")
    return line


def book_in(settings: Settings) -> dict | None:
    """Which book the index holds, from its record (META_BOOK): read from the embedded index's
    file without opening it, or asked of a Qdrant server in one quick request (server_meta).
    None for an index that records none (an older one, or none yet)."""
    if settings.qdrant_url:
        meta = server_meta(settings)
    else:
        from functions.search.edge_layout import stored_meta

        meta = stored_meta(settings.qdrant_path, settings.collection) or {}
    book = meta.get(META_BOOK)
    return book if isinstance(book, dict) else None


# One quick try: the line must not hold a command up. A server that does not answer in this
# time is left to the command itself, which says so with its own message (and its own retries).
SERVER_PEEK = {"timeout": 3.0, "retries": 0}


def server_meta(settings: Settings) -> dict:
    """The collection's (or release alias's) metadata on the server; {} when it cannot be read
    now (not reachable, no such collection, a refused key): the command that follows says why."""
    from functions.search.qdrant_access import INDEX
    from functions.search.qdrant_http import QdrantHttp

    http = QdrantHttp(settings.qdrant_url, settings.collection, settings.qdrant_api_key,
                      policy=INDEX, **SERVER_PEEK)
    try:
        return http.collection_meta()
    except Exception:  # noqa: BLE001 (any failure: the command's own request reports it)
        return {}
    finally:
        http.close()


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
