"""Property test of the API: no input, however malformed, gets a 5xx or a non-JSON answer.

Strings include lone surrogates, NUL and other control characters, bidi and BOM marks, in
values and in field names; bodies include 30,000-deep nesting, numbers past every float and
int limit, NaN/Infinity, raw bytes. Run through the ASGI app and the Lambda handler (Mangum).
"""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mangum import Mangum
from starlette.testclient import TestClient

from functions.api.app import create_app
from tests.functions.events import function_url, http_api_v2

ODD = ["\ud800", "\udfff", "\udbff\u0041", "\x00", "\x07", "\x1b[31m", "\x7f", "\u0085",
       "\u202e", "\ufeff", "\uffff", "\U0010ffff", "\r\n", "😀"]
texts = (st.text(alphabet=st.characters(exclude_categories=()), max_size=60)
         | st.lists(st.sampled_from(ODD) | st.text(max_size=5), max_size=8).map("".join))
numbers = st.integers() | st.floats() | st.sampled_from([2**64, -(2**63) - 1, 10**400])
scalars = st.none() | st.booleans() | numbers | texts
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(texts, inner, max_size=4), max_leaves=12)
turns = st.lists(st.fixed_dictionaries({}, optional={"role": st.sampled_from(
    ["user", "assistant", "system", 3]), "content": values}), max_size=8)
KEYS = {"question": texts | st.text(max_size=300) | values, "history": turns | values,
        "page_url": st.sampled_from(["/docs/x", "https://s.io/a#b", "javascript:x", ""]) | values,
        "filters": st.fixed_dictionaries({}, optional={"module": values, "doc_path": values,
                                                       "version": values, "locale": values})
        | values, "top_k": st.integers(-3, 20) | values,
        "mode": st.sampled_from(["hybrid", "dense", "sparse", "x"]) | values,
        "selected_text": texts | st.text(max_size=500) | values,
        "anchor": texts | values, "request_id": values,
        "rating": st.sampled_from(["up", "down", "meh"]) | values, "comment": values}
RAW_NUMBERS = [b"1e400", b"-1e400", b"1e-400", b"9" * 5000, b"-" + b"9" * 4299, b"NaN",
               b"Infinity", b"-Infinity", b"0x10", b"01", b"1.", b"-0", b"1" * 300 + b".5"]


def _deep(n: int, key: bytes) -> bytes:
    return b'{"' + key + b'": ' + b"[" * n + b"]" * n + b"}"


# well-formed requests carrying odd text reach retrieval, the answerers and the stores
shaped = st.one_of(
    st.fixed_dictionaries({"question": texts}, optional={"history": st.lists(
        st.fixed_dictionaries({"role": st.just("user"), "content": texts}), max_size=3),
        "page_url": texts.map(lambda s: "/docs/" + s), "filters": st.fixed_dictionaries(
            {}, optional={"module": texts, "doc_path": texts, "version": texts,
                          "locale": texts})}),
    st.fixed_dictionaries({"question": texts, "selected_text": texts},
                          optional={"anchor": texts, "page_url": texts.map("https://a.io/".__add__)}),
    st.fixed_dictionaries({"request_id": texts, "rating": st.sampled_from(["up", "down"])},
                          optional={"comment": texts}),
).map(lambda d: json.dumps(d).encode())
bodies = (
    shaped | shaped
    | st.fixed_dictionaries({}, optional=KEYS).map(lambda d: json.dumps(d).encode())
    | st.dictionaries(texts, values, max_size=4).map(lambda d: json.dumps(d).encode())
    | values.map(lambda v: json.dumps(v).encode())
    | st.builds(_deep, st.integers(1, 30_000), st.sampled_from([b"question", b"history", b"x"]))
    | st.builds(lambda k, n: b'{"question": "q", "' + k + b'": ' + n + b"}",
                st.sampled_from([b"top_k", b"question", b"rating"]), st.sampled_from(RAW_NUMBERS))
    | st.binary(max_size=200)
)
ALLOWED = {200, 400, 404, 405, 413, 422, 429}
ROUTES = ["/chat", "/selection", "/feedback"]
FUZZ = settings(max_examples=200, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _check(status: int, headers, text: str, origin: str | None) -> None:
    assert status in ALLOWED, (status, text)
    data = json.loads(text)
    assert data["request_id"] == headers["x-request-id"]
    if status != 200:
        assert set(data["error"]) == {"code", "message"} and data["error"]["message"]
        assert "Traceback" not in text
    if origin:
        assert headers["access-control-allow-origin"] == origin


@pytest.fixture
def app_client(make_deps):
    return TestClient(create_app(make_deps(), "all"), raise_server_exceptions=False)


@FUZZ
@given(route=st.sampled_from(ROUTES), body=bodies,
       origin=st.sampled_from([None, "https://reader.example"]))
@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_no_5xx_on_any_input(app_client, route, body, origin):
    headers = {"content-type": "application/json", **({"origin": origin} if origin else {})}
    r = app_client.post(route, content=body, headers=headers)
    _check(r.status_code, r.headers, r.text, origin)


@pytest.fixture
def handlers(make_deps):
    deps = make_deps()
    return {"chat": Mangum(create_app(deps, "chat", threaded=False), lifespan="off"),
            "selection": Mangum(create_app(deps, "selection", threaded=False), lifespan="off")}


@settings(FUZZ, max_examples=100)
@given(route=st.sampled_from(ROUTES), body=bodies,
       event=st.sampled_from(["http-api-v2", "function-url"]))
@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_no_5xx_through_the_lambda_handlers(handlers, route, body, event):
    make = http_api_v2 if event == "http-api-v2" else function_url
    lambda_event = make(route, "")
    lambda_event["body"] = base64.b64encode(body).decode()  # bytes as API Gateway passes them
    lambda_event["isBase64Encoded"] = True
    handler = handlers["selection" if route == "/selection" else "chat"]
    response = handler(lambda_event, None)
    _check(response["statusCode"], response["headers"], response["body"], None)
