"""Real Lambda event dicts, as API Gateway HTTP API (payload 2.0) and Function URLs send them."""

from __future__ import annotations

import json


def http_api_v2(path: str, body: dict | str | None, method: str = "POST",
                source_ip: str = "203.0.113.7", origin: str | None = None,
                headers: dict | None = None) -> dict:
    """headers: added to (or, with the same lower-case name, replacing) the usual ones."""
    extra = dict(headers or {})
    headers = {"accept": "*/*", "content-type": "application/json", "host":
               "abc123.execute-api.eu-west-1.amazonaws.com", "user-agent": "Mozilla/5.0",
               "x-forwarded-for": source_ip, "x-forwarded-port": "443",
               "x-forwarded-proto": "https"}
    if origin:
        headers["origin"] = origin
    raw = body if isinstance(body, str) or body is None else json.dumps(body)
    return {
        "version": "2.0", "routeKey": f"{method} {path}", "rawPath": path,
        "rawQueryString": "", "headers": {**headers, **extra},
        "requestContext": {
            "accountId": "123456789012", "apiId": "abc123",
            "domainName": "abc123.execute-api.eu-west-1.amazonaws.com",
            "domainPrefix": "abc123",
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1",
                     "sourceIp": source_ip, "userAgent": "Mozilla/5.0"},
            "requestId": "JKJaXmPLvHcESHA=", "routeKey": f"{method} {path}",
            "stage": "$default", "time": "22/Nov/2026:01:02:03 +0000",
            "timeEpoch": 1795309323000,
        },
        **({"body": raw} if raw is not None else {}),
        "isBase64Encoded": False,
    }


def function_url(path: str, body: dict | str | None, method: str = "POST",
                 source_ip: str = "198.51.100.9", headers: dict | None = None) -> dict:
    raw = body if isinstance(body, str) or body is None else json.dumps(body)
    host = "x7abc.lambda-url.eu-west-1.on.aws"
    return {
        "version": "2.0", "routeKey": "$default", "rawPath": path, "rawQueryString": "",
        "headers": {"content-type": "application/json", "host": host,
                    "x-forwarded-for": source_ip, "x-forwarded-proto": "https",
                    "x-amzn-trace-id": "Root=1-5eb0c", **(headers or {})},
        "requestContext": {
            "accountId": "anonymous", "apiId": "x7abc", "domainName": host,
            "domainPrefix": "x7abc",
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1",
                     "sourceIp": source_ip, "userAgent": "curl/8.0"},
            "requestId": "b2c3-d4e5", "routeKey": "$default", "stage": "$default",
            "time": "22/Nov/2026:01:02:03 +0000", "timeEpoch": 1795309323000,
        },
        **({"body": raw} if raw is not None else {}),
        "isBase64Encoded": False,
    }
