"""Search and chat in one box: the widget's box lists the book's sections as the reader types
(POST /sources with "search": true, no model), a listed section lands on its heading, Enter
asks; the site's own search box hands its words to the chat with the chat's shortcut. Real
Chromium on the built sample, the real API (`textbook-chat serve`, offline answers)."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.test_widget import HEADING_IN_VIEW, INPUT, PANEL, TOGGLE, _goto, _posts

pytestmark = [pytest.mark.npm, pytest.mark.browser, pytest.mark.slow]

RESULTS = f"{PANEL} [data-search-results] a[data-search-result]"


def test_the_box_lists_sections_as_the_reader_types_and_enter_asks(site_server, page, real_api, api_proxy,
                                                                   artifacts):
    _goto(page, site_server + "docs/")
    page.click(TOGGLE)
    api_proxy.requests.clear()
    page.locator(INPUT).press_sequentially("loop jitter", delay=40)
    page.locator(RESULTS).first.wait_for(timeout=60_000)
    shown = page.locator(RESULTS).evaluate_all(
        "els => els.map(e => ({href: e.getAttribute('href'), text: e.innerText}))")
    # What the reader sees is what the API finds for the words typed, in its order.
    expected = httpx.post(f"{real_api}/sources", timeout=60, json={
        "question": "loop jitter", "page_url": page.evaluate("location.pathname"), "top_k": 5,
        "search": True}).json()["sections"]
    assert [s["href"] for s in shown] == [s["url"] for s in expected], (shown, expected)
    assert any(s["href"].endswith("#measuring-loop-jitter") for s in shown), shown
    assert all(" › " in s["text"] for s in shown), shown  # the page, then the section's headings
    searches = _posts(api_proxy, "/sources", searches=True)
    assert searches and searches[-1]["question"] == "loop jitter"
    assert not _posts(api_proxy, "/chat"), "typing asked a question"
    page.screenshot(path=str(artifacts / "search-as-you-type.png"))

    # Enter asks the words in the box: the list goes, an answer comes.
    page.keyboard.press("Enter")
    page.locator(f"{PANEL} [data-message][data-outcome]").first.wait_for(timeout=60_000)
    assert page.locator(f"{PANEL} [data-search-results]").count() == 0
    assert [b["question"] for b in _posts(api_proxy, "/chat")] == ["loop jitter"]


def test_a_listed_section_lands_on_its_heading(site_server, page, real_api):
    _goto(page, site_server + "docs/")
    page.click(TOGGLE)
    page.locator(INPUT).press_sequentially("derivative kick", delay=40)
    first = page.locator(RESULTS).first
    first.wait_for(timeout=60_000)
    href = first.get_attribute("href")
    page.evaluate("window.__spa = 'still here'")
    first.click()
    anchor = href.split("#", 1)[1]
    page.wait_for_function("h => location.pathname + location.hash === h", arg=href)
    page.wait_for_function(HEADING_IN_VIEW, arg=anchor)
    assert page.evaluate("window.__spa") == "still here", "the section reloaded the page"


def test_the_sites_search_box_hands_its_words_to_the_chat(site_server, page, real_api):
    _goto(page, site_server + "docs/")
    # A search box as DocSearch's modal has it (the sample site has no search plugin).
    page.evaluate("""() => {
      const modal = document.createElement('div');
      modal.className = 'DocSearch-Modal';
      const box = document.createElement('input');
      box.className = 'DocSearch-Input';
      box.type = 'search';
      modal.appendChild(box);
      document.body.appendChild(modal);
      window.__escapes = 0;
      box.addEventListener('keydown', e => { if (e.key === 'Escape') window.__escapes += 1; });
      box.focus();
    }""")
    page.keyboard.type("integral windup")
    page.keyboard.press("Control+/")
    page.locator(PANEL).wait_for()
    assert page.input_value(INPUT) == "integral windup"
    assert page.evaluate("document.activeElement.id") == INPUT.lstrip("#")
    assert page.evaluate("window.__escapes") == 1, "the search's modal was not told to close"
    page.locator(RESULTS).first.wait_for(timeout=60_000)
