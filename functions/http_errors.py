"""HTTP errors as `{"error": {code, message}}` JSON, request ids and structured JSON logs."""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import uuid

from functions.errors import (
    ConfigError,
    ModelMismatchError,
    StoreUnavailableError,
    TextbookChatError,
    UpstreamError,
)

REQUEST_ID_HEADER = "X-Request-Id"
_LOG = logging.getLogger("textbook_chat")


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


def from_exception(exc: BaseException) -> ApiError:
    """The ApiError a reader sees for any exception: never a stack trace or internal detail."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, ModelMismatchError):
        return ApiError(503, "model_mismatch", str(exc))
    if isinstance(exc, StoreUnavailableError):
        return ApiError(503, "index_unavailable", f"The book's search index is unavailable. {exc}")
    if isinstance(exc, ConfigError):
        return ApiError(503, "misconfigured", f"The assistant is not configured correctly: {exc}")
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
        return ApiError(502, "upstream_error", f"The answer service failed: {exc}")
    if isinstance(exc, TextbookChatError):
        return ApiError(503, "unavailable", str(exc))
    return ApiError(500, "internal", "Something went wrong on our side; please try again.")


def error_body(err: ApiError, request_id: str) -> dict:
    return {"error": {"code": err.code, "message": err.message}, "request_id": request_id}


def error_headers(err: ApiError) -> dict[str, str]:
    if err.retry_after is None:
        return {}
    return {"Retry-After": str(max(1, int(err.retry_after + 0.999)))}


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data = {"level": record.levelname.lower(), "msg": record.getMessage(), "ts": time.time()}
        data.update(getattr(record, "fields", {}))
        return json.dumps(data, default=str)


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
