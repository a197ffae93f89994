"""Who gets a turn when more readers ask at once than a local server can answer in time.

`serve` runs each request's work on a thread: with more requests than threads, the rest queue,
and a request that starts late cannot finish inside its deadline (functions.deadline), so the
reader waits ~30 s for a 502. The gate lets `slots` requests work at once, SLOTS_PER_CORE for
each core this process may use (an answer mostly waits for the model; its CPU steps take turns
within its deadline, functions.cpu_turns); the others wait for a turn only while their deadline
still leaves what a turn takes (learned from the turns before, at least MIN_WORK_SECONDS), and
are otherwise answered at once with 503 `busy` and a Retry-After. Lambda needs no gate: it runs
one request per container and starts more.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from functions.cpu_turns import cores
from functions.deadline import Deadline
from functions.errors import Busy

SLOTS_PER_CORE = 2  # answers at work at once per core (was 16 whatever the cores)
MIN_WORK_SECONDS = 10.0  # a turn leaves at least this much of the deadline to answer
HEADROOM = 1.25  # a turn must leave this times what turns have been taking
BUSY_RETRY_AFTER = 10.0


class Gate:
    """At most `slots` requests at work; the others wait while their deadline allows."""

    def __init__(self, slots: int | None = None, min_work: float = MIN_WORK_SECONDS):
        self.slots, self.min_work = slots or SLOTS_PER_CORE * cores(), min_work
        self.need = min_work  # seconds of deadline a turn must leave; rises fast, decays slowly
        self._limiter: anyio.CapacityLimiter | None = None  # made in the server's event loop

    @asynccontextmanager
    async def turn(self, deadline: Deadline) -> AsyncIterator[None]:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.slots)
        try:
            self._limiter.acquire_nowait()  # a free slot: no one is waiting ahead
        except anyio.WouldBlock:
            await self._wait(deadline)
        start = time.monotonic()
        try:
            yield
        finally:
            self._limiter.release()
            self._learn(time.monotonic() - start)

    async def _wait(self, deadline: Deadline) -> None:
        wait = deadline.left() - self.need
        if wait > 0:
            with anyio.move_on_after(wait):
                await self._limiter.acquire()
                return
        raise Busy(retry_after=BUSY_RETRY_AFTER)

    def _learn(self, took: float) -> None:
        wanted = max(self.min_work, took * HEADROOM)
        self.need = wanted if wanted > self.need else 0.9 * self.need + 0.1 * wanted
