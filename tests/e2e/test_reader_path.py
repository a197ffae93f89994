"""The reader's path in real Chromium on the built sample: the shortcut, example questions, a
wider panel, Markdown answers (lists, tables, code with a copy button), sidebar names in the
sources, the selection popover over the open panel, and headings clear of the navbar with the
table of contents following."""

from __future__ import annotations

import pytest

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

MARKDOWN_ANSWER = (
    "Tune the gains in this order [1]:\n\n"
    "1. Raise **Kp** until the loop oscillates.\n"
    "2. Add *Kd* to damp it.\n\n"
    "| gain | effect |\n|:--|:--|\n| Kp | reacts to the error now |\n| Kd | brakes on fast change |\n\n"
    "```python\nu = kp * error + kd * (error - last) / dt\n```\n"
)


def test_shortcut_opens_and_closes_the_chat_and_the_tooltip_says_so(site_server, page):
    _goto(page, site_server + "docs/")
    assert "Ctrl+/" in page.get_attribute(TOGGLE, "title")
    page.keyboard.press("Control+k")  # Docusaurus search's shortcut is left alone
    assert page.locator(PANEL).count() == 0
    page.keyboard.press("Control+/")
    page.wait_for_selector(PANEL)
    assert page.evaluate("document.activeElement.id") == "textbook-chat-input"
    page.keyboard.press("Control+/")
    assert page.locator(PANEL).count() == 0


def test_example_questions_come_from_the_book_and_ask(site_server, page, stub, api_proxy, artifacts):
    stub(_stub_answer(BASE_URL + "docs/"))
    _goto(page, site_server + "docs/")
    page.click(TOGGLE)
    examples = page.locator(f"{PANEL} [role='group'] button")
    examples.first.wait_for()
    texts = examples.all_inner_texts()
    assert len(texts) == 3, texts
    # Page names as the sidebar shows them (sidebar_label included), not invented text.
    sidebar = page.eval_on_selector_all(".theme-doc-sidebar-menu a.menu__link",
                                        "els => els.map(e => e.textContent.trim())")
    assert all(any(name in text for name in sidebar) for text in texts), (texts, sidebar)
    page.screenshot(path=str(artifacts / "example-questions.png"))
    examples.nth(1).click()
    page.locator(f"{PANEL} a[data-citation='1']").first.wait_for()
    assert [p["question"] for p in _posts(api_proxy, "/chat")] == [texts[1]]


def test_panel_widens_and_remembers_it(site_server, page, artifacts):
    _goto(page, site_server + "docs/")
    page.click(TOGGLE)
    narrow = page.locator(PANEL).bounding_box()
    page.get_by_role("button", name="Widen the chat").click()
    wide = page.locator(PANEL).bounding_box()
    assert wide["width"] >= 1.6 * narrow["width"] and wide["height"] > narrow["height"]
    assert wide["x"] >= 0 and wide["x"] + wide["width"] <= 1280
    page.screenshot(path=str(artifacts / "wide-panel.png"))
    page.reload()
    page.wait_for_selector("html[data-has-hydrated='true']", state="attached")
    page.click(TOGGLE)
    assert page.locator(PANEL).get_attribute("data-wide") == "true"
    page.get_by_role("button", name="Make the chat narrower").click()
    assert page.locator(PANEL).bounding_box()["width"] == narrow["width"]


def test_markdown_answer_lists_table_code_and_copy(built_site, site_server, browser, stub, artifacts):
    pid = _doc(built_site, "pid-control")
    anchor = _heading_ids(built_site, pid["permalink"])[-1]
    stub(_stub_answer(f"{pid['permalink']}#{anchor}", answer=MARKDOWN_ANSWER))
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    try:
        _goto(page, site_server + "docs/")
        page.click(TOGGLE)
        page.fill(INPUT, "How do I tune a PID loop?")
        page.keyboard.press("Enter")
        md = page.locator(f"{PANEL} [class*='markdown']").first
        md.wait_for()
        assert md.locator("ol > li").all_inner_texts() == [
            "Raise Kp until the loop oscillates.", "Add Kd to damp it."]
        assert md.locator("ol strong").inner_text() == "Kp"
        assert md.locator("table th").all_inner_texts() == ["gain", "effect"]
        assert md.locator("table tbody tr").count() == 2
        assert md.locator("pre code").inner_text().startswith("u = kp * error")
        # Sources name the page as the sidebar does (sidebar_label), not by its title.
        source = page.locator(f"{PANEL} a[data-source='1']")
        assert "4. Feedback with PID" in source.inner_text()
        # Highlighted as the site highlights code: its Prism theme (the sample's is github, #f6f8fa).
        assert md.locator("pre code .token.operator").count() >= 4
        assert md.locator("pre").evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(246, 248, 250)"
        md.get_by_role("button", name="Copy", exact=True).click()
        md.get_by_role("button", name="Copied").wait_for()
        assert page.evaluate("navigator.clipboard.readText()").startswith("u = kp * error + kd")
        page.screenshot(path=str(artifacts / "markdown-answer.png"))
    finally:
        context.close()


def test_selection_ending_under_the_open_panel_gets_the_popover(built_site, site_server, page, artifacts):
    pid = _doc(built_site, "pid-control")
    _goto(page, site_server + pid["permalink"][len(BASE_URL):])
    page.click(TOGGLE)
    panel = page.locator(PANEL).bounding_box()
    # A paragraph that runs under the panel: drag from its start to a point over the panel.
    paragraph = page.locator("article .markdown > p").nth(1)
    paragraph.scroll_into_view_if_needed()
    box = paragraph.bounding_box()
    page.evaluate("getSelection().removeAllRanges()")
    start_y = box["y"] + 5
    page.mouse.move(box["x"] + 2, start_y)
    page.mouse.down()
    end = (panel["x"] + 40, min(box["y"] + box["height"] - 4, panel["y"] + panel["height"] - 10))
    assert end[1] > panel["y"], "the drag must end over the panel"
    page.mouse.move(*end, steps=8)
    page.mouse.up()
    ask = page.get_by_role("button", name="Ask about this")
    ask.wait_for()
    button = ask.bounding_box()
    top = page.evaluate("([x, y]) => document.elementFromPoint(x, y)?.closest('button')?.textContent",
                        [button["x"] + button["width"] / 2, button["y"] + button["height"] / 2])
    assert "Ask about this" in top, "the popover is hidden under the panel"
    page.screenshot(path=str(artifacts / "selection-under-panel.png"))
    ask.click()
    assert page.locator(f"{PANEL} blockquote").count() == 1


def test_citation_lands_clear_of_the_navbar_and_the_toc_follows(built_site, site_server, page, stub, artifacts):
    pid = _doc(built_site, "pid-control")
    ids = _heading_ids(built_site, pid["permalink"])
    anchor = ids[len(ids) // 2]  # far enough from the end for the page to scroll it to the top
    stub(_stub_answer(f"{pid['permalink']}#{anchor}"))
    for start in ("docs/", pid["permalink"][len(BASE_URL):]):  # another page, then the same one
        _goto(page, site_server + start)
        _open_and_ask(page)
        page.locator(f"{PANEL} a[data-citation='1']").first.click()
        page.wait_for_function("id => { const r = document.getElementById(id)?.getBoundingClientRect();"
                               " return r && r.top >= 0 && r.top < 200; }", arg=anchor)
        page.wait_for_timeout(400)
        gap = page.evaluate("""id => document.getElementById(id).getBoundingClientRect().top
                               - document.querySelector('.navbar').getBoundingClientRect().bottom""", anchor)
        assert 4 <= gap <= 40, gap
        active = page.get_attribute(".table-of-contents__link--active", "href")
        assert active and active.endswith("#" + anchor), active
    page.screenshot(path=str(artifacts / "citation-clear-of-navbar.png"))


def _open_and_ask(page, question: str = "What is derivative kick?"):
    if page.locator(PANEL).count() == 0:
        page.click(TOGGLE)
    page.fill(INPUT, question)
    page.keyboard.press("Enter")


def test_sources_show_first_while_the_model_writes(site_server, page, model_api, api_proxy, artifacts):
    import time

    _goto(page, site_server + "docs/")
    page.click(TOGGLE)
    page.fill(INPUT, "What is derivative kick and how do I avoid it?")
    started = time.monotonic()
    page.keyboard.press("Enter")
    found = page.locator(f"{PANEL} [data-sources-found] a").first
    found.wait_for(timeout=30_000)
    first_pixel = time.monotonic() - started
    # shown while the model writes: no answer yet (an order, not a timing)
    assert page.locator(f"{PANEL} [data-message]:not([data-passage]) a[data-citation]").count() == 0
    href = found.get_attribute("href")
    page.screenshot(path=str(artifacts / "sources-while-writing.png"))
    model_api.write()
    # the answer's citations (the book's passage, shown while the model writes, has its own)
    page.locator(f"{PANEL} [data-message]:not([data-passage]) a[data-citation]").first.wait_for(timeout=60_000)
    answered = time.monotonic() - started
    print(f"\n[e2e] model answer: first useful pixel (sources) {first_pixel:.2f} s, "
          f"answer {answered:.2f} s (written when the sources had shown)")
    assert page.locator(f"{PANEL} [data-sources-found]").count() == 0  # replaced by the answer
    assert "/docs/pid-control" in href, href  # the section the answer draws on
    assert len(_posts(api_proxy, "/sources")) == 1
