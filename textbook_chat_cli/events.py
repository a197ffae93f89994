"""The API Gateway HTTP API (payload 2.0) event `ask` and `invoke` hand to a Lambda handler."""

from __future__ import annotations

import base64
import json
import time


def api_gateway_event(path: str, body: dict | str | bytes | None, method: str = "POST",
                      source_ip: str = "127.0.0.1", headers: dict | None = None) -> dict:
    """An API Gateway HTTP API (payload 2.0) event, as Lambda receives it."""
    raw = body if isinstance(body, str | bytes) or body is None else json.dumps(body)
    binary = isinstance(raw, bytes)
    now = time.time()
    return {
        "version": "2.0", "routeKey": f"{method} {path}", "rawPath": path, "rawQueryString": "",
        "headers": {"content-type": "application/json", "host": "localhost",
                    "user-agent": "textbook-chat-cli", **(headers or {})},
        "requestContext": {
            "accountId": "000000000000", "apiId": "local", "domainName": "localhost",
            "domainPrefix": "localhost", "requestId": f"local-{int(now * 1000)}",
            "routeKey": f"{method} {path}", "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1",
                     "sourceIp": source_ip, "userAgent": "textbook-chat-cli"},
        },
        "body": base64.b64encode(raw).decode() if binary else raw,
        "isBase64Encoded": binary,
    }
