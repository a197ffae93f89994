"""Per-client rate limits and the deployment's daily token budget: LimitReached when one is used
up (the edge answers it as a 429 with Retry-After, functions.api.http_errors.from_exception), Busy
when only the reservations of answers still being written stand in the way (a 503 with a
Retry-After of seconds)."""

from __future__ import annotations

import logging

from functions.errors import Busy, LimitReached, TextbookChatError
from functions.services.ratelimit import Refusal, Reservation


def approx_tokens(text: str) -> int:
    """A cheap upper-leaning token estimate for reservations (tiktoken costs ~0.8 s to load;
    English averages ~4 characters per cl100k token, so chars/3 over-reserves a little)."""
    return len(text) // 3 + 1


def check_rate(limiter, client_id: str, limits: tuple[int, int] | None = None,
               doing: str = "asking questions") -> None:
    """Count one request of `client_id` (`limits`: its bucket's own, else the limiter's);
    LimitReached, saying what the reader is `doing` too fast, when it is over."""
    wait = limiter.hit(client_id) if limits is None else limiter.hit(client_id, limits)
    if wait is not None:
        raise LimitReached(
            "rate_limited",
            f"You are {doing} faster than this site allows; please wait "
            f"{_human(wait)} and try again.",
            retry_after=wait,
        )


def reserve(spend_cap, tokens: int) -> Reservation:
    """Reserve tokens from the daily budget; returns the reservation (settle it in a finally)."""
    refusal = spend_cap.reserve(tokens)
    if not isinstance(refusal, Refusal):
        return refusal
    if refusal.in_flight:
        raise Busy(retry_after=refusal.wait)
    raise LimitReached(
        "daily_budget",
        f"The assistant has used up today's budget for this site; it will answer again in "
        f"about {_human(refusal.wait)}.",
        retry_after=refusal.wait,
    )


def settle(spend_cap, reserved: Reservation, used: int) -> None:
    """End a reservation with what was used, whatever the request's deadline has left. Best
    effort: the answer (or its error) still goes out when the counter cannot be corrected; a
    reservation never settled counts as spent once its slot is over (functions.services.ratelimit)."""
    try:
        spend_cap.settle(reserved, used)
    except TextbookChatError as exc:  # the app's JSON log line, redacted by its formatter
        logging.getLogger("textbook_chat").warning("settle failed", extra={"fields": {
            "reserved": reserved.tokens, "used": used,
            "error": f"{type(exc).__name__}: {exc}"}})


def _human(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} seconds"
    if seconds < 5400:
        return f"{round(seconds / 60)} minutes"
    return f"{round(seconds / 3600)} hours"
