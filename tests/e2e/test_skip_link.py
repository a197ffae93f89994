"""A keyboard reader reaches the chat in real Chromium: after Docusaurus's "Skip to main
content", a second skip link (site-plugin/src/theme/SkipToContent) names the shortcut and opens
the chat; mouse readers never see it."""

from __future__ import annotations

import pytest

from tests.e2e.test_widget import INPUT, PANEL, TOGGLE, _goto

pytestmark = [pytest.mark.npm, pytest.mark.browser, pytest.mark.slow]

SKIP = "a[data-skip-to-chat]"
FOCUSED = "() => { const e = document.activeElement; return [e.tagName, e.textContent.trim()]; }"


def _tabs_until(page, selector, most):
    """Tab presses from the page's load until `selector` has focus (None past `most`)."""
    for presses in range(1, most + 1):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement?.matches(s) ?? false", selector):
            return presses
    return None


def test_the_chat_is_the_second_tab_stop_of_a_long_page(site_server, page, artifacts):
    _goto(page, site_server + "docs/pid-control")  # a long page: the chat button comes last
    width = page.viewport_size["width"]
    link = page.locator(SKIP)
    assert link.bounding_box()["x"] >= width  # off screen until focused
    assert _tabs_until(page, SKIP, 3) == 2  # after "Skip to main content"
    assert link.inner_text() == "Ask the textbook (\u2068Ctrl+/\u2069)"  # the keys isolated
    box = link.bounding_box()
    assert 0 <= box["x"] < width / 2 and 0 <= box["y"] < 100, box
    page.screenshot(path=str(artifacts / "skip-link-to-chat.png"))
    page.keyboard.press("Enter")
    page.locator(PANEL).wait_for()
    assert page.evaluate("() => document.activeElement.id") == INPUT.lstrip("#")
    assert page.locator(TOGGLE).get_attribute("aria-expanded") == "true"
    page.keyboard.press("Escape")  # closes the panel, focus back on the chat button
    page.locator(PANEL).wait_for(state="detached")
    assert page.evaluate("s => document.activeElement.matches(s)", TOGGLE)


def test_the_first_tab_still_skips_to_the_main_content(site_server, page):
    _goto(page, site_server + "docs/pid-control")
    page.keyboard.press("Tab")
    assert page.evaluate(FOCUSED) == ["A", "Skip to main content"]
    page.mouse.click(600, 400)  # a mouse reader's click moves focus away: the link hides again
    assert page.locator(SKIP).bounding_box()["x"] >= page.viewport_size["width"]
