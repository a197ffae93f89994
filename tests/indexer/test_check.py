"""`check`: pages, anchors and each chunk's text against built HTML."""

from __future__ import annotations

from pathlib import Path

from functions.search.contract import Chunk, content_hash
from indexer.check import check_chunks, text_runs

PAGE = """<html><head><script>var docs = "ten times";</script></head><body><article>
<h1>Safety</h1>
<h2 id="stop-test">Stop test<a class="hash-link" href="#stop-test" aria-label="Direct link">&#8203;</a></h2>
<p>The robot must pass the stop test at least <strong>ten</strong> times &amp; log it.</p>
<div class="admonition"><div class="title">warning</div><p>Never test the stop near people who do not know.</p></div>
<ol><li>Raise the robot so the wheels spin freely.</li></ol>
<pre><code><span class="token">ros2</span> bag record -o first_drive</code></pre>
</article></body></html>"""


def chunk(content: str, anchor: str = "stop-test", page: str = "/book/docs/safety") -> Chunk:
    return Chunk(
        chunk_id="0" * 16, doc_path="safety.md", doc_id="safety", doc_title="Safety", module="",
        heading_path=["Safety", "Stop test"], section_title="Stop test", section_number="1",
        heading_level=2, anchor=anchor, url=f"{page}#{anchor}", page_url=page, chunk_index=0,
        token_count=10, content=content, content_hash=content_hash(content), content_type="text",
    )


def build(tmp_path: Path) -> Path:
    page = tmp_path / "build" / "docs" / "safety" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(PAGE, encoding="utf-8")
    return tmp_path / "build"


SAME = ("## Stop test {#stop-test}\n\nThe robot must pass the stop test at least **ten** times &amp; "
        "log it.\n\nNever test the stop near people who do not know.\n\n1. Raise the robot so the "
        "wheels spin [freely](https://x.io/free).\n\n```bash title=\"x\"\nros2 bag record -o first_drive\n```")


def test_a_chunk_whose_text_is_on_its_page_passes(tmp_path):
    result = check_chunks([chunk(SAME)], build(tmp_path), "/book/")
    assert (result.misses, result.anchors, result.texts, result.pages) == ([], 1, 1, 1)


def test_another_editions_paragraph_under_the_same_heading_is_caught(tmp_path):
    edited = SAME.replace("**ten**", "**twenty**")
    result = check_chunks([chunk(edited)], build(tmp_path), "/book/")
    (miss,) = result.misses
    assert "twenty" in miss.reason and miss.url == "/book/docs/safety#stop-test"


def test_script_text_and_missing_pages_and_anchors_are_not_a_match(tmp_path):
    build_dir = build(tmp_path)
    result = check_chunks([chunk("var docs equals ten times in a script"),
                           chunk(SAME, anchor="gone"), chunk(SAME, page="/book/docs/other")],
                          build_dir, "/book/")
    text, anchor, page = (m.reason for m in result.misses)
    assert "var docs equals ten" in text
    assert "no element with id 'gone'" in anchor and page == "page not found in the build"


def test_markup_and_short_runs_are_not_checked():
    runs = text_runs("See [the guide](https://x.io/a-b-c-d-e) <Tabs> {props.value} now ok.\n\n:::tip\n")
    assert runs == []
    assert text_runs("Say hello to the robot, then start it.") == [
        ["say", "hello", "to", "the", "robot", "then", "start", "it"]]


def test_component_props_and_diagrams_are_not_checked_as_page_text():
    chunk_md = (
        "Intro sentence that a reader does see on the page.\n\n"
        "<Quiz\n  question=\"What are the three parts of the loop?\"\n  options={[\n"
        "    \"Sense, think and act\",\n  ]}\n/>\n\n"
        "```mermaid\ngraph LR\n  sensor --> controller --> motor\n```\n\n"
        "<Exercise\n  title=\"Build the loop yourself\"\n  solution={`\n"
        "    def control_loop(self, sensor_value):\n        return compute(sensor_value)\n`}\n"
    )
    assert text_runs(chunk_md) == [["intro", "sentence", "that", "a", "reader", "does", "see", "on", "the", "page"]]
    # A chunk that starts inside a prop's template literal.
    assert text_runs("        return compute(sensor_value)\n`}\n/>\n\nThe loop runs at one hundred hertz.") == [
        ["the", "loop", "runs", "at", "one", "hundred", "hertz"]]
