"""A section's Markdown as reader-visible blocks: paragraphs, lists, tables, code, definition lines.

The offline answerer quotes whole blocks, so a list keeps its items, a table its rows and a code
block its fence. Headings, MDX imports/exports and admonition fences are not quoted; an MDX
component is read as the text its reader sees (functions.answers.jsx_view);
navigation ("Next: … →"), quiz prompts and options are marked so the answerer can skip them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from functions.answers.jsx_view import view

_FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
_LIST = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+")
_TABLE = re.compile(r"^\s*\|")
# a GFM table written without its outer pipes ("a | b" over "--- | ---") is a table too
_DELIMITER_ROW = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_SKIP = re.compile(r"^\s*(?:import\s.+\sfrom\s|export\s|:::|</?[a-z][\w.]*[\s/>]|</?>|\{/\*"
                   r"|</[A-Z][\w.]*\s*>)")
# An MDX component (<Quiz …>, <Exercise …>): its props run over several lines.
_JSX_OPEN = re.compile(r"^\s*<([A-Z][\w.]*)(?=[\s/>]|$)")
_IMAGE = re.compile(r"^\s*!\[[^\]]*\]\([^)]*\)\s*$")
_NAV = re.compile(r"(?:^|\*\*)\s*(?:next|previous|prev|up next|continue to)\b[^:\n]{0,20}:.*$"
                  r"|[→»]\s*\**\s*$|^\s*[←«]", re.I | re.M)
_OPTION = re.compile(r"^\s*(?:[-*+]\s*)?(?:\*\*)?\(?[A-Da-d][).:](?:\*\*)?\s+\S")
_TASK_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\*\*)?(?:example|exercise|activity|task|"
                        r"project|lab|challenge)\s*\d*\s*(?:\*\*)?\s*[:.]", re.I)
_QUIZ_LEAD = re.compile(r"^\s*(?:\*\*)?(?:q(?:uestion)?\s*\d+|quiz|exercise|self[- ]check)\b", re.I)
# A definition line: "γ: Discount factor", "**QoS**: quality of service", "- `rate`: Hz".
# A fenced diagram (```mermaid): the page shows the drawing, not its source.
_DIAGRAM = re.compile(r"^\s{0,3}(?:```+|~~~+)\s*(?:mermaid|plantuml|puml|dot|graphviz|d2)\b", re.I)
# An image caption set as its own emphasised line: "*Figure 3: The control loop*".
_CAPTION = re.compile(r"^\s*([*_])\1?\s*(?:fig(?:ure)?\.?|diagram|image|illustration)\b.*[*_]\s*$",
                      re.I)
_DEFINITION = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*|`)?[^:\n]{1,60}?(?:\*\*|`)?\s*:\s+\S")


@dataclass(frozen=True)
class TextBlock:
    kind: str  # paragraph | list | table | code | definition | heading
    text: str  # Markdown as written (admonition fences and JSX lines removed)
    start: int  # offset of the block in the text it came from
    noise: bool = False  # navigation, quiz prompt or options: not answer material


def _is_noise(kind: str, text: str) -> bool:
    if kind == "code":
        return bool(_DIAGRAM.match(text))
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return True
    if all(_CAPTION.match(ln) for ln in lines):
        return True
    if _NAV.search(text) and len(text) < 300:
        return True
    if _QUIZ_LEAD.match(lines[0]):
        return True
    items = [ln for ln in lines if _LIST.match(ln)]
    if kind in ("list", "definition") and items and all(_TASK_ITEM.match(ln) for ln in items):
        return True  # "- Example: Using DVFS to …": titles of exercises, not what they teach
    options = sum(1 for ln in lines if _OPTION.match(ln))
    return options >= 2 and options * 2 >= len(lines)


def _kind(lines: list[str]) -> str:
    first = lines[0]
    if all(ln.startswith(("    ", "\t")) for ln in lines if ln.strip()):
        return "code"  # an indented code block (CommonMark), never a paragraph to cut
    if _TABLE.match(first) or (len(lines) > 1 and "|" in first and _DELIMITER_ROW.match(lines[1])):
        return "table"
    if _LIST.match(first):
        if all(_DEFINITION.match(ln) for ln in lines if _LIST.match(ln)):
            return "definition"
        return "list"
    if all(_DEFINITION.match(ln) for ln in lines) and all(len(ln) < 160 for ln in lines):
        return "definition"
    return "paragraph"


def split_blocks(text: str) -> list[TextBlock]:
    """The blocks of a Markdown section, in reading order."""
    out: list[TextBlock] = []
    lines = text.split("\n")
    offsets, pos = [], 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    i, n = 0, len(lines)
    run: list[int] = []  # line numbers of the block being gathered

    def flush() -> None:
        if not run:
            return
        body = [lines[k] for k in run]
        kind = _kind(body)
        block = "\n".join(body).strip("\n")
        out.append(TextBlock(kind, block, offsets[run[0]], _is_noise(kind, block)))
        run.clear()

    while i < n:
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            flush()
            mark, j = fence.group(1), i + 1
            while j < n and not lines[j].strip().startswith(mark[:3]):
                j += 1
            block = "\n".join(lines[i : min(j + 1, n)])
            out.append(TextBlock("code", block, offsets[i], _is_noise("code", block)))
            i = j + 1
            continue
        jsx = _JSX_OPEN.match(line)
        if jsx:
            flush()
            j = _jsx_end(lines, i, jsx.group(1))
            out += _component_blocks("\n".join(lines[i : j + 1]), offsets[i])
            i = j + 1
            continue
        if not line.strip():
            flush()
        elif _HEADING.match(line):
            flush()
            out.append(TextBlock("heading", line.strip(), offsets[i], noise=True))
        elif _SKIP.match(line) or _IMAGE.match(line):
            flush()
        elif run and (bool(_TABLE.match(line)) != bool(_TABLE.match(lines[run[0]]))
                      or (_LIST.match(line) and not _LIST.match(lines[run[0]]))):
            flush()  # a table or list right under a paragraph line starts its own block
            run.append(i)
        else:
            run.append(i)
        i += 1
    flush()
    return _join_loose_lists(out)


def _join_loose_lists(blocks: list[TextBlock]) -> list[TextBlock]:
    """A list written with blank lines between its items is one list, not one block each."""
    out: list[TextBlock] = []
    for block in blocks:
        last = out[-1] if out else None
        if (last is not None and last.kind in ("list", "definition")
                and block.kind in ("list", "definition") and not block.noise
                and not last.noise and _LIST.match(block.text)):
            kind = "definition" if last.kind == block.kind == "definition" else "list"
            out[-1] = TextBlock(kind, last.text + "\n" + block.text, last.start)
        else:
            out.append(block)
    return out


def _component_blocks(text: str, start: int) -> list[TextBlock]:
    """An MDX component as the blocks its reader sees (functions.answers.jsx_view); a component
    whose props cannot be read stays one unquoted block."""
    out: list[TextBlock] = []
    try:
        for kind, body, noise in view(text):
            if kind == "children":
                out += [TextBlock(b.kind, b.text, start, b.noise or noise)
                        for b in split_blocks(body) if b.kind != "heading"]
            else:
                out.append(TextBlock(kind, body, start, noise))
    except RecursionError:  # components nested hundreds deep: not quoted, never a failure
        out = []
    return out or [TextBlock("jsx", text, start, noise=True)]


def _jsx_end(lines: list[str], i: int, tag: str) -> int:
    """The last line of the MDX component opened on line i: its closing tag, a self-closing
    `/>` at the end of a line, else the line before the next blank line."""
    depth = 0
    for j in range(i, len(lines)):
        line = lines[j]
        depth += line.count("{") - line.count("}")
        if f"</{tag}>" in line or (depth <= 0 and line.rstrip().endswith("/>")):
            return j
        if j > i and not line.strip() and depth <= 0 and ">" in lines[j - 1]:
            return j - 1
    return len(lines) - 1
