"""Answers pinned to the edition and language being read: the version and locale come from the
reader's page (or explicit filters), and a section identical in two editions is cited once."""

from __future__ import annotations

from dataclasses import replace

import pytest

from functions.search.contract import chunk_id, content_hash
from functions.search.retrieval import Retriever, page_variants
from functions.search.sparse import encode_document
from functions.search.store import QdrantStore
from functions.settings import Settings
from tests.fakes.embedder import ContentEmbedder
from tests.functions.book import chunks
from tests.functions.conftest import DIM

# (version, locale, URL prefix replacing /book/docs)
EDITIONS = [("current", "en", "/book/docs/next"), ("1.0", "en", "/book/docs"),
            ("current", "fr", "/book/fr/docs/next")]


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


def test_off_book_pages_see_every_edition_but_each_text_once(store):
    hits = Retriever(store, ContentEmbedder(DIM)).retrieve(QUESTION, page_url="/book/", top_k=8)
    hashes = [h.payload["content_hash"] for h in hits]
    assert len(hashes) == len(set(hashes))
    assert len(editions_of(hits)) > 1


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
