"""Answers pinned to the edition and language being read: the version and locale come from the
reader's page (or explicit filters), and a section identical in two editions is cited once."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mangum import Mangum

from functions.api.app import create_app
from functions.errors import UnknownFilter
from functions.search.contract import Editions, chunk_id, content_hash
from functions.search.retrieval import Retriever, _same_places, page_variants
from functions.search.sparse import encode_document
from functions.search.store import QdrantStore
from functions.settings import Settings
from indexer.job import index_docs, resolve_job
from tests.fakes.embedder import ContentEmbedder
from tests.functions.book import chunks
from tests.functions.conftest import DIM
from tests.functions.events import http_api_v2
from tests.indexer.test_editions import versioned_site

# (version, locale, URL prefix replacing /book/docs)
EDITIONS = [("current", "en", "/book/docs/next"), ("1.0", "en", "/book/docs"),
            ("current", "fr", "/book/fr/docs/next"), ("1.0", "fr", "/book/fr/docs")]


def edition_chunks():
    out = []
    for version, locale, prefix in EDITIONS:
        for c in chunks(ContentEmbedder(DIM).model_name):
            content = c.content
            if version == "1.0" and c.anchor == "gyroscope-drift":
                content = content.replace("averaging readings", "averaging ten readings")
            url, page = (u.replace("/book/docs", prefix, 1) for u in (c.url, c.page_url))
            edition = "" if (version, locale) == ("current", "en") else f"{version}@{locale}"
            out.append(replace(c, version=version, locale=locale, url=url, page_url=page,
                               content=content, content_hash=content_hash(content),
                               chunk_id=chunk_id(c.doc_path, c.chunk_index, edition),
                               untranslated=locale == "fr"))
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    settings = Settings(qdrant_path=str(tmp_path_factory.mktemp("editions")), collection="editions")
    store = QdrantStore.open(settings)
    embedder = ContentEmbedder(DIM)
    items = edition_chunks()
    store.ensure_collection(embedder.model_name, embedder.dimension)
    vectors = embedder.embed_batch([c.embed_text for c in items])
    store.upsert([(c.point_id, c.payload(), v, encode_document(c.embed_text))
                  for c, v in zip(items, vectors, strict=True)])
    # as `index` records them: 1.0 is served at /book/docs, English at /book/
    store.mark_synced("2026-11-25T00:00:00+00:00",
                      Editions(("current", "1.0"), ("en", "fr"), "1.0", "en"))
    yield store
    store.close()


QUESTION = "How do I calibrate the gyroscope bias drift?"


def editions_of(hits):
    return {(h.payload["version"], h.payload["locale"]) for h in hits}


@pytest.mark.parametrize(("page", "edition"), [
    ("/book/docs/next/sensors/imu", ("current", "en")),
    ("https://x.github.io/book/docs/sensors/imu/#gyroscope-drift", ("1.0", "en")),
    ("/book/fr/docs/next/loop", ("current", "fr")),
])
def test_answers_come_from_the_edition_of_the_readers_page(store, page, edition):
    hits = Retriever(store, ContentEmbedder(DIM)).retrieve(QUESTION, page_url=page)
    assert hits and editions_of(hits) == {edition}
    assert all(h.payload["url"].startswith(dict((e[:2], e[2]) for e in EDITIONS)[edition] + "/")
               for h in hits)


def test_explicit_filters_override_the_page(store):
    retriever = Retriever(store, ContentEmbedder(DIM))
    hits = retriever.retrieve(QUESTION, page_url="/book/docs/sensors/imu", filters={"version": "current"})
    assert editions_of(hits) == {("current", "en")}
    hits = retriever.retrieve(QUESTION, page_url="/book/docs/next/sensors/imu", filters={"locale": "fr"})
    assert editions_of(hits) == {("current", "fr")}
    hits = retriever.retrieve(QUESTION, filters={"version": "1.0", "locale": "en"})
    assert editions_of(hits) == {("1.0", "en")}


@pytest.mark.parametrize(("page", "edition"), [
    (None, ("1.0", "en")), ("/book/", ("1.0", "en")), ("/book/blog/news", ("1.0", "en")),
    ("/book/fr/", ("1.0", "fr")), ("/book/docs/next/category/sensors", ("current", "en")),
    ("https://x.github.io/book/fr/docs/next/tags/imu", ("current", "fr"))])
def test_a_page_outside_the_docs_reads_the_edition_its_path_names_else_the_default(
        store, page, edition):
    hits = Retriever(store, ContentEmbedder(DIM)).retrieve(QUESTION, page_url=page, top_k=8)
    assert hits and editions_of(hits) == {edition}


def test_an_index_without_recorded_editions_searches_them_all_each_text_once(store):
    class Unrecorded:  # an index written before `index` recorded its editions
        def collection_meta(self):
            return {k: v for k, v in store.collection_meta().items() if k != "editions"}

        def search(self, *args):
            return store.search(*args)

    retriever = Retriever(Unrecorded(), ContentEmbedder(DIM))
    hits = retriever.retrieve(QUESTION, page_url="/book/", top_k=8)
    hashes = [h.payload["content_hash"] for h in hits]
    assert len(hashes) == len(set(hashes)) and len(editions_of(hits)) > 1
    assert retriever.retrieve(QUESTION, filters={"version": "2.0"}) == []


@pytest.mark.parametrize(("filters", "named"), [
    ({"version": "2.0"}, ['"current"', '"1.0" (the default)', "`filters.version`"]),
    ({"version": "2.0", "locale": "en"}, ['"current"', '"1.0" (the default)']),
    ({"locale": "ur"}, ['"en" (the default)', '"fr"', "`filters.locale`"])])
def test_an_unknown_version_or_locale_is_refused_naming_the_ones_there_are(store, filters, named):
    with pytest.raises(UnknownFilter) as refused:
        Retriever(store, ContentEmbedder(DIM)).retrieve(QUESTION, filters=filters)
    assert all(n in str(refused.value) for n in named), str(refused.value)


def test_next_is_the_current_version_as_readers_see_it_in_urls(store):
    """The site shows the unreleased docs at /docs/next/...: a reader's or an assistant's
    "next" reads "current"; on a book without versions, "current" and "next" are the book."""
    retriever = Retriever(store, ContentEmbedder(DIM))
    hits = retriever.retrieve(QUESTION, filters={"version": "next", "locale": "en"})
    assert hits and editions_of(hits) == {("current", "en")}


@pytest.mark.parametrize("version", ["current", "next"])
def test_a_book_without_versions_is_its_current_version(make_deps, tmp_path, version):
    """search_book's own example, `version: "current"`, on a book indexed without versions
    (`index` records no versions and no locales for it)."""
    from tests.functions.conftest import index_book
    from tests.functions.test_mcp import LambdaSession

    plain = QdrantStore.open(Settings(qdrant_path=str(tmp_path / "q"), collection="plain"))
    try:
        index_book(plain, ContentEmbedder(DIM))
        plain.mark_synced("2026-11-28T00:00:00+00:00", Editions())
        retriever = Retriever(plain, ContentEmbedder(DIM))
        everything = retriever.retrieve(QUESTION)
        assert everything and retriever.retrieve(QUESTION, filters={"version": version}) == everything
        agent = LambdaSession(Mangum(create_app(make_deps(search=plain), "chat", threaded=False),
                                     lifespan="off"))
        agent.initialize()
        found = agent.call("search_book", {"query": QUESTION, "version": version})["result"]
        assert not found["isError"] and found["structuredContent"]["sections"], found
        other = agent.call("search_book", {"query": QUESTION, "version": "1.0"})["result"]
        assert other["isError"] and "This book has no versions" in other["content"][0]["text"]
    finally:
        plain.close()


def test_page_variants_cover_slash_and_encoding():
    assert page_variants("https://x.io/b/docs/file%20a/#h") == [
        "/b/docs/file%20a", "/b/docs/file%20a/", "/b/docs/file a", "/b/docs/file a/"]
    assert page_variants("/") == ["/"] and page_variants(None) == []


def test_chat_cites_only_the_readers_edition(client, store):
    api = client(search=store)
    for page, prefix in [("/book/docs/sensors/imu", "/book/docs/sensors/"),
                         ("/book/docs/next/sensors/imu", "/book/docs/next/"),
                         ("/book/fr/docs/next/sensors/imu", "/book/fr/docs/next/")]:
        response = api.post("/chat", json={"question": QUESTION, "page_url": page},
                            headers={"Origin": "https://reader.example"})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["citations"], body
        assert all(c["url"].startswith(prefix) for c in body["citations"]), (page, body["citations"])
        # The fr pages of this book are untranslated: each citation says so.
        assert all(c.get("untranslated", False) == ("/fr/" in page) for c in body["citations"])
    bad = api.post("/chat", json={"question": QUESTION, "filters": {"edition": "1.0"}},
                   headers={"Origin": "https://reader.example"})
    assert bad.status_code == 422 and "`version`" in bad.json()["error"]["message"]


@pytest.fixture(scope="module")
def site_store(tmp_path_factory):
    """The versioned two-locale book of tests/indexer/test_editions.py (next: "twenty times",
    1.0 at the docs root: "ten times", fr: next translated, 1.0 untranslated), indexed by a
    real `index` run from the manifests the plugin writes."""
    root = tmp_path_factory.mktemp("site")
    docs, manifest = versioned_site(root)
    settings = Settings(qdrant_path=str(root / "qdrant"), collection="site")
    store = QdrantStore.open(settings)
    index_docs(resolve_job(docs, manifest=manifest), settings, ContentEmbedder(DIM), store,
               say=lambda _: None)
    yield store
    store.close()


def test_the_lambda_answers_a_versioned_two_locale_book_from_one_edition(make_deps, site_store):
    handler = Mangum(create_app(make_deps(search=site_store), "chat"), lifespan="off")

    def ask(**body):
        response = handler(http_api_v2("/chat", body, origin="https://reader.example"), None)
        return response["statusCode"], json.loads(response["body"])

    question = "What test must the robot pass before it may drive alone in the lab?"
    status, body = ask(question=question)  # no page, no filters: the docs root's version
    assert status == 200 and body["citations"], body
    assert {c["url"] for c in body["citations"]} == {"/book/docs/safety#stop-test"}
    assert "ten times" in body["answer"] and "twenty" not in body["answer"]
    status, body = ask(question=question, filters={"version": "current"})
    assert status == 200 and "twenty times" in body["answer"] and "ten" not in body["answer"]

    status, body = ask(question=question, filters={"version": "2.0"})
    assert status == 422 and body["error"]["code"] == "unknown_filter"
    assert body["error"]["message"] == (
        "This book has no version \"2.0\": `filters.version` may be \"current\" or \"1.0\" "
        "(the default), or leave it out to use the reader's page's version.")
    status, body = ask(question=question, page_url="/book/docs/safety", filters={"locale": "de"})
    assert status == 422 and '"en" (the default) or "fr"' in body["error"]["message"]

    # A page fr has not translated: its own URLs, marked; a translated one: its own text.
    status, body = ask(question=question, page_url="/book/fr/docs/safety")
    assert status == 200 and body["citations"], body
    assert all(c["url"].startswith("/book/fr/docs/safety#") and c["untranslated"]
               for c in body["citations"])
    status, body = ask(question="Combien de fois le robot doit-il réussir l'essai d'arrêt ?",
                       page_url="/book/fr/docs/next/safety")
    assert status == 200 and "vingt fois" in body["answer"], body
    assert [(c["url"], c.get("untranslated")) for c in body["citations"]] == [
        ("/book/fr/docs/next/safety#stop-test", None)]


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(version=st.none() | st.text(max_size=12) | st.sampled_from(["1.0", "current", "next"]),
       locale=st.none() | st.text(max_size=6) | st.sampled_from(["en", "fr", "EN"]))
@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_any_edition_filter_is_an_answer_or_a_422_naming_the_editions(client, store, version,
                                                                       locale):
    filters = {k: v for k, v in (("version", version), ("locale", locale)) if v is not None}
    response = client(search=store).post("/chat", json={"question": QUESTION, "filters": filters},
                                         headers={"Origin": "https://reader.example"})
    if response.status_code == 200:
        asked = {"next": "current"}.get(filters.get("version"), filters.get("version"))
        assert {asked or "1.0", "current", "1.0"} == {"current", "1.0"}
        assert (filters.get("locale") or "en") in ("en", "fr")
        return
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "unknown_filter" and "Traceback" not in response.text
    assert ('"current" or "1.0" (the default)' in error["message"]
            or '"en" (the default) or "fr"' in error["message"])


def test_a_translated_page_answers_from_its_locale_first_and_marks_what_only_english_has(
        make_deps, site_store):
    """fr translates next's "Stop test" ({#stop-test}) and not its "Checklist"."""
    api = Mangum(create_app(make_deps(search=site_store), "chat"), lifespan="off")

    def ask(question):
        body = {"question": question, "page_url": "/book/fr/docs/next/safety"}
        response = api(http_api_v2("/chat", body, origin="https://reader.example"), None)
        assert response["statusCode"] == 200, response["body"]
        return json.loads(response["body"])

    # An English question finds the section in the original's words, cited on the fr page.
    body = ask("What test must the robot pass before it may drive alone in the lab?")
    assert "twenty times" in body["answer"], body
    assert [(c["url"], c["title"], c["section_title"], c.get("untranslated"))
            for c in body["citations"]] == [
        ("/book/fr/docs/next/safety#stop-test", "Sécurité", "Essai d'arrêt", None)]
    # A section only the English page has: cited there, and marked.
    body = ask("What should I check before every run of the robot?")
    assert "Check the battery" in body["answer"], body
    assert [(c["url"], c.get("untranslated")) for c in body["citations"]] == [
        ("/book/docs/next/safety#checklist", True)]
    # A French question: the French text alone.
    body = ask("Combien de fois le robot doit-il réussir l'essai d'arrêt ?")
    assert "vingt fois" in body["answer"] and "twenty" not in body["answer"]
    assert {c["url"] for c in body["citations"]} == {"/book/fr/docs/next/safety#stop-test"}


def test_an_agent_naming_a_version_the_book_lacks_gets_an_error_result_with_the_list(make_deps,
                                                                                     site_store):
    from tests.functions.test_mcp import LambdaSession

    agent = LambdaSession(Mangum(create_app(make_deps(search=site_store), "chat", threaded=False),
                                 lifespan="off"))
    agent.initialize()
    reply = agent.call("search_book", {"query": "What must the robot pass?", "version": "2.0"})
    result = reply["result"]  # a tool's error, which the assistant reads and corrects
    assert result["isError"] is True, reply
    assert '"current" or "1.0" (the default)' in result["content"][0]["text"]
    assert result["structuredContent"]["error"]["code"] == "unknown_filter"
    assert result["structuredContent"]["error"]["status"] == 422
    found = agent.call("search_book", {"query": "What must the robot pass?", "locale": "fr"})
    assert found["result"]["structuredContent"]["sections"], found
    assert all(s["url"].startswith("https://x.io/book/fr/docs/safety") for s in  # the
               found["result"]["structuredContent"]["sections"])  # manifest's siteUrl: absolute


def test_a_reload_reads_the_editions_a_re_sync_recorded(tmp_path):
    store = QdrantStore.open(Settings(qdrant_path=str(tmp_path / "q"), collection="c"))
    try:
        embedder = ContentEmbedder(DIM)
        store.ensure_collection(embedder.model_name, embedder.dimension)
        store.mark_synced("2026-11-25T00:00:00+00:00", Editions(("current",), ("en",), "current", "en"))
        retriever = Retriever(store, embedder)
        with pytest.raises(UnknownFilter):
            retriever.retrieve(QUESTION, filters={"version": "1.0"})
        store.mark_synced("2026-11-25T00:01:00+00:00",  # `serve --watch` re-synced a new version
                          Editions(("current", "1.0"), ("en",), "1.0", "en"))
        with pytest.raises(UnknownFilter):  # read once per container
            retriever.retrieve(QUESTION, filters={"version": "1.0"})
        retriever.reload()
        assert retriever.retrieve(QUESTION, filters={"version": "1.0"}) == []
        assert retriever.edition_filters(None, None) == {"version": "1.0", "locale": "en"}
    finally:
        store.close()


FULL_FR = ("---\ntitle: Sécurité\n---\n\n# Sécurité\n\n## Essai d'arrêt\n\n"
           + "Le robot doit réussir l'essai d'arrêt au moins vingt fois avant de rouler seul. " * 3
           + "\n\n## Liste de contrôle\n\n"
           + "Vérifiez la batterie, les capteurs et l'arrêt d'urgence avant chaque essai. " * 3 + "\n")


def test_a_full_translation_without_heading_ids_is_cited_heading_for_heading(tmp_path, make_deps):
    """fr translates the whole page, its headings slugged from French ("essai-darrêt"): the
    original's headings map to the translation's in the same places."""
    docs, manifest = versioned_site(tmp_path)
    (tmp_path / "i18n/fr/docusaurus-plugin-content-docs/current/safety.md").write_text(FULL_FR)
    settings = Settings(qdrant_path=str(tmp_path / "qdrant"), collection="full")
    store = QdrantStore.open(settings)
    try:
        index_docs(resolve_job(docs, manifest=manifest), settings, ContentEmbedder(DIM), store,
                   say=lambda _: None)
        api = Mangum(create_app(make_deps(search=store), "chat"), lifespan="off")
        body = {"question": "What should I check before every run of the robot?",
                "page_url": "/book/fr/docs/next/safety"}
        response = api(http_api_v2("/chat", body, origin="https://reader.example"), None)
        answer = json.loads(response["body"])
        assert "Check the battery" in answer["answer"], answer
        assert [(c["url"], c["section_title"], c.get("untranslated"))
                for c in answer["citations"]] == [
            ("/book/fr/docs/next/safety#liste-de-contrôle", "Liste de contrôle", None)]
    finally:
        store.close()


def _ask_on(store, make_deps, page, question):
    api = Mangum(create_app(make_deps(search=store), "chat"), lifespan="off")
    response = api(http_api_v2("/chat", {"question": question, "page_url": page},
                               origin="https://reader.example"), None)
    assert response["statusCode"] == 200, response["body"]
    return json.loads(response["body"])


PARTIAL_FR = ("---\ntitle: Sécurité\n---\n\n# Sécurité\n\n## Essai d'arrêt\n\n"
              + "Le robot doit réussir l'essai d'arrêt au moins vingt fois avant de rouler seul. " * 3
              + "\n")


def test_a_partly_translated_heading_without_an_id_is_cited_on_the_translated_page(
        tmp_path, make_deps):
    """fr translates the first section only, its heading slugged from French ("essai-darrêt"),
    and not the Checklist: the original's Stop test is cited at fr's own heading (it was cited
    on the English page, marked untranslated, before), the Checklist still on the English page."""
    docs, manifest = versioned_site(tmp_path)
    (tmp_path / "i18n/fr/docusaurus-plugin-content-docs/current/safety.md").write_text(PARTIAL_FR)
    settings = Settings(qdrant_path=str(tmp_path / "qdrant"), collection="partial")
    store = QdrantStore.open(settings)
    try:
        index_docs(resolve_job(docs, manifest=manifest), settings, ContentEmbedder(DIM), store,
                   say=lambda _: None)
        page = "/book/fr/docs/next/safety"
        body = _ask_on(store, make_deps, page,
                       "What test must the robot pass before it may drive alone in the lab?")
        assert "twenty times" in body["answer"], body
        assert [(c["url"], c["section_title"], c.get("untranslated"))
                for c in body["citations"]] == [
            ("/book/fr/docs/next/safety#essai-darrêt", "Essai d'arrêt", None)]
        body = _ask_on(store, make_deps, page, "What should I check before every run of the robot?")
        assert [(c["url"], c.get("untranslated")) for c in body["citations"]] == [
            ("/book/docs/next/safety#checklist", True)]
    finally:
        store.close()


def _headings(spec: str) -> list[tuple]:
    """"a2 b3" -> [("a", "/p#a", "A", 2), ("b", "/p#b", "B", 3)]; a level "?" is unknown."""
    out = []
    for token in spec.split():
        name, level = token[:-1], token[-1]
        out.append((name, f"/p#{name}", name.upper(), None if level == "?" else int(level)))
    return out


@pytest.mark.parametrize(("original", "translated", "expected"), [
    # a whole translation: every heading in the same place
    ("top1 a2 b3 c2", "top1 x2 y3 z2", {"a": "x", "b": "y", "c": "z"}),
    # translated in place up to a heading kept in English, which the original has since
    # gained a section after: the runs before it are as long as each other
    ("top1 a2 b3 keep2 new2", "top1 x2 y3 keep2", {"a": "x", "b": "y"}),
    # a translation that stops partway: from the run's start while the levels agree
    ("top1 a2 b2", "top1 x2", {"a": "x"}),
    # fr's safety page: H3 left out, its H4 translated: the only H4 left in the run
    ("top1 stops2 hw3 test4 dog2 log3", "top1 stops2 x4", {"test": "x"}),
    # two H3s the translation's H3 could be: neither is guessed
    ("top1 a2 b2 c3 d3", "top1 a2 x3", {}),
    # an index written before levels were recorded: only runs as long as each other
    ("top? a? b?", "top? x?", {}),
    ("top? a? b?", "top? x? y?", {"a": "x", "b": "y"}),
])
def test_a_translations_headings_pair_with_the_originals_in_the_same_places(original, translated,
                                                                             expected):
    pairs = _same_places(_headings(original), _headings(translated))
    assert {a: heading[0] for a, heading in pairs} == expected
