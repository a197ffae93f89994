"""Heading-aware chunking: one parsed Document becomes Chunk payloads within exact token limits.

A section is the text under a heading of a split level (default H2-H4) down to the next heading
of a split level or shallower; deeper headings stay inside, their heading line re-created.
Limits count tokens of the *embedded* text (doc title > heading path, blank line, content), so
max_tokens holds for what the embedding model sees; min_tokens is measured on the content.
A continuation piece of a long section does not repeat the heading line: its embedded text
carries the heading path already.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from functions.search.contract import Chunk, aside_opening, chunk_id, content_hash
from functions.tokens import encoding
from indexer.model import ChunkOptions, Document, Section
from indexer.splitting import PROSE, SEP, Item, clean, count, joint, pack, size, split_block

ROOT = -1  # parent index of the page's top-level sections


@dataclass
class Unit:
    """One section as the chunker sees it: its place in the tree and its blocks as items."""

    section: Section
    level: int
    parent: int
    path: list[str]
    number: str
    prefix: str  # first line of the embedded text: doc title > heading path
    prefix_cost: int  # tokens of prefix + SEP
    items: list[Item] = field(default_factory=list)
    text: str = ""  # the items joined with SEP
    tokens: int = 0  # exact tokens of text
    end: int = 0  # tokens SEP costs after text
    has_body: bool = False

    counted: bool = False  # items carry their own token counts

    def finish(self, max_tokens: int) -> None:
        """Count the section once: as a whole, or block by block when it will surely be cut.

        Both give the same total (count(a + SEP + b) == count(a) + joint(a) + count(b)).
        """
        self.text = SEP.join(item.text for item in self.items)
        self.end = joint(self.items[-1].text) if self.items else 0
        self.has_body = any(item.kind != "heading" for item in self.items)
        if len(self.text) > 6 * max_tokens:  # prose runs ~4.5 characters a token
            self.count_items()
            self.tokens = size(self.items)
        else:
            self.tokens = count(self.text)

    def count_items(self) -> None:
        if not self.counted:
            for item in self.items:
                item.tokens, item.joint = count(item.text), joint(item.text)
            self.counted = True


def chunk_document(doc: Document, options: ChunkOptions | None = None) -> list[Chunk]:
    """The chunks of one document, in document order, chunk_index 0..n-1."""
    options = options or ChunkOptions()
    units = _units(doc, options)
    groups = _merge(units, options)
    chunks: list[Chunk] = []
    for group in groups:
        first = units[group[0]]
        # A heading-only parent merged into its child cites the child: that is where the text is.
        cited = next((units[u] for u in group if units[u].has_body), first)
        tokens = sum(units[u].tokens + units[u].end for u in group) - units[group[-1]].end
        if cited.prefix_cost + tokens <= options.max_tokens:  # the common case: one chunk
            items = [item for u in group for item in units[u].items]
            content = SEP.join(units[u].text for u in group)
            chunks.append(_chunk(doc, cited, content, tokens, items, len(chunks)))
            continue
        for u in group:
            units[u].count_items()
        items = _fit_items(units, group, options)
        cite = _cited_units(units, group)
        for piece in pack(
            items,
            lambda u, cite=cite: options.max_tokens - units[cite[u]].prefix_cost,
            options.overlap_tokens,
        ):
            content = SEP.join(item.text for item in piece)
            unit = units[cite[piece[0].unit]]
            chunks.append(_chunk(doc, unit, content, size(piece), piece, len(chunks)))
    return chunks


def _cited_units(units: list[Unit], group: list[int]) -> dict[int, int]:
    """Each unit of a group -> the unit its text is cited as: itself, or for a heading-only
    unit the next unit of the group that has text."""
    cite: dict[int, int] = {}
    pending: list[int] = []
    for u in group:
        pending.append(u)
        if units[u].has_body:
            cite.update(dict.fromkeys(pending, u))
            pending = []
    cite.update(dict.fromkeys(pending, group[-1]))
    return cite


def _heading(level: int, title: str) -> str:
    return "#" * level + " " + " ".join(title.split())


def _units(doc: Document, options: ChunkOptions) -> list[Unit]:
    """Sections that start a chunk, with deeper headings folded into the one above them."""
    split, top = options.split_levels, options.split_levels[0]
    units: list[Unit] = []
    stack: list[int] = []
    children: dict[int, int] = {}
    for section in doc.sections:
        level = section.level
        if level in split or level < top or not units:
            while stack and units[stack[-1]].level >= level:
                stack.pop()
            parent = stack[-1] if stack else ROOT
            units.append(_unit(doc, units, section, parent, children, options))
            stack.append(len(units) - 1)
        elif section.title:
            units[-1].items.append(Item(len(units) - 1, "heading", _heading(level, section.title),
                                        anchor=section.anchor, title=section.title))
        # A folded deeper heading without an id (none in practice) leaves its text cited as
        # the unit's section.
        under = section if section.anchor or level in split or level < top else units[-1].section
        units[-1].items.extend(
            Item(len(units) - 1, block.kind, clean(block.text), anchor=under.anchor,
                 title=under.title, aside=block.aside)
            for block in section.blocks
            if block.text.strip()
        )
    for unit in units:
        unit.finish(options.max_tokens)
    return units


def _unit(doc, units, section, parent, children, options: ChunkOptions) -> Unit:
    index = len(units)
    root = section.level < options.split_levels[0]
    if root:
        path, number = [section.title or doc.title], ""
    else:
        above = units[parent] if parent != ROOT else None
        key = parent if above and above.number else ROOT  # the page and its H1s count together
        children[key] = children.get(key, 0) + 1
        number = f"{above.number}.{children[key]}" if above and above.number else str(children[key])
        path = (above.path if above else [doc.title]) + [section.title]
    parts = path if path[0] == doc.title else [doc.title, *path]
    prefix = clean(" > ".join(" ".join(part.split()) for part in parts))
    if count(prefix) > options.max_tokens // 4:  # keep room for content under absurd titles
        prefix = clean(
            encoding().decode(encoding().encode_ordinary(prefix)[: options.max_tokens // 4])
        )
    unit = Unit(section, section.level, parent, path, number, prefix, count(prefix) + joint(prefix))
    if section.title:
        unit.items.append(Item(index, "heading", _heading(section.level, section.title),
                               anchor=section.anchor, title=section.title))
    return unit


def _under(units: list[Unit], u: int, ancestor: int) -> bool:
    while u != ROOT:
        u = units[u].parent
        if u == ancestor:
            return True
    return ancestor == ROOT


def _merge(units: list[Unit], options: ChunkOptions) -> list[list[int]]:
    """Groups of consecutive units: a small or heading-only unit joins a neighbour under its parent.

    Forward first (the following sibling or first child), keeping the first unit's anchor; a
    unit still small then joins the group before it if that fits. A heading-only unit joins
    its first child whatever the size (the packer cuts the result), else it is dropped: it has
    nothing to cite, and its sibling keeps its own anchor.
    """
    sizes = [unit.tokens for unit in units]
    ends = [unit.end for unit in units]
    body = [unit.has_body for unit in units]

    def tokens(group: list[int]) -> int:
        return sum(sizes[u] + ends[u] for u in group) - ends[group[-1]]

    def joins(group: list[int], extra: list[int]) -> bool:
        if not _under(units, extra[0], units[group[0]].parent):
            return False  # never across parents
        return tokens(group + extra) <= options.max_tokens - units[group[0]].prefix_cost

    def small(group: list[int]) -> bool:
        return tokens(group) < options.min_tokens

    forward: list[list[int]] = []
    for u, unit in enumerate(units):
        if not unit.items:
            continue
        last = forward[-1] if forward else None
        if last and not any(body[v] for v in last):
            if _under(units, u, last[0]):  # a heading-only section joins its first child
                last.append(u)
            else:
                forward[-1] = [u]  # ...or is dropped
        elif last and small(last) and body[u] and joins(last, [u]):
            last.append(u)
        else:
            forward.append([u])
    groups: list[list[int]] = []
    for group in forward:
        if not any(body[u] for u in group):
            continue
        if groups and small(group) and joins(groups[-1], group):
            groups[-1].extend(group)
        else:
            groups.append(group)
    return groups


def _fit_items(units: list[Unit], group: list[int], options: ChunkOptions) -> list[Item]:
    """The group's items, each block cut so that it fits a piece with the headings before it."""
    out: list[Item] = []
    run: list[Item] = []  # headings just before the current block
    for u in group:
        for item in units[u].items:
            if item.kind == "heading":
                run.append(item)
                out.append(item)
                continue
            cost = max(units[i.unit].prefix_cost for i in [*run, item])
            budget = options.max_tokens - cost - (size(run) + run[-1].joint if run else 0)
            budget = max(budget, options.max_tokens // 4)  # absurd heading runs lose headings
            if item.tokens <= budget:
                out.append(item)
            else:
                later = budget - options.overlap_tokens if item.kind in PROSE else budget
                pieces = split_block(item.text, item.kind, budget, max(later, budget // 2))
                out.extend(
                    Item(item.unit, item.kind, text, tokens, joint(text), brk=k > 0,
                         anchor=item.anchor, title=item.title)
                    for k, (text, tokens) in enumerate(pieces)
                )
            run = []
    return out


def _chunk(doc: Document, unit: Unit, content: str, tokens: int, items, index: int) -> Chunk:
    embed_text = unit.prefix + SEP + content
    anchor = unit.section.anchor or ""
    return Chunk(
        chunk_id=chunk_id(doc.source, index),
        doc_path=doc.source,
        doc_id=doc.doc_id,
        doc_title=doc.title,
        module=doc.doc_id.split("/", 1)[0],
        heading_path=list(unit.path),
        section_title=unit.path[-1],
        section_number=unit.number,
        heading_level=unit.level,
        anchor=anchor,
        url=f"{doc.url}#{anchor}" if anchor else doc.url,
        page_url=doc.url,
        chunk_index=index,
        token_count=unit.prefix_cost + tokens,
        content=content,
        content_hash=content_hash(embed_text),
        content_type=_content_type(items),
        tags=list(doc.tags),
        sections=_sections(doc, unit, items),
        asides=_asides(items),
        embed_text=embed_text,
    )


def _asides(items) -> list[dict]:
    """The blocks of the chunk that sit in an admonition ("tip", "Log everything while
    tuning"): [{title, opens}], opens = the block's first words, by which the offline answerer
    knows an aside from the section's own text (functions.answers.extractive)."""
    return [{"title": item.aside, "opens": aside_opening(item.text)}
            for item in items if item.aside and item.kind != "heading" and item.text.strip()]


def _sections(doc: Document, unit: Unit, items) -> list[dict]:
    """Where each heading's text starts in the chunk content: one entry per run of items under
    the same heading, so a quote can cite the exact heading it sits under (a merged short
    section keeps its own anchor), and that heading's level (1: the page's top), by which a
    translation's headings are matched to the original's. The first entry starts at 0."""
    levels = {section.anchor or "": section.level for section in reversed(doc.sections)}
    out: list[dict] = []
    start = 0
    for item in items:
        anchor = item.anchor or ""
        if not out or out[-1]["anchor"] != anchor:
            title = item.title or (unit.path[-1] if not anchor else "")
            out.append({"anchor": anchor, "title": " ".join(title.split()),
                        "url": f"{doc.url}#{anchor}" if anchor else doc.url, "start": start,
                        "level": levels.get(anchor, 1)})
        start += len(item.text) + len(SEP)
    if out:
        out[0]["start"] = 0
    return out


def _content_type(items: list[Item]) -> str:
    """ "code" or "table" when that kind makes up most of the text (by characters), else "text"."""
    total = sum(len(item.text) for item in items if item.kind != "heading") or 1
    for kind in ("code", "table"):
        if sum(len(item.text) for item in items if item.kind == kind) * 2 > total:
            return kind
    return "text"
