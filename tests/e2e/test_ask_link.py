"""Links that ask, in real Chromium on the built sample with the real API: `?ask-textbook=…` opens
the chat on that page and asks once, as a new turn of the tab's conversation, then leaves the
URL (reload and Back do not ask again); an answer's Share copies such a link, which asks the same
question; a book's own link that asks, followed inside the app, asks too; an empty or too long
question, or a crawler, asks nothing."""

from __future__ import annotations

import json
from urllib.parse import quote_plus

import pytest

from functions.api.validation import MAX_QUESTION_CHARS
from tests.e2e.site_build import BASE_URL
from tests.e2e.test_widget import (
    INPUT,
    PANEL,
    TOGGLE,
    _doc,
    _goto,
    _heading_ids,
    _posts,
    _stub_answer,
)

pytestmark = [pytest.mark.npm, pytest.mark.browser, pytest.mark.slow]

QUESTION = "What is derivative kick and how do I avoid it?"
STORAGE_KEY = "textbook-chat:conversation:v1"
EARLIER = [  # a conversation the tab already holds
    {"id": "m-earlier-q", "role": "user", "content": "What is a setpoint?"},
    {"id": "m-earlier-a", "role": "assistant", "content": "The value the loop aims for.", "citations": []},
]
ANSWER = f"{PANEL} [data-message]:has(a[data-citation])"


def _asks(api_proxy) -> list[dict]:
    return _posts(api_proxy, "/chat") + _posts(api_proxy, "/sources")


def _pid(built_site) -> tuple[str, str]:
    pid = _doc(built_site, "pid-control")
    return pid["permalink"], _heading_ids(built_site, pid["permalink"])[0]


def test_a_link_asks_once_and_share_copies_one_that_asks_again(built_site, site_server, browser, real_api,
                                                                api_proxy, artifacts):
    path, anchor = _pid(built_site)
    origin = site_server.split(BASE_URL)[0]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        _goto(page, site_server + "docs/")
        page.evaluate("([k, v]) => sessionStorage.setItem(k, v)", [STORAGE_KEY, json.dumps(EARLIER)])
        api_proxy.requests.clear()
        link = f"{origin}{path}?tab=py&ask-textbook={quote_plus(QUESTION)}#{anchor}"
        _goto(page, link)
        page.locator(ANSWER).first.wait_for(timeout=60_000)
        # The URL loses only the parameter; the page, the site's own parameter and the #hash stay.
        assert page.evaluate("location.href") == f"{origin}{path}?tab=py#{anchor}"
        (sent,) = _posts(api_proxy, "/chat")
        assert sent["question"] == QUESTION
        assert sent["page_url"] == path
        assert sent["history"] == [{"role": m["role"], "content": m["content"]} for m in EARLIER]
        # A new turn after the tab's conversation, answered with its citations.
        turns = page.locator(f"{PANEL} [data-message]")
        assert turns.count() == 4
        assert turns.nth(0).inner_text() == EARLIER[0]["content"]
        assert turns.nth(2).inner_text() == QUESTION
        assert turns.nth(3).locator("a[data-citation]").count() >= 1
        assert turns.nth(3).locator("a[data-source]").count() >= 1
        page.screenshot(path=str(artifacts / "ask-link-answer.png"))

        share = turns.nth(3).get_by_role("button", name="Share")
        assert share.get_attribute("title") == "Copy a link that opens this page and asks this question"
        share.click()
        turns.nth(3).get_by_role("button", name="Link copied").wait_for()
        assert turns.nth(3).get_by_role("status").filter(has_text="Link copied").count() == 1
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied == f"{origin}{path}?ask-textbook={quote_plus(QUESTION)}"
        page.screenshot(path=str(artifacts / "ask-link-share-copied.png"))

        asked = len(_asks(api_proxy))
        page.reload()
        page.wait_for_selector("html[data-has-hydrated='true']", state="attached")
        page.goto(site_server + "docs/")  # away and Back to the (cleaned) entry
        page.go_back()
        page.wait_for_selector("html[data-has-hydrated='true']", state="attached")
        page.wait_for_timeout(500)
        assert page.evaluate("location.href") == f"{origin}{path}?tab=py#{anchor}"
        assert len(_asks(api_proxy)) == asked, "a reload or Back asked the question again"

        # The copied link, opened in a new tab (its own session), asks the same question.
        other = context.new_page()
        api_proxy.requests.clear()
        _goto(other, copied)
        other.locator(ANSWER).first.wait_for(timeout=60_000)
        (again,) = _posts(api_proxy, "/chat")
        assert (again["question"], again["page_url"], again["history"]) == (QUESTION, path, [])
        assert other.evaluate("location.href") == f"{origin}{path}"
        assert other.locator(f"{PANEL} [data-message]").count() == 2
    finally:
        context.close()


def test_an_empty_or_too_long_question_and_a_crawler_ask_nothing(built_site, site_server, browser, api_proxy):
    path, _ = _pid(built_site)
    origin = site_server.split(BASE_URL)[0]
    context = browser.new_context()
    page = context.new_page()
    bot = browser.new_context(user_agent="Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)")
    crawler = bot.new_page()
    try:
        api_proxy.requests.clear()
        for value in ("", "+++", quote_plus("x" * (MAX_QUESTION_CHARS + 1))):
            _goto(page, f"{origin}{path}?ask-textbook={value}&tab=py")
            page.wait_for_function("() => !location.search.includes('ask-textbook')")
            page.wait_for_timeout(300)
            assert page.evaluate("location.search") == "?tab=py"
            assert page.locator(PANEL).count() == 0
        link = f"{origin}{path}?ask-textbook={quote_plus(QUESTION)}"
        _goto(crawler, link)
        crawler.wait_for_timeout(500)
        assert crawler.evaluate("location.href") == link  # a crawler's URL is left alone too
        assert crawler.locator(PANEL).count() == 0
        assert _asks(api_proxy) == []
    finally:
        context.close()
        bot.close()


def test_a_link_in_the_book_asks_when_followed_inside_the_app(built_site, site_server, page, stub, api_proxy):
    path, _ = _pid(built_site)
    kick = "What is derivative kick?"
    stub(_stub_answer(path, answer=f"See [the question on kick]({path}?ask-textbook={quote_plus(kick)}) [1]."))
    _goto(page, site_server + "docs/")
    page.evaluate("window.__spa = 'still here'")
    page.click(TOGGLE)
    page.fill(INPUT, "How do I tune a PID loop?")
    page.keyboard.press("Enter")
    page.locator(f"{PANEL} [class*='markdown'] a[href*='ask-textbook']").click()
    page.locator(f"{PANEL} [data-message]").nth(3).wait_for()
    assert page.evaluate("window.__spa") == "still here", "the link reloaded the page"
    assert page.evaluate("location.pathname + location.search") == path
    first, second = _posts(api_proxy, "/chat")
    assert (second["question"], second["page_url"]) == (kick, path)
    assert [m["content"] for m in second["history"]][0] == first["question"]


def test_a_link_followed_while_an_answer_is_pending_asks_when_it_ends(built_site, site_server, page, stub,
                                                                       api_proxy):
    """Was dropped silently: the link's question is the next turn once the pending answer ends."""
    path, _ = _pid(built_site)
    kick = "What is derivative kick?"
    stub(_stub_answer(path, answer=f"See [the question on kick]({path}?ask-textbook={quote_plus(kick)}) [1]."),
         delay=6.0)
    _goto(page, site_server + "docs/")
    page.click(TOGGLE)
    page.fill(INPUT, "How do I tune a PID loop?")
    page.keyboard.press("Enter")
    link = page.locator(f"{PANEL} [class*='markdown'] a[href*='ask-textbook']")
    link.wait_for(timeout=60_000)
    page.fill(INPUT, "And the integral term?")
    page.keyboard.press("Enter")
    stop = page.locator(f"{PANEL} button[data-stop]")
    stop.wait_for()  # the second answer is on its way
    link.click()
    assert stop.is_visible(), "the second answer ended before the link was followed: not this case"
    page.locator(f"{PANEL} [data-message]").nth(5).wait_for(timeout=60_000)
    first, second, third = _posts(api_proxy, "/chat")
    assert [first["question"], second["question"], third["question"]] == [
        "How do I tune a PID loop?", "And the integral term?", kick]
    assert third["page_url"] == path
    assert page.locator(f"{PANEL} [data-message]").nth(4).inner_text() == kick
