"""What a question asks for, read from its words: a quantity, or nothing at all."""

from __future__ import annotations

import re

from functions.sparse import terms

# "How many hours…", "How much does … cost", "What word error rate…", "What is the maximum
# speed…": the answer is a number; a passage without one does not answer it.
_QUANTITY = re.compile(
    r"\bhow (?:many|much|long|far|fast|tall|heavy|big|large|often|old|wide|high)\b"
    r"|\bwhat (?:is |are |was )?(?:the |a )?(?:\w+ ){0,2}(?:number|size|cost|price|percentage|"
    r"rate|weight|height|length|value|latency|delay|frequency|accuracy|resolution|voltage|"
    r"capacity|duration|speed|bandwidth|range|budget)s?\b(?! (?:of|in) (?:a|an|the)? ?\w+ "
    r"(?:model|policy|profile|setting|strategy|approach|control))",
    re.I,
)


_HOW_MANY = re.compile(r"\bhow (?:many|much)\s+((?:[\w-]+\s+){0,2}[\w-]+)", re.I)
_ASKED = re.compile(r"\b(?:number|size|cost|price|percentage|rate|weight|height|length|value|"
                    r"latency|delay|frequency|accuracy|resolution|voltage|capacity|duration|"
                    r"speed|bandwidth|range|budget)s?\b", re.I)
# Units a book may abbreviate: a quoted "50 ms" answers "how many milliseconds".
_ABBREVIATIONS = {
    "millisecond": {"ms", "msec"}, "second": {"s", "sec"}, "minute": {"min"},
    "hour": {"h", "hr", "hrs"}, "meter": {"m"}, "metre": {"m"}, "kilogram": {"kg"},
    "gram": {"g"}, "percent": {"%"}, "percentage": {"%"}, "degree": {"°", "deg", "dof"},
    "hertz": {"hz"}, "frame": {"fps"}, "watt": {"w"}, "volt": {"v"}, "byte": {"b", "gb", "mb"},
    "dollar": {"$", "usd"}, "cost": {"$", "usd", "€"}, "price": {"$", "usd", "€"},
    "frequency": {"hz", "khz"}, "latency": {"ms"}, "delay": {"ms"},
}
_NUMBER_LINE = re.compile(
    r"[^\n.;]*(?:\d|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|dozen|"
    r"hundred|thousand)\b)[^\n;]*", re.I)


def asks_quantity(question: str) -> bool:
    return bool(_QUANTITY.search(question))


def quantity_words(question: str) -> set[str] | None:
    """None unless the question asks for a number; else the words (stemmed, with common
    abbreviations) of which one must stand beside a number in the answer ("how many hours"
    → hour, h, hr…); an empty set when any number will do ("how long", "how tall")."""
    if not asks_quantity(question):
        return None
    match = _HOW_MANY.search(question)
    if match is None:  # "what value/rate/size…": any number in the quote will do
        return set()
    words = set(terms(match.group(1)))
    for word in list(words):
        words |= _ABBREVIATIONS.get(word, set())
    return words


def states_quantity(text: str, words: set[str]) -> bool:
    """Whether a line or sentence of text holds a number next to one of the words (a
    misspelt word of the question still counts: "degres" finds "degrees")."""
    from functions.names import misspelling_of

    for piece in _NUMBER_LINE.findall(text):
        if not words:
            return True
        low = piece.lower()
        found = set(terms(low))
        if words & found or any(w in low for w in words if not w.isalpha()):
            return True
        if any(misspelling_of(w, found) for w in words if w.isalpha()):
            return True
        if any(re.search(rf"\d\s*{re.escape(w)}\b", low) for w in words if len(w) <= 4):
            return True
    return False


def empty_question(question: str) -> bool:
    """No content word at all: only stop words, punctuation or symbols."""
    return not terms(question)
