"""Names in a question (products, tools, acronyms, identifiers) and whether a text mentions them.

A reader who asks about "Isaac Lab", "Foxglove Studio" or `ros2_control` in a book that never
mentions them should hear so by name instead of getting the nearest passage on a related
topic. A name is a capitalised word that does not open the sentence, an all-caps acronym, or a
token with digits, underscores or inner capitals; adjacent name words form one name.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_](?:[\w.+#/-]*[\w+#])?", re.UNICODE)
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|[\"'(“]\s*)$")
_IDENTIFIER = re.compile(r"(?=.*[A-Za-z])(?:.*\d|.*_|.*[a-z][A-Z]|[A-Z]{2,})")
_COMMON = frozenset(
    """i i'm i've i'd a an the how what why when where which who whom whose can could should
    would will do does did is are was were be my me we our you your it its if in on at for to
    of and or but not no yes please hi hello hey ok okay thanks thank""".split()
)
_NORMAL = re.compile(r"[^0-9a-z]+")


# A quantity written with its unit ("12V", "3.3V", "100mA", "2GB"): a number, not a name; the
# book may write it "12 V" (functions.answers.question_kind holds the number rules).
_QUANTITY = re.compile(r"^\d+(?:[.,]\d+)?(?:[A-Za-zΩµ°%]{1,4}|[x×]\d+(?:[.,]\d+)?)$")


def _is_name(token: str, at_start: bool) -> bool:
    if token.lower() in _COMMON or len(token) < 2 or _QUANTITY.match(token):
        return False
    if _IDENTIFIER.match(token):
        return True
    return token[0].isupper() and not at_start


def names(question: str) -> list[str]:
    """The names a question uses, in order, each as written ("Isaac Lab", "RT-2")."""
    out: list[str] = []
    run: list[str] = []
    last_end = -1
    for match in _TOKEN.finditer(question):
        token = match.group().rstrip(".")
        head, _, tail = token.rpartition("-")
        if head and tail.isalpha() and tail.islower():
            token = head  # "Jetson-powered" names Jetson
        at_start = bool(_SENTENCE_START.search(question[: match.start()]))
        gap = question[last_end : match.start()] if last_end >= 0 else ""
        adjacent = run and gap.strip() in ("", "-")
        if _is_name(token, at_start):
            if not adjacent:
                _close(run, out)
            run.append(token)
        elif adjacent and token.isdigit():
            run.append(token)  # "ROS 2", "Gen 2"
        else:
            _close(run, out)
        last_end = match.end()
    _close(run, out)
    return out


def _close(run: list[str], out: list[str]) -> None:
    if run:
        name = " ".join(run)
        if name not in out:
            out.append(name)
        run.clear()


_CAMEL = re.compile(r"\b[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+\b")
_HUMP = re.compile(r"[A-Z]?[a-z0-9]+")


def _humps(word: str) -> str:
    """A CamelCase identifier's words: "WebSocketSharp" → "Web Socket Sharp"."""
    return " ".join(_HUMP.findall(word))


def normal(text: str) -> str:
    """Lowercase words of letters and digits between single spaces (with a space at each end),
    so that "ROS-2" reads as " ros 2 "; a CamelCase identifier also reads as its words
    ("WebSocketSharp" mentions "WebSocket")."""
    text = _CAMEL.sub(lambda m: f"{m.group()} {_humps(m.group())}", text)
    return " " + " ".join(_NORMAL.sub(" ", text.lower()).split()) + " "


def mentions(text_normal: str, name: str) -> bool:
    """Whether a text (already passed through normal()) mentions the name, as whole words;
    "ROS 2" also matches "ros2"."""
    words = " ".join(_NORMAL.sub(" ", name.lower()).split()).split()
    if not words:
        return False
    humps = " ".join(_NORMAL.sub(" ", _humps(name).lower()).split()) if _CAMEL.fullmatch(
        name) else ""
    for key in filter(None, (" ".join(words), "".join(words), humps)):
        # whole words, plural allowed: "HTN" is in a text about "HTNs"
        if re.search(rf" {re.escape(key)}(?:e?s)? ", text_normal):
            return True
    return False


def _absent(text_normal: str, name: str) -> bool:
    """A name is absent when the text never uses it; a name of several words also needs one
    word the text never uses, or to be two capitalised words ("Isaac Lab", "Foxglove
    Studio"): "ROS 2 Python" is two names the text may use apart."""
    if mentions(text_normal, name) or _variant_mentioned(text_normal, name):
        return False
    words = name.split()
    if len(words) == 1:
        return True
    if any(len(w) >= 3 and not w.isdigit() and not mentions(text_normal, w) for w in words):
        return True
    return len(words) == 2 and all(w[:1].isupper() and w[1:].islower() for w in words)


_VARIANT = re.compile(r"^(?P<family>.*[A-Za-z][-\s]?)(?P<model>[A-Za-z]{1,3}\d{1,4}[A-Za-z]?)$")


def _variant_mentioned(text_normal: str, name: str) -> bool:
    """A model of a family the text names, with the model named too: "Cortex-M4" in a text
    that says "Cortex-M3 or M4" ("Cortex-M" and "M4" both as whole words)."""
    match = _VARIANT.match(name)
    if match is None:
        return False
    model = match.group("model")
    letters = re.match(r"[A-Za-z]*", model).group()
    family = " ".join(_NORMAL.sub(" ", (match.group("family") + letters).lower()).split())
    # the family, alone or with any model number ("Cortex-M core", "Cortex-M3")
    return bool(re.search(rf" {re.escape(family)}(?: |\d)", text_normal)) and mentions(
        text_normal, model)


def absent_in(name: str, texts: list[str]) -> bool:
    """Whether none of the texts mention the name."""
    return _absent(normal(" ".join(texts)), name)


def missing(question: str, texts: list[str]) -> list[str]:
    """The question's names that none of the texts mention."""
    haystack = normal(" ".join(texts))
    return [n for n in names(question) if _absent(haystack, n)]


def _within(a: str, b: str, limit: int) -> bool:
    """Damerau-Levenshtein distance of a and b is at most limit (adjacent swaps count 1)."""
    if abs(len(a) - len(b)) > limit:
        return False
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return False
        prev2, prev = prev, cur
    return prev[-1] <= limit


def misspelling_of(word: str, vocabulary: set[str]) -> str | None:
    """A vocabulary word the word is a likely misspelling of ("lifecyle" → "lifecycle"):
    one edit for words of 4-7 letters, two from 8; None when none is that close."""
    if len(word) < 4 or not word.isalpha():
        return None
    limit = 1 if len(word) < 8 else 2
    for known in sorted(vocabulary):
        # Typing drops, swaps or mistypes letters; it rarely adds them: "colcon" is not
        # "colon".
        if (known[:1] == word[:1] and len(word) <= len(known)
                and _within(word, known, limit)):
            return known
    if len(word) < 6:
        return None
    # a slip inside an inflected word: "debounse" is "debouncing" (both stem to "debounc…")
    from functions.search.sparse import stem

    root = stem(word)
    stems = {known: stem(known) for known in vocabulary}
    if root in stems.values():
        return None  # "humanoids" is an inflection of the text's "humanoid", not a slip
    for known, other in sorted(stems.items()):
        if (other[:1] == root[:1] and len(root) <= len(other) and len(other) >= 5
                and _within(root, other, 1)):
            return known
    return None


_LETTERS = "abcdefghijklmnopqrstuvwxyz"
# Comparatives and adverbs, beside the stemmer's own inflections (functions.search.sparse.SUFFIXES):
# an inflection of an everyday word ("heaviest", "quickly") is everyday too, but the index must
# not strip them (with them, 102 of the sample book's 113 chunks' sparse vectors would change).
DEGREE_SUFFIXES = (("iest", "y"), ("ier", "y"), ("est", ""), ("er", ""), ("ly", ""))


def _edits1(word: str) -> set[str]:
    """The words one typing slip away: a letter dropped, two swapped or one mistyped (extra
    letters are rare slips, and would make "colcon" a misspelling of "colon")."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    return ({a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
            | {a + c + b[1:] for a, b in splits if b for c in _LETTERS}
            | {a + c + b for a, b in splits for c in _LETTERS})


def is_common(word: str, common: frozenset[str]) -> bool:
    """An everyday English word, an inflection of one ("heaviest"), or one letter off one
    ("insted")."""
    from functions.search.sparse import SUFFIXES

    word = word.lower()
    if word in common:
        return True
    for suffix, keep in SUFFIXES + DEGREE_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if base + keep in common or base in common or base + "e" in common or (
                    len(base) > 3 and base[-1] == base[-2] and base[:-1] in common):
                return True
    return any(edit in common for edit in _edits1(word))


_WORD = re.compile(r"(?<![\w.])[^\W\d_]+(?![\w.]*\d)", re.UNICODE)  # not inside g5.2xlarge


def rare_unknown_words(question: str, vocabulary: set[str], common: frozenset[str]) -> list[str]:
    """Words of the question, as written, that are not everyday English and that the
    vocabulary (stemmed terms) lacks, misspellings of its words excepted: "colcon",
    "fiducial" in a book that never uses them."""
    from functions.search.sparse import STOPWORDS, stem

    out = []
    for word in dict.fromkeys(m.group() for m in _WORD.finditer(question)):
        low = word.lower()
        if len(low) < 4 or low in STOPWORDS or not low.isascii():
            continue
        term = stem(low)
        if term in vocabulary or misspelling_of(term, vocabulary) is not None:
            continue
        prefix = term[: max(6, len(term) - 2)]
        if len(term) >= 6 and any(v.startswith(prefix) for v in vocabulary):
            continue  # "quantizing" in a book that says "quantization"
        if _compound(low, vocabulary):
            continue  # "faraway" in a book that says "far away"
        if not is_common(low, common):
            out.append(word)
    return out


def _compound(word: str, vocabulary: set[str]) -> bool:
    """Whether a word is two words of the vocabulary (stemmed terms) run together."""
    from functions.search.sparse import stem

    return any(stem(word[:k]) in vocabulary and stem(word[k:]) in vocabulary
               for k in range(3, len(word) - 2))


def respelled(question: str, texts: list[str], common) -> dict[str, str]:
    """The question's misspelt words, each with the word of the texts it is a slip of
    ("humaniod" → "humanoid", "lifecyle" → "lifecycle"): only words that the texts never use
    and that are not everyday English. `common` returns the everyday words (loaded only when
    a word is unknown to the texts)."""
    from functions.search.sparse import STOPWORDS

    vocabulary = {w for text in texts for w in re.findall(r"[a-z]+", text.lower())}
    unknown = [w for w in dict.fromkeys(m.group() for m in _WORD.finditer(question))
               if len(w) >= 4 and w.isascii() and w.isalpha() and w.lower() not in vocabulary
               and w.lower() not in STOPWORDS]
    if not unknown:
        return {}
    everyday = common()
    out = {}
    for word in unknown:
        if word.lower() in everyday:
            continue
        fix = misspelling_of(word.lower(), vocabulary)
        if fix is not None:
            out[word] = fix
    return out


def apply_spelling(text: str, fixes: dict[str, str]) -> str:
    """text with each misspelt word (whole words, as written) replaced."""
    for wrong, right in fixes.items():
        text = re.sub(rf"\b{re.escape(wrong)}\b", right, text)
    return text
