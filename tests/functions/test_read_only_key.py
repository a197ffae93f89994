"""The API runs with a read-only Qdrant key (docs/deploying.md "Two Qdrant keys"): the chat
function's whole path, /health and /chat, only reads. The sample book behind the Qdrant REST
stand-in, which refuses any write made with that key as Qdrant does; the real app through
Mangum, fed API Gateway v2 events."""

from __future__ import annotations

import json

import httpx
import pytest
from mangum import Mangum

from functions.api.app import create_app
from functions.api.deps import Deps
from tests.functions.events import http_api_v2
from tests.functions.sample_rest import COLLECTION, sample_book_rest, sample_questions
from tests.minilm import cached_minilm

pytestmark = pytest.mark.slow
READER = "read-only-key-0123"


def test_the_chat_path_answers_with_a_read_only_key():
    question = sample_questions()[0]
    with sample_book_rest(read_only_key=READER, embedder=cached_minilm()) as url:
        # the stand-in does refuse a write made with that key (what the indexer would need)
        refused = httpx.put(f"{url}/collections/{COLLECTION}/points", headers={"api-key": READER},
                            json={"points": []}, timeout=10)
        assert refused.status_code == 403
        deps = Deps.from_env({"QDRANT_URL": url, "QDRANT_API_KEY": READER,
                              "QDRANT_COLLECTION": COLLECTION, "EMBEDDING_PROVIDER": "local",
                              "CHAT_PROVIDER": "extractive"})
        handler = Mangum(create_app(deps, "chat", threaded=False), lifespan="off")
        health = handler(http_api_v2("/health", None, "GET"), None)
        answer = handler(http_api_v2("/chat", {"question": question["question"]}), None)
    assert health["statusCode"] == 200, health["body"]
    assert answer["statusCode"] == 200, answer["body"]
    urls = [c["url"] for c in json.loads(answer["body"])["citations"]]
    assert question["expected_url"] in urls
