"""The widget on translated pages of the versioned sample (en, fr, ur), in real Chromium: a
citation of a section only the default language has is marked, in the reader's language; on
the right-to-left Urdu build, English answers and titles keep their own direction."""

from __future__ import annotations

import json
from urllib.parse import unquote

import httpx
import pytest

from tests.e2e import servers
from tests.e2e.site_build import BASE_URL, LOCALE, RTL_LOCALE
from tests.e2e.test_widget import INPUT, PANEL, TOGGLE, _goto

pytestmark = [pytest.mark.npm, pytest.mark.browser, pytest.mark.slow]

API = "http://127.0.0.1:9/unused"  # the versioned site's apiUrl: answered by the test in the browser
TRANSLATED = f"{BASE_URL}{LOCALE}/docs/next/"


@pytest.fixture(scope="module")
def versioned_server(versioned):
    with servers.running(servers.static_site(versioned.build_dir, BASE_URL)) as server:
        yield servers.origin(server)


def test_untranslated_citations_are_marked_in_the_readers_language(versioned_server, page, artifacts):
    answer = {
        "answer": "Testez l'arrêt d'urgence à chaque séance [1]. Notez les incidents [2].",
        "citations": [
            {"n": 1, "title": "Sécurité et essais", "section_title": "Arrêts d'urgence", "score": 0.9,
             "url": f"{TRANSLATED}safety-and-testing#emergency-stops", "doc_path": "08-safety-and-testing.md"},
            {"n": 2, "title": "Safety and Testing", "section_title": "Incident reports", "score": 0.7,
             "url": f"{BASE_URL}docs/next/safety-and-testing#incident-reports",
             "doc_path": "08-safety-and-testing.md", "untranslated": True},
        ],
        "confidence": 0.8, "low_confidence": False, "request_id": "fr-1",
    }
    cors = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "content-type, accept",
            "Access-Control-Allow-Methods": "POST, OPTIONS"}

    def reply(route):
        if route.request.method == "OPTIONS":
            route.fulfill(status=204, headers=cors)
        else:
            route.fulfill(status=200, headers=cors, content_type="application/json", body=json.dumps(answer))

    page.route(f"{API}/**", reply)
    _goto(page, versioned_server + TRANSLATED + "safety-and-testing")
    page.click(TOGGLE)
    page.fill(INPUT, "Comment tester l'arrêt d'urgence ?")
    page.keyboard.press("Enter")
    page.locator(f"{PANEL} a[data-source='2']").wait_for()
    marks = page.locator(f"{PANEL} [data-untranslated]")
    assert marks.count() == 1
    assert marks.inner_text() == "anglais"  # English, named in French
    item = page.locator(f"{PANEL} li", has=page.locator("a[data-source='2']"))
    assert item.locator("[data-untranslated]").count() == 1
    assert page.locator(f"{PANEL} li", has=page.locator("a[data-source='1']")).locator("[data-untranslated]").count() == 0
    assert item.locator("bdi").count() == 1  # the English title keeps its own direction
    page.screenshot(path=str(artifacts / "translated-untranslated-mark.png"))


URDU = f"{BASE_URL}{RTL_LOCALE}/docs/next/"
CORS = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "content-type, accept",
        "Access-Control-Allow-Methods": "POST, OPTIONS"}
# Where a character of `text` (the first occurrence, in el's text) is drawn: [left, right, top].
CHAR_BOX = """([el, text, at]) => {
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const i = node.data.indexOf(text);
    if (i < 0) continue;
    const range = document.createRange();
    range.setStart(node, i + at);
    range.setEnd(node, i + at + 1);
    const r = range.getBoundingClientRect();
    return [r.left, r.right, r.top];
  }
  return null;
}"""


def _to_real_api(page, api):
    """The Urdu build's widget asks the real API (`textbook-chat serve` over the versioned
    site's index); the browser sees it answer from the build's apiUrl."""
    def forward(route):
        if route.request.method == "OPTIONS":
            route.fulfill(status=204, headers=CORS)
            return
        path = route.request.url.split("/unused", 1)[1]
        answer = httpx.post(api + path, content=route.request.post_data_buffer,
                            headers={"content-type": "application/json"}, timeout=60)
        route.fulfill(status=answer.status_code, headers=CORS, content_type="application/json",
                      body=answer.content)

    page.route(f"{API}/**", forward)


def _char(page, element, text, at):
    box = page.evaluate(CHAR_BOX, [element.element_handle(), text, at])
    assert box, f"{text!r} is not in {element.inner_text()!r}"
    return box


def _ends_after(page, element, text):
    """The last character of `text` is drawn right of the one before it, on the same line:
    a sentence's closing punctuation where English puts it (an English run ending a
    right-to-left paragraph would have it at the paragraph's left end)."""
    before, last = _char(page, element, text, len(text) - 2), _char(page, element, text, len(text) - 1)
    assert abs(before[2] - last[2]) < 2 and last[0] >= before[1] - 1, (text, before, last)


def _direction(locator):
    return locator.evaluate("e => getComputedStyle(e).direction")


def test_an_urdu_page_answers_an_english_question_left_to_right_in_a_right_to_left_panel(
        versioned_server, api, page, artifacts):
    _to_real_api(page, api)
    _goto(page, versioned_server + URDU + "safety-and-testing")
    assert page.evaluate("[document.documentElement.dir, document.documentElement.lang]") == ["rtl", "ur"]
    # The keyboard's way in: the second Tab, shown where Docusaurus shows its own skip link
    # on an rtl page (top right), in Urdu.
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    skip = page.locator("a[data-skip-to-chat]")
    assert page.evaluate("() => document.activeElement.matches('a[data-skip-to-chat]')")
    assert skip.inner_text() == "کتاب سے پوچھیں (\u2068Ctrl+/\u2069)"  # localeLabels.ur.skipToChat
    control, slash = _char(page, skip, "Ctrl+/", 0), _char(page, skip, "Ctrl+/", 5)
    assert slash[0] > control[0], (control, slash)  # "Ctrl+/", not "/+Ctrl"
    assert skip.bounding_box()["x"] > page.viewport_size["width"] / 2
    page.screenshot(path=str(artifacts / "urdu-skip-link-to-chat.png"))
    toggle = page.locator(TOGGLE)
    assert toggle.inner_text() == "کتاب سے پوچھیں"  # localeLabels.ur.button
    toggle.click()
    page.fill(INPUT, "How do I test the emergency stop chain?")
    page.keyboard.press("Enter")
    source = page.locator(f"{PANEL} a[data-source='1']")
    source.wait_for()
    panel = page.locator(PANEL)
    assert _direction(panel) == "rtl"
    assert page.locator(f"{PANEL} #textbook-chat-title").inner_text() == "اس کتاب سے پوچھیں"
    # Docusaurus mirrors the site's CSS on an rtl build, the widget's too: bottom left.
    width = page.viewport_size["width"]
    assert panel.bounding_box()["x"] < width / 2 and toggle.bounding_box()["x"] < width / 2
    # The English answer reads left to right, its closing punctuation after its last word.
    answer = page.locator(f"{PANEL} [class*='markdown']").last
    lead = answer.locator("p", has_text="An emergency stop").first
    step = answer.locator("li", has_text="Command a slow, constant speed.").first
    assert (_direction(lead), _direction(step)) == ("ltr", "ltr")
    _ends_after(page, step, "constant speed.")
    steps = answer.locator("ol").first  # an English list: its numbers on the left, inside the answer
    assert _direction(steps) == "ltr"
    assert step.bounding_box()["x"] - answer.bounding_box()["x"] >= 16, (step.bounding_box(),
                                                                         answer.bounding_box())
    marker, colon = lead.locator("a[data-citation='1']").bounding_box(), _char(page, lead, ":", 0)
    assert colon[0] >= marker["x"] + marker["width"] - 1 and abs(colon[2] - marker["y"]) < 20, (
        marker, colon)  # "… session [1]:", the colon after the marker, not at the line's left
    # Its citation: the Urdu page's own heading, translated without an {#id} (item 2).
    heading = "ہنگامی-سٹاپ-کی-زنجیر-کی-جانچ"
    assert unquote(source.get_attribute("href")) == f"{URDU}safety-and-testing#{heading}"
    assert _direction(source.locator("bdi")) == "rtl"  # an Urdu title, isolated
    assert page.locator(f"{PANEL} [data-untranslated]").count() == 0
    page.screenshot(path=str(artifacts / "urdu-rtl-panel-english-answer.png"))
    page.locator(f"{PANEL} a[data-citation='1']").first.click()
    page.wait_for_function("id => decodeURIComponent(location.hash.slice(1)) === id", arg=heading)
    assert page.evaluate("id => document.getElementById(id) !== null", heading)


def test_an_urdu_page_marks_a_section_only_english_has_in_urdu(versioned_server, api, page,
                                                                 artifacts):
    _to_real_api(page, api)
    _goto(page, versioned_server + URDU + "safety-and-testing")
    page.click(TOGGLE)
    page.fill(INPUT, "What goes in an incident report?")
    page.keyboard.press("Enter")
    source = page.locator(f"{PANEL} a[data-source='1']")
    source.wait_for()
    assert source.get_attribute("href") == f"{BASE_URL}docs/next/safety-and-testing#incident-reports"
    item = page.locator(f"{PANEL} li", has=page.locator("a[data-source='1']"))
    mark = item.locator("[data-untranslated]")
    assert mark.inner_text() == "انگریزی"  # "English", named in Urdu
    assert mark.get_attribute("title") == "ابھی ترجمہ نہیں ہوا: یہ حصہ اصل زبان میں ہے۔"
    title = source.locator("bdi")
    assert title.inner_text().startswith("Incident reports")
    assert _direction(title) == "ltr" and _direction(item) == "rtl"
    # In the rtl list the English title comes first, at the right, read left to right, and
    # the Urdu mark after it, to its left.
    first, last = _char(page, title, "Incident", 0), _char(page, title, "Testing", 6)
    assert first[0] < last[0], (first, last)
    assert mark.bounding_box()["x"] + mark.bounding_box()["width"] <= title.bounding_box()["x"] + 1
    page.screenshot(path=str(artifacts / "urdu-untranslated-mark.png"))
