"""BM25 sparse vectors for Qdrant (IDF applied server-side by Modifier.IDF)."""

from __future__ import annotations

import re
import zlib
from collections import Counter

K1 = 1.2
B = 0.75
SHORT = 2  # content words: "Why?", "How exactly?" say nothing on their own
AVG_DOC_WORDS = 180.0  # fixed so a chunk's vector never depends on the rest of the corpus

_WORD = re.compile(r"[^\W_]+(?:[.+#][^\W_]+)*[+#]*", re.UNICODE)
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves""".split()
)


STEMMER_VERSION = 2  # 2: a final silent e is dropped (stored sparse vectors depend on it)
# The inflections the stemmer strips, each with what it puts back, tried in this order (stored
# sparse vectors depend on them). functions.answers.names tries the same ones, and a few more
# the index must not strip, to tell whether a word is an inflection of an everyday one.
SUFFIXES = (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def stem(word: str) -> str:
    """A light English suffix stripper: enough to match plurals and -ing/-ed forms; a final
    silent e goes too, so "wire", "wires", "wired" and "wiring" meet at "wir"."""
    base = _strip_suffix(word)
    if len(base) > 3 and base.endswith("e") and not base.endswith(("ee", "ie", "ye")) \
            and base.isascii() and base.isalpha():
        return base[:-1]
    return base


def _strip_suffix(word: str) -> str:
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    for suffix, keep in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            if suffix == "es" and not word.endswith(("ches", "shes", "xes", "zes", "sses")):
                return word[:-1]
            base = word[: -len(suffix)] + keep
            if (
                suffix in ("ing", "ed")
                and len(base) > 3
                and base[-1] == base[-2]
                and base[-1] not in "lsz"
            ):
                base = base[:-1]  # running -> run, stopped -> stop
            return base
    return word


def terms(text: str) -> list[str]:
    """Lowercased, stemmed content words of text."""
    out = []
    for match in _WORD.finditer(text.lower()):
        word = match.group()
        if word in STOPWORDS:
            continue
        out.append(stem(word))
    return out


def term_id(term: str) -> int:
    return zlib.crc32(term.encode())


def _vector(weights: dict[int, float]) -> tuple[list[int], list[float]]:
    indices = sorted(weights)
    return indices, [weights[i] for i in indices]


def encode_document(text: str) -> tuple[list[int], list[float]]:
    """BM25 term weights of a document: saturated tf with length normalisation."""
    words = terms(text)
    length = len(words) or 1
    norm = K1 * (1 - B + B * length / AVG_DOC_WORDS)
    weights: dict[int, float] = {}
    for term, tf in Counter(words).items():
        idx = term_id(term)
        weights[idx] = weights.get(idx, 0.0) + tf * (K1 + 1) / (tf + norm)
    return _vector(weights)


def encode_query(text: str) -> tuple[list[int], list[float]]:
    """Query terms with weight 1 each; Qdrant multiplies by IDF."""
    return _vector({term_id(t): 1.0 for t in set(terms(text))})


def coverage(question_terms: set[str], text: str) -> float:
    """Share of the question's content terms that occur in text (1.0 for a question without any)."""
    if not question_terms:
        return 1.0
    return len(question_terms & set(terms(text))) / len(question_terms)

