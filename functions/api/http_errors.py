"""HTTP errors as `{"error": {code, message}}` JSON, request ids and structured, redacted JSON logs.

Nothing a reader or a log line sees carries a credential, a connection URL, a local path or a
service's raw reply: messages are ours, `redact` masks what slips through (the settings' own
secret values, URLs, keys, absolute paths), and a library's text goes only to the log, redacted.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
import uuid

from starlette.responses import JSONResponse

from functions.errors import (
    Busy,
    ConfigError,
    LimitReached,
    ModelMismatchError,
    ServiceUnavailableError,
    StoreUnavailableError,
    TextbookChatError,
    UnknownFilter,
    UpstreamError,
)

REQUEST_ID_HEADER = "X-Request-Id"
_LOG = logging.getLogger("textbook_chat")
_SENSITIVE: set[str] = set()
_PATTERNS = (
    (re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>`]+"), "<url>"),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}"), r"\1 <secret>"),
    (re.compile(r"\bsk-[A-Za-z0-9_*.-]{4,}"), "<secret>"),  # OpenAI keys, masked or not
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), "<secret>"),
    (re.compile(r"(?i)\b(api[_-]?key|token|secret|password|passwd|credentials?)"
                r"(\s*=\s*|:(?=\S))[^\s,;'\"]+"), r"\1\2<secret>"),
    (re.compile(r"[\w.:%-]+@[\w-]+(?:\.[\w-]+)+(?::\d+)?"), "<host>"),  # user:pass@host
    (re.compile(r"(?<![\w.~/<-])(?:~|[A-Za-z]:)?[/\\](?:[\w.@+-]+[/\\])+[\w.@+-]*"), "<path>"),
)
SENSITIVE_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "QDRANT_URL", "QDRANT_API_KEY",
                 "QDRANT_PATH", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB")


# What a reader is told when a backing service other than the index is down: one fixed message
# per service (its own text names tables and regions, so it goes to the operator's log only).
SERVICE_MESSAGES = {
    "limits": "The assistant cannot check this site's usage limits right now, so it is not "
              "answering; please try again in a minute.",
    "feedback": "Your rating could not be saved right now; please try again in a minute.",
    "secrets": "The assistant cannot read its keys right now; please try again in a minute.",
}
SERVICE_RETRY_AFTER = 30


class ApiError(Exception):
    """An error the client sees as is: HTTP status, a short code and a message for a reader."""

    def __init__(self, status: int, code: str, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


def new_request_id() -> str:
    return uuid.uuid4().hex


def register_sensitive(*values: object) -> None:
    """Values that must never reach a reader or a log (keys, URLs and paths from the settings)."""
    for value in values:
        text = str(value or "").strip()
        if len(text) >= 6:  # a short value would mask ordinary words
            _SENSITIVE.add(text)
            if "/" in text and "://" not in text:
                _SENSITIVE.add(os.path.abspath(text))


def register_sensitive_env(env) -> None:
    register_sensitive(*(env.get(name) for name in SENSITIVE_ENV))


def redact(text: object) -> str:
    """text with secrets, connection URLs, user@hosts and absolute paths masked."""
    out = str(text)
    for value in sorted(_SENSITIVE, key=len, reverse=True):
        out = out.replace(value, "<hidden>")
    for pattern, replacement in _PATTERNS:
        out = pattern.sub(replacement, out)
    return out


def from_exception(exc: BaseException) -> ApiError:
    """The ApiError a reader sees for any exception: never a stack trace or internal detail."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, LimitReached):
        return ApiError(429, exc.code, str(exc), retry_after=exc.retry_after)
    if isinstance(exc, Busy):
        return ApiError(503, "busy", str(exc), retry_after=exc.retry_after)
    if isinstance(exc, ServiceUnavailableError):
        return ApiError(503, f"{exc.service}_unavailable", SERVICE_MESSAGES.get(
            exc.service, "A service the assistant needs is unavailable; please try again in a "
                         "minute."), retry_after=SERVICE_RETRY_AFTER)
    if isinstance(exc, UnknownFilter):
        return ApiError(422, "unknown_filter", str(exc))
    if isinstance(exc, ModelMismatchError):
        return ApiError(503, "model_mismatch", str(exc))
    if isinstance(exc, StoreUnavailableError):
        return ApiError(503, "index_unavailable",
                        f"The book's search index is unavailable. {redact(exc)}")
    if isinstance(exc, ConfigError):
        return ApiError(503, "misconfigured",
                        f"The assistant is not configured correctly: {redact(exc)}")
    if isinstance(exc, UpstreamError):
        if exc.status in (401, 403):
            return ApiError(
                502,
                "upstream_auth",
                "The answer service rejected the site's API key; the site author should check "
                "OPENAI_API_KEY.",
            )
        if exc.status == 429:
            return ApiError(
                503,
                "upstream_busy",
                "The answer service is busy right now; please try again in a minute.",
                retry_after=exc.retry_after or 30,
            )
        # the service's own text stays in the (redacted) log: it may echo keys or hosts
        status = f" (HTTP {exc.status})" if exc.status else ""
        return ApiError(502, "upstream_error",
                        f"The answer service failed{status}; please try again in a minute.")
    if isinstance(exc, TextbookChatError):
        return ApiError(503, "unavailable", redact(exc))
    return ApiError(500, "internal", "Something went wrong on our side; please try again.")


def error_body(err: ApiError, request_id: str) -> dict:
    return {"error": {"code": err.code, "message": err.message}, "request_id": request_id}


def error_headers(err: ApiError) -> dict[str, str]:
    if err.retry_after is None:
        return {}
    return {"Retry-After": str(max(1, int(err.retry_after + 0.999)))}


def operator_detail(exc: BaseException) -> str:
    """What the log keeps of an exception: its type, message and detail, redacted."""
    detail = getattr(exc, "detail", None)
    return redact(f"{type(exc).__name__}: {exc}" + (f" ({detail})" if detail else ""))[:500]


class SafeJSONResponse(JSONResponse):
    """JSONResponse that still renders text Starlette's cannot (lone surrogates): as \\u escapes."""

    def render(self, content) -> bytes:
        try:
            return super().render(content)
        except (UnicodeEncodeError, ValueError, TypeError, RecursionError):
            return json.dumps(content, ensure_ascii=True, default=str,
                              separators=(",", ":")).encode("ascii")


def json_response(body: dict, status: int, request_id: str,
                  headers: dict[str, str] | None = None) -> JSONResponse:
    return SafeJSONResponse(body, status_code=status,
                            headers={REQUEST_ID_HEADER: request_id, "Cache-Control": "no-store",
                                     **(headers or {})})


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        try:
            data = {"level": record.levelname.lower(), "msg": redact(record.getMessage()),
                    "ts": time.time()}
            for key, value in getattr(record, "fields", {}).items():
                data[key] = redact(value) if isinstance(value, str) else value
            return json.dumps(data, default=lambda v: redact(v))
        except Exception:  # a log line must never raise into a request
            return json.dumps({"level": "error", "msg": "unloggable record", "ts": time.time()})


def configure_logging(level: int | None = None) -> None:
    """One JSON line per event on stderr (CloudWatch keeps each line as one record).
    The level comes from LOG_LEVEL (default INFO)."""
    if level is None:
        level = logging.getLevelName(os.environ.get("LOG_LEVEL", "INFO").upper())
        level = level if isinstance(level, int) else logging.INFO
    if not any(getattr(h, "_textbook_chat", False) for h in _LOG.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_JsonFormatter())
        handler._textbook_chat = True  # type: ignore[attr-defined]
        _LOG.addHandler(handler)
        _LOG.propagate = False
    _LOG.setLevel(level)


def log(msg: str, level: int = logging.INFO, **fields) -> None:
    _LOG.log(level, msg, extra={"fields": fields})
