"""The Lambda `stream` function (functions.api.lambda_stream) against a Runtime API over real
HTTP (tests/fakes/lambda_runtime.py): a function-URL event asked with
`Accept: application/x-ndjson` gets each checked sentence while the model (the fake OpenAI server,
held) is still writing, and a final answer equal to the one the same request gets unstreamed;
everything else is the app's usual response behind the function URL's prelude. The last test runs
the function as Lambda would: the exec wrapper in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from functions.api.app import create_app
from functions.api.lambda_stream import PRELUDE_TYPE, RuntimeApi, serve
from functions.services.openai_http import OpenAIChat, OpenAIHttp
from tests.fakes.lambda_runtime import FakeRuntimeApi
from tests.functions.events import function_url
from tests.functions.test_model_answers import JITTER
from tests.functions.test_streaming import REPLY, SHOWN, TRUE_1
from tests.shared import eventually, patience

ROOT = Path(__file__).resolve().parents[2]
WRAPPER = ROOT / "functions" / "api" / "handlers" / "stream-runtime"
SITE = "https://reader.example"
NDJSON = {"accept": "application/x-ndjson", "origin": SITE, "content-type": "application/json"}


def _deadline() -> int:
    return int(time.time() * 1000) + 25_000


@pytest.fixture
def runtime():
    api = FakeRuntimeApi().start()
    yield api
    api.stop()


@pytest.fixture
def stream_function(make_deps, book_settings, fake_openai, runtime):
    """The `stream` function's app (the chat routes, inline work, streams=True) answering
    `count` invocations from the fake Runtime API on a thread, as its runtime loop does."""
    def start(count: int):
        llm = OpenAIChat(OpenAIHttp("k", fake_openai.base_url, timeout=30.0, deadline=60.0))
        deps = make_deps(chat_model=llm,
                         settings=book_settings.with_(chat_provider="openai", openai_api_key="k"))
        app = create_app(deps, "chat", threaded=False, streams=True)
        loop = threading.Thread(target=serve, args=(app, RuntimeApi(runtime.address), count),
                                daemon=True)
        loop.start()
        return loop
    return start


def _done(response) -> None:
    assert response.done.wait(patience(60)), "the function never finished its response"


def test_sentences_reach_the_function_url_while_the_model_writes(stream_function, runtime,
                                                                 fake_openai):
    fake_openai.reply_next(REPLY, times=2)
    loop = stream_function(2)
    plain = runtime.invoke(function_url("/chat", {"question": JITTER},
                                        headers={"origin": SITE}), _deadline())
    _done(plain)
    assert plain.mode == "streaming" and plain.content_type == PRELUDE_TYPE
    assert plain.prelude["statusCode"] == 200
    assert plain.prelude["headers"]["content-type"] == "application/json"
    assert plain.prelude["headers"]["access-control-allow-origin"] == SITE
    expected = json.loads(plain.body)

    gate = fake_openai.hold_streams()  # the model stops after its first sentence and a word
    try:
        streamed = runtime.invoke(function_url("/chat", {"question": JITTER}, headers=NDJSON),
                                  _deadline())
        first = eventually(lambda: streamed.lines(), "the first checked sentence")
        # the reader has the first sentence; the model has not written the rest
        assert first[0]["partial"]["answer"] == TRUE_1
        assert not gate.is_set() and not streamed.done.is_set()
        assert streamed.prelude["statusCode"] == 200
        assert streamed.prelude["headers"]["content-type"].startswith("application/x-ndjson")
        assert streamed.prelude["headers"]["access-control-allow-origin"] == SITE
    finally:
        gate.set()
    _done(streamed)
    lines = streamed.lines()
    assert all("cosmic" not in line.get("partial", {}).get("answer", "") for line in lines)
    final = lines[-1]["final"]
    assert final["answer"] == SHOWN
    assert {k: v for k, v in final.items() if k != "request_id"} == \
        {k: v for k, v in expected.items() if k != "request_id"}
    assert streamed.trailers == {} and streamed.error is None
    loop.join(patience(30))
    assert not loop.is_alive()


def test_refusals_and_bad_input_keep_their_status_behind_the_prelude(stream_function, runtime,
                                                                    fake_openai):
    runtime.chunked = True  # events may come chunked, as any HTTP/1.1 body
    stream_function(3)
    preflight = runtime.invoke(function_url("/chat", None, method="OPTIONS", headers={
        "origin": SITE, "access-control-request-method": "POST",
        "access-control-request-headers": "content-type"}), _deadline())
    bad = runtime.invoke(function_url("/chat", {"question": JITTER, "top_k": 99},
                                      headers=NDJSON), _deadline())
    forged = runtime.invoke(function_url("/chat", {"question": JITTER}, headers={
        **NDJSON, "origin": "https://elsewhere.example"}), _deadline())
    for response in (preflight, bad, forged):
        _done(response)
    # the function URL has no CORS setting: the app answers the browser's preflight
    assert preflight.prelude["statusCode"] == 200
    assert preflight.prelude["headers"]["access-control-allow-origin"] == SITE
    assert bad.prelude["statusCode"] == 422
    assert json.loads(bad.body)["error"]["code"] == "invalid_field"
    # the function URL keeps the API's origin check: another site's request does no work
    assert forged.prelude["statusCode"] == 403
    assert fake_openai.chat_requests == []


@pytest.mark.slow  # a Python process of its own (~4 s by the clock): the whole suite runs it
def test_the_exec_wrapper_runs_the_function_as_lambda_does(runtime, tmp_path):
    """The wrapper replaces the managed runtime's command; init is the `chat` function's; with
    SnapStart it waits to be restored before asking for an invocation."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "QDRANT_", "AWS_", "DYNAMODB_", "EMBEDDING_"))}
    env.update(AWS_LAMBDA_RUNTIME_API=runtime.address, LAMBDA_TASK_ROOT=str(ROOT),
               AWS_LAMBDA_FUNCTION_NAME="textbook-chat-ci-stream",
               AWS_LAMBDA_INITIALIZATION_TYPE="snap-start",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               OPENAI_API_KEY="sk-test", OPENAI_BASE_URL="http://127.0.0.1:9/v1",
               QDRANT_PATH=str(tmp_path / "none"), ALLOWED_ORIGINS=SITE)
    proc = subprocess.Popen([str(WRAPPER), "/var/runtime/bootstrap"], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert runtime.restore_asked.wait(patience(120)), proc.stdout.read1().decode()[-2000:]
        empty = runtime.invoke(function_url("/chat", {"question": ""},
                                            headers={"origin": SITE}), _deadline())
        assert runtime.pending() == 1  # no invocation is asked for before the restore
        runtime.restored.set()
        _done(empty)
        assert empty.mode == "streaming" and empty.prelude["statusCode"] == 422
        assert json.loads(empty.body)["error"]["code"] == "empty_field"
        assert runtime.init_error is None
    finally:
        runtime.restored.set()
        proc.kill()
        proc.wait()
