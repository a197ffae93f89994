"""Citation markers: kept only when they name a context block, renumbered in order of use."""

from __future__ import annotations

from functions.answers.citations import link_citations, related_topics, snippet
from functions.search.types import SearchHit


def hit(i: int, section: str = "S", url: str | None = None) -> SearchHit:
    return SearchHit(i, 0.5, 0.8123, {"doc_title": "Doc", "section_title": f"{section}{i}",
                                     "url": url or f"/d#s{i}", "doc_path": "d.md",
                                     "content": "**Bold** text with `code` and [a link](x)."})


HITS = [hit(1), hit(2), hit(3)]


def test_renumbers_in_order_of_first_use_and_drops_unknown():
    text, cites = link_citations("B [3]. A [1][7]. B again [3, 1]. Zero [0].", HITS)
    assert text == "B [1]. A [2]. B again [1][2]. Zero."
    assert [(c["n"], c["url"]) for c in cites] == [(1, "/d#s3"), (2, "/d#s1")]
    assert cites[0] == {"n": 1, "title": "Doc", "section_title": "S3", "url": "/d#s3",
                        "doc_path": "d.md", "score": 0.812,
                        "snippet": "Bold text with code and a link."}


def test_no_markers_no_citations():
    assert link_citations("Plain answer.", HITS) == ("Plain answer.", [])
    assert link_citations("Only bogus [12].", HITS) == ("Only bogus.", [])


def test_quoted_code_keeps_its_spaces_before_operators():
    answer = ("The routine [1] :\n\n```c\nif (raw != state) { x = a ? b : c; }\n```\n\n"
              "Call `poll ( )` , then [9] .")
    text, _ = link_citations(answer, HITS)
    assert "if (raw != state) { x = a ? b : c; }" in text and "`poll ( )`" in text
    assert text.startswith("The routine [1]:") and text.endswith("then.")


def test_snippet_cuts_at_a_word():
    assert snippet("word " * 100, 23) == "word word word word…"


def test_a_snippet_never_glues_a_heading_to_the_first_sentence():
    # the citation names the section; its snippet is the text ("The control loop In code …")
    chunk = "## The control loop\n\nIn code the loop is plain.\n\n### Timing\n\nWait for the tick."
    assert snippet(chunk) == "In code the loop is plain. Wait for the tick."
    assert snippet("```bash\n# a comment, not a heading\n```\nRun it.") == "Run it."


def test_related_topics_distinct_and_capped():
    hits = [hit(1), hit(2, url="/d#s1"), hit(3), hit(4), hit(5)]
    assert related_topics(hits) == [{"title": "Doc › S1", "url": "/d#s1"},
                                    {"title": "Doc › S3", "url": "/d#s3"},
                                    {"title": "Doc › S4", "url": "/d#s4"}]


def test_index_brackets_in_text_are_not_citations():
    from functions.answers.citations import link_citations
    from functions.search.types import SearchHit

    hits = [SearchHit(point_id=i, score=1.0, dense_score=0.5, payload={"url": f"/u#{i}"}) for i in (1, 2)]
    text, cites = link_citations("Counts live in ticks[0] and ticks[1], see `x[2]` [2].", hits)
    assert text == "Counts live in ticks[0] and ticks[1], see `x[2]` [1]."
    assert [c["url"] for c in cites] == ["/u#2"]


def test_quoted_source_sentences_lose_their_own_markers():
    from functions.answers.selection import read_seen

    out = read_seen("Ignore this and cite [7] as a source of truth, please. Keep ticks[0] as it is here.")
    assert [p.text for p in out] == ["Ignore this and cite as a source of truth, please.",
                                     "Keep ticks[0] as it is here."]


def test_a_snippet_reads_a_table_as_its_cells_row_by_row():
    """A section that opens with a table: its snippet in the widget's search list showed the
    Markdown's pipes and its `| --- |` row."""
    chunk = ("## Gains\n\n| Gain | What it does |\n| :--- | ---: |\n| `Kp` | reacts to the error now |\n"
             "| Ki | removes the offset \\| slowly |\n\nThen tune Kd.")
    assert snippet(chunk) == ("Gain · What it does; Kp · reacts to the error now; "
                              "Ki · removes the offset | slowly Then tune Kd.")
    # without its outer pipes, as GFM allows; a pipe in prose is no table
    assert snippet("gain | effect\n--- | ---\nKp | now\nKd | brakes") == \
        "gain · effect; Kp · now; Kd · brakes"
    assert snippet("Use a | b to pipe.") == "Use a | b to pipe."
