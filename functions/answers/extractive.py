"""The offline answerer: the block(s) of the book that answer the question, quoted and cited.

Each retrieved chunk is split into the sections it holds (functions.answers.sections) and each section
into reader-visible blocks (functions.answers.reader_blocks). Every block is scored against the question by
meaning (cosine with the query-side embedding model already loaded) and by words (the share of
the question's content terms it holds, each term weighted by how rare it is among the
candidate blocks). The best block is quoted whole (a list with its items, a table with its
rows, a code block with its fence) with the lead-in that makes it readable, cited with the
heading it sits under; a second block is added only when it is nearly as good and from another
section, or when the first one announces it ("…as follows:"). Quiz prompts, options,
navigation, objectives and exercises are left out unless the question asks for them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from functions.answers.citations import strip_markers
from functions.answers.question_kind import Reading, names_other_side, states_quantity
from functions.answers.reader_blocks import TextBlock, diagram_text, is_diagram, split_blocks
from functions.answers.sections import split_hit
from functions.answers.text import plain_text, sentences
from functions.answers.tuning import TUNING
from functions.deadline import on_time
from functions.search.contract import aside_opening, block_key, unpack_block_vectors
from functions.search.ranking import page_boost, page_key
from functions.search.sparse import terms
from functions.search.types import SearchHit, cosine

SOURCES = TUNING.sources.value
WEAK_SOURCE = TUNING.weak_source.value
# A block's score: a weighted mean of its cosine with the question (as shown, under its page
# title and heading), the rarity-weighted share of the question's terms it holds, and the
# cosine of the whole chunk it came from (retrieval's view of the section), minus a little per
# rank (the values, why and how they were chosen: functions.answers.tuning).
BLOCK_WEIGHTS = TUNING.block_weights.value
RANK_STEP = TUNING.rank_step.value
SECOND_BLOCK = TUNING.second_block.value
COVER_MARGIN = TUNING.cover_margin.value
COVER_GAIN = TUNING.cover_gain.value
DEFINES = TUNING.defines.value
QUANTITY_MARGIN = TUNING.quantity_margin.value
MAX_CHARS = TUNING.max_chars.value
EXPLAINS_CHARS = TUNING.explains_chars.value
MAX_LIST_ITEMS = TUNING.max_list_items.value
MAX_CODE_LINES = TUNING.max_code_lines.value
MAX_TABLE_ROWS = TUNING.max_table_rows.value
EMBED_CHARS = TUNING.embed_chars.value

_SKIP_TITLE = re.compile(
    r"\b(learning objectives?|objectives?|quiz(zes)?|exercises?|assessments?|review questions|"
    r"self[- ]check|check your understanding|next steps?|what'?s next|further reading|"
    r"references|practice problems?)\b", re.I)
_PRONOUN_LEAD = re.compile(
    r"^(?:this|that|these|those|it|its|they|their|another|such|however|also|similarly|"
    r"additionally|furthermore|moreover|in addition|likewise|here|there|both|each of these|"
    r"the latter|the former|as a result|therefore|thus|hence)\b", re.I)
# … or after a short opening phrase: "For humanoid robots, this balance is …"
_LATE_PRONOUN = re.compile(r"^[^.,;:]{1,40},\s+(?:this|these|that|those|such)\b", re.I)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")  # a list item's first line
_OPEN_END = re.compile(r"\b(?:is|are|was|be|by|as|to|of|and|or|with|from|gives?|becomes?|"
                       r"reads?|follows?|uses?|like|then)$", re.I)
_ENDS_SENTENCE = re.compile(r"[.!?][\"'”’)\]]*$")
# A sentence that points at what comes after it: "The setup looks as follows.", "… the table below."
_POINTS_ON = re.compile(r"\b(?:as\s+follows|the\s+following|below|like\s+this)\W*$", re.I)


@dataclass
class Candidate:
    source: int  # index into Composed.sources
    rank: int  # the chunk's rank among the hits
    blocks: list[TextBlock]  # every block of the section (for lead-ins)
    index: int  # this block's index in blocks
    title: str
    page: str = ""  # the page title: a block is read under "page > heading", as it was indexed
    chunk: float = 0.0  # the cosine of the question and the chunk the block came from
    above: str = ""  # the headings above the block's own, on its page
    parents: tuple[str, ...] = ()  # … one by one, the page's top heading first
    aside: str = ""  # the admonition the block sits in (its title, else its type), or ""
    found: dict[str, float] = field(default_factory=dict)  # question terms held: their weight
    # the chunk's blocks embedded at index time (contract.unpack_block_vectors), by block_key
    stored: Mapping[str, Sequence[float]] = field(default_factory=dict)
    lex: float = 0.0
    sem: float = 0.0
    score: float = 0.0

    @property
    def block(self) -> TextBlock:
        return self.blocks[self.index]


@dataclass
class Composed:
    text: str  # Markdown; each [n] names sources[n - 1]
    sources: list[SearchHit] = field(default_factory=list)
    lex: float = 0.0  # weighted term coverage of the best block (0..1)
    sem: float = 0.0  # cosine of the question and the best block
    # the best of any candidate block, whichever was quoted (the reader's page lifts the
    # blocks of its own chunks for the choice, never these): what the decision reads
    top_sem: float = 0.0
    top_lex: float = 0.0
    mean_sem: float = 0.0  # … and the mean cosine of all the candidate blocks
    # every candidate section, ordered by its best block (the quoted one first): what the
    # "closest" outcome links (functions.answers.closest)
    closest: list[SearchHit] = field(default_factory=list)
    brief: str = ""  # the best block alone, as the quote shows it (its [n] names sources[n - 1])


def _leans_back(text: str) -> bool:
    """Whether a sentence leans on the one before ("This separation …", "For humanoid robots,
    this balance …")."""
    return bool(_PRONOUN_LEAD.match(text) or _LATE_PRONOUN.match(text))


def _candidates(reading: Reading, hits: Sequence[SearchHit], page_url: str | None = None
                ) -> tuple[list[Candidate], list[SearchHit]]:
    current = page_key(page_url)
    best = max((h.dense_score for h in hits), default=0.0)
    best_fused = max((h.score for h in hits), default=0.0)
    sources: list[SearchHit] = []
    out: list[Candidate] = []
    for rank, hit in enumerate(list(hits)[:SOURCES]):
        # weak by meaning and by retrieval's own score (which lifts the reader's page)
        if hit.dense_score < WEAK_SOURCE * best and hit.score < WEAK_SOURCE * best_fused:
            continue
        # the reader's own page counts more, as it does in retrieval
        chunk = float(hit.dense_score) * page_boost(hit, current)
        stored = unpack_block_vectors(hit.payload)  # the blocks embedded at index time
        for part in split_hit(hit):
            found = _section_candidates(part, reading.wants_skipped)
            if not found:
                continue
            sources.append(part)
            for c in found:
                c.source, c.rank, c.chunk, c.stored = len(sources) - 1, rank, chunk, stored
            out += found
    return out, sources


def _section_candidates(part: SearchHit, keep_skipped: bool) -> list[Candidate]:
    """The quotable blocks of one section of a chunk (functions.answers.sections), each a
    Candidate not yet placed among the hits (source, rank, chunk); `keep_skipped`: with the
    blocks and sections a reader asks for only by name (objectives, quizzes, figures)."""
    title = str(part.payload.get("section_title", ""))
    if _SKIP_TITLE.search(title) and not keep_skipped:
        return []
    blocks = split_blocks(str(part.payload.get("content", "")))
    usable = [k for k, b in enumerate(blocks)
              if b.kind not in ("heading", "figure") and (not b.noise or keep_skipped)
              and plain_text(b.text)
              and not _dangling(blocks, k)]
    page = str(part.payload.get("doc_title", ""))
    # the headings above this one, as the reader sees them ("LiDAR Simulation" over
    # "Unity Implementation"); a merged section's own parents are not known: none
    path = [str(h) for h in part.payload.get("heading_path") or []]
    parents = tuple(path[:-1]) if path and path[-1] == title else ()
    asides = {str(a.get("opens", "")): str(a.get("title", ""))
              for a in part.payload.get("asides") or [] if isinstance(a, dict)}
    return [Candidate(0, 0, blocks, k, title, page, above=" ".join(parents), parents=parents,
                      aside=asides.get(aside_opening(blocks[k].text), ""))
            for k in usable]


def _embedded_text(c: Candidate, shown: str) -> str:
    """What a block is embedded as for its choice: under its page title and heading, as shown."""
    return f"{c.page} > {c.title}: {shown[:EMBED_CHARS]}"


def block_texts(payload: dict) -> list[str]:
    """Every text a block of this chunk may be embedded as when it is quoted from (skipped
    blocks included): what the indexer embeds ahead and stores (contract.BLOCK_VECTORS)."""
    hit = SearchHit(point_id=0, score=0.0, dense_score=0.0, payload=payload)
    return list(dict.fromkeys(_embedded_text(c, _shown(c)) for part in split_hit(hit)
                              for c in _section_candidates(part, True)))


def _shown_markdown(c: Candidate) -> str:
    """The Markdown a reader would see for this block: with its lead-in or the block it
    announces, as _render quotes it."""
    parts = [c.block.text]
    lead, follow = _lead_in(c), _follow_on(c)
    if lead is not None:
        parts.insert(0, lead.text)
    if follow is not None:
        parts.append(follow.text)
    return "\n".join(parts)


def _shown(c: Candidate) -> str:
    return plain_text(_shown_markdown(c))


_DEFINING = (r"\s+(?:(?:is|are)\s+(?:a|an|the|how|what|when|where|one|any|also\s+called)\b"
             r"|means?|refers?\s+to|describes?|stands?\s+for)\b")


# A term named where it is introduced: "a lower frequency called an alias", "a fault called
# **shoot-through**", "known as the support polygon"; or set in bold, as textbooks introduce one.
_NAMED = re.compile(r"\b(?:called|known\s+as|termed)\s+(?:an?\s+|the\s+)?([^,.;:()]{1,40}?)"
                    r"(?=\s*[,.;:()]|\s+(?:which|that|and|or|because)\b|\s*$)", re.I)
_BOLD = re.compile(r"\*\*([^*\n]{1,40})\*\*|__([^_\n]{1,40})__")


def _defines(text: str, term: str) -> bool:
    """Whether a block defines the term: a sentence "(The) … term is/means …", a table row or
    a definition line whose first cell is the term, or the term named where it is introduced
    ("… called an alias", in bold)."""
    named = [m.group(1) for m in _NAMED.finditer(plain_text(text))]
    named += [m.group(1) or m.group(2) for m in _BOLD.finditer(text)]
    if any(_same_term(terms(n)[-1:], term) for n in named):
        return True
    for line in plain_text(text, keep_lines=True).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        head = cells[0] if len(cells) > 1 else line.split(":", 1)[0] if ":" in line else ""
        if head and terms(head)[-1:] == [term] and len(head) <= 60:
            return True
    for sentence in sentences(plain_text(text)):
        first = re.split(_DEFINING, sentence, maxsplit=1, flags=re.I)
        if len(first) == 2 and len(first[0]) <= 60 and terms(first[0])[-1:] == [term]:
            return True
    return False


def _same_term(found: list[str], term: str) -> bool:
    """Whether a named phrase's last stem is the defined term, one stemmed a step further than
    the other included ("alias" is stemmed "alia", "aliasing" "alias")."""
    if not found:
        return False
    a, b = found[0], term
    return a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a))
                      and abs(len(a) - len(b)) <= 2)


def _defining_rows(text: str, term: str) -> str | None:
    """A table cut to its header and the rows headed by the term (None: no such row)."""
    lines = text.split("\n")
    if len(lines) < 3:
        return None
    rows = [ln for ln in lines[2:]
            if terms(ln.strip().strip("|").split("|")[0])[-1:] == [term]]
    return "\n".join(lines[:2] + rows) if rows else None


def _named_rows(text: str, wanted: frozenset[str]) -> str | None:
    """A table cut to its header and the one row the question names: the row whose first
    cell's words are all in the question ("How big is one step of a 12-bit ADC?" and the row
    "12 bit"). None when it names none, or several ("Which variables, such as COHERE_MODEL and
    TOP_K, …" asks for the whole table; its names are examples)."""
    lines = text.split("\n")
    if len(lines) < 4:
        return None
    rows = []
    for ln in lines[2:]:
        head = set(terms(ln.strip().strip("|").split("|")[0]))
        if head and head <= wanted:
            rows.append(ln)
    if len(rows) != 1 or len(lines) - 2 == 1:
        return None
    return "\n".join(lines[:2] + rows)


def _announces(text: str) -> bool:
    """A paragraph that ends by pointing at what follows: "…the following:", "…looks as
    follows.", or a sentence left open for the formula or code below it ("The relation with
    the loop period is")."""
    end = text.rstrip()
    return (end.endswith(":") or _OPEN_END.search(end) is not None
            or _POINTS_ON.search(strip_markers(end)) is not None)


def _points_ahead(text: str) -> bool:
    """A sentence before the paragraph's last points past it ("The cluster looks as follows.
    Each box is a server/VM." above the diagram)."""
    return any(_POINTS_ON.search(s) for s in sentences(plain_text(text))[:-1])


def _announced(blocks: list[TextBlock], k: int) -> tuple[bool, TextBlock | None]:
    """Whether paragraph k points at the block after it, and that block as it is quoted with
    it: a list, table, code or paragraph; a Mermaid diagram as the text it shows
    (reader_blocks.diagram_text); None when nothing quotable follows in its section (a picture,
    another diagram, a quiz, a heading)."""
    block = blocks[k]
    nxt = blocks[k + 1] if k + 1 < len(blocks) else None
    if block.kind != "paragraph":
        return False, None
    if not _announces(block.text) and not (
            nxt is not None and nxt.kind in ("list", "table", "code", "definition", "figure")
            and _points_ahead(block.text)):
        return False, None
    if nxt is not None and nxt.kind == "code" and is_diagram(nxt.text):
        drawn = diagram_text(nxt.text)
        return True, TextBlock("list", drawn, nxt.start) if drawn else None
    if nxt is None or nxt.kind == "heading" or nxt.noise:
        return True, None
    return True, nxt


def _dangling(blocks: list[TextBlock], k: int) -> bool:
    """A paragraph announcing what follows ("Options, depending on budget:", "The cluster looks
    as follows.") with nothing quotable after it in its section: alone it says nothing."""
    points, follows = _announced(blocks, k)
    return points and follows is None


def _score(reading: Reading, cands: list[Candidate], embed) -> None:
    wanted = reading.terms
    shown = [_shown(c) for c in cands]
    texts = [set(terms(f"{c.page} {c.above} {c.title} {text}")) for c, text in zip(cands, shown,
                                                                         strict=True)]
    n = len(cands)
    weight = {t: math.log(1 + n / (1 + sum(t in ts for ts in texts))) for t in wanted}
    total = sum(weight.values()) or 1.0
    for c, ts in zip(cands, texts, strict=True):
        c.found = {t: weight[t] / total for t in wanted & ts}
        c.lex = sum(c.found.values())
    if embed is not None and cands:
        _meaning(reading, cands, shown, embed)
    w_sem, w_lex, w_chunk = BLOCK_WEIGHTS
    for c in cands:
        sem = c.sem if embed is not None else c.lex
        c.score = (w_sem * sem + w_lex * c.lex + w_chunk * c.chunk) / sum(BLOCK_WEIGHTS)
        if c.block.kind == "paragraph" and len(plain_text(c.block.text)) < 40:
            c.score *= 0.8  # a fragment rarely answers on its own
        c.score -= RANK_STEP * c.rank  # ties go to the better-ranked chunk
        if c.aside:  # an admonition's block ("Log everything while tuning" under "Derivative
            c.score -= RANK_STEP  # kick") is an aside: it loses a tie to the section's own text
    term = reading.defines
    if term is not None:
        for c in cands:
            if _defines(c.block.text, term):
                c.score += DEFINES


def _meaning(reading: Reading, cands: list[Candidate], shown: list[str], embed) -> None:
    """Each block's cosine with the question: from the vectors the index stores for its chunk
    (the question alone is embedded), else embedded now with the question."""
    texts = [_embedded_text(c, text) for c, text in zip(cands, shown, strict=True)]
    kept = [c.stored.get(block_key(t)) for c, t in zip(cands, texts, strict=True)]
    vectors = embed([reading.searched] + [t for t, v in zip(texts, kept, strict=True) if v is None])
    question, fresh = vectors[0], iter(vectors[1:])
    vectors = [next(fresh) if v is None else v for v in kept]
    if any(len(v) != len(question) for v in vectors):  # stored by another model: not used
        vectors = embed([reading.searched, *texts])[1:]
    for c, v in zip(cands, vectors, strict=True):
        c.sem = cosine(question, v)


def _trim_paragraph(text: str, wanted: frozenset[str]) -> str:
    """A long paragraph cut to its best run of up to three whole sentences, never starting on
    a sentence that leans on the one before."""
    sents = sentences(" ".join(text.split()))
    if len(text) <= MAX_CHARS or len(sents) <= 3:
        return text
    best, best_at = -1.0, 0
    for i in range(len(sents)):
        window = " ".join(sents[i : i + 3])
        value = len(wanted & set(terms(window)))
        if value > best:
            best, best_at = value, i
    start = best_at
    while start > 0 and _leans_back(plain_text(sents[start])):
        start -= 1
    end = min(start + 3, len(sents))
    while end < len(sents) and _POINTS_ON.search(plain_text(sents[end - 1])):
        end += 1  # never ending on "… works as follows.": what it announces comes with it
    return " ".join(sents[start:end])


def _code_window(lines: list[str], wanted: frozenset[str]) -> str:
    """A long code block cut to the MAX_CODE_LINES lines around the line that holds most
    of the question's terms, with "…" where lines were left out."""
    body = lines[1:-1]
    hits = [len(wanted & set(terms(ln))) for ln in body]
    best = max(range(len(body)), key=lambda k: (hits[k], -k)) if hits else 0
    start = max(0, min(best - MAX_CODE_LINES // 4, len(body) - MAX_CODE_LINES))
    window = body[start : start + MAX_CODE_LINES]
    before = ["…"] if start > 0 else []
    after = ["…"] if start + MAX_CODE_LINES < len(body) else []
    return "\n".join([lines[0], *before, *window, *after, lines[-1]])


def _trim_block(block: TextBlock, wanted: frozenset[str] = frozenset()) -> str:
    lines = block.text.split("\n")
    if block.kind in ("list", "definition"):
        items = [k for k, ln in enumerate(lines) if _BULLET.match(ln)]
        if len(items) > MAX_LIST_ITEMS:
            # cut before a whole item of the outer list (never between a nested item and the
            # one it belongs to), and say that more follows
            cut = items[MAX_LIST_ITEMS]
            outer = [k for k in items if k <= cut and not lines[k][:1].isspace()]
            cut = outer[-1] if outer and outer[-1] > 0 else cut
            return "\n".join(lines[:cut]).rstrip() + "\n\n…"
    if block.kind == "code" and len(lines) > MAX_CODE_LINES + 2:
        return _code_window(lines, wanted)
    if block.kind == "table" and len(lines) > MAX_TABLE_ROWS + 2:
        return "\n".join(lines[: MAX_TABLE_ROWS + 2]) + "\n\n…"
    return block.text


def _cite_prose(text: str, n: int) -> str:
    text = text.rstrip()
    if text[-1:] in ".!?:" :
        return f"{text[:-1]} [{n}]{text[-1]}"
    return f"{text} [{n}]"


def _lead_in(c: Candidate) -> TextBlock | None:
    """The paragraph right before a block that needs one (a list, table, code or a paragraph
    that leans on what came before), in the same section."""
    if c.index == 0:
        return None
    before = c.blocks[c.index - 1]
    if before.noise or len(before.text) > MAX_CHARS:
        return None
    leans = c.block.kind == "paragraph" and _leans_back(plain_text(c.block.text))
    if before.kind in ("list", "definition"):  # "This separation …" after the list it sums up
        return before if leans else None
    if before.kind != "paragraph":
        return None
    return before if c.block.kind in ("list", "table", "code", "definition") or leans else None


def _follow_on(c: Candidate) -> TextBlock | None:
    """The block a paragraph announces ("…the following:"), or the short paragraph that says
    what a code block does or gives ("An echo of 5.8 ms is about 1 m."), in the same section."""
    if c.block.kind == "code":
        return _explains(c.blocks, c.index + 1)
    return _announced(c.blocks, c.index)[1]


def _explains(blocks: list[TextBlock], k: int) -> TextBlock | None:
    """blocks[k] if it is a short paragraph, as the one right after a code block says what
    the code does or gives."""
    nxt = blocks[k] if k < len(blocks) else None
    if nxt is None or nxt.kind != "paragraph" or nxt.noise or len(nxt.text) > EXPLAINS_CHARS:
        return None
    return nxt


def _render(c: Candidate, reading: Reading) -> str:
    n = c.source + 1
    lead, follow = _lead_in(c), _follow_on(c)
    wanted = reading.terms
    body = strip_markers(_trim_block(c.block, wanted))
    term = reading.defines
    if c.block.kind == "table":  # the rows that answer, when the question names them
        rows = _defining_rows(c.block.text, term) if term is not None else None
        body = strip_markers(rows or _named_rows(c.block.text, wanted) or body)
    if c.block.kind == "paragraph":
        body = _trim_paragraph(body, wanted)
        if follow is not None:
            out = _cite_prose(body, n) + "\n\n" + strip_markers(_trim_block(follow, wanted))
            then = _explains(c.blocks, c.index + 2) if follow.kind == "code" else None
            return out if then is None else out + "\n\n" + _cite_prose(strip_markers(then.text), n)
        if lead is not None and lead.kind != "paragraph":  # the list the paragraph sums up
            listed = strip_markers(_trim_block(lead, wanted))
            intro = c.blocks[c.index - 2] if c.index >= 2 else None
            if intro is not None and intro.kind == "paragraph" and not intro.noise \
                    and intro.text.rstrip().endswith(":") and len(intro.text) <= MAX_CHARS:
                listed = strip_markers(intro.text) + "\n\n" + listed
            return listed + "\n\n" + _cite_prose(body, n)
        if lead is not None:  # a lead-in that ends no sentence (a label) keeps its own line
            glue = " " if _ENDS_SENTENCE.search(plain_text(lead.text)) else "\n\n"
            return strip_markers(lead.text) + glue + _cite_prose(body, n)
        return _cite_prose(body, n)
    after = "" if follow is None else "\n\n" + _cite_prose(strip_markers(follow.text), n)
    if lead is not None:
        return _cite_prose(strip_markers(lead.text), n) + "\n\n" + body + after
    label = c.title or "the book"
    return f"From “{label}” [{n}]:\n\n{body}{after}"


def compose(reading: Reading, hits: Sequence[SearchHit],
            embed: Callable[[list[str]], list[list[float]]] | None = None,
            page_url: str | None = None) -> Composed:
    """The answer to the question read (functions.answers.question_kind.read) quoted from the
    hits (best first), or an empty text when nothing fits. `page_url`: the reader's current
    page, whose blocks count more. For a question asking for a number, a block that states it
    is preferred to a slightly better one that does not."""
    on_time()  # scoring every block of the hits is CPU work: not begun past the deadline
    cands, sources = _candidates(reading, hits, page_url)
    if not cands:
        return Composed("", sources)
    _score(reading, cands, embed)
    ranked = sorted(cands, key=lambda c: -c.score)
    quantity = reading.quantity
    if quantity:  # a number of the asked unit, not just any number ("how far to move …")
        stating = [c for c in ranked
                   if states_quantity(plain_text(_shown_markdown(c), keep_lines=True), quantity)]
        if stating and stating[0].score >= ranked[0].score - QUANTITY_MARGIN:
            ranked = stating
    if reading.defines is not None:  # "What is X?" is answered by what X is, if the book says it
        defining = [c for c in ranked if c.score >= ranked[0].score - COVER_MARGIN
                    and _defines(c.block.text, reading.defines)]
        if defining:
            ranked = [defining[0], *(c for c in ranked if c is not defining[0])]
    best = ranked[0]
    parts = [best]
    seen = plain_text(best.block.text)
    url = sources[best.source].payload.get("url")
    others = [c for c in ranked[1:] if sources[c.source].payload.get("url") != url
              and plain_text(c.block.text) not in seen and seen not in plain_text(c.block.text)]
    # the same section's block that holds the question's words the best one lacks (the
    # paragraph on level of detail below the section's opener)
    mine = [c for c in ranked[1:] if c.source == best.source and c.index != best.index
            and c.score >= best.score - SECOND_BLOCK and _distinct(c, best)
            and sum(w for t, w in c.found.items() if t not in best.found) >= COVER_GAIN]
    # the block that covers what the question asks and the best one leaves out ("how do
    # reliability and durability differ": the durability section), else one nearly as good
    compared = reading.compared
    near = [c for c in others if c.score >= best.score - COVER_MARGIN]
    # the other side of a comparison, named by its page or heading where the best one's are
    # not ("Visual Properties" beside "Collision Properties"; the shared "URDF" is context),
    # before a block that merely holds more of the words
    covering = ([c for c in near if names_other_side(compared, (c.page, c.title),
                                                     (best.page, best.title))]
                or [c for c in near
                    if sum(w for t, w in c.found.items() if t not in best.found) >= COVER_GAIN])
    # a subsection of the best block's section: a heading's overview is shown with the
    # subsection that holds the details, never instead of it ("Quality of service" and its
    # "When nothing arrives"; "The Kalman filter" and "The Kalman gain")
    deeper = [c for c in ranked[1:] if c.source != best.source and _below(c, best, sources)
              and c.score >= best.score - COVER_MARGIN and best.lex < 0.99]
    if deeper:
        parts.append(deeper[0])
    elif mine:
        # in the book's order when the later block leans on the earlier ("this balance …")
        leans = _leans_back(plain_text(best.block.text)) and mine[0].index < best.index
        parts = [mine[0], best] if leans else [best, mine[0]]
    elif covering:
        parts.append(covering[0])
    elif others and others[0].score >= best.score - SECOND_BLOCK and best.lex < 0.99:
        parts.append(others[0])
    # a follow-up: what an earlier answer quoted is left out when the quote has more to show
    # ("How do I prevent it?" after the definition of integral windup: the cure alone)
    fresh = [c for c in parts if not _was_shown(c, reading.shown)] if reading.shown else parts
    parts = fresh or parts
    # the best block first: the reader sees the answer before what supports it
    text = "\n\n".join(_render(c, reading) for c in parts)
    order = dict.fromkeys([best.source, *(c.source for c in ranked)])
    return Composed(text, sources, best.lex, best.sem, max(c.sem for c in cands),
                    max(c.lex for c in cands), sum(c.sem for c in cands) / len(cands),
                    [sources[k] for k in order], _render(best, reading))


def _was_shown(c: Candidate, shown: str) -> bool:
    """Whether an earlier answer of the conversation quoted this block (any of its sentences:
    a long paragraph is quoted cut)."""
    said = [" ".join(s.split()) for s in sentences(plain_text(strip_markers(c.block.text)))]
    return any(len(s) >= 30 and s in shown for s in said)


def _below(c: Candidate, best: Candidate, sources: list[SearchHit]) -> bool:
    """Whether c's section is a subsection of best's, on the same page."""
    if not best.title or sources[c.source].payload.get("page_url") != sources[
            best.source].payload.get("page_url"):
        return False
    path = (*best.parents, best.title)
    return c.parents[: len(path)] == path


def _distinct(c: Candidate, best: Candidate) -> bool:
    """Whether a block of the best one's section adds to it: neither is shown with the other
    (as its lead-in or follow-on), nor holds the other's text."""
    a, b = plain_text(_shown_markdown(c)), plain_text(_shown_markdown(best))
    return a not in b and b not in a


def supported(composed: Composed, quantity: frozenset[str] | None = None) -> bool:
    """Whether the quoted text answers the question well enough to be shown as an answer.
    `quantity`: for a question asking for a number, the words one of which must stand beside
    a number in the quote (functions.answers.question_kind.quantity_words)."""
    if not composed.text:
        return False
    # "how many hours …" answered without a number of hours is not an answer; the answer's
    # own citation markers ("[1]") are not numbers
    return quantity is None or states_quantity(
        plain_text(strip_markers(composed.text), keep_lines=True), quantity)
