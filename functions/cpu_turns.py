"""CPU-bound steps of requests take turns, each only when it can end inside its deadline.

An embedding run already uses every core (OpenVINO's INFERENCE_NUM_THREADS, the numpy encoder's
workers), so two at once only make both slower: with 16 answers at work on 2 cores, each ran
several times its time and answered 30-60 s past an 18 s deadline. A step here takes the turn
when it is free; it waits for it only while what its request has left still holds what the step
takes (learned from the steps before, per token, with HEADROOM); otherwise the request is told
busy (503 with Retry-After) at once rather than answered late. The turn goes to the step whose request ends
first: the answers furthest along finish, rather than all of them running out of time. Outside
a request (indexing, no deadline) steps run as they come. A Lambda has one request at a time:
its turn is always free.
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from functions.deadline import current_deadline, on_time
from functions.errors import Busy

HEADROOM = 1.5  # a step starts only with this times what steps of its size have been taking left
LARGE = 256  # tokens from which a step's time is its tokens' (below: a run's fixed cost)
FIRST_GUESS = (0.1, 2e-4)  # a small step's seconds, a large one's per token, before any was timed


def cores() -> int:
    """The cores this process may run on (a container's CPU set, else the machine's)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class Turns:
    """`turns` steps at a time, each within its request's deadline, the earliest deadline first."""

    def __init__(self, turns: int = 1):
        self._free = turns
        self._waiting: list[list] = []  # heap of [request's end, arrival, Event]
        self._arrivals = itertools.count()
        self._lock = threading.Lock()
        # what steps have been taking (each rises fast with a slower step, decays slowly)
        self.fixed, self.per_token = FIRST_GUESS

    def expected(self, tokens: int) -> float:
        return HEADROOM * max(self.fixed, self.per_token * tokens)

    @contextmanager
    def turn(self, tokens: int) -> Iterator[None]:
        """Run a step of `tokens` tokens' work (its size) in a turn. Raises Busy when its
        request's deadline will not hold it, before or after waiting for the turn."""
        deadline = current_deadline()
        if deadline is None:  # not a request's: nothing to bound
            yield
            return
        on_time()
        left = deadline.left()
        if not self._acquire(time.monotonic() + left, left - self.expected(tokens)):
            raise Busy()
        start = time.monotonic()
        try:
            yield
        finally:
            self._release()
            took = time.monotonic() - start
            if tokens >= LARGE:
                self.per_token = _learned(self.per_token, took / tokens)
            else:
                self.fixed = _learned(self.fixed, took)

    def _acquire(self, ends: float, wait: float) -> bool:
        """The turn: at once when it is free (the step may still fit), else within `wait`."""
        with self._lock:
            if self._free and not self._waiting:
                self._free -= 1
                return True
            if wait <= 0:
                return False
            entry = [ends, next(self._arrivals), threading.Event()]
            heapq.heappush(self._waiting, entry)
        if entry[2].wait(wait):
            return True
        with self._lock:
            if entry[2].is_set():  # handed the turn as the wait ran out
                return True
            self._waiting.remove(entry)
            heapq.heapify(self._waiting)
            return False

    def _release(self) -> None:
        with self._lock:
            if self._waiting:  # handed straight to the step whose request ends first
                heapq.heappop(self._waiting)[2].set()
            else:
                self._free += 1


def _learned(before: float, now: float) -> float:
    return 0.5 * (before + now) if now > before else 0.9 * before + 0.1 * now


EMBEDDING = Turns()  # the process's embedding runs (each uses every core)
