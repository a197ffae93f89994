"""Search and chat in one box: the widget's box lists the book's sections as the reader types
(POST /sources with "search": true, no model), a listed section lands on its heading, Enter
asks; the site's own search box hands its words to the chat with the chat's shortcut. Real
Chromium on the built sample, the real API (`textbook-chat serve`, offline answers)."""

from __future__ import annotations

import json

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


def test_a_refused_search_says_so_and_searches_again_after_the_wait(site_server, page, real_api,
                                                                     api_proxy, artifacts):
    """Past the search allowance the list was empty with no word why: the box says searching
    pauses, for the API's Retry-After, then searches again by itself; words searched already
    are listed again without a request. The first search gets the API's 429 (a local serve
    limits no one), the rest reach the real API."""
    refused = []

    def first_refused(route):
        if '"search":true' not in (route.request.post_data or "") or refused:
            route.continue_()
            return
        refused.append(json.loads(route.request.post_data)["question"])
        route.fulfill(status=429, content_type="application/json", body=json.dumps({
            "error": {"code": "rate_limited", "message": "You are searching faster than this "
                      "site allows; please wait 5 seconds and try again."}, "request_id": "r1"}),
            headers={"Retry-After": "5", "Access-Control-Allow-Origin": "*",
                     "Access-Control-Expose-Headers": "Retry-After"})

    page.route("**/sources", first_refused)
    _goto(page, site_server + "docs/")
    page.click(TOGGLE)
    api_proxy.requests.clear()
    page.locator(INPUT).press_sequentially("loop jitter", delay=40)
    paused = f"{PANEL} [data-search-paused]"
    # (read where it shows, at once: it goes when the wait is over)
    note = page.wait_for_function("""(sel) => { const el = document.querySelector(sel);
      return el && {text: el.textContent, role: el.getAttribute('role')}; }""", arg=paused,
                                  timeout=60_000).json_value()
    assert "pauses for about 5 seconds" in note["text"] and note["role"] == "status", note
    page.screenshot(path=str(artifacts / "search-paused.png"))
    # Nothing more is typed: the box searches again once the wait is over.
    page.locator(RESULTS).first.wait_for(timeout=60_000)
    assert page.locator(paused).count() == 0
    assert len(refused) == 1
    searched = [b["question"] for b in _posts(api_proxy, "/sources", searches=True)]
    assert searched and searched[-1] == "loop jitter", searched
    # A letter taken back and typed again: listed from what the box remembers.
    page.locator(INPUT).press("Backspace")
    page.locator(INPUT).press("r")
    page.wait_for_timeout(600)  # twice the box's pause before a search: none is sent
    assert page.input_value(INPUT) == "loop jitter"
    assert page.locator(RESULTS).count() > 0
    again = [b["question"] for b in _posts(api_proxy, "/sources", searches=True)]
    assert again.count("loop jitter") == searched.count("loop jitter"), again
