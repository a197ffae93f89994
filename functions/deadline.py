"""One deadline per request: the question rewrite, retrieval and the answer share it.

Lambda stops the function at 25 s, API Gateway at 29 s and the widget at 30 s, so a request
must end well before: every upstream call (chat completions and OpenAI query embeddings) waits
at most what is left of REQUEST_SECONDS, retries included. The deadline travels in a context
variable so the embedding call inside retrieval honours it without a new parameter.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

REQUEST_SECONDS = 18.0  # rewrite + retrieval + answer + claim check; the Lambda timeout is 25 s
REWRITE_SECONDS = 4.0  # a follow-up's rewrite may use at most this; then the heuristic query
CHECK_RESERVE = 1.5  # kept back from the answer call for the claim check and the response


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


def time_left(default: float) -> float:
    """Seconds an upstream call may take: `default`, cut to what the request has left."""
    current = _CURRENT.get()
    return default if current is None else min(default, current.left())


@contextmanager
def within(deadline: Deadline | float, reserve: float = 0.0) -> Iterator[Deadline]:
    """Run a block under `deadline` (or a sub-deadline of `seconds`, never past the enclosing
    one), keeping `reserve` seconds back for what comes after the block."""
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
