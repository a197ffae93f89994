"""What a question asks for, read once from its words (`read` → `Reading`): a quantity, a
comparison, a definition, several parts, or nothing in particular."""

from __future__ import annotations

import re
from dataclasses import dataclass

from functions.answers.text import sentences
from functions.answers.tuning import TUNING
from functions.search.sparse import stem, terms

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


# A comparison: "the speed versus accuracy trade-off", "how do topics and services differ",
# "is X better than Y", "how does X affect Y". One list for every rule that asks.
_COMPARISON = re.compile(r"\b(?:trade-?offs?|versus|vs\.?|compar\w*|differ\w*|relationship|"
                         r"affects?|better|instead|rather|whereas|each\s+one)\b", re.I)
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
_ABBREVIATED = {stem(unit): short for unit, short in _ABBREVIATIONS.items()}  # by stem
# The units that state an asked quantity ("what sample rate" is answered in Hz, not by any
# number near the words); nouns not listed (value, size, number, range) take any number.
_UNITS_OF = {
    "rate": {"rate", "hz", "khz", "mhz", "fps", "per", "%", "percent"},
    "frequency": {"frequency", "hz", "khz", "mhz", "ghz"},
    "latency": {"latency", "ms", "millisecond", "second", "µs", "microsecond"},
    "delay": {"delay", "ms", "millisecond", "second", "µs", "microsecond"},
    "cost": {"cost", "$", "usd", "€", "£", "dollar"},
    "price": {"price", "$", "usd", "€", "£", "dollar"},
    "weight": {"weight", "kg", "g", "lb", "gram", "kilogram"},
    "height": {"height", "m", "cm", "mm", "meter", "metre", "tall"},
    "length": {"length", "m", "cm", "mm", "meter", "metre", "long"},
    "voltage": {"voltage", "v", "volt"},
    "speed": {"speed", "m/s", "km/h", "mph", "rpm"},
    "percentage": {"%", "percent", "percentage"},
    "accuracy": {"%", "percent", "accuracy"},
    "duration": {"duration", "s", "ms", "second", "minute", "hour", "min", "day"},
    "bandwidth": {"bandwidth", "mbps", "gbps", "kbps", "mb/s"},
}
_TIME = {"s", "ms", "µs", "us", "ns", "sec", "second", "millisecond", "microsecond", "minute",
         "min", "hour", "h", "hr", "day", "week", "month", "year", "step", "cycle", "tick"}
_DISTANCE = {"m", "cm", "mm", "km", "µm", "meter", "metre", "kilometer", "centimeter",
             "millimeter", "ft", "feet", "foot", "inch", "mile"}
_RATE = {"per", "hz", "khz", "mhz", "ghz", "fps", "rpm", "bps", "kbps", "mbps", "gbps", "bit/s",
         "kbit/s", "mbit/s", "m/s", "km/h", "mph", "baud", "times"}
# "how long is the cable" is answered in metres or seconds, not by "8,000 frames per second";
# "how fast" by a speed or a rate. Words ending in "per" take any rate ("N per …").
_UNITS_OF_HOW = {
    "long": _TIME | _DISTANCE, "far": _DISTANCE, "tall": _DISTANCE, "high": _DISTANCE,
    "wide": _DISTANCE, "heavy": {"kg", "g", "gram", "kilogram", "lb", "pound", "ton", "tonne"},
    "fast": _RATE | _TIME, "often": _RATE | _TIME,
}
# … when the question opens with it: "how does it decide how far to move" asks no distance
_HOW_ADJECTIVE = re.compile(rf"^\W*(?:(?:and|so|but|then|roughly|about)\s+)?how "
                            rf"({'|'.join(_UNITS_OF_HOW)})\b", re.I)
_PER = re.compile(r"(?:\bper\s+|/\s*)[^\W\d]+")
_MEASURES = frozenset({
    "ml", "l", "liter", "litre", "g", "kg", "mg", "%", "percent", "$", "€", "£", "usd", "w",
    "kw", "v", "mah", "wh", "kwh", "kb", "mb", "gb", "tb", "hz", "mhz", "ghz", "tops", "flops",
    "tflops", "ms", "s", "min", "h", "hour", "minute", "second", "day",
})
_UNIT_WORDS = frozenset({
    "second", "millisecond", "microsecond", "minute", "hour", "day", "step", "cycle", "tick",
    "frame", "sample", "meter", "metre", "centimeter", "millimeter", "kilometer", "degree",
    "radian", "hertz", "hz", "khz", "mhz", "ghz", "ms", "s", "m", "cm", "mm", "kg", "gram",
    "kilogram", "watt", "w", "volt", "v", "amp", "percent", "%", "byte", "gb", "mb", "tb",
    "dollar", "euro", "fps", "rpm", "iteration", "epoch", "episode",
})
_IN_UNITS = re.compile(r"\bin ((?:[a-z%]+)(?:(?:,\s*|\s+or\s+|\s+and\s+)[a-z%]+)*)\s*[,?.]",
                       re.I)
_NUMBER = re.compile(r"\d|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                     r"(?:thir|four|fif|six|seven|eigh|nine)teen|twenty|thirty|forty|fifty|"
                     r"sixty|seventy|eighty|ninety|dozen|hundred|thousand|million)\b", re.I)
_ROW = re.compile(r"^\s*(?:\||[-*+]\s|\d{1,3}[.)]\s)")


def _statements(text: str) -> list[str]:
    """The sentences, table rows and list items of a text, a hard-wrapped paragraph read as
    one ("… a Cortex-M3 or\nM4 has 6" is one sentence)."""
    out: list[str] = []
    for part in re.split(r"\n\s*\n", text):
        lines = [ln for ln in part.split("\n") if ln.strip()]
        if any(_ROW.match(ln) for ln in lines):
            out += lines
        else:
            out += sentences(" ".join(" ".join(lines).split()))
    return out


def asks_quantity(question: str) -> bool:
    # "how many …", or a question that names the units of its answer ("How accurate, in
    # meters, …?", "… in milliseconds?")
    if _HOW_MANY.search(question) or _stated_units(question):
        return True
    # "what is the speed versus accuracy trade-off" asks for a comparison, not a number
    return bool(_QUANTITY.search(question)) and not compares(question)


def quantity_words(question: str) -> set[str] | None:
    """None unless the question asks for a number; else the words (stemmed, with common
    abbreviations) of which one must stand beside a number in the answer ("how many hours"
    → hour, h, hr…; "how long" → seconds, metres…); an empty set when any number will do
    ("what value", "how big")."""
    if not asks_quantity(question):
        return None
    stated = _stated_units(question)
    if stated:  # "how long …, in steps or seconds?": a number of one of those
        return stated
    match = _HOW_MANY.search(question)
    how = _HOW_ADJECTIVE.search(question)
    if match is None and how is not None:  # "how long …": a number of seconds or metres
        return _with_units(_UNITS_OF_HOW[how.group(1).lower()])
    if match is None:  # "what sample rate …": a number with a unit of rates; "what value …": any
        asked = _ASKED.search(question)
        noun = asked.group(0).lower().rstrip("s") if asked else ""
        return _with_units(_UNITS_OF.get(noun, set()))
    words = set(terms(match.group(1)))
    units = set()
    for word in words:
        units |= _ABBREVIATED.get(word, set())
    if match.group(0).lower().split()[1] == "much":
        # "how much water / storage / GPU memory": an amount is measured, in any unit (or the
        # one its noun is stated in: cost in $); the noun itself beside a number is no amount
        # ("gpu_memory_fraction = 0.5" does not say how much GPU memory)
        return units | _MEASURES
    return words | units


def _with_units(words: set[str]) -> set[str]:
    out = set()
    for word in words:
        out |= set(terms(word)) if word.isalpha() and len(word) > 4 else {word}
        out |= _ABBREVIATIONS.get(word, set())
    return out


def _stated_units(question: str) -> set[str]:
    """The units a question names for its answer ("in steps or seconds", "in milliseconds")."""
    match = _IN_UNITS.search(question)
    if match is None:
        return set()
    named = [w for w in re.split(r",\s*|\s+(?:or|and)\s+|\s+", match.group(1).lower()) if w]
    units = {w.rstrip("s") if w.rstrip("s") in _UNIT_WORDS else w for w in named}
    if not units or not units <= _UNIT_WORDS:
        return set()
    return _with_units(units)


def states_quantity(text: str, words: set[str]) -> bool:
    """Whether a sentence, table row or list item of the text holds a number and one of the
    words (a misspelt word of the question still counts: "degres" finds "degrees")."""
    from functions.answers.names import misspelling_of

    for piece in (p for p in _statements(text) if _NUMBER.search(p)):
        if not words:
            return True
        low = piece.lower() if "per" in words else _PER.sub(" ", piece.lower())
        found = set(terms(low))
        # a one- or two-letter unit ("s", "m", "kg") only right after a number: the "s" of
        # "robot's" is not seconds
        if {stem(w) for w in words if len(w) > 2} & found or any(w in low for w in words
                                                               if not w.isalpha()):
            return True
        if any(misspelling_of(w, found) for w in words if w.isalpha()):
            return True
        if any(re.search(rf"\d\s*{re.escape(w)}\b", low) for w in words if len(w) <= 4):
            return True
    return False




def compares(question: str) -> bool:
    """Whether the question asks for a comparison (the one detector: asks_quantity and
    compared_terms both read it)."""
    return bool(_COMPARISON.search(question))


def compared_terms(question: str) -> set[str]:
    """For a comparison question ("visual versus collision geometry", "how do topics and
    services differ"), its terms; empty for other questions."""
    return set(terms(question)) if compares(question) else set()


def names_other_side(compared: set[str], named: tuple[str, str], best: tuple[str, str]) -> bool:
    """Whether a section, by its (page title, heading), names a compared term that the best
    section's do not: "Visual Properties" beside "Collision Properties" is the other side of
    "visual versus collision geometry"; "URDF", in both page titles, is the shared context."""
    return bool(compared & (set(terms(" ".join(named))) - set(terms(" ".join(best)))))


# "What is loop jitter?", "What does an H-bridge do?": a question that names what it asks about.
_WHAT_IS = re.compile(
    r"^\s*(?:what(?:'s|\s+is|\s+are)|define|what\s+does|what\s+do)\s+(?:an?\s+|the\s+)?"
    r"(?P<subject>[^?]{2,60}?)(?:\s+(?:mean|stand\s+for))?\s*\??\s*$", re.I)
# … of which these ask what it is: "What is loop jitter?", "What does DVFS stand for?", not
# "What does a managed node do while it is configured …?"
_DEFINITION = re.compile(r"^\s*(?:what(?:'s|\s+is|\s+are)|define)\s|\s(?:mean|stand\s+for)\b",
                         re.I)


def defined_term(question: str) -> str | None:
    """The head word of what a definition question asks about ("What is loop jitter?" →
    "jitter"), as a stemmed term; None for other questions."""
    return named_subject(question) if _DEFINITION.search(question) else None


def named_subject(question: str) -> str | None:
    """The head word of what a "What is/does …" question names ("What does an H-bridge do?" →
    "bridg"), as a stemmed term: the question stands alone on it. None for other questions."""
    match = _WHAT_IS.match(question)
    if match is None:
        return None
    subject = re.split(r"\s+(?:mean|stand|in|of|for|on|with|when|during|and|or|vs\.?|versus)\b",
                       match.group("subject"), maxsplit=1, flags=re.I)[0]
    if re.match(r"(?:the\s+)?(?:differences?|relationship|trade-?offs?|best|right)\b", subject,
                re.I):
        return None  # "what is the difference between …" compares, it defines nothing
    words = terms(subject)
    return words[-1] if words else None


# A question about the parts a quote skips (objectives, quizzes, exercises, figures…).
_ASKS_FOR_SKIPPED = re.compile(
    r"\b(objectives?|quiz|exercises?|assessment|review questions|next|reading|references|"
    r"practice|learn|goals?|diagrams?|flowcharts?|figures?|captions?)\b", re.I)


def empty_question(question: str) -> bool:
    """No content word at all: only stop words, punctuation or symbols."""
    return not terms(question)


# A question that asks two things: "What is a URDF, and how much does the kit cost?" or
# "What is a URDF? How much does the kit cost?". A part needs words of its own to be looked
# up alone: two content words, or one that is no common English word ("What is a URDF?");
# "…, and why?" or "…, and by how much?" stays with the part before it.
_PART_BREAK = re.compile(
    r"(?:[,;]\s*|\s+)(?:and|but|also|plus)\s+(?=(?:what|how|why|which|when|where|who|whose|does|"
    r"do|did|is|are|was|were|can|could|should|would|will|has|have)\b)"
    r"|(?<=\?)\s+(?=\S)", re.I)
PART_TERMS = TUNING.part_terms.value


def parts(question: str) -> tuple[str, ...]:
    """The questions a multi-part question asks, each as the reader wrote it; () for a question
    that asks one thing (or whose parts are too short to look up alone)."""
    from functions.tokens import common_words

    def alone(piece: str) -> bool:
        words = set(terms(piece))
        return len(words) >= PART_TERMS or any(
            w.lower() not in common_words() for w in re.findall(r"[^\W\d_]{3,}", piece))

    pieces = [p.strip(" ,;") for p in _PART_BREAK.split(question) if p and p.strip(" ,;?")]
    out: list[str] = []
    for piece in pieces:
        if out and not alone(piece):
            out[-1] = f"{out[-1]}, and {piece}"
        else:
            out.append(piece)
    if len(out) > 1 and not alone(out[0]):
        out[:2] = [f"{out[0]}, and {out[1]}"]
    return tuple(out) if len(out) > 1 else ()



@dataclass(frozen=True)
class Reading:
    """A question read once: what each rule of the answer layer asks of it."""

    asked: str  # the reader's words (misspelt words respelt as the book spells them)
    searched: str  # what the quote is matched with: the query, beside a follow-up's context
    terms: frozenset[str]  # the content words of `searched`, stemmed
    quantity: frozenset[str] | None  # asks for a number: the words one must stand beside
    compared: frozenset[str]  # a comparison's terms (empty: no comparison)
    defines: str | None  # "What is X?": X's head term
    wants_skipped: bool  # asks for objectives, a quiz, figures…: quoted although skipped
    parts: tuple[str, ...]  # a multi-part question's parts (empty: one question)
    shown: str = ""  # a follow-up: what the conversation's earlier answers quoted (plain text,
    # one space between words), which the reader has already read

    @property
    def kind(self) -> str:
        """One word for `ask --explain`: multi-part, quantity, comparison, definition or open."""
        return ("multi-part" if self.parts else "quantity" if self.quantity is not None
                else "comparison" if self.compared else "definition" if self.defines
                else "open")


def read(asked: str, searched: str = "", shown: str = "") -> Reading:
    """`asked`: the question as the reader put it; `searched` (default: the same): what was
    searched for it, a follow-up's context included; `shown`: a follow-up's earlier answers."""
    searched = searched or asked
    quantity = quantity_words(asked)
    return Reading(asked, searched, frozenset(terms(searched)),
                   None if quantity is None else frozenset(quantity),
                   frozenset(compared_terms(searched)), defined_term(searched),
                   bool(_ASKS_FOR_SKIPPED.search(searched)), parts(asked), shown)
