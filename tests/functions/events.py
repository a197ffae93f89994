"""Real Lambda event dicts, as API Gateway HTTP API (payload 2.0) and Function URLs send them:
textbook_chat_cli.events' one builder, with a deployed API's and a Function URL's hosts and ids."""

from __future__ import annotations

from textbook_chat_cli.events import api_gateway_event

API_HOST = "abc123.execute-api.eu-west-1.amazonaws.com"
URL_HOST = "x7abc.lambda-url.eu-west-1.on.aws"
WHEN_MS = 1795309323000  # 22/Nov/2026:01:02:03 +0000


def http_api_v2(path: str, body: dict | str | None, method: str = "POST",
                source_ip: str = "203.0.113.7", origin: str | None = None,
                headers: dict | None = None) -> dict:
    """headers: added to (or, with the same lower-case name, replacing) the usual ones."""
    usual = {"accept": "*/*", "x-forwarded-for": source_ip, "x-forwarded-port": "443",
             "x-forwarded-proto": "https", **({"origin": origin} if origin else {})}
    return api_gateway_event(path, body, method, source_ip, {**usual, **(headers or {})},
                             host=API_HOST, api_id="abc123", account_id="123456789012",
                             user_agent="Mozilla/5.0", request_id="JKJaXmPLvHcESHA=",
                             epoch_ms=WHEN_MS)


def function_url(path: str, body: dict | str | None, method: str = "POST",
                 source_ip: str = "198.51.100.9", headers: dict | None = None) -> dict:
    usual = {"x-forwarded-for": source_ip, "x-forwarded-proto": "https",
             "x-amzn-trace-id": "Root=1-5eb0c"}
    return api_gateway_event(path, body, method, source_ip, {**usual, **(headers or {})},
                             host=URL_HOST, api_id="x7abc", account_id="anonymous",
                             user_agent="curl/8.0", request_id="b2c3-d4e5", epoch_ms=WHEN_MS,
                             route_key="$default")


class LambdaContext:
    """The context object Lambda passes beside the event: its clock runs from creation, as a
    function's remaining time does from the start of the invocation."""

    def __init__(self, timeout_seconds: float = 25.0, function_name: str = "textbook-chat-ci-chat"):
        import time

        self._clock = time.monotonic
        self._ends = self._clock() + timeout_seconds
        self.function_name = function_name
        self.aws_request_id = "5d2b1f9e-1c1e-4f3b-9d6f-0c3b6a1e2f40"
        self.memory_limit_in_mb = 1024

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._ends - self._clock()) * 1000))
