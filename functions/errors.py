"""Errors of the runtime side, written for the reader or author who meets them."""

from __future__ import annotations


class TextbookChatError(Exception):
    """Base class: the message is meant to be shown as is. `detail` holds a library's or a
    service's own text (it may name hosts or paths): only the operator's log shows it, redacted."""

    def __init__(self, message: str = "", *, detail: str | None = None):
        super().__init__(message)
        self.detail = detail


class ConfigError(TextbookChatError):
    """A setting is missing or wrong; the message names the variable and the fix."""


class ModelMismatchError(TextbookChatError):
    """The collection was built with another embedding model than the one configured."""


class UnknownFilter(TextbookChatError):
    """A request's `filters.version` or `filters.locale` names one the book was not indexed
    with; the message lists the ones it has (answered 422)."""


class StoreUnavailableError(TextbookChatError):
    """Qdrant cannot be reached or the collection does not exist."""


class LimitReached(TextbookChatError):
    """A reader's rate limit or the site's daily budget is used up. `code` says which
    (rate_limited, daily_budget); `retry_after` is the seconds until it resets."""

    def __init__(self, code: str, message: str, retry_after: float):
        super().__init__(message)
        self.code = code
        self.retry_after = retry_after


class UpstreamError(TextbookChatError):
    """The model provider failed (after retries). `transient`: it was slow, down or rate-limited
    (timeouts, dropped connections, 408/409/429/5xx), not refusing the site's setup (a key,
    model or URL the provider rejects): the answer layer gives the offline answer instead."""

    def __init__(self, message: str, status: int | None = None, retry_after: float | None = None,
                 *, detail: str | None = None, transient: bool = False):
        super().__init__(message, detail=detail)
        self.status = status
        self.retry_after = retry_after
        self.transient = transient


class ServiceUnavailableError(TextbookChatError):
    """A backing service other than the index failed or cannot be reached, after retries.
    `service` is what the reader loses: "limits" (rate limits and the daily budget), "feedback"
    (answer records and ratings), "secrets" (SSM Parameter Store, read at init). The message is
    for the operator's log and the author's terminal (it may name a table or a region); a reader
    gets the service's own fixed message (functions.api.http_errors)."""

    service = "service"

    def __init__(self, message: str = "", service: str | None = None, *,
                 detail: str | None = None):
        super().__init__(message, detail=detail)
        if service:
            self.service = service


class SecretsUnavailable(ServiceUnavailableError):
    """SSM throttled or could not be reached at init: the next request reads it again."""

    service = "secrets"


BUSY_MESSAGE = "The assistant is busy right now; please try again in a few seconds."


class Busy(TextbookChatError):
    """The request cannot be answered in its time: too many readers at once (it waited for a
    turn past what its deadline allows, or reservations of answers still being written stand in
    the way of the day's budget). Answered 503 `busy` with Retry-After."""

    def __init__(self, message: str = BUSY_MESSAGE, retry_after: float = 5.0):
        super().__init__(message)
        self.retry_after = retry_after
