"""An MDX component as the reader sees it: its text props and children as answer blocks.

Textbooks put real content in components: `<HardwareSpecs specs={{compute: "275 TOPS (INT8)"}}>`,
`<Exercise solution={`…code…`}>`, `<Callout title="…">text</Callout>`. The page renders that
text, so the offline answerer may quote it: a component becomes
- a definition block: its title, then one `**Key**: value` line per text prop and per entry of
  an object prop;
- a list block per array of strings (`**Pros**:` and its items);
- a code block per multi-line template string (a `solution`, a `code` example), in the
  component's `language`;
- the blocks of its children (Markdown between the tags).
A quiz component is all quiz (marked noise); an exercise's prompt and hints are marked noise,
its solution is not. Props that only style the component (type, language, className, …) are
left out. Anything the scanner cannot read is skipped, never guessed.
"""

from __future__ import annotations

import re

from functions.answers.tuning import TUNING

_TAG = re.compile(r"<([A-Z][\w.]*)")
_NAME = re.compile(r"[A-Za-z_$][\w$-]*")
_QUIZ = re.compile(r"quiz|question|mcq|poll|flashcard", re.I)
_EXERCISE = re.compile(r"exercise|challenge|practice|problem|task|assignment", re.I)
_EXERCISE_PROMPT = frozenset({"problem", "prompt", "question", "task", "hints", "hint",
                              "instructions", "description"})
_TITLE_KEYS = ("title", "name", "label", "heading")
_STYLE_KEYS = frozenset({
    "type", "variant", "language", "lang", "classname", "class", "id", "key", "src", "href",
    "icon", "color", "size", "width", "height", "style", "theme", "level", "open", "collapsed",
    "correctanswer", "answer", "answers", "correct", "difficulty", "showlinenumbers", "to",
    "alt", "mode", "layout", "align", "order", "index",
})
_CODE_KEYS = frozenset({"code", "solution", "snippet", "source", "example", "starter"})
_MAX_VALUE = TUNING.jsx_max_value.value
_MAX_DEPTH = TUNING.jsx_max_depth.value


class _Unreadable(Exception):
    pass


def _skip_space(s: str, i: int) -> int:
    n = len(s)
    while i < n:
        if s[i].isspace():
            i += 1
        elif s.startswith("//", i):
            j = s.find("\n", i)
            i = n if j < 0 else j + 1
        elif s.startswith("/*", i):
            j = s.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            break
    return i


def _string(s: str, i: int) -> tuple[str, int]:
    quote, out, i = s[i], [], i + 1
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s):
            nxt = s[i + 1]
            out.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
            i += 2
            continue
        if ch == quote:
            return "".join(out), i + 1
        if quote == "`" and s.startswith("${", i):
            raise _Unreadable  # an interpolated template: not plain text
        out.append(ch)
        i += 1
    raise _Unreadable


def _value(s: str, i: int, depth: int = 0):
    """A JS literal at s[i]: str, number, bool, list or dict (keys as written)."""
    if depth > _MAX_DEPTH:
        raise _Unreadable  # nested deeper than any prop a page shows
    i = _skip_space(s, i)
    if i >= len(s):
        raise _Unreadable
    ch = s[i]
    if ch in "\"'`":
        return _string(s, i)
    if ch == "[":
        items, i = [], _skip_space(s, i + 1)
        while i < len(s) and s[i] != "]":
            item, i = _value(s, i, depth + 1)
            items.append(item)
            i = _skip_space(s, i)
            if i < len(s) and s[i] == ",":
                i = _skip_space(s, i + 1)
        return items, i + 1
    if ch == "{":
        obj, i = {}, _skip_space(s, i + 1)
        while i < len(s) and s[i] != "}":
            if s[i] in "\"'":
                key, i = _string(s, i)
            else:
                m = _NAME.match(s, i)
                if m is None:
                    raise _Unreadable
                key, i = m.group(0), m.end()
            i = _skip_space(s, i)
            if i >= len(s) or s[i] != ":":
                raise _Unreadable  # shorthand or spread: not literal data
            obj[key], i = _value(s, i + 1, depth + 1)
            i = _skip_space(s, i)
            if i < len(s) and s[i] == ",":
                i = _skip_space(s, i + 1)
        return obj, i + 1
    m = re.compile(r"-?\d+(?:\.\d+)?|true|false|null").match(s, i)
    if m:
        return m.group(0), m.end()
    raise _Unreadable


def skip_braces(src: str, pos: int, limit: int) -> int:
    """Index after the `}` matching the `{` at pos, skipping JS strings and template literals;
    -1 when it is not closed before limit. (The indexer's MDX block rule uses it too.)"""
    depth = 0
    i = pos
    while i < limit:
        ch = src[i]
        if ch in "\"'`":
            i = skip_js_string(src, i, limit)
            if i < 0:
                return -1
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def skip_js_string(src: str, pos: int, limit: int) -> int:
    """Index of the quote closing the JS string that opens at pos (backslash escapes honoured);
    -1 when it is not closed before limit."""
    quote = src[pos]
    i = pos + 1
    while i < limit:
        if src[i] == "\\":
            i += 2
            continue
        if src[i] == quote:
            return i
        i += 1
    return -1


def _skip_expression(s: str, i: int) -> int:
    """Past a `{…}` attribute value that is not literal data (strings and braces balanced)."""
    end = skip_braces(s, i, len(s))
    return len(s) if end < 0 else end


def parse_component(text: str) -> tuple[str, dict, str] | None:
    """(tag, props, children Markdown) of the MDX component text starts with, or None."""
    m = _TAG.match(text.lstrip())
    if m is None:
        return None
    s = text.lstrip()
    tag, i, props = m.group(1), m.end(), {}
    while True:
        i = _skip_space(s, i)
        if i >= len(s):
            return tag, props, ""
        if s.startswith("/>", i):
            return tag, props, ""
        if s[i] == ">":
            i += 1
            break
        name = _NAME.match(s, i)
        if name is None:
            return tag, props, ""
        key, i = name.group(0), _skip_space(s, name.end())
        if i >= len(s) or s[i] != "=":
            props[key] = "true"
            continue
        i = _skip_space(s, i + 1)
        try:
            if i < len(s) and s[i] in "\"'":
                props[key], i = _string(s, i)
            elif i < len(s) and s[i] == "{":
                start = i
                try:
                    value, j = _value(s, i + 1)
                    j = _skip_space(s, j)
                    if j >= len(s) or s[j] != "}":
                        raise _Unreadable
                    props[key], i = value, j + 1
                except _Unreadable:
                    i = _skip_expression(s, start)
            else:
                return tag, props, ""
        except _Unreadable:
            return tag, props, ""
    close = s.rfind(f"</{tag}>")
    children = s[i:close] if close >= i else s[i:]
    return tag, props, children.strip("\n")


def _humanize(key: str) -> str:
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|[_-]+", " ", key).strip()
    return words[:1].upper() + words[1:]


def _is_code(key: str, value: str) -> bool:
    return "\n" in value.strip() and (key.lower() in _CODE_KEYS or value.count("\n") >= 2)


def _text(value) -> str | None:
    if isinstance(value, str):
        value = " ".join(value.split())
        return value if value and len(value) <= _MAX_VALUE else None
    return None


def view(text: str) -> list[tuple[str, str, bool]]:
    """The component as (kind, Markdown, noise) blocks in reading order; [] when unreadable."""
    try:
        return _view(text)
    except (_Unreadable, ValueError, IndexError, RecursionError):
        return []  # a component this scanner cannot read is not quoted, never a failed answer


def _view(text: str) -> list[tuple[str, str, bool]]:
    parsed = parse_component(text)
    if parsed is None:
        return []
    tag, props, children = parsed
    quiz = bool(_QUIZ.search(tag))
    exercise = bool(_EXERCISE.search(tag))
    title = next((t for k in _TITLE_KEYS if (t := _text(props.get(k)))), "")
    lines: list[str] = []
    extra: list[tuple[str, str, bool]] = []
    for key, value in props.items():
        low = key.lower()
        if low in _STYLE_KEYS or low in _TITLE_KEYS:
            continue
        noise = quiz or (exercise and low in _EXERCISE_PROMPT)
        if isinstance(value, str):
            if _is_code(key, value):
                lang = _text(props.get("language")) or _text(props.get("lang")) or ""
                body = value.strip("\n")
                extra.append(("code", f"```{lang}\n{body}\n```", noise))
            elif (shown := _text(value)) and not re.fullmatch(r"[\w.-]+", shown or ""):
                if noise:
                    extra.append(("paragraph", shown, True))
                else:
                    lines.append(f"- **{_humanize(key)}**: {shown}")
        elif isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, dict | list):
                    continue
                if (shown := _text(v)) is not None:
                    lines.append(f"- **{_humanize(k)}**: {shown}")
        elif isinstance(value, list):
            items = [t for v in value if (t := _text(v))]
            if items:
                body = f"**{_humanize(key)}**:\n" + "\n".join(f"- {t}" for t in items)
                extra.append(("list", body, noise))
    out: list[tuple[str, str, bool]] = []
    if lines:
        head = f"**{title}**:\n" if title else ""
        out.append(("definition", head + "\n".join(lines), quiz))
    out += extra
    if children.strip():
        out.append(("children", children, quiz))
    return out
