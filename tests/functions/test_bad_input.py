"""Bad input gets the right status and a message a reader understands; nothing crashes."""

from __future__ import annotations

import json

import pytest

from functions.errors import StoreUnavailableError
from functions.search.qdrant_http import QdrantHttp

CASES = [
    # (route, raw body, status, code, words in the message)
    ("/chat", b'{"question": ""}', 422, "empty_field", "type a question"),
    ("/chat", b'{"question": "   \\n\\t "}', 422, "empty_field", "empty"),
    ("/chat", json.dumps({"question": "x" * 100_000}).encode(), 413, "too_large", "KB"),
    ("/chat", json.dumps({"question": "x" * 5000}).encode(), 413, "too_large", "2,000"),
    ("/chat", b'{"question": "loop', 400, "invalid_json", "not valid JSON"),
    ("/chat", b"", 400, "empty_body", "empty"),
    ("/chat", b"\xff\xfe\x00q", 400, "bad_encoding", "UTF-8"),
    ("/chat", b'["question"]', 422, "invalid_field", "JSON object"),
    ("/chat", b'{"question": 42}', 422, "invalid_field", "must be a string"),
    ("/chat", b'{"question": "hi", "top_k": "5"}', 422, "invalid_field", "top_k"),
    ("/chat", b'{"question": "hi", "top_k": 99}', 422, "invalid_field", "1 to 10"),
    ("/chat", b'{"question": "hi", "mode": "telepathy"}', 422, "invalid_field", "hybrid"),
    ("/chat", b'{"question": "hi", "colour": "red"}', 422, "unknown_field", "colour"),
    ("/chat", b'{"question": "hi", "history": "nope"}', 422, "invalid_field", "history"),
    ("/chat", json.dumps({"question": "hi", "history": [{"role": "user", "content": "q"}] * 1000})
     .encode(), 413, "too_large", "1000 messages"),
    ("/chat", b'{"question": "hi", "history": [{"role": "system", "content": "x"}]}', 422,
     "invalid_field", "user or assistant"),
    ("/chat", b'{"question": "hi", "filters": {"tag": "x"}}', 422, "invalid_field", "module"),
    ("/chat", b'{"question": "hi", "page_url": "javascript:alert(1)"}', 422, "invalid_field",
     "URL"),
    ("/selection", b'{"question": "what?"}', 422, "missing_field", "select some text"),
    ("/selection", b'{"question": "what?", "selected_text": " "}', 422, "empty_field",
     "select some text"),
    ("/selection", b'{"question": "q", "selected_text": "t", "anchor": "\\"><script>"}', 422,
     "invalid_field", "heading id"),
    ("/selection", json.dumps({"question": "q", "selected_text": "word " * 5000}).encode(), 413,
     "selection_too_large", "tokens"),
    ("/feedback", b'{"request_id": "x", "rating": "meh"}', 422, "invalid_field", "up"),
    # crafted strings and shapes: each once crashed the app or its error handler
    ("/chat", b'{"question": "\\ud800"}', 400, "bad_text", "`question`"),
    ("/chat", b'{"question": "hi", "\\udfff": 1}', 400, "bad_text", "field name"),
    ("/selection", b'{"question": "q", "selected_text": "a\\udbff b"}', 400, "bad_text",
     "`selected_text`"),
    ("/chat", b'{"question": "hi", "history": [{"role": "user", "content": "\\ud83d"}]}', 400,
     "bad_text", "`history`"),
    ("/feedback", b'{"request_id": "x", "rating": "up", "comment": "\\udc00"}', 400, "bad_text",
     "`comment`"),
    ("/chat", b'{"q": ' + b"[" * 30_000 + b"]" * 30_000 + b"}", 400, "too_deep", "nested"),
    ("/chat", b'{"question": "hi", "filters": ' + b'{"a":' * 20 + b"1" + b"}" * 21, 400,
     "too_deep", "nested"),
    ("/chat", b'{"question": "hi", "top_k": ' + b"9" * 5000 + b"}", 400, "invalid_json", "JSON"),
    ("/chat", b'{"question": "hi", "top_k": 1e400}', 422, "invalid_field", "top_k"),
    ("/chat", b'{"question": "hi", "top_k": NaN}', 400, "invalid_json", "NaN"),
    ("/chat", b'{"question": "hi", "top_k": -Infinity}', 400, "invalid_json", "Infinity"),
    ("/chat", b'{"question": "a\x01b"}', 400, "invalid_json", "JSON"),  # raw control character
    ("/chat", b'{"question": "\\u0000"}', 422, "invalid_field", "NUL"),
]


@pytest.mark.parametrize(("route", "raw", "status", "code", "words"), CASES,
                         ids=[f"{c[0]}-{c[3]}-{i}" for i, c in enumerate(CASES)])
def test_bad_input(client, route, raw, status, code, words):
    r = client().post(route, content=raw, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    body = r.json()
    assert body["error"]["code"] == code
    assert words in body["error"]["message"]
    assert body["request_id"] == r.headers["x-request-id"]
    assert "Traceback" not in r.text


def test_malformed_input_keeps_cors_headers(client):
    c = client()
    for raw in (b'{"question": "\\ud800"}', b'{"\\ud800": 1}', b"[" * 30_000, b"\xff"):
        r = c.post("/chat", content=raw, headers={"content-type": "application/json",
                                                 "origin": "https://reader.example"})
        assert 400 <= r.status_code < 500, r.text
        assert r.headers["access-control-allow-origin"] == "https://reader.example"
        assert r.json()["request_id"] == r.headers["x-request-id"]


def test_control_characters_are_spaces(client):
    c = client()
    r = c.post("/chat", json={"question": "loop\u0007 jitter\u001b[31m\u0085?"})
    assert r.status_code == 200, r.text
    assert c.deps.feedback.answers[r.json()["request_id"]]["question"] == "loop  jitter [31m ?"


def test_qdrant_unreachable(client):
    dead = QdrantHttp("http://127.0.0.1:9", "book", timeout=0.5, retries=0)
    r = client(search=dead).post("/chat", json={"question": "loop jitter"})
    assert r.status_code == 503
    assert r.json()["error"]["code"] == "index_unavailable"
    assert "cannot be reached" in r.json()["error"]["message"]


def test_collection_missing(client, book_store):
    missing = book_store.collection_store("no-such-book")
    r = client(search=missing).post("/chat", json={"question": "loop jitter"})
    assert r.status_code == 503
    assert "textbook-chat index" in r.json()["error"]["message"]


def test_model_mismatch_is_a_clear_503(client):
    from tests.fakes.embedder import ContentEmbedder

    r = client(embedder=ContentEmbedder(64, model_name="text-embedding-3-small")).post(
        "/chat", json={"question": "loop jitter"})
    assert r.status_code == 503
    msg = r.json()["error"]["message"]
    assert r.json()["error"]["code"] == "model_mismatch"
    assert "'fake-embedder'" in msg and "text-embedding-3-small" in msg and "EMBEDDING" in msg


def test_configuration_error_answers_503_everywhere():
    from starlette.testclient import TestClient

    from functions.api.app import create_app
    from functions.api.deps import Deps

    deps = Deps.from_env({"CHAT_PROVIDER": "openai"})  # no OPENAI_API_KEY
    c = TestClient(create_app(deps, "all"), raise_server_exceptions=False)
    for r in (c.post("/chat", json={"question": "x"}), c.get("/health"),
              c.post("/selection", json={"question": "q", "selected_text": "t"})):
        assert r.status_code == 503
        assert "OPENAI_API_KEY" in r.json()["error"]["message"]


def test_store_errors_never_leak_internals(client):
    class Broken:
        def collection_meta(self):
            raise RuntimeError("secret internal path /var/task/x.py line 3")

        def search(self, *a, **k):
            raise AssertionError

    r = client(search=Broken()).post("/chat", json={"question": "loop jitter"})
    assert r.status_code == 500
    assert "secret" not in r.text and r.json()["error"]["code"] == "internal"
    assert isinstance(StoreUnavailableError("x"), Exception)
