"""Progress on stderr: a bar (tqdm) on a terminal, otherwise a line when a stage starts, at most
one every LINE_EVERY seconds while it runs, and one when it ends (CI logs, `--json | jq`)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

LINE_EVERY = 10.0  # seconds between progress lines of a long stage in a log


@contextmanager
def bar(total: int | None, label: str, unit: str = "it", stream=None,
        clock: Callable[[], float] = time.monotonic) -> Iterator[Callable[[int], None]]:
    stream = stream or sys.stderr
    if getattr(stream, "isatty", lambda: False)():
        from tqdm import tqdm

        with tqdm(total=total, desc=label, unit=unit, file=stream, leave=False) as t:
            yield _Bar(t)
        return
    with StageLines(total, label, unit, stream, clock) as tick:
        yield tick


class _Bar:
    """tqdm's bar as a tick: called with a count; `finish()` ends it before its block does."""

    def __init__(self, t):
        self.t = t

    def __call__(self, n: int = 1) -> None:
        self.t.update(n)

    def finish(self) -> None:
        self.t.close()


class StageLines:
    """Lines, not a bar: printed on the first tick (a stage with no work stays silent)."""

    def __init__(self, total: int | None, label: str, unit: str, stream, clock):
        self.total, self.label, self.unit, self.stream, self.clock = total, label, unit, stream, clock
        self.done, self.last, self.finished = 0, 0.0, False
        self.started: float | None = None

    def _of(self) -> str:
        return f"{self.done}/{self.total}" if self.total else str(self.done)

    def _say(self, text: str) -> None:
        print(f"{self.label}: {text}", file=self.stream, flush=True)

    def __call__(self, n: int = 1) -> None:
        now = self.clock()
        if self.started is None:
            self.started = self.last = now
            self._say(f"started ({self.total} {self.unit}s)" if self.total else "started")
        self.done += n
        if self.total and self.done >= self.total:
            self.finish(now)
        elif now - self.last >= LINE_EVERY:
            self.last = now
            self._say(f"{self._of()} {self.unit}s, {now - self.started:.0f} s")

    def finish(self, now: float | None = None) -> None:
        """The stage's last line (once): before its block ends when the next stage begins."""
        if self.started is not None and not self.finished:
            self.finished = True
            now = self.clock() if now is None else now
            self._say(f"done, {self.done} {self.unit}s in {now - self.started:.1f} s")

    def __enter__(self) -> StageLines:
        return self

    def __exit__(self, *exc) -> None:
        self.finish()
