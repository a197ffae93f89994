""""Ask about this" works on any visible text: a callout, a heading, a code block, a JSX block
(tabs). What is sent is the text the reader selected, as the page shows it. Real Chromium,
real mouse gestures on the built sample."""

from __future__ import annotations

import pytest

from tests.e2e.site_build import BASE_URL
from tests.e2e.test_widget import INPUT, PANEL, _doc, _goto, _posts
from tests.shared import eventually

pytestmark = [pytest.mark.npm, pytest.mark.browser, pytest.mark.slow]

ANSWER = {"answer": "The passage says so [1].", "confidence": 1.0, "low_confidence": False,
          "citations": [{"n": 1, "title": "Your selection", "section_title": "", "url": BASE_URL + "docs/",
                         "doc_path": "", "score": 1.0, "snippet": "…"}], "request_id": "sel"}


# The boxes of the first and the last visible character of the text inside an element.
TEXT_ENDS = """el => {
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT, {acceptNode: n =>
    n.textContent.trim() && n.parentElement.getClientRects().length ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP});
  const nodes = [];
  while (walker.nextNode()) nodes.push(walker.currentNode);
  const box = (node, at) => {
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + 1);
    const r = range.getBoundingClientRect();
    return {x: r.x, y: r.y, width: r.width, height: r.height};
  };
  const first = nodes[0], last = nodes[nodes.length - 1];
  const lastAt = last.textContent.trimEnd().length - 1;
  return [box(first, first.textContent.length - first.textContent.trimStart().length), box(last, lastAt)];
}"""


def _gesture(page, start_locator, end_locator=None):
    """Select by dragging, as a reader does: from the first character of `start_locator` to the
    last one of `end_locator` (or of `start_locator`)."""
    start_locator.scroll_into_view_if_needed()
    first, _ = start_locator.evaluate(TEXT_ENDS)
    _, last = (end_locator or start_locator).evaluate(TEXT_ENDS)
    page.evaluate("getSelection().removeAllRanges()")
    page.mouse.move(first["x"] + 1, first["y"] + first["height"] / 2)
    page.mouse.down()
    page.mouse.move(last["x"] + last["width"] - 1, last["y"] + last["height"] / 2, steps=10)
    page.mouse.up()


def _drag(page, start_locator, end_locator=None, tries: int = 3):
    """`_gesture`, made again while the browser's selection does not reach the end element's
    last characters (the page still laying out under the mouse, e.g. tabs or fonts arriving
    after load): what is tested is what the widget sends for the selection the page shows."""
    end = end_locator or start_locator
    for _ in range(tries):
        _gesture(page, start_locator, end_locator)
        tail = "".join(end.inner_text().split())[-12:]
        if tail in "".join(page.evaluate("getSelection().toString()").split()):
            return
        page.wait_for_timeout(500)


def _ask(page, api_proxy, question="Explain this."):
    """Click the popover, ask, and return (the text the page had selected, the POST it sent)."""
    shown = page.evaluate("getSelection().toString()")
    ask = page.get_by_role("button", name="Ask about this")
    ask.wait_for()
    api_proxy.requests.clear()
    answers = page.locator(f"{PANEL} a[data-citation='1']")
    before = answers.count()  # the answers to the selections asked before, on the same page
    ask.click()
    page.fill(INPUT, question)
    page.keyboard.press("Enter")
    answers.nth(before).wait_for()  # this one's answer (not the last one's, shown already)
    (sent,) = eventually(lambda: _posts(api_proxy, "/selection"), "the proxy recorded the POST")
    return " ".join(shown.replace("\u200b", "").split()), sent


def test_any_visible_text_can_be_asked_about(built_site, site_server, page, stub, api_proxy, artifacts):
    stub(ANSWER)
    sent = {}
    ros = _doc(built_site, "ros2-basics")
    _goto(page, site_server + ros["permalink"][len(BASE_URL):])

    code = page.locator("article .markdown pre code", has_text="import rclpy").first
    code.scroll_into_view_if_needed()
    code.locator(".token-line").first.click(click_count=3)  # the first line: "import rclpy"
    shown, sent["code"] = _ask(page, api_proxy)
    assert sent["code"]["selected_text"].startswith("import rclpy")

    shell = page.locator("article .markdown pre code", has_text="not a heading").first
    _drag(page, shell)
    shown, sent["shell"] = _ask(page, api_proxy)
    assert sent["shell"]["selected_text"].startswith("# not a heading")
    assert " ".join(sent["shell"]["selected_text"].split()) == shown

    callout = page.locator("article .markdown .theme-admonition-tip").last
    _drag(page, callout)
    page.screenshot(path=str(artifacts / "selection-callout.png"))
    shown, sent["callout"] = _ask(page, api_proxy)
    assert "Keep one node per piece of hardware" in sent["callout"]["selected_text"]
    assert " ".join(sent["callout"]["selected_text"].split()) == shown

    heading = page.locator("article .markdown h2[id]").nth(1)
    heading.scroll_into_view_if_needed()
    heading.click(click_count=3)
    shown, sent["heading"] = _ask(page, api_proxy)
    title = " ".join(heading.inner_text().replace("\u200b", "").split())
    assert sent["heading"]["selected_text"] == title
    assert sent["heading"]["anchor"] == heading.get_attribute("id")

    pid = _doc(built_site, "pid-control")
    _goto(page, site_server + pid["permalink"][len(BASE_URL):])
    tabs = page.locator("article .markdown .tabs-container").first
    _drag(page, tabs.locator("[role='tab']").first, tabs.locator("[role='tabpanel'] pre").first)
    shown, sent["jsx"] = _ask(page, api_proxy)
    assert sent["jsx"]["selected_text"].startswith("Python")
    assert "def " in sent["jsx"]["selected_text"] or "class " in sent["jsx"]["selected_text"]
    page.screenshot(path=str(artifacts / "selection-jsx-answer.png"))
    print("\n[e2e] selections sent:", {k: v["selected_text"][:40] for k, v in sent.items()})


def test_a_drag_past_the_end_of_a_code_block_under_the_open_panel(built_site, site_server, page, stub, api_proxy):
    stub(ANSWER)
    ros = _doc(built_site, "ros2-basics")
    _goto(page, site_server + ros["permalink"][len(BASE_URL):])
    page.click("button[aria-controls='textbook-chat-panel']")
    panel = page.locator(PANEL).bounding_box()
    shell = page.locator("article .markdown pre code", has_text="not a heading").first
    shell.scroll_into_view_if_needed()
    box = shell.locator("xpath=..").bounding_box()  # the <pre> (its <code> is wider: it scrolls)
    first, _ = shell.evaluate(TEXT_ENDS)
    end = (box["x"] + box["width"] - 8, box["y"] + box["height"] - 8)  # the block's blank corner
    assert end[0] > panel["x"] and panel["y"] < end[1] < panel["y"] + panel["height"], "the drag must end over the panel"
    page.evaluate("getSelection().removeAllRanges()")
    page.mouse.move(first["x"] + 1, first["y"] + first["height"] / 2)
    page.mouse.down()
    page.mouse.move(*end, steps=10)
    page.mouse.up()
    _, sent = _ask(page, api_proxy)
    assert sent["selected_text"].startswith("# not a heading")
    assert "Ask this textbook" not in sent["selected_text"]  # nothing of the panel
    assert sent["selected_text"].rstrip().endswith(shell.inner_text().rstrip()[-20:])


# --- with the real API: what the widget sends is read as the reader saw it (issue 37) ----------

def _ask_real(page, api_proxy, question):
    """Ask about the current selection and return (what was sent, the answer's text, the
    answer's code blocks as shown)."""
    ask = page.get_by_role("button", name="Ask about this")
    ask.wait_for()
    api_proxy.requests.clear()
    cited = f"{PANEL} a[data-citation='1']"
    before = page.locator(cited).count()
    ask.click()
    page.fill(INPUT, question)
    page.keyboard.press("Enter")
    page.wait_for_function("([sel, n]) => document.querySelectorAll(sel).length > n",
                           arg=[cited, before], timeout=60_000)
    # the answer is the log's last message, whole (with its citation) before it is read
    page.wait_for_function("""sel => { const all = document.querySelectorAll(sel);
        const last = all[all.length - 1];
        return last && last.querySelector("a[data-citation]") && !last.dataset.streaming; }""",
                           arg=f"{PANEL} [data-message]", timeout=60_000)
    posted = _posts(api_proxy, "/selection")
    assert len(posted) == 1, [(m, path) for m, path, _ in api_proxy.requests]
    sent = posted[0]
    answer = page.locator(f"{PANEL} [data-message]").last
    return sent, answer.inner_text(), answer.locator("pre").all_inner_texts()


def test_a_code_block_a_table_row_and_a_callout_are_answered_as_seen(built_site, site_server, page,
                                                                       real_api, api_proxy, artifacts):
    intro = _doc(built_site, "introduction")
    _goto(page, site_server + intro["permalink"][len(BASE_URL):])
    row = page.locator("article .markdown table tbody tr", has_text="Loop rate").first
    _drag(page, row.locator("td").first, row.locator("td").last)
    page.screenshot(path=str(artifacts / "selection-row.png"))
    sent, answer, _ = _ask_real(page, api_proxy, "How many times per second does the loop run?")
    assert "\t" in sent["selected_text"], sent  # Chromium sends a row's cells apart by tabs
    assert "Loop rate | How many times per second the loop runs | 50 to 1000 Hz" in answer, answer
    cell = row.locator("td").last
    _drag(page, cell)
    sent, answer, _ = _ask_real(page, api_proxy, "What does this mean?")
    assert sent["selected_text"] == "50 to 1000 Hz" and "50 to 1000 Hz" in answer, (sent, answer)
    page.screenshot(path=str(artifacts / "selection-cell-answer.png"))

    ros = _doc(built_site, "ros2-basics")
    _goto(page, site_server + ros["permalink"][len(BASE_URL):])
    code = page.locator("article .markdown pre code", has_text="class RangePublisher").first
    _drag(page, code)
    sent, answer, blocks = _ask_real(page, api_proxy, "What is the node called?")
    page.screenshot(path=str(artifacts / "selection-code-answer.png"))
    lines = sent["selected_text"].split("\n")
    assert lines[0] == "import rclpy" and len(lines) > 20  # the widget sends the lines as shown
    assert "doesn't answer" not in answer
    assert blocks and 'super().__init__("range_publisher")' in blocks[0]
    # every line, each on its own (the shown block's text has a break per line element)
    assert [ln for ln in blocks[0].split("\n") if ln.strip()] == [ln for ln in lines if ln.strip()]
    # … and the reader's question shows the selection with its lines too
    bubble = page.locator(f"{PANEL} blockquote").last.inner_text()
    assert bubble.split("\n")[:3] == lines[:3], bubble

    callout = page.locator("article .markdown .theme-admonition-tip").last
    _drag(page, callout)
    sent, answer, _ = _ask_real(page, api_proxy, "Summarise this")
    assert "Keep one node per piece of hardware" in sent["selected_text"]
    # the callout's label ("tip") is not glued to its first sentence
    assert answer.split("\n")[0].startswith("Keep one node per piece of hardware"), answer
