"""End to end: the packed plugin in a real Docusaurus build of the sample textbook, driven in Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time

import pytest

from tests.e2e.conftest import cli_command
from tests.e2e.site_build import BASE_URL, REPO

pytestmark = [pytest.mark.npm, pytest.mark.browser, pytest.mark.slow]

TOGGLE = "button[aria-controls='textbook-chat-panel']"
PANEL = "#textbook-chat-panel"
INPUT = "#textbook-chat-input"
HEADING_IN_VIEW = """(id) => {
  const el = document.getElementById(id);
  if (!el) return false;
  const r = el.getBoundingClientRect();
  return r.top >= 0 && r.bottom <= window.innerHeight;
}"""


def _docs(built_site) -> list[dict]:
    return json.loads(built_site.manifest.read_text())["docs"]


def _doc(built_site, fragment: str) -> dict:
    return next(d for d in _docs(built_site) if fragment in d["source"])


def _heading_ids(built_site, permalink: str) -> list[str]:
    rel = permalink[len(BASE_URL):].strip("/")
    html = (built_site.build_dir / rel / "index.html").read_text()
    return re.findall(r'<h[23][^>]*\sid="([^"]+)"', html)


def _goto(page, url: str):
    """Open a page and wait for React to hydrate (Docusaurus marks <html data-has-hydrated>)."""
    page.goto(url)
    page.wait_for_selector("html[data-has-hydrated='true']", state="attached")


def _open_and_ask(page, question: str):
    page.click(TOGGLE)
    page.fill(INPUT, question)
    page.keyboard.press("Enter")


def _posts(api_proxy, path: str, searches: bool = False) -> list[dict]:
    """The bodies POSTed to `path`; the box's searches as the reader types (`"search": true`)
    only when `searches`."""
    bodies = [json.loads(body) for method, p, body in api_proxy.requests if method == "POST" and p.endswith(path)]
    return [b for b in bodies if bool(b.get("search")) == searches]


def _stub_answer(target_url: str, **extra) -> dict:
    return {
        "answer": "A PID controller sums three terms [1]. Tuning starts with the proportional gain [1].",
        "citations": [{"n": 1, "title": "PID control", "section_title": "Tuning", "url": target_url,
                       "doc_path": "04-pid-control.mdx", "score": 0.8, "snippet": "…"}],
        "confidence": 0.8, "low_confidence": False, "request_id": "req-stub-1", **extra,
    }


# --- build-time checks ------------------------------------------------------------------------

def test_postbuild_writes_the_manifest_outside_the_build(built_site):
    manifest = json.loads(built_site.manifest.read_text())
    assert manifest["version"] == 1
    assert manifest["baseUrl"] == BASE_URL
    assert manifest["trailingSlash"] is None
    assert len(manifest["docs"]) >= 5
    assert all(d["permalink"].startswith(BASE_URL + "docs") for d in manifest["docs"])
    assert not any(built_site.build_dir.rglob("manifest.json"))
    # Only public values in the page: the API URL is there, no manifest path or command.
    html = (built_site.build_dir / "docs" / "index.html").read_text()
    assert built_site.api_url in html or any(
        built_site.api_url in p.read_text() for p in (built_site.build_dir / "assets" / "js").glob("*.js"))


def test_check_finds_no_missing_anchors(built_site):
    cli = cli_command()
    if cli is None:
        pytest.fail("the textbook-chat CLI (textbook_chat_cli) is not importable")
    site = built_site.site_dir
    result = subprocess.run(
        [*cli, "check", str(site / "docs"), "--site-dir", str(site), "--build-dir", str(built_site.build_dir),
         "--manifest", str(built_site.manifest)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b0 missing", result.stdout + result.stderr), result.stdout + result.stderr


# --- with a stub API (no CLI needed) ----------------------------------------------------------

def test_citation_navigates_inside_the_spa_to_the_heading(built_site, site_server, page, stub, artifacts):
    pid = _doc(built_site, "pid-control")
    anchor = _heading_ids(built_site, pid["permalink"])[-1]
    target = f"{pid['permalink']}#{anchor}"
    stub(_stub_answer(target))
    _goto(page, site_server + "docs/")
    page.evaluate("window.__spa = 'still here'")
    _open_and_ask(page, "What is a PID controller?")
    marker = page.locator(f"{PANEL} a[data-citation='1']").first
    marker.wait_for()
    assert marker.get_attribute("href") == target
    page.screenshot(path=str(artifacts / "stub-answer.png"))
    marker.click()
    page.wait_for_function(HEADING_IN_VIEW, arg=anchor)
    assert page.evaluate("location.pathname + location.hash") == target
    assert page.evaluate("window.__spa") == "still here", "the citation reloaded the page"
    page.screenshot(path=str(artifacts / "stub-citation-target.png"))


def test_malicious_answer_renders_inert(site_server, page, stub, artifacts):
    evil = (
        '<img src=x onerror="window.pwned=1"> <script>window.pwned=2</script>\n\n'
        "[click me](javascript:window.pwned=3) and <a href=\"javascript:window.pwned=4\">raw</a> [1]\n\n"
        "**<svg onload=\"window.pwned=5\">**"
    )
    stub({"answer": evil, "citations": [{"n": 1, "title": "x", "section_title": "y", "url": "javascript:window.pwned=6"}],
          "confidence": 0.9, "low_confidence": False, "request_id": "evil"})
    _goto(page, site_server + "docs/")
    _open_and_ask(page, "Hi")
    answer = page.locator(f"{PANEL} [class*='answer']").first
    answer.wait_for()
    for link in page.locator(f"{PANEL} a").all():
        link.click(no_wait_after=True)
    page.wait_for_timeout(300)
    assert page.evaluate("window.pwned") is None
    rendered = f"{PANEL} [class*='markdown']"
    assert page.locator(rendered).count() == 1
    assert page.locator(f"{rendered} img, {rendered} script, {rendered} svg, {rendered} iframe").count() == 0
    assert page.evaluate("document.querySelectorAll('[onerror], [onload]').length") == 0
    hrefs = page.eval_on_selector_all(f"{PANEL} a", "els => els.map(e => e.getAttribute('href'))")
    assert not [h for h in hrefs if h and "javascript" in h.lower()]
    assert '<img src=x onerror="window.pwned=1">' in answer.inner_text()
    page.screenshot(path=str(artifacts / "malicious-answer.png"))


def test_errors_are_kind_and_keep_the_question(site_server, page, stub, api_proxy):
    stub({"error": {"code": "rate_limited", "message": "slow down"}}, status=429, headers={"Retry-After": "7"})
    _goto(page, site_server + "docs/")
    _open_and_ask(page, "What is a PID controller?")
    alert = page.locator(f"{PANEL} [role='alert']")
    alert.wait_for()
    assert "wait about 7 seconds" in alert.inner_text()
    api_proxy.target = "drop"
    page.click(f"{PANEL} button[type='submit']")
    page.wait_for_function("() => /Could not reach/.test(document.querySelector('#textbook-chat-panel [role=alert]')?.textContent)")
    assert page.input_value(INPUT) == "What is a PID controller?"


def test_rapid_clicks_send_one_request_and_feedback_is_sent(site_server, page, stub, api_proxy, artifacts):
    stub(_stub_answer(BASE_URL + "docs/"))
    _goto(page, site_server + "docs/")
    page.click(TOGGLE)
    page.fill(INPUT, "What is a PID controller?")
    page.evaluate("() => { const b = document.querySelector('#textbook-chat-panel button[type=submit]');"
                  " for (let i = 0; i < 5; i++) b.click(); }")
    page.locator(f"{PANEL} a[data-citation='1']").first.wait_for()
    assert len(_posts(api_proxy, "/chat")) == 1
    up = page.get_by_role("button", name="This answer helped")
    up.click()
    up.click(force=True)
    page.get_by_text("Thanks for the feedback!").wait_for()
    assert _posts(api_proxy, "/feedback") == [{"request_id": "req-stub-1", "rating": "up"}]
    # The conversation survives a reload (sessionStorage).
    page.reload()
    page.wait_for_selector("html[data-has-hydrated='true']", state="attached")
    page.click(TOGGLE)
    page.locator(f"{PANEL} a[data-citation='1']").first.wait_for()


def test_keyboard_escape_and_focus(site_server, page):
    _goto(page, site_server + "docs/")
    page.focus(TOGGLE)
    page.keyboard.press("Enter")
    page.wait_for_selector(PANEL)
    assert page.evaluate("document.activeElement.id") == "textbook-chat-input"
    assert page.get_attribute(TOGGLE, "aria-expanded") == "true"
    page.keyboard.press("Escape")
    assert page.locator(PANEL).count() == 0
    assert page.evaluate("document.activeElement.getAttribute('aria-controls')") == "textbook-chat-panel"
    # Esc also closes it when focus has moved back into the page.
    page.click(TOGGLE)
    page.wait_for_selector(PANEL)
    page.click("article h1")
    page.keyboard.press("Escape")
    assert page.locator(PANEL).count() == 0


def test_low_confidence_shows_related_topics(built_site, site_server, page, stub):
    pid = _doc(built_site, "pid-control")
    stub({"answer": "The textbook does not cover this.", "citations": [], "confidence": 0.1,
          "low_confidence": True, "related_topics": [{"title": "PID control", "url": pid["permalink"]}],
          "request_id": "low"})
    _goto(page, site_server + "docs/")
    _open_and_ask(page, "How do I bake bread?")
    box = page.locator(f"{PANEL} [data-low-confidence='true']")
    box.wait_for()
    assert "not sure" in box.inner_text()
    assert "These sections may help" in box.inner_text()
    page.locator(PANEL).get_by_role("link", name="4. Feedback with PID").click()  # the sidebar name
    page.wait_for_function("p => location.pathname === p", arg=pid["permalink"])


def test_the_closest_passage_is_shown_as_a_place_to_read(built_site, site_server, page, stub):
    """outcome "closest": its own note (not the low-confidence warning), the quote without the
    API's English lead, and the three sections under "The closest sections"."""
    pid = _doc(built_site, "pid-control")
    stub({"answer": "The book may not answer this exactly. The closest passage:\n\n"
                    "Clamp the integrator while the output saturates [1].",
          "outcome": "closest", "confidence": 0.4, "low_confidence": True,
          "citations": [{"n": 1, "title": "PID control", "section_title": "Windup",
                         "url": pid["permalink"], "doc_path": "", "score": 0.5, "snippet": ""}],
          "related_topics": [{"title": "PID control", "url": pid["permalink"]},
                             {"title": "Second", "url": pid["permalink"] + "#second"},
                             {"title": "Third", "url": pid["permalink"] + "#third"}],
          "request_id": "closest"})
    _goto(page, site_server + "docs/")
    _open_and_ask(page, "How do I stop the integral term from growing?")
    box = page.locator(f"{PANEL} [data-outcome='closest']")
    box.wait_for()
    text = box.inner_text()
    assert "The book may not answer this exactly. The closest passage:" in text
    assert text.count("The book may not answer this exactly") == 1  # the lead once, as the note
    assert "Clamp the integrator" in text and "not sure" not in text
    assert "The closest sections" in text and "Sources" not in text
    assert box.locator("[data-related] li").count() == 3


def test_selection_over_the_cap_is_refused_with_a_hint(site_server, page, stub):
    _goto(page, site_server + "docs/")
    page.evaluate("""() => {
      const p = document.createElement('p');
      p.id = 'huge';
      p.textContent = 'x'.repeat(50000);
      document.querySelector('article .markdown').appendChild(p);
      const range = document.createRange();
      range.selectNodeContents(p);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      document.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
    }""")
    hint = page.locator("[data-textbook-chat] [role='alert']")
    hint.wait_for()
    assert "50,000 characters" in hint.inner_text()
    assert page.get_by_role("button", name="Ask about this").count() == 0


def test_phone_width_layout(built_site, site_server, phone, stub, artifacts):
    pid = _doc(built_site, "pid-control")
    anchor = _heading_ids(built_site, pid["permalink"])[-1]
    stub(_stub_answer(f"{pid['permalink']}#{anchor}"))
    _goto(phone, site_server + "docs/")
    _open_and_ask(phone, "What is a PID controller?")
    phone.locator(f"{PANEL} a[data-citation='1']").first.wait_for()
    box = phone.locator(PANEL).bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 375
    assert phone.evaluate("document.documentElement.scrollWidth") <= 375
    send = phone.locator(f"{PANEL} button[type='submit']").bounding_box()
    assert send["x"] + send["width"] <= 375 and send["y"] + send["height"] <= 740
    phone.screenshot(path=str(artifacts / "phone-answer.png"))
    phone.locator(f"{PANEL} a[data-citation='1']").first.click()
    phone.wait_for_function(HEADING_IN_VIEW, arg=anchor)
    assert phone.locator(PANEL).count() == 0, "on a phone the panel gets out of the way of the section"
    phone.screenshot(path=str(artifacts / "phone-citation-target.png"))


# --- with the real API (`textbook-chat serve` on the indexed sample) ---------------------------

def test_real_answer_cites_and_lands_on_the_heading(built_site, site_server, page, real_api, artifacts):
    _goto(page, site_server + "docs/")
    page.evaluate("window.__spa = 'still here'")
    started = time.monotonic()
    _open_and_ask(page, "What is derivative kick and how do I avoid it?")
    page.locator(f"{PANEL} a[data-citation]").first.wait_for(timeout=60_000)
    # A citation of a page's opening text has no heading; follow one that names a section.
    marker = page.locator(f"{PANEL} a[data-citation][href*='#']").first
    print(f"\n[e2e] real /chat answered in {time.monotonic() - started:.2f}s")
    # the README's picture shows what answers: the cure, not the section's tip on logging
    answer = page.locator(f"{PANEL} [data-message]").last.inner_text()
    assert "from the measurement instead" in answer and "Record setpoint" not in answer, answer
    page.screenshot(path=str(artifacts / "answer-with-citations.png"))
    if os.environ.get("TEXTBOOK_CHAT_UPDATE_SCREENSHOT") == "1":  # the README's picture, on request
        shutil.copyfile(artifacts / "answer-with-citations.png", REPO / "docs" / "widget.png")
    href = marker.get_attribute("href")
    path, _, anchor = href.partition("#")
    assert path.startswith(BASE_URL) and anchor
    marker.click()
    page.wait_for_function("h => location.pathname + location.hash === h", arg=href)
    page.wait_for_function(HEADING_IN_VIEW, arg=anchor)
    assert page.evaluate("window.__spa") == "still here"
    page.screenshot(path=str(artifacts / "citation-target.png"))


def test_real_selection_answer_cites_that_page(built_site, site_server, page, real_api, api_proxy, artifacts):
    pid = _doc(built_site, "pid-control")
    _goto(page, site_server + pid["permalink"][len(BASE_URL):])
    paragraph = page.locator("article .markdown > p", has_text="setpoint").first
    paragraph.scroll_into_view_if_needed()
    expected_anchor = paragraph.evaluate("""p => {
      let h = null;
      for (const el of document.querySelectorAll('article .markdown h2[id], article .markdown h3[id]')) {
        if (el.compareDocumentPosition(p) & Node.DOCUMENT_POSITION_FOLLOWING) h = el.id;
      }
      return h || '';
    }""")
    page.evaluate("getSelection().removeAllRanges()")
    paragraph.click(click_count=3)
    ask = page.get_by_role("button", name="Ask about this")
    ask.wait_for()
    page.screenshot(path=str(artifacts / "selection-popover.png"))
    api_proxy.requests.clear()
    ask.click()
    page.fill(INPUT, "How is the error computed from the setpoint and the measurement?")
    page.keyboard.press("Enter")
    page.locator(f"{PANEL} [class*='answer']").first.wait_for(timeout=60_000)
    page.screenshot(path=str(artifacts / "selection-answer.png"))
    (sent,) = _posts(api_proxy, "/selection")
    assert sent["page_url"] == pid["permalink"]
    assert sent.get("anchor", "") == expected_anchor
    if expected_anchor:  # the source label is the heading as the page shows it
        shown = page.evaluate("id => document.getElementById(id).innerText", expected_anchor)
        assert sent["heading"] == " ".join(shown.replace("\u200b", "").split())
        assert sent["heading"] and "#" not in sent["heading"]
    assert sent["selected_text"].strip()[:40] in paragraph.inner_text()
    hrefs = page.eval_on_selector_all(f"{PANEL} a[data-citation], {PANEL} a[data-source]",
                                      "els => els.map(e => e.getAttribute('href'))")
    assert hrefs and all(h.startswith(pid["permalink"]) for h in hrefs)


def test_dark_mode_follows_infima(site_server, browser, stub, artifacts):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script("localStorage.setItem('theme', 'dark')")
    page = context.new_page()
    try:
        stub(_stub_answer(BASE_URL + "docs/"))
        _goto(page, site_server + "docs/")
        assert page.get_attribute("html", "data-theme") == "dark"
        _open_and_ask(page, "What is a PID controller?")
        page.locator(f"{PANEL} a[data-citation='1']").first.wait_for()
        colours = page.eval_on_selector(PANEL, """el => ({
          panel: getComputedStyle(el).backgroundColor,
          surface: getComputedStyle(document.documentElement).getPropertyValue('--ifm-background-surface-color').trim(),
        })""")
        assert colours["panel"] != "rgb(255, 255, 255)", colours
        page.screenshot(path=str(artifacts / "dark-mode.png"))
    finally:
        context.close()
