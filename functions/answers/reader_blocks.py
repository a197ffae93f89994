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
# A setext heading's underline ("=====" or "-----"); a thematic break ("---", "* * *", "___").
_SETEXT = re.compile(r"^\s{0,3}(?:=+|-+)\s*$")
_BREAK = re.compile(r"^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,}|=+\s*)$")
# A line that is all bold: "**Setup**" (not "**Setup**:", which introduces what follows it).
_BOLD_LINE = re.compile(r"^\s{0,3}(\*\*|__)(?=\S)(?:(?!\1).){1,80}(?<=\S)\1\s*$")
_SKIP = re.compile(r"^\s*(?:import\s.+\sfrom\s|export\s|:::|</?[a-z][\w.]*[\s/>]|</?>|\{/\*"
                   r"|</[A-Z][\w.]*\s*>)")
# An MDX component (<Quiz …>, <Exercise …>): its props run over several lines.
_JSX_OPEN = re.compile(r"^\s*<([A-Z][\w.]*)(?=[\s/>]|$)")
_IMAGE = re.compile(r"^\s*(?:!\[[^\]]*\]\([^)]*\)\s*$|<(?:img|figure|picture|svg|iframe|video)\b)",
                    re.I)
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
    kind: str  # paragraph | list | table | code | definition | heading | figure (an image)
    text: str  # Markdown as written (admonition fences and JSX lines removed)
    start: int  # offset of the block in the text it came from
    noise: bool = False  # navigation, quiz prompt or options: not answer material


def readable_tables(markdown: str) -> str:
    """Each table of `markdown` as one line a snippet shows: its rows apart by "; ", their cells
    by " · " (no pipes, no `| --- |` row); the rest as it was."""
    lines, out, i = markdown.splitlines(), [], 0
    while i < len(lines):
        if "|" in lines[i] and i + 1 < len(lines) and _DELIMITER_ROW.match(lines[i + 1]):
            rows, i = [lines[i]], i + 2
            while i < len(lines) and "|" in lines[i] and lines[i].strip():
                rows.append(lines[i])
                i += 1
            out.append("; ".join(" · ".join(c for c in _cells(row) if c) for row in rows))
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out)


def _cells(row: str) -> list[str]:
    """A table row's cells (an escaped `\\|` is a pipe in its cell)."""
    inner = row.strip().removeprefix("|").removesuffix("|")
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def is_diagram(text: str) -> bool:
    """Whether a fenced block is a diagram's source (```` ```mermaid ````, PlantUML, dot, d2):
    the page shows the drawing."""
    return bool(_DIAGRAM.match(text))


def _is_noise(kind: str, text: str) -> bool:
    if kind == "code":
        return is_diagram(text)
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
        elif _SETEXT.match(line) and run and _kind([lines[k] for k in run]) == "paragraph":
            # "Setup\n-----": the lines above were a heading (setext), never the text's start
            start = offsets[run[0]]
            out.append(TextBlock("heading", " ".join(lines[k].strip() for k in run), start,
                                 noise=True))
            run.clear()
        elif _BREAK.match(line):
            flush()  # a thematic break (---, ***) draws a line, it says nothing
        elif not run and _BOLD_LINE.match(line) and _prose_follows(lines, i):
            # "**Setup**" on its own line above the text: the author's heading, not the text's
            # first words (a bold line ending in ':' stays the lead-in of its list)
            out.append(TextBlock("heading", line.strip(), offsets[i], noise=True))
        elif _IMAGE.match(line):
            flush()  # a picture: never quoted, but what a sentence before it announces
            out.append(TextBlock("figure", line.strip(), offsets[i], noise=True))
        elif _SKIP.match(line):
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


def _prose_follows(lines: list[str], i: int) -> bool:
    """Whether the next line after line i that has text is prose (not a list, a table, a
    fence or another block)."""
    nxt = next((ln for ln in lines[i + 1:] if ln.strip()), "")
    return bool(nxt) and not (_LIST.match(nxt) or _TABLE.match(nxt) or _FENCE.match(nxt)
                              or _HEADING.match(nxt) or _SKIP.match(nxt) or _JSX_OPEN.match(nxt))


def _join_loose_lists(blocks: list[TextBlock]) -> list[TextBlock]:
    """A list written with blank lines between its items is one list, not one block each; a
    block of code indented under an item is part of that item ("1. Copy the files:" and the
    commands that do it), and the items after it go on with the same list."""
    out: list[TextBlock] = []
    for block in blocks:
        last = out[-1] if out else None
        if (last is not None and last.kind in ("list", "definition") and not last.noise
                and block.kind == "code" and not block.noise and block.text[:2].isspace()):
            out[-1] = TextBlock("list", last.text + "\n" + block.text, last.start)
        elif (last is not None and last.kind in ("list", "definition")
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


# --- a diagram's text: what its drawing shows, for a sentence that announces it ------------------
_DIAGRAM_HEAD = re.compile(r"^\s{0,3}(?:```+|~~~+)\s*(\w+)")
_MERMAID_KIND = re.compile(r"^\s*(graph|flowchart|sequenceDiagram|stateDiagram(?:-v2)?)\b", re.I)
_NODE = re.compile(r"\s*([\w]+)(\(\(\(.*?\)\)\)|\(\[.*?\]\)|\[\[.*?\]\]|\[\(.*?\)\]|\(\(.*?\)\)|"
                   r"\{\{.*?\}\}|\[[/\\].*?[/\\]\]|\[.*?\]|\(.*?\)|\{.*?\}|>.*?\])?")
# an edge, its text written inside ("-- HTTP -->", "-. poll .->") or after it ("-->|HTTP|")
_EDGE = re.compile(r"\s*(?:(?:--|==|-\.)\s+(?P<inside>[^|>]+?)\s+)?"
                   r"(?P<arrow><?(?:-{2,}|={2,}|-\.+-|\.-+|={2,})[>ox]?|~~~)\s*"
                   r"(?:\|(?P<after>[^|]*)\|)?")
_SUBGRAPH = re.compile(r"^\s*subgraph\s+([^\[\s]+(?:\s+[^\[\s]+)*?)\s*(\[.*\])?\s*$")
_MESSAGE = re.compile(r"^\s*([\w ]+?)\s*(<<)?-{1,2}(?:>>|>|x|\))[+-]?\s*([\w ]+?)\s*:\s*(.+)$")
_PARTICIPANT = re.compile(r"^\s*(?:participant|actor)\s+(\w+)(?:\s+as\s+(.+))?$", re.I)
_NOTE = re.compile(r"^\s*note\s+(?:over|left of|right of)\s+[^:]+:\s*(.+)$", re.I)
# statements that draw no text of their own (Mermaid's keywords are lower case: "OPT" is a node)
_NOT_DRAWN = re.compile(r"^\s*(?:%%|(?:classDef|class|style|linkStyle|click|direction|end|subgraph|"
                        r"autonumber|activate|deactivate|loop|alt|else|opt|par|and|critical|"
                        r"break|rect)\b)")


def _label(raw: str) -> str:
    """A node's or an edge's text as drawn: no shape brackets, quotes, line breaks or markup."""
    text = re.sub(r"<br\s*/?>", " ", raw.strip().lstrip("[({/\\>").rstrip("])}/\\"), flags=re.I)
    text = re.sub(r"#quot;", '"', text).strip().strip('"')
    return " ".join(text.replace("**", "").replace("`", "").split())


def _flow(lines: list[str]) -> list[str]:
    """A flowchart or state diagram as one line per box (a subgraph: its title and the nodes
    drawn in it), one per arrow ("Load balancer → Web server: HTTP"), and one for each node no
    arrow reaches."""
    names: dict[str, str] = {}
    edges: list[tuple[list[str], str, str, list[str]]] = []
    boxes: list[tuple[str, list[str]]] = []  # a subgraph's title and the nodes drawn in it
    inside: list[int] = []  # the boxes open at this line, innermost last
    for line in lines:
        for statement in line.split(";"):
            box = _SUBGRAPH.match(statement)
            if box:
                inside.append(len(boxes))
                boxes.append((_label(box.group(2) or box.group(1)), []))
                continue
            if re.match(r"^\s*end\s*$", statement) and inside:
                inside.pop()
                continue
            if not statement.strip() or _NOT_DRAWN.match(statement):
                continue
            known = set(names)
            at, groups, links = 0, [], []
            while True:
                group = []
                while (node := _NODE.match(statement, at)) and node.end() > at:
                    group.append(node.group(1))
                    if node.group(2):
                        names[node.group(1)] = _label(node.group(2))
                    else:
                        names.setdefault(node.group(1), node.group(1))
                    at = node.end()
                    amp = re.match(r"\s*&", statement[at:])
                    if not amp:
                        break
                    at += amp.end()
                groups.append(group)
                edge = _EDGE.match(statement, at)
                if not group or not edge or not edge.group("arrow"):
                    break
                links.append(edge)
                at = edge.end()
            if inside:
                boxes[inside[-1]][1].extend(k for k in names if k not in known)
            said = re.match(r"\s*:\s*(.+)$", statement[at:])  # a state diagram's "A --> B: go"
            for k, edge in enumerate(links):
                if k + 1 < len(groups) and groups[k + 1]:
                    text = edge.group("inside") or edge.group("after") or (
                        said.group(1) if said and k == len(links) - 1 else "")
                    edges.append((groups[k], edge.group("arrow"), _label(text), groups[k + 1]))
    out, joined = [], set()
    for sources, arrow, text, targets in edges:
        sign = "↔" if arrow.startswith("<") else "→" if arrow.endswith(">") else "—"
        for a in sources:
            for b in targets:
                joined |= {a, b}
                out.append(f"{names[a]} {sign} {names[b]}" + (f": {text}" if text else ""))
    drawn = [f"{title}: {', '.join(names[k] for k in members)}" if members else title
             for title, members in boxes if title]
    return drawn + out + [name for key, name in names.items() if key not in joined and name]


def _sequence(lines: list[str]) -> list[str]:
    """A sequence diagram as one line per message ("Client → Server: GET /map") and its notes."""
    names, out = {}, []
    for line in lines:
        if (part := _PARTICIPANT.match(line)):
            names[part.group(1)] = _label(part.group(2) or part.group(1))
        elif (note := _NOTE.match(line)):
            out.append(_label(note.group(1)))
        elif (msg := _MESSAGE.match(line)):
            a, b = (names.get(n.strip(), n.strip()) for n in (msg.group(1), msg.group(3)))
            out.append(f"{a} {'↔' if msg.group(2) else '→'} {b}: {_label(msg.group(4))}")
    return out


def diagram_text(block: str) -> str:
    """The text a Mermaid diagram (```` ```mermaid ````) shows, as a Markdown list: one item per
    arrow or message, with the words written on it; "" for a diagram of another kind or
    language, whose drawing cannot be read from its source here."""
    lines = block.split("\n")
    head = _DIAGRAM_HEAD.match(lines[0]) if lines else None
    body = [ln for ln in lines[1:] if not _FENCE.match(ln) and ln.strip()]
    if head is None or head.group(1).lower() != "mermaid" or not body:
        return ""
    kind = _MERMAID_KIND.match(body[0])
    if kind is None:
        return ""
    drawn = (_sequence if kind.group(1).lower() == "sequencediagram" else _flow)(body[1:])
    return "\n".join(f"- {item}" for item in drawn)
