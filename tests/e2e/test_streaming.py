"""A model's answer shows sentence by sentence as it is written, each sentence once the API has
checked it against the book, and the answer the API returns whole replaces them. Real Chromium
on the built sample, `textbook-chat serve` with the fake OpenAI server as the model, streaming
a word at a time (tests/fakes/openai_server.py)."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.test_widget import INPUT, PANEL, TOGGLE, _goto

pytestmark = [pytest.mark.npm, pytest.mark.browser, pytest.mark.slow]

STREAMING = f"{PANEL} [data-streaming]"
FINAL = f"{PANEL} [data-message][data-outcome]:not([data-streaming]):not([data-passage])"
QUESTION = "What is derivative kick and how do I avoid it?"


@pytest.fixture
def streaming_api(model_server, api_proxy):
    previous = api_proxy.target
    api_proxy.target = model_server
    try:
        yield model_server
    finally:
        api_proxy.target = previous


def _cited_text(page, selector: str) -> str:
    return " ".join(page.locator(f"{selector} [class*='markdown']").first.inner_text().split())


def _first_or_answer(page) -> bool:
    """Wait for the first checked sentence, or the answer; True for the sentence. Only a model
    cut off by serve's request deadline (at heavy load, before its first sentence) gives the
    answer first: then it is the offline fallback, as a request not streamed gets it, or busy
    (serve found no time left to answer in)."""
    alert = f"{PANEL} [role='alert']"
    page.locator(f"{STREAMING} a[data-citation], {FINAL}, {alert}").first.wait_for(timeout=120_000)
    if page.locator(STREAMING).count():
        return True
    if page.locator(alert).count():
        assert "busy" in page.locator(alert).inner_text(), page.locator(alert).inner_text()
        return False
    assert page.locator(f"{FINAL} [data-offline-fallback]").count() == 1, \
        "the answer came whole, and not for lack of time"
    return False


def test_the_first_checked_sentence_shows_while_the_model_still_writes(site_server, page, streaming_api,
                                                                        model_fake, artifacts):
    gate = model_fake.hold_streams()  # the model stops after its first cited sentence and a word
    try:
        _goto(page, site_server + "docs/")
        page.click(TOGGLE)
        page.fill(INPUT, QUESTION)
        page.keyboard.press("Enter")
        if not _first_or_answer(page):
            pytest.xfail("serve's request deadline passed before the model wrote (machine load)")
        # the model has written one sentence: the reader has it, checked and cited, and no answer yet
        assert not gate.is_set() and page.locator(FINAL).count() == 0
        first = _cited_text(page, STREAMING)
        assert page.locator(f"{STREAMING} button").count() == 0  # no feedback or copy yet
        page.screenshot(path=str(artifacts / "streaming-first-sentence.png"))
    finally:
        gate.set()
    page.locator(FINAL).last.wait_for(timeout=120_000)
    assert page.locator(STREAMING).count() == 0  # replaced by the answer
    shown = page.locator(FINAL).last
    final = _cited_text(page, FINAL)
    print(f"\n[e2e] shown while the model wrote: {first!r}\n[e2e] the answer: {final!r}")
    if shown.locator("[data-offline-fallback]").count():
        return  # the deadline cut the model off after its first sentence: the fallback replaced it
    # what the reader saw stays: every sentence shown was checked as the answer checks it (the
    # answer may hold one more: the last, or one whose check came out the other way on the whole)
    assert first in final and len(final) > len(first), (first, final)
    # the answer is the one a request that does not stream gets
    expected = httpx.post(f"{streaming_api}/chat", timeout=120, json={
        "question": QUESTION, "page_url": page.evaluate("location.pathname")}).json()
    if expected.get("mode") != "offline-fallback":
        hrefs = shown.locator("a[data-source]").evaluate_all("els => els.map(e => e.getAttribute('href'))")
        assert hrefs == [c["url"] for c in expected["citations"]], (hrefs, expected)


def test_time_to_the_first_sentence_against_the_whole_answer(site_server, page, streaming_api, model_fake):
    """The model writes a word every 0.05 s: the first checked sentence shows after about its
    own words, the whole answer (all the page had before streaming) after all of them. The page
    itself notes when each first appears (a MutationObserver), so a sentence shown for less
    than the test's polling interval is still seen."""
    model_fake.stream_pause = 0.05
    try:
        _goto(page, site_server + "docs/")
        page.click(TOGGLE)
        page.fill(INPUT, "How do I measure loop jitter?")
        page.evaluate("""([streaming, final]) => {
            const seen = window.__streamSeen = {first: null, whole: null, start: performance.now()};
            const note = () => {
              if (seen.first === null && document.querySelector(streaming + " a[data-citation]"))
                seen.first = performance.now() - seen.start;
              if (seen.whole === null && document.querySelector(final))
                seen.whole = performance.now() - seen.start;
            };
            new MutationObserver(note).observe(document.body,
              {subtree: true, childList: true, attributes: true, characterData: true});
        }""", [STREAMING, FINAL])
        page.keyboard.press("Enter")
        alert = f"{PANEL} [role='alert']"
        page.locator(f"{FINAL}, {alert}").first.wait_for(timeout=120_000)
    finally:
        model_fake.stream_pause = 0.0
    if page.locator(alert).count():
        assert "busy" in page.locator(alert).inner_text(), page.locator(alert).inner_text()
        pytest.xfail("serve found no time left to answer in (machine load)")
    seen = page.evaluate("window.__streamSeen")
    if page.locator(FINAL).last.locator("[data-offline-fallback]").count():
        pytest.xfail("serve's request deadline cut the model off (machine load)")
    print(f"\n[e2e] streamed answer: first checked sentence {seen['first'] / 1000:.2f} s after "
          f"Enter, the whole answer {seen['whole'] / 1000:.2f} s")
    assert seen["first"] is not None, "no checked sentence showed before the whole answer"
    assert seen["first"] < seen["whole"], seen
