"""Answers and waiting in real Chromium on the built sample: a new answer opens at its start,
tables scroll sideways at 375 px without breaking words, the answer copies as Markdown with its
citations as links, book links look like the book's links (external ones marked, in a new tab)
and never like citations, the offline Markdown's separators and inline HTML, the question shown
at once and a stop button, feedback with a comment, the shortcut in the panel, the phone sheet
under the navbar's menu, mixed-direction text."""

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

LONG_ANSWER = "\n\n".join(
    f"Paragraph {i}: the proportional term reacts to the error now, the integral term to its "
    f"history and the derivative term to its trend [1]." for i in range(1, 16))
WIDE_TABLE = (
    "Compare them [1]:\n\n"
    "| controller | characteristically | recommendation |\n|---|---|---|\n"
    "| proportional-integral-derivative | overshooting | straightforwardly |\n"
    "| proportional-integral | underdamped | conventionally |\n")
BOOK_LINKS = (
    "The book links to [the ROS 2 documentation](https://docs.ros.org/en/rolling/) and to "
    "[its own chapter](/textbook-chat-sample/docs/ros2-basics#quality-of-service); a page's "
    "footnote link [1](https://example.org/footnote) is a link, the citation is this one [1].")
OFFLINE = (
    "--- [1]\n\nFrom “Tuning” [1]:\n\nPress <kbd>Ctrl</kbd>+<kbd>C</kbd> to stop, read "
    "<code>Kp</code> first.<br/>Then the rest.\n\n--- [1]\n\n"
    "gain | effect\n--- | ---\nKp | reacts now\nKd | brakes [1]\n\n---")


def _ask(page, question="How do I tune a PID loop?"):
    if page.locator(PANEL).count() == 0:
        page.click(TOGGLE)
    answers = page.locator(f"{PANEL} [data-message]:has(a[data-citation='1'])")
    before = answers.count()
    page.fill(INPUT, question)
    page.keyboard.press("Enter")
    answers.nth(before).wait_for()


def _pid_target(built_site) -> str:
    pid = _doc(built_site, "pid-control")
    return f"{pid['permalink']}#{_heading_ids(built_site, pid['permalink'])[-1]}"


def test_a_new_answer_opens_at_its_start(built_site, site_server, page, stub):
    stub(_stub_answer(_pid_target(built_site), answer=LONG_ANSWER))
    _goto(page, site_server + "docs/")
    _ask(page, "What are the three terms?")
    _ask(page, "And again, in full?")  # the second answer is below the first one
    place = page.evaluate("""() => {
      const log = document.querySelector('#textbook-chat-panel [role=log]');
      const answers = log.querySelectorAll('[data-message]');
      const answer = answers[answers.length - 1];
      const box = log.getBoundingClientRect(), a = answer.getBoundingClientRect();
      return {answerTop: a.top - box.top, logHeight: box.height, scrollTop: log.scrollTop,
              end: log.scrollHeight - log.clientHeight};
    }""")
    assert place["end"] > 500, place  # a long answer: its end is far below its start
    assert 0 <= place["answerTop"] < place["logHeight"] / 2, place
    assert place["scrollTop"] < place["end"] - 300, "the panel opened at the answer's end"


def test_a_wide_table_scrolls_at_375_px_without_breaking_words(built_site, site_server, phone, stub, artifacts):
    stub(_stub_answer(_pid_target(built_site), answer=WIDE_TABLE))
    _goto(phone, site_server + "docs/")
    _ask(phone)
    wrap = phone.locator(f"{PANEL} [class*='tableWrap']")
    wrap.wait_for()
    sizes = wrap.evaluate("el => ({scroll: el.scrollWidth, client: el.clientWidth})")
    assert sizes["scroll"] > sizes["client"], sizes  # it scrolls sideways
    broken = wrap.evaluate("""el => {
      const out = [];
      for (const cell of el.querySelectorAll('td, th')) {
        const text = cell.firstChild && cell.firstChild.nodeType === 3 ? cell.firstChild : null;
        if (!text) continue;
        const re = /[^\\s-]+/g;  // a line may break after a hyphen, as in the book
        let m;
        while ((m = re.exec(text.textContent))) {
          const range = document.createRange();
          range.setStart(text, m.index);
          range.setEnd(text, m.index + m[0].length);
          const lines = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
          if (lines.size > 1) out.push(m[0]);
        }
      }
      return out;
    }""")
    assert broken == [], broken
    assert phone.evaluate("document.documentElement.scrollWidth") <= 375
    phone.screenshot(path=str(artifacts / "phone-wide-table.png"))


def test_copy_the_answer_as_markdown_with_its_citations(built_site, site_server, browser, stub):
    target = _pid_target(built_site)
    stub(_stub_answer(target))
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    try:
        _goto(page, site_server + "docs/")
        _ask(page)
        page.locator(PANEL).get_by_role("button", name="Copy answer").click()
        page.locator(PANEL).get_by_role("button", name="Copied").wait_for()
        copied = page.evaluate("navigator.clipboard.readText()")
        origin = site_server.split(BASE_URL)[0]
        assert copied.startswith(f"A PID controller sums three terms [1]({origin}{target}).")
        assert f"Sources:\n\n1. [Tuning — 4. Feedback with PID]({origin}{target})" in copied
    finally:
        context.close()


def test_book_links_look_like_the_book_and_only_citations_like_citations(site_server, page, stub, artifacts):
    answer = _stub_answer(BASE_URL + "docs/", answer=BOOK_LINKS)
    stub(answer)
    _goto(page, site_server + "docs/")
    _ask(page)
    md = page.locator(f"{PANEL} [class*='markdown']").last
    external = md.locator("a[href='https://docs.ros.org/en/rolling/']")
    assert external.get_attribute("target") == "_blank"
    assert "noopener" in external.get_attribute("rel")
    assert "(opens in a new tab)" in external.inner_text()
    assert external.locator("svg").count() == 1
    footnote = md.locator("a[href='https://example.org/footnote']")
    assert footnote.get_attribute("data-citation") is None
    assert "citeMarker" not in (footnote.get_attribute("class") or "")
    assert md.locator("a[data-citation]").count() == 1  # only the API's citation
    page.screenshot(path=str(artifacts / "answer-book-links.png"))
    page.evaluate("window.__spa = 'still here'")
    md.locator("a[href*='ros2-basics#quality-of-service']").click()
    page.wait_for_function("() => location.hash === '#quality-of-service'")
    assert page.evaluate("window.__spa") == "still here", "a link to the book reloaded the page"


def test_offline_markdown_separators_inline_html_and_tables(site_server, page, stub):
    stub(_stub_answer(BASE_URL + "docs/", answer=OFFLINE))
    _goto(page, site_server + "docs/")
    _ask(page)
    md = page.locator(f"{PANEL} [class*='markdown']").last
    text = md.inner_text()
    assert "---" not in text and "<kbd>" not in text and "<br" not in text and "<code>" not in text
    assert md.locator("kbd").all_inner_texts() == ["Ctrl", "C"]
    assert md.locator("p code").inner_text() == "Kp"
    assert md.locator("br").count() == 1
    assert md.locator("hr").count() == 1  # between the two blocks, not at either end
    assert md.locator("table th").all_inner_texts() == ["gain", "effect"]
    assert md.locator("table tbody tr").count() == 2


def test_the_question_shows_at_once_and_stop_cancels(built_site, site_server, page, stub, api_proxy, artifacts):
    stub(_stub_answer(_pid_target(built_site)), delay=8)
    _goto(page, site_server + "docs/")
    page.click(TOGGLE)
    assert "Ctrl+/" in page.locator(PANEL).inner_text(), "the shortcut is shown in the panel"
    page.fill(INPUT, "What is integral windup?")
    page.keyboard.press("Enter")
    page.locator(f"{PANEL} [data-message]", has_text="What is integral windup?").wait_for()
    # at once: while the answer (8 s away) is still to come, the question alone is shown
    assert page.locator(f"{PANEL} [data-message]").count() == 1
    assert page.input_value(INPUT) == ""
    stop = page.locator(PANEL).get_by_role("button", name="Stop")
    stop.wait_for()
    assert page.locator(f"{PANEL} [data-message]").count() == 1  # Stop comes before the answer
    page.screenshot(path=str(artifacts / "waiting-with-stop.png"))
    stop.click()
    page.locator(f"{PANEL} button[type='submit']").wait_for()
    assert page.input_value(INPUT) == "What is integral windup?", "the stopped question goes back in the box"
    assert page.locator(f"{PANEL} [data-message]").count() == 0
    assert page.locator(f"{PANEL} [role='alert']").count() == 0, "stopping is not an error"
    page.wait_for_timeout(8500)  # the stub's answer would have arrived by now
    assert page.locator(f"{PANEL} [data-message]").count() == 0


def test_feedback_takes_an_optional_comment(built_site, site_server, page, stub, api_proxy):
    stub(_stub_answer(_pid_target(built_site)))
    _goto(page, site_server + "docs/")
    _ask(page)
    page.get_by_role("button", name="This answer did not help").click()
    page.get_by_text("Thanks for the feedback!").wait_for()
    box = page.get_by_label("What was missing or wrong? (optional)")
    box.fill("It skipped the integral term.")
    page.locator(PANEL).get_by_role("button", name="Send").click()
    box.wait_for(state="detached")
    assert _posts(api_proxy, "/feedback") == [
        {"request_id": "req-stub-1", "rating": "down"},
        {"request_id": "req-stub-1", "rating": "down", "comment": "It skipped the integral term."},
    ]


def test_the_phone_sheet_leaves_the_navbar_menu_usable(built_site, site_server, phone, stub, artifacts):
    stub(_stub_answer(_pid_target(built_site)))
    _goto(phone, site_server + "docs/")
    _ask(phone)
    phone.locator(".navbar__toggle").click()
    menu = phone.locator(".navbar-sidebar")
    menu.wait_for()
    link = phone.locator(".navbar-sidebar .menu__link").first
    link.wait_for()
    box = link.bounding_box()
    top = phone.evaluate("([x, y]) => document.elementFromPoint(x, y)?.closest('.navbar-sidebar') !== null",
                         [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2])
    phone.screenshot(path=str(artifacts / "phone-menu-over-chat.png"))
    assert top, "the chat sheet covers the site's menu"


def test_the_conversation_survives_navigation_and_can_be_cleared(built_site, site_server, page, stub):
    target = _pid_target(built_site)
    stub(_stub_answer(target))
    _goto(page, site_server + "docs/")
    _ask(page, "What is derivative kick?")
    page.locator(f"{PANEL} a[data-source='1']").click()  # another page, in the app
    page.wait_for_function("t => location.pathname + location.hash === t", arg=target)
    if page.locator(PANEL).count() == 0:
        page.click(TOGGLE)
    assert page.locator(f"{PANEL} [data-message]").count() == 2
    _goto(page, site_server + "docs/")  # a full page load: sessionStorage keeps it
    page.click(TOGGLE)
    page.locator(f"{PANEL} [data-message]").nth(1).wait_for()
    page.locator(PANEL).get_by_role("button", name="New conversation").click()
    assert page.locator(f"{PANEL} [data-message]").count() == 0
    assert page.evaluate("sessionStorage.getItem('textbook-chat:conversation:v1')") is None


def test_code_follows_the_sites_prism_theme_in_both_colour_modes(site_server, page, stub):
    stub(_stub_answer(BASE_URL + "docs/", answer="Like this [1]:\n\n```python\nkp = 0.8  # gain\n```"))
    _goto(page, site_server + "docs/")
    _ask(page)
    pre = page.locator(f"{PANEL} [class*='markdown'] pre").last
    background = "e => getComputedStyle(e).backgroundColor"
    assert pre.evaluate(background) == "rgb(246, 248, 250)"  # the sample's light theme: github
    assert pre.locator(".token.comment").inner_text() == "# gain"
    page.locator(".navbar [class*='colorModeToggle'] button").click()  # the reader switches to dark
    page.wait_for_function("() => document.documentElement.dataset.theme === 'dark'")
    page.wait_for_function("e => getComputedStyle(e).backgroundColor === 'rgb(40, 42, 54)'",
                           arg=pre.element_handle())  # dracula, the sample's darkTheme


# Each code line's text boxes (Range.getClientRects, clipped to what its block shows) against
# the copy button's box, with the block scrolled sideways to its start, its middle and its end.
CODE_UNDER_COPY = """(block) => {
  const button = block.querySelector('button').getBoundingClientRect();
  const pre = block.querySelector('pre');
  const lines = [...pre.querySelectorAll('code > span')];
  const covered = [];
  const measure = (at) => {
    const view = pre.getBoundingClientRect();
    lines.forEach((line, n) => {
      const range = document.createRange();
      range.selectNodeContents(line);
      for (const r of range.getClientRects()) {
        const left = Math.max(r.left, view.left), right = Math.min(r.right, view.right);
        const top = Math.max(r.top, view.top), bottom = Math.min(r.bottom, view.bottom);
        if (right - left < 1 || bottom - top < 1) continue;  // not shown (scrolled away)
        if (right > button.left && left < button.right && bottom > button.top && top < button.bottom) {
          covered.push({line: n + 1, scroll: at, text: line.textContent.trim().slice(0, 40)});
        }
      }
    });
  };
  const end = pre.scrollWidth - pre.clientWidth;
  for (const at of [...new Set([0, Math.round(end / 2), end])]) {
    pre.scrollLeft = at;
    measure(at);
  }
  pre.scrollLeft = 0;
  return {covered, lines: lines.length, scrolls: end > 0};
}"""
SHORT_CODE = "kp = 0.8  # the proportional gain\nki = 0.2\nkd = 0.05"
LONG_CODE = "\n".join(f"step_{i} = controller.update(error_{i}, dt)  # sample {i}" for i in range(1, 25))
WIDE_CODE = ("output = kp * error + ki * integral + kd * derivative  # " + "every term " * 12
             + "\nok = True")
ONE_LINE_CODE = "ros2 run demo_nodes_cpp talker"


@pytest.mark.parametrize("viewport", [(1280, 900), (375, 740)], ids=["desktop", "phone"])
def test_the_copy_button_covers_no_code(built_site, site_server, browser, stub, artifacts, viewport):
    """The copy button covered the end of a short block's first line (and, at 375 px, any line
    reaching the panel's edge): every line of a short, a long, a wide and a one-line block is
    measured against it, the wide one scrolled sideways too."""
    blocks = [SHORT_CODE, LONG_CODE, WIDE_CODE, ONE_LINE_CODE]
    answer = "Set the gains [1]:\n\n" + "\n\n".join(f"```{lang}\n{code}\n```" for lang, code in
                                                 zip(["python", "python", "python", "bash"], blocks, strict=True))
    stub(_stub_answer(_pid_target(built_site), answer=answer))
    width, height = viewport
    context = browser.new_context(viewport={"width": width, "height": height},
                                  is_mobile=width < 600, has_touch=width < 600)
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        _goto(page, site_server + "docs/")
        _ask(page, "How do I set the gains?")
        shown = page.locator(f"{PANEL} [data-message] pre").locator("..")
        shown.nth(3).wait_for()
        assert shown.count() == 4
        found = []
        for n, code in enumerate(blocks):
            block = shown.nth(n)
            block.scroll_into_view_if_needed()
            assert block.get_by_role("button", name="Copy").is_visible()
            assert block.locator("pre").text_content().strip() == code.strip()
            result = block.evaluate(CODE_UNDER_COPY)
            assert result["lines"] == code.count("\n") + 1, result
            found.append(result)
        assert found[2]["scrolls"], "the wide block does not scroll sideways: it measures nothing"
        assert [f["covered"] for f in found] == [[], [], [], []], found
        page.screenshot(path=str(artifacts / f"code-blocks-{width}.png"))
    finally:
        context.close()
