"""How well the claim check separates supported from unsupported sentences on real passages.

`OMP_NUM_THREADS=1 python -m benchmarks.bench_claims [CORPORA_DIR] [--per-kind 150] [--grid]`

For each corpus (see benchmarks/bench_eval.py for where they are found) the docs are chunked
with the default options (no Qdrant); a passage is a chunk with at least three prose sentences.
Sentences are checked against the passage they "cite" with functions.answers.claims (the local MiniLM
as the query-side embedder) in five kinds:
- supported: `verbatim` (a sentence of the passage) and `trimmed` (the same with every third
  word dropped and the rest kept in order, a rough stand-in for a model's paraphrase);
- unsupported: `same_page` (a sentence of another section of the same page), `other_page`
  (of another page), and `misstated` (a sentence of the passage whose two rarest content words
  are swapped for words of another page, and whose numbers are changed).
Prints, per kind, the share the check accepts; `--grid` also prints the trade-off for other
thresholds. No corpus text is written anywhere.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter
from pathlib import Path

from benchmarks.bench_eval import corpora_root, find_corpora, make_local_embedder, site_settings
from functions.answers import claims
from functions.answers.citations import strip_markers
from functions.answers.text import plain_text
from functions.answers.text import sentences as split_sentences
from functions.search.sparse import terms
from functions.settings import Settings
from indexer.build import build_chunks
from indexer.model import ChunkOptions

# Lines of a passage that are not prose: table rows, admonition fences, MDX exports.
_NOT_PROSE = re.compile(r"^\s*(\||:::|export )")
_CODE_FENCE = re.compile(r"```.*?(```|$)", re.S)
_LIST_ITEM = re.compile(r"^([-*+]|\d{1,3}[.)])\s")


def sentences(markdown: str) -> list[str]:
    """A passage's prose sentences (Markdown): code, tables, admonition fences and MDX exports
    left out, each list item a sentence of its own, none under 20 characters or ending in ':'
    (it introduces what is left out)."""
    lines = []
    for line in _CODE_FENCE.sub("\n", markdown).splitlines():
        if _NOT_PROSE.match(line):
            lines.append("")
            continue
        if _LIST_ITEM.match(line.strip()):
            lines.append("")  # each item of a list is a sentence of its own
        lines.append(plain_text(line))
    out = []
    for para in re.split(r"\n\s*\n", "\n".join(lines)):
        para = " ".join(para.split())
        out += [strip_markers(s) for s in split_sentences(para)
                if len(s) >= 20 and not s.endswith(":")]
    return out


KINDS = ("verbatim", "trimmed", "same_page", "other_page", "misstated")
SUPPORTED = ("verbatim", "trimmed")


def passages(corpus: Path) -> list[tuple[str, str, list[str]]]:
    """(doc_path, passage text as the check sees it, its prose sentences)."""

    built = build_chunks(corpus / "docs", site_settings(corpus), ChunkOptions())
    out = []
    for chunk in built.chunks:
        payload = chunk.payload()
        sents = [s for s in sentences(payload["content"]) if len(terms(s)) >= 4]
        if len(sents) >= 3:
            hit = type("Hit", (), {"payload": payload})
            out.append((payload["doc_path"], claims.passage_text(hit), sents))
    return out


def _misstate(sentence: str, donor: str, df: Counter, rng: random.Random) -> str | None:
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}", sentence) if terms(w)]
    fresh = [w for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}", donor)
             if terms(w) and terms(w)[0] not in set(terms(sentence))]
    if len(words) < 2 or len(fresh) < 2:
        return None
    rare = sorted(set(words), key=lambda w: df[terms(w)[0]])[:2]
    out = sentence
    for old, new in zip(rare, rng.sample(fresh, 2), strict=True):
        out = re.sub(rf"\b{re.escape(old)}\b", new, out)
    return re.sub(r"\d+", lambda m: str(int(m.group()) * 3 + 7), out)


def cases(items, per_kind: int, seed: int = 7) -> list[tuple[str, str, str]]:
    """(kind, sentence, passage) triples, per_kind of each kind."""
    rng = random.Random(seed)
    df = Counter(t for _, text, _ in items for t in set(terms(text)))
    out: list[tuple[str, str, str]] = []
    for _ in range(per_kind):
        doc, text, sents = rng.choice(items)
        sentence = rng.choice(sents)
        out.append(("verbatim", sentence, text))
        words = sentence.split()
        out.append(("trimmed", " ".join(w for i, w in enumerate(words) if i % 3 != 2), text))
        same = [it for it in items if it[0] == doc and it[1] != text]
        if same:
            out.append(("same_page", rng.choice(rng.choice(same)[2]), text))
        other = rng.choice([it for it in items if it[0] != doc])
        out.append(("other_page", rng.choice(other[2]), text))
        wrong = _misstate(sentence, " ".join(other[2]), df, rng)
        if wrong:
            out.append(("misstated", wrong, text))
    return out


def accepted(rows, threshold: float, min_lexical: float, weight: float) -> dict[str, float]:
    by_kind: dict[str, list[bool]] = {k: [] for k in KINDS}
    for kind, lexical, dense, numbers in rows:
        ok = numbers and lexical >= min_lexical and (
            weight * lexical + (1 - weight) * dense >= threshold)
        by_kind[kind].append(ok)
    return {k: sum(v) / len(v) for k, v in by_kind.items() if v}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="?")
    parser.add_argument("--per-kind", type=int, default=150)
    parser.add_argument("--grid", action="store_true")
    args = parser.parse_args(argv)
    found = find_corpora(corpora_root(args.corpora))
    if not found:
        print("no corpora found", file=sys.stderr)
        return 2
    embedder = make_local_embedder(Settings())
    rows = []
    for corpus in found:
        items = passages(corpus)
        if len(items) < 10:
            continue
        triples = cases(items, args.per_kind)
        scored, _ = claims.score([s for _, s, _ in triples], [[p] for _, _, p in triples],
                                 embedder)
        corpus_rows = [(k, *sc) for (k, _, _), sc in zip(triples, scored, strict=True)]
        rows += corpus_rows
        rates = accepted(corpus_rows, claims.THRESHOLD, claims.MIN_LEXICAL,
                         claims.LEXICAL_WEIGHT)
        print(f"{corpus.name}: " + "  ".join(f"{k} {v:.1%}" for k, v in rates.items()))
    rates = accepted(rows, claims.THRESHOLD, claims.MIN_LEXICAL, claims.LEXICAL_WEIGHT)
    print("all:      " + "  ".join(f"{k} {v:.1%}" for k, v in rates.items())
          + f"  (n={len(rows)})")
    if args.grid:
        print("weight threshold min_lex | accepted per kind")
        for weight in (0.3, 0.5, 0.7):
            for threshold in (0.45, 0.5, 0.55, 0.6, 0.65):
                for min_lex in (0.3, 0.4, 0.5, 0.6):
                    r = accepted(rows, threshold, min_lex, weight)
                    print(f"{weight:.1f} {threshold:.2f} {min_lex:.1f} | "
                          + "  ".join(f"{k} {v:.0%}" for k, v in r.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
