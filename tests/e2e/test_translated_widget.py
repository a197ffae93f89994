"""The widget on a translated page of the versioned, two-locale sample (en + fr), in real
Chromium: a citation of a section only the default language has is marked, in the reader's
language; the others are not."""

from __future__ import annotations

import json

import pytest

from tests.e2e import servers
from tests.e2e.site_build import BASE_URL, LOCALE, build_versioned_site
from tests.e2e.test_widget import INPUT, PANEL, TOGGLE, _goto

pytestmark = [pytest.mark.npm, pytest.mark.browser, pytest.mark.slow]

API = "http://127.0.0.1:9/unused"  # the versioned site's apiUrl: answered by the test in the browser
TRANSLATED = f"{BASE_URL}{LOCALE}/docs/next/"


@pytest.fixture(scope="module")
def versioned_server(built_site):
    site = build_versioned_site(built_site)
    with servers.running(servers.static_site(site.build_dir, BASE_URL)) as server:
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
