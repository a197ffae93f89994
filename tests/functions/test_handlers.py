"""Mangum handlers fed real Lambda events; the selection function's isolation from Qdrant."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mangum import Mangum

from functions.api.app import create_app
from functions.services.ratelimit import MemoryRateLimiter
from tests.functions.events import function_url, http_api_v2

ROOT = Path(__file__).resolve().parents[2]
SELECTION = {"question": "What is jitter?",
             "selected_text": "Jitter is the variation of the loop period. It adds noise.",
             "page_url": "https://site.example/book/docs/loop", "anchor": "loop-jitter"}


def _normalise(response: dict) -> dict:
    """The response with its random request id replaced by RID."""
    rid = response["headers"]["x-request-id"]
    out = json.loads(json.dumps(response).replace(rid, "RID"))
    out["body"] = json.loads(out["body"])
    return out


def test_selection_handler_whole_response_http_api(make_deps):
    handler = Mangum(create_app(make_deps(), "selection"), lifespan="off")
    response = handler(http_api_v2("/selection", SELECTION, origin="https://reader.example"),
                       None)
    body = {"answer": "Jitter is the variation of the loop period [1].", "outcome": "answered",
            "citations": [{"n": 1, "title": "Your selection", "section_title": "Loop jitter",
                           "url": "https://site.example/book/docs/loop#loop-jitter",
                           "doc_path": "", "score": 1.0, "snippet": SELECTION["selected_text"]}],
            "confidence": 1.0, "low_confidence": False, "request_id": "RID"}
    assert _normalise(response) == {
        "statusCode": 200,
        "headers": {"x-request-id": "RID", "cache-control": "no-store",
                    "content-length": str(len(json.dumps(body, separators=(",", ":"))) - 3 + 32),
                    "content-type": "application/json",
                    "access-control-allow-origin": "https://reader.example",
                    "access-control-expose-headers": "X-Request-Id, Retry-After",
                    "vary": "Origin"},
        "body": body,
        "isBase64Encoded": False,
    }


def test_chat_handler_function_url_error_response(make_deps):
    handler = Mangum(create_app(make_deps(), "chat"), lifespan="off")
    response = handler(function_url("/chat", {"question": ""}), None)
    assert _normalise(response) == {
        "statusCode": 422,
        "headers": {"x-request-id": "RID", "cache-control": "no-store",
                    "content-length": response["headers"]["content-length"],
                    "content-type": "application/json", "vary": "Origin"},
        "body": {"error": {"code": "empty_field",
                           "message": "`question` is empty; type a question first."},
                 "request_id": "RID"},
        "isBase64Encoded": False,
    }


NOON = 1_800_000_030.0  # a frozen clock for the rate limiter: no minute ends mid-test


def test_chat_handler_answers_and_limits_by_source_ip(make_deps):
    deps = make_deps(rate_limiter=MemoryRateLimiter(1, 100, clock=lambda: NOON))
    handler = Mangum(create_app(deps, "chat"), lifespan="off")
    ok = handler(http_api_v2("/chat", {"question": "How do I measure loop jitter?"}), None)
    assert ok["statusCode"] == 200
    assert json.loads(ok["body"])["citations"][0]["url"] == "/book/docs/loop#loop-jitter"
    again = handler(http_api_v2("/chat", {"question": "jitter"}), None)
    assert again["statusCode"] == 429 and "retry-after" in again["headers"]
    other_ip = handler(http_api_v2("/chat", {"question": "jitter"}, source_ip="192.0.2.1"), None)
    assert other_ip["statusCode"] == 200
    health = handler(http_api_v2("/health", None, method="GET"), None)
    assert health["statusCode"] == 200


class Exploding:
    """A Qdrant client / search backend / embedder that fails on any use."""

    model_name = "boom"
    dimension = 1

    def __getattr__(self, name):
        raise AssertionError(f"the selection function touched Qdrant/embeddings: .{name}")


def test_selection_never_calls_qdrant_or_embeddings(make_deps):
    deps = make_deps(search=Exploding(), embedder=Exploding())
    handler = Mangum(create_app(deps, "selection"), lifespan="off")
    for body in (SELECTION, {**SELECTION, "question": "How do encoders count ticks?"}):
        response = handler(http_api_v2("/selection", body), None)
        assert response["statusCode"] == 200, response["body"]
    assert "retriever" not in deps._built and "search" not in deps._built


ISOLATION = r"""
import json, sys
from tests.functions.events import http_api_v2
from functions.api.handlers.selection import handler
r = handler(http_api_v2("/selection", json.loads(sys.argv[1])), None)
bad = sorted(m for m in sys.modules if m.split(".")[0] in ("qdrant_client", "openai", "fastapi")
             or m.startswith(("functions.search.embeddings", "functions.search.store", "functions.search.retrieval",
                              "functions.search.qdrant_http")))
print(json.dumps({"status": r["statusCode"], "body": json.loads(r["body"]), "bad": bad}))
"""


def test_selection_handler_imports_nothing_of_qdrant_in_a_fresh_process(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QDRANT_URL": "http://127.0.0.1:9",
           "QDRANT_PATH": str(tmp_path / "none")}
    env.pop("OPENAI_API_KEY", None)
    out = subprocess.run([sys.executable, "-c", ISOLATION, json.dumps(SELECTION)], env=env,
                         cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["status"] == 200 and result["body"]["citations"][0]["url"].endswith(
        "#loop-jitter")
    assert result["bad"] == []
    assert not (tmp_path / "none").exists()  # never opened the local index either


def test_chat_handler_import_is_light(tmp_path):
    """Building the chat container imports no Qdrant, embedding or SDK code until a question."""
    code = ("import sys; import functions.api.handlers.chat; print(sorted(m for m in sys.modules if "
            "m.split('.')[0] in ('qdrant_client', 'openai', 'numpy', 'tiktoken', 'boto3') or "
            "m.startswith(('functions.search.embeddings', 'functions.search.store'))))")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QDRANT_PATH": str(tmp_path / "q")}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
