"""The one builder of the Lambda events an HTTP request arrives as: API Gateway HTTP API
(payload 2.0) and Function URL events, as Lambda receives them.

`ask` and `invoke` hand its events to a handler; the tests (tests/functions/events.py: the
deployed API's and a Function URL's hosts and ids) and benchmarks/bench_cold_start.py (whose
parent builds the event and hands it to the fresh interpreter, which imports only the Lambda
package) build theirs here too. Standard library only, so importing it costs nothing; the
Lambda package leaves it out with the rest of the CLI.
"""

from __future__ import annotations

import base64
import json
import time


def api_gateway_event(path: str, body: dict | str | bytes | None, method: str = "POST",
                      source_ip: str = "127.0.0.1", headers: dict | None = None, *,
                      host: str = "localhost", api_id: str = "local",
                      account_id: str = "000000000000", user_agent: str = "textbook-chat-cli",
                      request_id: str | None = None, epoch_ms: int | None = None,
                      route_key: str | None = None) -> dict:
    """An HTTP API (payload 2.0) event. body: a dict is sent as JSON, bytes base64-encoded,
    None leaves the event without a body. headers: added to (or, with the same lower-case name,
    replacing) content-type, host and user-agent. epoch_ms: the request's time (default now);
    route_key: "$default" for a Function URL (default "METHOD path")."""
    raw = body if isinstance(body, str | bytes) or body is None else json.dumps(body)
    binary = isinstance(raw, bytes)
    now_ms = int(time.time() * 1000) if epoch_ms is None else epoch_ms
    route = route_key or f"{method} {path}"
    event = {
        "version": "2.0", "routeKey": route, "rawPath": path, "rawQueryString": "",
        "headers": {"content-type": "application/json", "host": host, "user-agent": user_agent,
                    **(headers or {})},
        "requestContext": {
            "accountId": account_id, "apiId": api_id, "domainName": host,
            "domainPrefix": host.split(".")[0], "requestId": request_id or f"local-{now_ms}",
            "routeKey": route, "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now_ms / 1000)),
            "timeEpoch": now_ms,
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1",
                     "sourceIp": source_ip, "userAgent": user_agent},
        },
        "isBase64Encoded": binary,
    }
    if raw is not None:
        event["body"] = base64.b64encode(raw).decode() if binary else raw
    return event
