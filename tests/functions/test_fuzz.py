"""Property test of the API: no input, however malformed, gets a 5xx or a non-JSON answer."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
turns = st.lists(st.fixed_dictionaries({}, optional={"role": st.sampled_from(
    ["user", "assistant", "system", 3]), "content": values}), max_size=8)
KEYS = {"question": st.text(max_size=300) | values, "history": turns | values,
        "page_url": st.sampled_from(["/docs/x", "https://s.io/a#b", "javascript:x", ""]) | values,
        "filters": st.fixed_dictionaries({}, optional={"module": values, "doc_path": values})
        | values, "top_k": st.integers(-3, 20) | values,
        "mode": st.sampled_from(["hybrid", "dense", "sparse", "x"]) | values,
        "selected_text": st.text(max_size=500) | values, "anchor": st.text(max_size=20) | values,
        "request_id": values, "rating": st.sampled_from(["up", "down", "meh"]) | values,
        "comment": values}
bodies = (st.fixed_dictionaries({}, optional=KEYS).map(lambda d: json.dumps(d).encode())
          | values.map(lambda v: json.dumps(v).encode()) | st.binary(max_size=200))
ALLOWED = {200, 400, 404, 405, 413, 422, 429}


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(route=st.sampled_from(["/chat", "/selection", "/feedback"]), body=bodies)
def test_no_5xx_on_any_input(client, route, body):
    r = client().post(route, content=body, headers={"content-type": "application/json"})
    assert r.status_code in ALLOWED, (r.status_code, r.text)
    data = r.json()
    assert data["request_id"] == r.headers["x-request-id"]
    if r.status_code != 200:
        assert set(data["error"]) == {"code", "message"} and data["error"]["message"]
