"""github-slugger 1.5.0 behaviour, pinned as tables (expected values produced by the real package)."""

import pytest

from indexer.slugger import Slugger, slugify

# github-slugger's own test inputs (basic usage, repetition, characters, non-ascii, gemoji) plus
# one line per Unicode general category; fed in this order to ONE slugger, so the duplicate
# counters carry over exactly as in the package's test suite.
SEQUENCE = [
    ('alpha', 'alpha'),
    ('alpha', 'alpha-1'),
    ('bravoCharlieDelta', 'bravocharliedelta'),
    ('__proto__', '__proto__'),
    ('__proto__', '__proto__-1'),
    ('hasOwnProperty', 'hasownproperty'),
    ('echo', 'echo'),
    ('echo', 'echo-1'),
    ('echo 1', 'echo-1-1'),
    ('echo-1', 'echo-1-2'),
    ('echo', 'echo-2'),
    ('foxtrot-1', 'foxtrot-1'),
    ('foxtrot', 'foxtrot'),
    ('foxtrot', 'foxtrot-2'),
    ('heading with a - dash', 'heading-with-a---dash'),
    ('heading with an _ underscore', 'heading-with-an-_-underscore'),
    ('heading with a period.txt', 'heading-with-a-periodtxt'),
    ('exchange.bind_headers(exchange, routing [, bindCallback])', 'exchangebind_headersexchange-routing--bindcallback'),
    (' ', '-'),
    (' a', '-a'),
    ('a ', 'a-'),
    (' a ', '-a-'),
    ('-a-', '-a--1'),
    ('apostrophe\u2019s should be trimmed', 'apostrophes-should-be-trimmed'),
    ('golf', 'golf'),
    ('golf', 'golf-1'),
    ('golf', 'golf-2'),
    ('I \u2665 unicode', 'i--unicode'),
    ('dash-dash', 'dash-dash'),
    ('en\u2013dash', 'endash'),
    ('em\u2013dash', 'emdash'),
    ('\U0001f604 unicode emoji', '-unicode-emoji'),
    ('\U0001f604-\U0001f604 unicode emoji', '--unicode-emoji'),
    ('\U0001f604_\U0001f604 unicode emoji', '_-unicode-emoji'),
    ('\U0001f604 - an emoji', '---an-emoji'),
    (':smile: - a gemoji', 'smile---a-gemoji'),
    ('\u041f\u0440\u0438\u0432\u0435\u0442', '\u043f\u0440\u0438\u0432\u0435\u0442'),
    ('\u041f\u0440\u043e\u0444\u0438\u043b\u0438 \u043f\u043e\u043b\u044c\u0437\u043e\u0432\u0430\u0442\u0435\u043b\u0435\u0439', '\u043f\u0440\u043e\u0444\u0438\u043b\u0438-\u043f\u043e\u043b\u044c\u0437\u043e\u0432\u0430\u0442\u0435\u043b\u0435\u0439'),
    ('\u041f\u0440\u0438\u0432\u0435\u0442 non-latin \u4f60\u597d', '\u043f\u0440\u0438\u0432\u0435\u0442-non-latin-\u4f60\u597d'),
    (':ok: No underscore', 'ok-no-underscore'),
    (':ok_hand: Single', 'ok_hand-single'),
    (':ok_hand::hatched_chick: Two in a row with no spaces', 'ok_handhatched_chick-two-in-a-row-with-no-spaces'),
    (':ok_hand: :hatched_chick: Two in a row', 'ok_hand-hatched_chick-two-in-a-row'),
    ('a) ] } \u0f3b \u2046 \u3009 \uff63b', 'a------b'),
    ('a$ \xa2 \xa3 \u20ac \u20bf \U0001ecb0b', 'a-----b'),
    ('a- \u058a \u2010 \u2013 \u2014 \u301c \uff0db', 'a-------b'),
    ('a0 \u0661 \u06f2 \u0966 \u09e6 \uff10 \U0001d7cfb', 'a0-\u0661-\u06f2-\u0966-\u09e6-\uff10-\U0001d7cfb'),
    ('a\u0488 \u20dd \ua672b', 'a\u0488-\u20dd-\ua672b'),
    ('a\xab \u2018 \u201c \u2039b', 'a---b'),
    ('a\xbb \u2019 \u201d \u203ab', 'a---b-1'),
    ('a\u2028b', 'ab'),
    ('a\xad\u200b\u2060\ufeffb', 'ab-1'),
    ('a\u16ee \u216b \u217b \u3007b', 'a\u16ee-\u217b-\u217b-\u3007b'),
    ('a+ < = > | ~ \xac \xb1 \xd7 \xf7 \u2211 \u221ab', 'a-----------b'),
    ('a\u02c6 \u02c7 \u02d8 \uff3e \uff40b', 'a\u02c6-\u02c7---b'),
    ('a\xa9 \xae \xb0 \u2665 \u2713 \U0001f680b', 'a-----b-1'),
    ('a\t\n\x0bb', 'ab-2'),
    ('a\xa0\u2002\u3000b', 'ab-3'),
    ('a\ue000\U000f0000b', 'ab-4'),
    ('\u01c4 \u01c5 \u01c6', '\u01c6-\u01c6-\u01c6'),
    ('\u0391\u03a3 \u03a3\u0391', '\u03b1\u03c2-\u03c3\u03b1'),
    ('\u0130', 'i\u0307'),
    ('\u0149 \xdf \ufb03', '\u0149-\xdf-\ufb03'),
]


def test_sequence_matches_github_slugger():
    slugger = Slugger()
    got = [slugger.slug(text) for text, _ in SEQUENCE]
    assert got == [expected for _, expected in SEQUENCE]


# Observed on a Docusaurus 3.10.2 build (DOCUSAURUS-RULES.md section 4.1).
DOCUSAURUS_SLUGS = [
    ("Mixed CASE Heading", "mixed-case-heading"),
    ("Multiple   inner   spaces", "multiple---inner---spaces"),
    ("C++ Basics", "c-basics"),
    ("F# & Q#", "f--q"),
    ("2.1 Sensors & Actuators", "21-sensors--actuators"),
    ("URDF/Xacro (.urdf.xacro) files", "urdfxacro-urdfxacro-files"),
    ("\u201cCurly\u201d \u2018quotes\u2019", "curly-quotes"),
    ("\U0001f916 Robots first", "-robots-first"),
    ("\U0001f469\u200d\U0001f4bb ZWJ emoji sequence", "-zwj-emoji-sequence"),
    ("Flag \U0001f1ef\U0001f1f5 emoji", "flag--emoji"),
    ("\u4e2d\u6587\u6807\u9898\uff1a\u673a\u5668\u4eba", "\u4e2d\u6587\u6807\u9898\u673a\u5668\u4eba"),
    ("Tab\tinside heading", "tabinside-heading"),
    ("Non\u00a0breaking\u00a0space (U+00A0)", "nonbreakingspace-u00a0"),
    ("Multi line\nsetext heading", "multi-linesetext-heading"),
    ("\u0130stanbul dotted I", "i\u0307stanbul-dotted-i"),
    ("Full-width \uff21\uff22\uff23\uff11\uff12\uff13", "full-width-\uff41\uff42\uff43\uff11\uff12\uff13"),
    ("Ligature \ufb01 and \u00df", "ligature-\ufb01-and-\u00df"),
    ("\U0001f680", ""),
    ("-", "-"),
]


@pytest.mark.parametrize(("text", "expected"), DOCUSAURUS_SLUGS)
def test_slugify_matches_docusaurus_build(text, expected):
    assert slugify(text) == expected


def test_duplicates_chain_and_share_one_counter():
    slugger = Slugger()
    texts = ["Setup", "Setup", "Setup", "Setup", "Setup 1", "Setup-1", "\U0001f680", "!!!", "???"]
    assert [slugger.slug(t) for t in texts] == [
        "setup", "setup-1", "setup-2", "setup-3", "setup-1-1", "setup-1-2", "", "-1", "-2",
    ]


def test_maintain_case_and_reset():
    slugger = Slugger()
    assert slugger.slug("Mixed_Case-ID", maintain_case=True) == "Mixed_Case-ID"
    assert slugger.slug("x") == "x"
    slugger.reset()
    assert slugger.slug("x") == "x"
