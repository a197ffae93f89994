"""While a model writes the answer: the book's passage for the question shows at once (POST
/sources), marked as a quote from the book, its citations landing on their headings, and the
model's answer replaces it; an answer that fails leaves the passage, still marked, with the
error; Stop cancels both requests. Real Chromium on the built sample."""

from __future__ import annotations

import json
import time

import pytest

from tests.e2e.test_widget import INPUT, PANEL, TOGGLE, _doc, _goto, _heading_ids, _posts

pytestmark = [pytest.mark.npm, pytest.mark.browser, pytest.mark.slow]

WRITING = f"{PANEL} [data-passage='writing']"
KEPT = f"{PANEL} [data-passage='kept']"
ANSWER = f"{PANEL} [data-message]:not([data-passage])"
HEADING_TOP = "(id) => { const el = document.getElementById(id); return el ? el.getBoundingClientRect().top : null; }"


def innerheight(page) -> int:
    return page.evaluate("() => innerHeight")


def _hold(page, path: str) -> list:
    """Requests to the API's `path` are held (neither sent nor answered) until the test says."""
    held: list = []
    page.route(f"**/{path}", lambda route: route.continue_() if _search(route) else held.append(route))
    return held


def _search(route) -> bool:
    """The box's search as the reader types (a /sources body with `"search": true`)."""
    return '"search":true' in (route.request.post_data or "")


def _until(page, ready, timeout_s: float = 60.0) -> None:
    """Wait for `ready()` (what the page sent, seen by the test's routes): a minute at most."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert time.monotonic() < deadline, "timed out"
        page.wait_for_timeout(50)


def test_the_books_passage_shows_while_the_model_writes_and_the_answer_replaces_it(
        built_site, site_server, page, model_api, api_proxy, artifacts):
    import httpx

    api_proxy.requests.clear()
    _goto(page, site_server + "docs/")
    page.click(TOGGLE)
    timings = []
    for question in ("What is derivative kick and how do I avoid it?",
                     "How do I measure loop jitter?"):
        expected = httpx.post(f"{model_api.url}/sources", json={"question": question},
                              timeout=60).json()["passage"]
        assert expected and expected["citations"], expected
        page.fill(INPUT, question)
        started = time.monotonic()
        page.keyboard.press("Enter")
        passage = page.locator(WRITING)
        passage.wait_for(timeout=30_000)
        shown = time.monotonic() - started
        # Marked as a quote from the book, in the widget's words, while the answer is written.
        assert passage.locator("[data-passage-label]").inner_text().strip() == \
            "From the book, while the answer is written"
        assert page.locator(f"{PANEL} [data-stop]").is_visible()
        assert passage.get_attribute("aria-live") == "off"  # not read out; the status says it is there
        assert "From the book, while the answer is written" in \
            page.locator(f"{PANEL} [role='status']").inner_text()
        # Its citations are the API's, as links to their sections.
        hrefs = [a.get_attribute("href") for a in passage.locator("a[data-citation]").all()]
        assert hrefs and set(hrefs) <= {c["url"] for c in expected["citations"]}, (hrefs, expected)
        if not timings:
            page.screenshot(path=str(artifacts / "passage-while-writing.png"))
        answers = page.locator(f"{ANSWER} a[data-source]").count()
        model_api.write()
        passage.wait_for(state="detached", timeout=60_000)  # replaced when /chat answers
        answered = time.monotonic() - started
        timings.append((shown, answered))
        assert page.locator(f"{PANEL} [role='alert']").count() == 0
        assert page.locator(f"{ANSWER} a[data-source]").count() > answers  # the model's answer
        assert page.locator(f"{PANEL} [data-passage]").count() == 0
        assert "From the book" not in page.locator(ANSWER).last.inner_text()
    print(f"\n[e2e] passage shown {timings[0][0]:.2f} s after Enter (first question: /sources "
          f"after 400 ms), {timings[1][0]:.2f} s (second: at once); answers "
          f"{timings[0][1]:.2f} s, {timings[1][1]:.2f} s (the model writes once the passage shows)")
    assert len(_posts(api_proxy, "/sources")) == 2  # one per question
    page.screenshot(path=str(artifacts / "passage-replaced-by-answer.png"))


def test_a_passage_citation_followed_while_the_model_writes_lands_on_its_heading(
        built_site, site_server, page, model_api, artifacts):
    _goto(page, site_server + "docs/")
    page.click(TOGGLE)
    page.fill(INPUT, "What is derivative kick and how do I avoid it?")
    page.keyboard.press("Enter")
    marker = page.locator(f"{WRITING} a[data-citation]").first
    marker.wait_for(timeout=30_000)
    target = marker.get_attribute("href")
    path, anchor = target.split("#")
    assert anchor in _heading_ids(built_site, path), target
    marker.click()
    page.wait_for_function("(t) => location.pathname + location.hash === t", arg=target)
    page.wait_for_timeout(1500)  # the page settles (diagrams above the heading) while pinned
    top = page.evaluate(HEADING_TOP, anchor)
    bottom = page.evaluate("() => scrollY + innerHeight >= document.documentElement.scrollHeight - 2")
    # at the top of the window, or as near as the page allows (a section at the end of its page)
    assert top is not None and 0 <= top <= innerheight(page) - 40 and (top <= 120 or bottom), (target, top)
    page.screenshot(path=str(artifacts / "passage-citation-target.png"))
    model_api.write()
    page.locator(f"{ANSWER} a[data-citation]").first.wait_for(timeout=60_000)
    assert page.locator(f"{PANEL} [data-passage]").count() == 0


def _passage(built_site) -> dict:
    pid = _doc(built_site, "pid-control")
    url = f"{pid['permalink']}#{_heading_ids(built_site, pid['permalink'])[-1]}"
    return {"sources": [{"title": "PID control", "url": url}],
            "passage": {"answer": "Derivative kick is a spike in the output when the setpoint "
                                  "jumps; take the derivative of the measurement instead [1].",
                        "citations": [{"n": 1, "title": "PID control", "section_title": "Kick",
                                       "url": url, "doc_path": "04-pid-control.mdx",
                                       "score": 0.7, "snippet": "Derivative kick …"}]},
            "request_id": "req-sources-1"}


def _ask_with_the_passage_shown(built_site, site_server, page, stub) -> list:
    """Ask with /chat held and /sources answering with the book's passage; returns the held
    /chat routes once the passage shows."""
    stub({"sources": []}, delay=30)  # behind the proxy (CORS preflights); the page's routes answer
    chats = _hold(page, "chat")
    found = _passage(built_site)
    page.route("**/sources", lambda route: route.fulfill(
        status=200, content_type="application/json", body=json.dumps(found),
        headers={"Access-Control-Allow-Origin": "*"}))
    _goto(page, site_server + "docs/")
    page.click(TOGGLE)
    page.fill(INPUT, "What is derivative kick?")
    page.keyboard.press("Enter")
    page.locator(WRITING).wait_for()
    _until(page, lambda: chats)
    return chats


def test_a_failed_answer_leaves_the_passage_marked_as_a_quote_with_the_error(
        built_site, site_server, page, stub, artifacts):
    chats = _ask_with_the_passage_shown(built_site, site_server, page, stub)
    chats[0].fulfill(status=502, content_type="application/json",
                     headers={"Access-Control-Allow-Origin": "*"},
                     body=json.dumps({"error": {"code": "upstream", "message": "model down"}}))
    kept = page.locator(KEPT)
    kept.wait_for()
    assert kept.locator("[data-passage-label]").inner_text().strip() == \
        "From the book (quoted; no answer was written)"
    assert "take the derivative of the measurement" in kept.inner_text()
    assert kept.locator("a[data-citation='1']").get_attribute("href") == \
        _passage(built_site)["passage"]["citations"][0]["url"]
    assert "could not write an answer" in page.locator(f"{PANEL} [role='alert']").inner_text()
    assert page.input_value(INPUT) == "What is derivative kick?"  # to send again
    # the question stays in the log above its passage (and is back in the box to send again)
    assert page.locator(f"{PANEL} [data-message]", has_text="What is derivative kick?").count() == 1
    page.screenshot(path=str(artifacts / "passage-kept-after-error.png"))


def test_stop_cancels_both_requests(built_site, site_server, page, stub):
    stub({"sources": []}, delay=30)  # behind the proxy (CORS preflights); the page's routes hold
    chats, sources = _hold(page, "chat"), _hold(page, "sources")
    failed: list[str] = []
    page.on("requestfailed", lambda request: failed.append(request.url.rsplit("/", 1)[-1]))
    _goto(page, site_server + "docs/")
    page.click(TOGGLE)
    page.fill(INPUT, "What is derivative kick?")
    page.keyboard.press("Enter")
    _until(page, lambda: chats and sources)  # both asked (the sections after 400 ms)
    page.locator(PANEL).get_by_role("button", name="Stop").click()
    _until(page, lambda: {"chat", "sources"} <= set(failed))
    assert page.input_value(INPUT) == "What is derivative kick?"
    assert page.locator(f"{PANEL} [data-message]").count() == 0  # nothing was shown: nothing kept


def test_stop_after_the_passage_keeps_it_marked_and_gives_the_question_back(
        built_site, site_server, page, stub, artifacts):
    _ask_with_the_passage_shown(built_site, site_server, page, stub)
    page.locator(PANEL).get_by_role("button", name="Stop").click()
    kept = page.locator(KEPT)
    kept.wait_for()
    assert "take the derivative of the measurement" in kept.inner_text()
    assert page.locator(WRITING).count() == 0
    assert page.input_value(INPUT) == "What is derivative kick?"
    assert page.locator(f"{PANEL} [role='alert']").count() == 0  # stopping is not an error


# Where the log shows the book's passage (or the answer that replaced it): its top against the
# log's view, with the question and the sections found above it.
IN_THE_LOG = """([logSelector, selector]) => {
  const log = document.querySelector(logSelector);
  const view = log.getBoundingClientRect();
  const el = document.querySelector(selector);
  const box = el.getBoundingClientRect();
  const found = document.querySelector(logSelector + ' [data-sources-found]');
  return {top: Math.round(box.top - view.top), height: log.clientHeight,
          found: found ? found.querySelectorAll('li').length : 0};
}"""
LONG_QUESTION = ("What is derivative kick, why does it happen when the setpoint jumps, and how do I "
                 "avoid it on a robot whose controller runs at a fixed loop rate?")


@pytest.mark.parametrize("size", [(1280, 800), (375, 740)], ids=["1280x800", "phone"])
def test_the_passage_and_then_the_answer_open_in_the_logs_upper_half(
        built_site, site_server, page, model_api, artifacts, size):
    """Model mode at 1280x800: the log scrolled to the question, and the sections found between
    it and the book's passage pushed the passage down until its label alone showed. The passage
    (then the answer replacing it) must open in the log's upper half: its label and at least
    half the log's height of its text in view, with what fits of the question above it."""
    width, height = size
    page.set_viewport_size({"width": width, "height": height})
    _goto(page, site_server + "docs/")
    page.click(TOGGLE)
    page.fill(INPUT, LONG_QUESTION)
    page.keyboard.press("Enter")
    page.locator(WRITING).wait_for(timeout=60_000)
    log = f"{PANEL} [role='log']"
    page.wait_for_timeout(300)  # the log's scroll follows the render
    shown = page.evaluate(IN_THE_LOG, [log, WRITING])
    page.screenshot(path=str(artifacts / f"passage-in-view-{width}x{height}.png"))
    print(f"\n[e2e] {width}x{height}: passage {shown}")
    assert shown["found"] >= 2, shown  # the sections found stand between question and passage
    assert 0 <= shown["top"] <= shown["height"] / 2, shown
    model_api.write()
    page.locator(WRITING).wait_for(state="detached", timeout=60_000)
    page.locator(f"{PANEL} [data-stop]").wait_for(state="detached", timeout=60_000)  # all written
    whole = f"{ANSWER}:not([data-streaming]):has(a[data-source])"
    page.locator(whole).wait_for(timeout=60_000)
    page.wait_for_timeout(300)
    answer = page.evaluate(IN_THE_LOG, [log, whole])
    print(f"[e2e] {width}x{height}: answer {answer}")
    page.screenshot(path=str(artifacts / f"answer-in-view-{width}x{height}.png"))
    assert 0 <= answer["top"] <= answer["height"] / 2, answer
