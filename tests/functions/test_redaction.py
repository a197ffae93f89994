"""No error body or log line shows a credential, a connection URL, a local path or a service's
raw reply: readers get a short message, operators a redacted log line with the request id."""

from __future__ import annotations

import io
import json
import logging

import pytest
from starlette.testclient import TestClient

from functions.api.app import create_app
from functions.api.deps import Deps
from functions.api.http_errors import _LOG, _JsonFormatter, redact
from functions.search.qdrant_http import QdrantHttp
from functions.services.openai_http import OpenAIChat, OpenAIHttp
from tests.fakes.embedder import ContentEmbedder
from tests.functions.conftest import DIM

SECRETS = ("s3cret-Passw0rd", "qdrant-key-0123456789", "sk-proj-abcdef0123456789",
           "AKIAEXAMPLEKEY000000", "aws-secret-xyz-0123456789", "127.0.0.1:9")


@pytest.fixture
def log_lines():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_JsonFormatter())
    _LOG.addHandler(handler)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    _LOG.removeHandler(handler)


def _assert_clean(text: str, *extra: str) -> None:
    for secret in SECRETS + extra:
        assert secret not in text, (secret, text)
    assert "://" not in text and "Traceback" not in text


def test_qdrant_url_with_credentials_never_shows(book_settings, log_lines):
    url = "https://admin:s3cret-Passw0rd@127.0.0.1:9"
    settings = book_settings.with_(qdrant_url=url, qdrant_api_key="qdrant-key-0123456789")
    deps = Deps(settings, env={}, embedder=ContentEmbedder(DIM), chat_model=None,
                search=QdrantHttp(url, "book", "qdrant-key-0123456789", timeout=0.5, retries=0))
    r = TestClient(create_app(deps, "all")).post("/chat", json={"question": "loop jitter"})
    assert r.status_code == 503 and r.json()["error"]["code"] == "index_unavailable"
    assert "check QDRANT_URL" in r.json()["error"]["message"]
    _assert_clean(r.text)
    [error] = [line for line in log_lines() if line["msg"] == "error"]
    assert error["request_id"] == r.json()["request_id"]  # the operator can find the request
    assert "ConnectError" in error["error"] or "ConnectTimeout" in error["error"]
    _assert_clean(json.dumps(log_lines()))


def test_dynamodb_endpoint_and_aws_keys_never_show(book_settings, log_lines):
    env = {"AWS_REGION": "eu-west-1", "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:9",
           "AWS_ACCESS_KEY_ID": "AKIAEXAMPLEKEY000000",
           "AWS_SECRET_ACCESS_KEY": "aws-secret-xyz-0123456789"}
    deps = Deps(book_settings.with_(dynamodb_table="tc"), env=env, chat_model=None,
                embedder=ContentEmbedder(DIM))
    r = TestClient(create_app(deps, "all")).post("/feedback", json={"request_id": "x",
                                                                    "rating": "up"})
    assert r.status_code == 503 and r.json()["error"]["code"] == "limits_unavailable"
    _assert_clean(r.text, "DynamoDB", "eu-west-1")
    [error] = [line for line in log_lines() if line["msg"] == "error"]
    assert "DynamoDB cannot be reached" in error["error"]  # the operator's log says which
    _assert_clean(json.dumps(log_lines()))


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_raw_upstream_text_stays_out_of_the_reply(make_deps, book_settings, fake_openai, log_lines):
    fake_openai.fail_next(status=401, endpoint="chat", message=(
        "Incorrect API key provided: sk-proj-abcdef0123456789. Org org-77 at "
        "https://internal.example/v1 /srv/openai/keys.txt"))
    key = "sk-proj-abcdef0123456789"
    deps = make_deps(settings=book_settings.with_(chat_provider="openai", openai_api_key=key,
                                                  openai_base_url=fake_openai.base_url),
                     chat_model=OpenAIChat(OpenAIHttp(key, fake_openai.base_url)))
    r = TestClient(create_app(deps, "all")).post("/chat", json={"question": "loop jitter"})
    assert r.status_code == 502 and "OPENAI_API_KEY" in r.json()["error"]["message"]
    _assert_clean(r.text, "org-77", "/srv/openai")
    fake_openai.fail_next(status=500, times=3, endpoint="chat", message="boom at /srv/x/y.py")
    r = TestClient(create_app(deps, "all")).post("/chat", json={"question": "loop jitter"})
    assert r.status_code == 200 and r.json()["mode"] == "offline-fallback"  # the offline answer
    _assert_clean(r.text, "boom", "/srv/")
    _assert_clean(json.dumps(log_lines()), "/srv/")


def test_unusable_qdrant_path_is_a_short_503(book_settings, tmp_path, log_lines):
    blocker = tmp_path / "private-folder-name"
    blocker.write_text("a file where the index folder should be")
    settings = book_settings.with_(qdrant_path=str(blocker / "qdrant"))
    deps = Deps(settings, env={}, embedder=ContentEmbedder(DIM), chat_model=None)
    r = TestClient(create_app(deps, "all")).post("/chat", json={"question": "loop jitter"})
    assert r.status_code == 503, r.text
    message = r.json()["error"]["message"]
    assert "QDRANT_PATH" in message and "cannot hold the local index" in message
    _assert_clean(r.text, "private-folder-name", str(tmp_path))
    _assert_clean(json.dumps(log_lines()), "private-folder-name", str(tmp_path))


def test_a_bug_with_a_path_in_it_is_a_plain_500(client, log_lines):
    class Broken:
        def collection_meta(self):
            raise RuntimeError("cannot open /var/task/functions/secret.py for admin:pw@db.local")

    r = client(search=Broken()).post("/chat", json={"question": "loop jitter"})
    assert r.status_code == 500 and r.json()["error"]["code"] == "internal"
    lines = json.dumps(log_lines())
    assert "RuntimeError" in lines and "/var/task" not in lines and "admin:pw" not in lines


@pytest.mark.parametrize(("raw", "kept"), [
    ("at https://u:p@h.io:6333/x (ConnectError)", "(ConnectError)"),
    ("Incorrect API key provided: sk-abc***xyz", "Incorrect API key provided"),
    ("token=abc123; api_key: zzz", "token="),
    ("open /home/me/book/.textbook-chat/qdrant failed", "failed"),
    ("C:\\Users\\me\\q is busy", "is busy"),
    ("Bearer eyJhbGciOi.x.y", "Bearer"),
    ("run `textbook-chat index DOCS_DIR` first; see /chat", "see /chat"),
])
def test_redact_patterns(raw, kept):
    out = redact(raw)
    assert kept in out
    assert not any(s in out for s in ("u:p", "6333", "abc***", "abc123", "/home/me", "Users",
                                      "eyJhbG"))
