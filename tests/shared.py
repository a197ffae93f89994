"""What several suites share: where the team's data lives (../shared beside the checkout, or
$TEXTBOOK_CHAT_SHARED), and how a test bounds wall-clock time on a machine others share."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

REPO = Path(__file__).resolve().parents[1]

# How much more than a quiet machine's time a bound allows, on top of the load measured with it.
SLACK = 3.0


def shared_dir() -> Path:
    """$TEXTBOOK_CHAT_SHARED, else ../shared beside the checkout (may not exist: tests skip)."""
    return Path(os.environ.get("TEXTBOOK_CHAT_SHARED") or REPO.parent / "shared")


def cpu_stretch(cpu_seconds: float = 0.05) -> float:
    """How many times its CPU time a piece of CPU work takes by the wall clock right now: 1 on
    an idle core, about 5 beside ten busy processes on two cores. A short spin, measured where
    the test runs, so a bound scaled by it needs no figure from another machine."""
    wall, cpu = time.perf_counter(), time.thread_time()
    while time.thread_time() - cpu < cpu_seconds:
        pass
    return max(1.0, (time.perf_counter() - wall) / (time.thread_time() - cpu))


def stretched(seconds: float) -> float:
    """`seconds` times the load measured now: a client timeout short on purpose (what it does
    to a model that never answers is under test) that a normal reply must still beat; keep the
    slow reply it is set against far longer (a fake's delay_next of a minute)."""
    return seconds * cpu_stretch()


def patience(seconds: float) -> float:
    """How long to wait for something that takes `seconds` on a quiet machine: SLACK times
    that, stretched by the load measured now (for waits that end as soon as it happens)."""
    return SLACK * seconds * cpu_stretch()


@dataclass
class Stopwatch:
    """The wall-clock time of a block, and the load (cpu_stretch) measured before and after it."""

    seconds: float = 0.0
    stretch: float = 1.0

    def limit(self, waits: float = 0.0, work: float = 0.5) -> float:
        """`waits` (what the code under test sleeps or times out on purpose, which load does
        not lengthen) plus `work` (the rest, as a quiet machine takes it) times SLACK and the
        load measured around the block."""
        return waits + SLACK * work * self.stretch

    def within(self, waits: float = 0.0, work: float = 0.5) -> bool:
        return self.seconds <= self.limit(waits, work)

    def __str__(self) -> str:
        return f"{self.seconds:.2f} s with the machine's load stretching CPU work x{self.stretch:.1f}"


@contextmanager
def stopwatch() -> Iterator[Stopwatch]:
    """Time a block: `with stopwatch() as took: ...` then
    `assert took.within(waits=2.0, work=0.3), took`: a bound a loaded machine does not break
    and a quiet one keeps tight (the deadline or the timeout under test, plus the work). The
    load is measured before the clock starts and after it stops: start what has a deadline of
    its own (a Lambda context, `within`) inside the block, or the spin eats into it."""
    watch = Stopwatch(stretch=cpu_stretch())
    start = time.perf_counter()
    yield watch
    watch.seconds = time.perf_counter() - start
    watch.stretch = max(watch.stretch, cpu_stretch())


def eventually(check: Callable[[], T], what: str, seconds: float = 60.0) -> T:
    """Poll `check` until it gives something true, and return that; fail the test, naming
    `what`, after `seconds` (generous: the wait ends as soon as it happens, so only a test that
    fails waits that long). For what a test needs to have happened, not how fast."""
    deadline = time.monotonic() + seconds
    while not (got := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {seconds:.0f} s")
        time.sleep(0.05)
    return got


def in_one_minute(burst: Callable[[], T], tries: int = 3) -> T:
    """`burst()`, run again when the wall clock's minute turned while it ran: the per-minute
    rate limit counts in calendar minutes (functions/services/ratelimit.windows), so a burst
    that straddles a minute's end is counted in two windows and does not test what it checks
    (the 11th refused). A burst that fails inside one minute fails the test; so does one that
    straddles a minute's end on every try."""
    for _ in range(tries):
        minute = time.time() // 60
        try:
            result = burst()
        except Exception:
            if time.time() // 60 == minute:
                raise
            continue
        if time.time() // 60 == minute:
            return result
    raise AssertionError(f"the burst straddled a minute's end {tries} times")


# Half a minute into a calendar minute: an in-process rate limiter on this clock never sees a
# minute end mid-test (the per-minute limit counts calendar minutes), whatever the machine's speed.
MID_MINUTE = 1_800_000_030.0


def limiter(per_minute: int, per_day: int):
    """A MemoryRateLimiter on a frozen clock (MID_MINUTE): a burst is always in one window."""
    from functions.services.ratelimit import MemoryRateLimiter

    return MemoryRateLimiter(per_minute, per_day, clock=lambda: MID_MINUTE)
