"""The offline answerer picks matching prose sentences and cites them."""

from __future__ import annotations

from functions.extractive import answer, sentences

DOC1 = """Intro line that is long enough to count as prose.

```python
jitter = measure()  # code is never quoted
```

| Term | Meaning |
|---|---|
| jitter | table rows are skipped |

Jitter is the variation of the loop period. Measure jitter with a monotonic clock.

Two numbers describe jitter in a loop:"""
DOC2 = "Encoders count ticks on a wheel. Jitter also affects encoders sampled in the loop."


def test_sentences_skip_code_and_tables():
    out = sentences(DOC1)
    assert "Jitter is the variation of the loop period." in out
    assert not any("measure()" in s or "table rows" in s or s.endswith(":") for s in out)


def test_answer_cites_each_sentence_with_its_source():
    text = answer("How do I measure jitter?", [DOC1, DOC2])
    assert "Measure jitter with a monotonic clock [1]." in text
    assert text.count("[") <= 3
    assert "[2]" not in text or "Jitter also affects encoders" in text


def test_answer_falls_back_to_the_first_sentence():
    assert answer("zebra?", [DOC2]) == "Encoders count ticks on a wheel [1]."
    assert answer("zebra?", []) == ""


def test_far_weaker_hits_are_not_quoted_but_keep_their_number():
    from functions.answering import _extractive_sources
    from functions.search_types import SearchHit

    def hit(pid: int, dense: float, text: str) -> SearchHit:
        return SearchHit(point_id=pid, score=0.5, dense_score=dense, payload={"content": text})

    hits = [hit(1, 0.6, "Strong text."), hit(2, 0.35, "Close text."), hit(3, 0.05, "Weak text.")]
    assert _extractive_sources(hits) == ["Strong text.", "Close text.", ""]
