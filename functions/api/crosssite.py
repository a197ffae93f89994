"""Refuse what a page on another site could make a browser send: non-JSON bodies and foreign Origins.

A browser sends a cross-site `text/plain` or form POST without asking first (no preflight), so
CORS alone only hides the reply: the work, and the model call, would already be paid for.
`application/json` is not such a "simple" content type, so requiring it forces a preflight that
only the allowed origins pass; a present Origin that is not allowed is refused outright.
Both checks run before any rate limit, budget, retrieval or model step.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response

from functions.api.http_errors import ApiError, error_body, json_response, new_request_id

# How an author allows another site, where the API runs: the deployed functions read the
# ALLOWED_ORIGINS setting; `textbook-chat serve` takes --cors-origin (textbook_chat_cli/api.py).
# Named, never the list itself: a refusal does not reveal configuration values.
DEPLOYED_FIX = ("the sites its author lists in the ALLOWED_ORIGINS setting (deployed: its SSM "
                "parameter, then a redeploy; docs/deploying.md)")


class OriginRule:
    """The sites allowed to call the API: exact origins and/or one regular expression.
    With neither, every Origin is accepted (no ALLOWED_ORIGINS: server-to-server use).
    `allowed_by`: how the author allows a site where this API runs (DEPLOYED_FIX)."""

    def __init__(self, origins: Iterable[str] = (), regex: str | None = None,
                 allowed_by: str = DEPLOYED_FIX):
        self.origins = tuple(origins)
        self.regex = re.compile(regex) if regex else None
        self.allowed_by = allowed_by

    @property
    def active(self) -> bool:
        return bool(self.origins or self.regex) and "*" not in self.origins

    def allows(self, origin: str) -> bool:
        return (not self.active or origin in self.origins
                or bool(self.regex and self.regex.fullmatch(origin)))


def check_request(request: Request, rule: OriginRule) -> None:
    """403 for a present Origin the rule refuses, 415 for a body that is not declared JSON."""
    origin = request.headers.get("origin")
    if origin is not None and not rule.allows(origin):
        raise ApiError(403, "origin_not_allowed",
                       f"Requests from {origin[:100]!r} are not accepted: this assistant answers "
                       f"only on {rule.allowed_by}.")
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        raise ApiError(415, "unsupported_media_type",
                       "Send the question as JSON with the header "
                       "`Content-Type: application/json`.")


class JsonCORSMiddleware(CORSMiddleware):
    """Starlette's CORS, with a refused preflight answered as our JSON error (not plain text)
    naming how the author allows a site where the API runs (`allowed_by`, as OriginRule's)."""

    def __init__(self, app, allowed_by: str = DEPLOYED_FIX, **options):
        super().__init__(app, **options)
        self.allowed_by = allowed_by

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code < 400:
            return response
        request_id = new_request_id()
        err = ApiError(400, "cors_refused",
                       "This cross-site request is not allowed (origin, method or headers); "
                       f"this assistant answers only on {self.allowed_by}.")
        headers = {k: v for k, v in response.headers.items()
                   if k.lower().startswith("access-control-") or k.lower() == "vary"}
        return json_response(error_body(err, request_id), 400, request_id, headers)
