"""markdown-it block rule for MDX: lines made only of JSX tags, `{expressions}` or `<!-- -->`.

MDX has no HTML blocks. A line such as `<TabItem value="py">` is a JSX tag on its own, and the
Markdown between such lines is parsed as Markdown (headings inside `<Tabs>` are real headings).
CommonMark would instead swallow everything up to the next blank line into one HTML block. This
rule emits one `html_block` token per run of tag-only lines, scanning quotes, braces and template
strings so a multi-line tag (`<Quiz questions={[...]} />`) is one block and a `#` inside it is
never taken for a heading.
"""

from __future__ import annotations

import re

from markdown_it.rules_block import StateBlock

from functions.answers.jsx_view import skip_braces

_MAX_TAG_CHARS = 100_000
_TAG_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$/>")


def jsx_flow(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    src = state.src
    pos = state.bMarks[start_line] + state.tShift[start_line]
    if pos >= state.eMarks[start_line] or src[pos] not in "<{":
        return False
    # A tag longer than this is not worth the quadratic risk on a huge file: treat it as text.
    limit = min(state.eMarks[end_line - 1], pos + _MAX_TAG_CHARS)
    while True:
        pos = _unit_end(src, pos, limit)
        if pos < 0:
            return False
        while pos < limit and src[pos] in " \t":
            pos += 1
        if pos >= limit or src[pos] == "\n":
            break
        if src[pos] not in "<{":
            return False  # text after the tag: a paragraph with inline JSX
    last = start_line
    while last + 1 < end_line and state.bMarks[last + 1] <= pos:
        last += 1
    if silent:
        return True
    token = state.push("html_block", "", 0)
    token.map = [start_line, last + 1]
    token.content = state.getLines(start_line, last + 1, state.blkIndent, True)
    state.line = last + 1
    return True


def _unit_end(src: str, pos: int, limit: int) -> int:
    """Index just after the tag/expression/comment starting at pos, or -1 if it is not one."""
    if src.startswith("<!--", pos):
        end = src.find("-->", pos + 4, limit)
        return -1 if end < 0 else end + 3
    if src[pos] == "{":
        return skip_braces(src, pos, limit)
    if pos + 1 >= limit or src[pos + 1] not in _TAG_START:
        return -1
    i = pos + 1
    while i < limit:
        ch = src[i]
        if ch in "\"'":
            i = src.find(ch, i + 1, limit)
            if i < 0:
                return -1
        elif ch == "{":
            i = skip_braces(src, i, limit)
            if i < 0:
                return -1
            continue
        elif ch == ">":
            return i + 1
        elif ch == "<":
            return -1  # a stray '<' ("a < b"): not a tag
        i += 1
    return -1


_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_OPENING = re.compile(r"<[A-Za-z_$]|^[ \t]*\{", re.M)


def unclosed_jsx(text: str) -> list[tuple[int, str]]:
    """Where MDX would stop with a syntax error in a block the rule above left as text: a JSX
    tag (`<Name` in text: MDX reads it as a tag, not as a "<") or a line-opening `{expression}`
    never closed. (offset of its line in text, the opening as written), scanned as the rule
    scans a tag; code spans are skipped. Docusaurus fails to build such a page (lint.py warns)."""
    plain = _CODE_SPAN.sub(lambda m: " " * len(m.group()), text)
    found: list[tuple[int, str]] = []
    pos = 0
    while (m := _OPENING.search(plain, pos)) is not None:
        start = m.end() - 1 if m.group().endswith("{") else m.start()
        end = _unit_end(plain, start, min(len(plain), start + _MAX_TAG_CHARS))
        if end < 0 and not _stray(plain, start):
            found.append((plain.count("\n", 0, start), plain[start:].split("\n", 1)[0][:40]))
            break  # MDX stops at the first; so does the warning
        pos = max(end, start + 1)
    return found


def _stray(src: str, pos: int) -> bool:
    """A tag the scan refused for a '<' inside it (`a <b <c`): not a missing end."""
    if src[pos] != "<":
        return False
    nxt = src.find("<", pos + 1)
    close = src.find(">", pos + 1)
    return nxt >= 0 and (close < 0 or nxt < close) and "{" not in src[pos:nxt] \
        and '"' not in src[pos:nxt] and "'" not in src[pos:nxt]
