"""Read a doc file: bytes -> text, YAML front matter and body, with author-facing errors."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import frontmatter
import yaml

from indexer.model import Problem

_YAML = frontmatter.YAMLHandler()
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class SourceText:
    """A decoded doc: its front matter and the body below it."""

    front_matter: dict
    body: str
    body_line: int  # 1-based line of the file where the body starts


def decode(data: bytes, source: str) -> str:
    """UTF-8 text of a doc file, or a Problem saying where the bad bytes are."""
    if b"\x00" in data[:8192]:
        raise Problem(source, None, "this looks like a binary file, not Markdown; "
                      "move it out of the docs folder or rename it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise Problem(source, line, f"invalid UTF-8 (byte 0x{data[err.start]:02x}); "
                      "save the file as UTF-8") from None
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def split(text: str, source: str) -> SourceText:
    """Separate `---` YAML front matter (Docusaurus only reads it at the very top) from the body."""
    if not _YAML.detect(text):
        return SourceText({}, text, 1)
    try:
        raw, body = _YAML.split(text)
    except ValueError:
        # gray-matter would read the whole file as YAML and the Docusaurus build fails.
        raise Problem(source, 1, "front matter opened with '---' is never closed; add a "
                      "'---' line after the last 'key: value' line") from None
    body_line = text[: len(text) - len(body)].count("\n") + 1
    # python-frontmatter's split eats the newline after the closing '---'.
    if body.startswith("\n"):
        body, body_line = body[1:], body_line + 1
    try:
        data = yaml.load(raw, Loader=_LOADER) if raw.strip() else {}
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        # raw starts right after the opening "---", so its line 0 is line 1 of the file.
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(err, "problem", None) or "invalid YAML"
        raise Problem(source, line, f"front matter is not valid YAML ({problem}); "
                      "fix the block between the '---' lines") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise Problem(source, 2, "front matter must be 'key: value' lines, "
                      f"not a {type(data).__name__}")
    return SourceText(_plain(data), body, body_line)


def _plain(value):
    """YAML dates become ISO strings so the front matter can go into JSON payloads."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return value
