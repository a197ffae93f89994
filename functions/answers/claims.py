"""Claim checking: each sentence of a model answer must cite a passage that says it.

The answer is split into units: sentences (of paragraphs, list items, table rows), code blocks,
and connectives (headings, "Here is how:", "The book does not cover X."). A sentence without a
marker borrows the next (else the previous) marker of its own line, the way a paragraph is
often cited once at its end. Each sentence is scored against the passages it cites:
- lexical: the share of its content terms (functions.search.sparse.terms) found in those passages'
  headings and text;
- dense: the best cosine between the sentence and the passages' sentence windows, with the
  query-side embedding model already loaded (one batch per answer);
- a number the passages never write ("introduced in 2009") fails the sentence outright.
A sentence is supported when 0.5 * lexical + 0.5 * dense >= THRESHOLD and lexical >=
MIN_LEXICAL (0.6 and 0.4, chosen with benchmarks/bench_claims.py). Unsupported sentences,
uncited ones and those citing a passage that does not exist are removed; connectives stay
only before a kept sentence, and a sentence saying what the passages do not cover stays when
anything else does. A code block stays when its lines are in a passage. Measured by `python -m benchmarks.bench_claims` (docs/answers.md "Model answers").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from functions.answers.citations import strip_markers
from functions.answers.text import plain_text
from functions.answers.text import sentences as split_sentences
from functions.answers.tuning import TUNING
from functions.errors import UpstreamError
from functions.search.sparse import terms
from functions.search.types import SearchHit, cosine

LEXICAL_WEIGHT = TUNING.lexical_weight.value
THRESHOLD = TUNING.claim_threshold.value
MIN_LEXICAL = TUNING.min_lexical.value
LEXICAL_ONLY = TUNING.lexical_only.value
CODE_SHARE = TUNING.code_share.value
WINDOWS_PER_PASSAGE = TUNING.windows_per_passage.value
CLAIMS = ("sentence", "code")
MOSTLY_SUPPORTED = TUNING.mostly_supported.value

_MARKER = re.compile(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]")
_FENCE = re.compile(r"^\s*(```|~~~)")
_PREFIX = re.compile(r"^(\s*(?:#{1,6}\s+|>\s*|[-*+]\s+|\d{1,3}[.)]\s+|\|)?\s*)")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
_GAP = re.compile(r"\b(does not|doesn't|do not|don't|not)\b.{0,40}\b(cover|say|mention|describe|"
                  r"explain|include|address|discuss|specif)", re.I)


@dataclass(frozen=True)
class Claim:
    text: str
    cited: tuple[int, ...]  # marker numbers as written (1-based, maybe out of range)
    kind: str  # "sentence" | "code" | "connective" | "gap" (what the book does not cover)
    lexical: float = 0.0
    dense: float = 0.0
    supported: bool = False
    reason: str = ""  # why it is kept or removed: ok | uncited | no_such_passage | unsupported


@dataclass(frozen=True)
class Checked:
    text: str  # the answer with unsupported units removed
    claims: tuple[Claim, ...]
    embedded: tuple[str, ...]  # what was embedded (the caller counts paid tokens)

    @property
    def share(self) -> float:
        """Share of the answer's claim text (sentences and code) that is supported."""
        total = sum(len(c.text) for c in self.claims if c.kind in CLAIMS)
        kept = sum(len(c.text) for c in self.claims if c.kind in CLAIMS and c.supported)
        return kept / total if total else 0.0

    @property
    def supported(self) -> int:
        return sum(1 for c in self.claims if c.kind in CLAIMS and c.supported)


def markers(text: str) -> tuple[int, ...]:
    return tuple(int(n) for group in _MARKER.findall(text) for n in re.findall(r"\d+", group))


def passage_text(hit: SearchHit) -> str:
    p = hit.payload
    heads = " ".join(map(str, p.get("heading_path") or []))
    return f"{p.get('doc_title', '')} {heads}\n{strip_markers(str(p.get('content', '')))}"


def windows(text: str) -> list[str]:
    """Sentence pairs of a passage (lines, list items and sentences), for the dense check."""
    pieces = [s for line in text.splitlines() for s in split_sentences(line.strip())
              if len(terms(s)) >= 2]
    if len(pieces) <= 1:
        return pieces or [text]
    pairs = [f"{a} {b}" for a, b in zip(pieces, pieces[1:], strict=False)]
    return (pieces + pairs)[:WINDOWS_PER_PASSAGE]


def plain(sentence: str) -> str:
    """A sentence's words without its citation markers (functions.answers.text.plain_text)."""
    return plain_text(_MARKER.sub(" ", sentence))


def lexical_support(sentence: str, passages: Sequence[str]) -> float:
    wanted = set(terms(plain(sentence)))
    if not wanted:
        return 0.0
    found = set(terms(" ".join(passages)))
    return len(wanted & found) / len(wanted)


def numbers_found(sentence: str, passages: Sequence[str]) -> bool:
    """Every number of the sentence is written in the passages ("10" is not in "100")."""
    written = set(_NUMBER.findall(" ".join(passages)))
    return all(n in written for n in _NUMBER.findall(plain(sentence)))


def is_supported(lexical: float, dense: float | None) -> bool:
    """dense None: the embedding service failed, so the words alone must carry it."""
    if dense is None:
        return lexical >= LEXICAL_ONLY
    return (lexical >= MIN_LEXICAL
            and LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * dense >= THRESHOLD)


def score(sentences: Sequence[str], passages: Sequence[Sequence[str]], embedder
          ) -> tuple[list[tuple[float, float | None, bool]], list[str]]:
    """(lexical, dense, numbers found) of each sentence against its own passages, and the texts
    embedded (one batch: the sentences, then every passage window once)."""
    all_windows: list[str] = []
    spans: dict[str, tuple[int, int]] = {}
    for group in passages:
        for text in group:
            if text not in spans:
                wins = windows(text)
                spans[text] = (len(all_windows), len(all_windows) + len(wins))
                all_windows += wins
    texts = [plain(s) for s in sentences] + all_windows
    vectors: list = []
    if embedder is not None and sentences:
        try:
            vectors = embedder.embed_batch(texts)
        except UpstreamError:  # a paid embedder timed out: judge by the words alone
            vectors = []
    out = []
    for i, (sentence, group) in enumerate(zip(sentences, passages, strict=True)):
        dense = 0.0 if vectors else None
        if vectors:
            for text in group:
                start, end = spans[text]
                for j in range(start, end):
                    dense = max(dense, cosine(vectors[i], vectors[len(sentences) + j]))
        out.append((lexical_support(sentence, group), dense, numbers_found(sentence, group)))
    return out, texts if vectors else []


def _code_supported(code: str, passages: Sequence[str]) -> bool:
    body = [" ".join(line.split()) for line in code.splitlines()[1:-1] if line.strip()]
    if not body:
        return False
    flat = {" ".join(line.split()) for p in passages for line in p.splitlines()}
    return sum(line in flat for line in body) >= CODE_SHARE * len(body)


def _units(answer: str) -> list[tuple[int, str, Claim]]:
    """(line number, line prefix, unit) in order; a code block is one unit on its first line."""
    out: list[tuple[int, str, Claim]] = []
    lines = answer.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            end = next((j for j in range(i + 1, len(lines)) if _FENCE.match(lines[j])),
                       len(lines) - 1)
            out.append((i, "", Claim("\n".join(lines[i:end + 1]), (), "code")))
            i = end + 1
            continue
        prefix = _PREFIX.match(line).group(1)
        body = line[len(prefix):]
        sentences = split_sentences(body)
        cited = [markers(s) for s in sentences]
        for k, sentence in enumerate(sentences):
            own = cited[k]
            borrowed = own or next((c for c in cited[k + 1:] if c), ()) or next(
                (c for c in reversed(cited[:k]) if c), ())
            if not own and _GAP.search(plain(sentence)):
                out.append((i, prefix, Claim(sentence, (), "gap")))
            elif prefix.lstrip().startswith("#") or (not own and _connective(sentence)):
                out.append((i, prefix, Claim(sentence, (), "connective")))
            else:
                out.append((i, prefix, Claim(sentence, borrowed, "sentence")))
        i += 1
    return out


def _connective(sentence: str) -> bool:
    text = plain(sentence)
    return text.endswith(":") or len(terms(text)) < 2


def check(answer: str, hits: Sequence[SearchHit], embedder) -> Checked:
    """The answer with only its supported units, and how each unit fared."""
    units = _units(answer)
    texts = [passage_text(h) for h in hits]
    def valid(u: Claim) -> list[int]:  # a marker naming no passage is dropped later anyway
        return [n for n in dict.fromkeys(u.cited) if 1 <= n <= len(hits)]

    todo = [(k, u) for k, (_, _, u) in enumerate(units) if u.kind == "sentence" and valid(u)]
    scored, embedded = score([u.text for _, u in todo],
                             [[texts[n - 1] for n in valid(u)] for _, u in todo], embedder)
    results: dict[int, Claim] = {}
    for (k, u), (lexical, dense, numbers) in zip(todo, scored, strict=True):
        ok = numbers and is_supported(lexical, dense)
        results[k] = Claim(u.text, u.cited, u.kind, round(lexical, 3), round(dense or 0.0, 3), ok,
                           "ok" if ok else "unsupported")
    claims: list[Claim] = []
    for k, (_, _, u) in enumerate(units):
        if k in results:
            claims.append(results[k])
        elif u.kind == "code":
            ok = _code_supported(u.text, texts)
            claims.append(Claim(u.text, u.cited, u.kind, supported=ok,
                                reason="ok" if ok else "unsupported"))
        elif u.kind == "sentence":
            claims.append(Claim(u.text, u.cited, u.kind,
                                reason="no_such_passage" if u.cited else "uncited"))
        else:
            claims.append(u)
    return Checked(_rebuild(answer, units, claims), tuple(claims), tuple(embedded))


def check_numbers(answer: str, passages: Sequence[str]) -> Checked:
    """For an answer with nothing to embed against (a reader's selection, which never touches
    an embedding model) and whose words may restate the passage: only the number rule. A
    sentence stating a number the passages never write goes, and so does a code block they do
    not hold; every other sentence stays, cited or not."""
    units = _units(answer)
    claims: list[Claim] = []
    for _, _, u in units:
        if u.kind in CLAIMS:
            ok = (_code_supported(u.text, passages) if u.kind == "code"
                  else numbers_found(u.text, passages))
            claims.append(Claim(u.text, u.cited, u.kind, supported=ok,
                                reason="ok" if ok else "unsupported"))
        else:
            claims.append(u)
    return Checked(_rebuild(answer, units, claims), tuple(claims), ())


def _rebuild(answer: str, units, claims: Sequence[Claim]) -> str:
    """The answer's lines with removed units left out; connectives stay before a kept unit."""
    keep = [c.supported for c in claims]
    anything = any(c.supported for c in claims if c.kind in CLAIMS)
    later = False
    for k in range(len(claims) - 1, -1, -1):
        if claims[k].kind == "connective":
            keep[k] = later
        elif claims[k].kind == "gap":
            keep[k] = anything
        later = later or (claims[k].kind in CLAIMS and claims[k].supported)
    by_line: dict[int, list[str]] = {}
    prefixes: dict[int, str] = {}
    for (line, prefix, _), claim, kept in zip(units, claims, keep, strict=True):
        prefixes[line] = prefix
        if claim.kind == "code":  # its other lines are inside the unit
            prefixes.update({n: "" for n in range(line + 1, line + claim.text.count("\n") + 1)})
        if kept:
            by_line.setdefault(line, []).append(claim.text)
    lines = answer.splitlines()
    out: list[str] = []
    for n, line in enumerate(lines):
        if n in by_line:
            out.append(prefixes[n] + " ".join(by_line[n]))
        elif n not in prefixes and not line.strip() and out and out[-1].strip():
            out.append("")
    return "\n".join(out).strip()
