"""One deadline per request, from its arrival to its reply: waiting for a turn, the limits'
DynamoDB calls, the question rewrite, retrieval, the answer and its record all share it.

Lambda stops the function at 25 s, API Gateway at 29 s and the widget at 30 s, so a request
must end well before: the deadline is REQUEST_SECONDS, or what Lambda's context says is left
less LAMBDA_MARGIN when that is shorter (`request_seconds`), and every backing call (OpenAI,
Qdrant over REST, DynamoDB) waits at most what is left of it, retries included. The deadline
travels in a context variable so a call deep inside retrieval honours it without a new
parameter. CPU work checks it before it begins (`on_time()`: scoring the passages' blocks, an
answer's reply; each embedding run takes a turn within it, functions.cpu_turns): a request the
machine cannot finish in time stops there (503 busy) instead of answering late.
Giving back what a request reserved from the day's budget runs `beyond` it, on time of its own.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from functions.errors import Busy

REQUEST_SECONDS = 18.0  # rewrite + retrieval + answer + claim check; the Lambda timeout is 25 s
REWRITE_SECONDS = 4.0  # a follow-up's rewrite may use at most this; then the heuristic query
CHECK_RESERVE = 1.5  # kept back from the answer call for the claim check, the record, the reply
LAMBDA_MARGIN = 2.0  # kept back from Lambda's remaining time for the reply to leave
REPLY_SECONDS = 0.5  # kept back from an answer's deadline for its record and its reply


@dataclass
class Deadline:
    seconds: float
    clock: Callable[[], float] = time.monotonic
    start: float = field(default=0.0)

    def __post_init__(self) -> None:
        self.start = self.start or self.clock()

    def left(self) -> float:
        return max(0.0, self.seconds - (self.clock() - self.start))


_CURRENT: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar("deadline", default=None)
_UNHURRIED: contextvars.ContextVar[bool] = contextvars.ContextVar("unhurried", default=False)


@contextmanager
def unhurried() -> Iterator[None]:
    """No request deadline inside: a command someone runs at a terminal (`ask`, `demo`, `eval`)
    waits for its answer however loaded the machine is, where a served request would answer
    busy (a reader's browser gives up at 30 s; a person at a terminal does not)."""
    token = _UNHURRIED.set(True)
    try:
        yield
    finally:
        _UNHURRIED.reset(token)


def request_seconds(lambda_context=None) -> float:
    """The deadline of a request that has just arrived: REQUEST_SECONDS, or less when the Lambda
    context (Mangum's scope["aws.context"]) has less time left than that plus LAMBDA_MARGIN."""
    remaining = getattr(lambda_context, "get_remaining_time_in_millis", None)
    if remaining is None:
        return REQUEST_SECONDS
    try:
        return max(0.0, min(REQUEST_SECONDS, remaining() / 1000 - LAMBDA_MARGIN))
    except (TypeError, ValueError):
        return REQUEST_SECONDS


def time_left(default: float) -> float:
    """Seconds an upstream call may take: `default`, cut to what the request has left."""
    current = _CURRENT.get()
    return default if current is None else min(default, current.left())


@contextmanager
def within(deadline: Deadline | float, reserve: float = 0.0) -> Iterator[Deadline]:
    """Run a block under `deadline` (or a sub-deadline of `seconds`, never past the enclosing
    one), keeping `reserve` seconds back for what comes after the block."""
    if _UNHURRIED.get():  # as outside any request: nothing is bounded
        yield Deadline(float("inf"))
        return
    outer = _CURRENT.get()
    if not isinstance(deadline, Deadline):
        deadline = Deadline(deadline)
    left = deadline.left() - reserve
    if outer is not None:
        left = min(left, outer.left() - reserve)
    inner = Deadline(max(0.0, left), deadline.clock)
    token = _CURRENT.set(inner)
    try:
        yield inner
    finally:
        _CURRENT.reset(token)


def current_deadline() -> Deadline | None:
    """The deadline of the request (or block) running here, None outside one."""
    return _CURRENT.get()


def on_time(keep: float = 0.0) -> None:
    """Raise Busy when the request's deadline (or the block's) has passed, or leaves no more
    than `keep` seconds: CPU-bound steps call it between their pieces. Nothing happens outside
    a request (indexing, tests)."""
    current = _CURRENT.get()
    if current is not None and current.left() <= keep:
        raise Busy()


@contextmanager
def beyond(seconds: float) -> Iterator[Deadline]:
    """Run a block that must happen however little the request has left (returning a
    reservation to the day's budget) under a deadline of its own of `seconds`."""
    own = Deadline(seconds)
    token = _CURRENT.set(own)
    try:
        yield own
    finally:
        _CURRENT.reset(token)
