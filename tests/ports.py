"""A free TCP port on 127.0.0.1 for a server a test starts, and how often its loop polls."""

from __future__ import annotations

import socket

import pytest

# serve_forever's poll interval for test servers: shutdown() waits up to one interval, and the
# default 0.5 s was paid at the end of every test that started a server (~35 s of the quick loop).
POLL_SECONDS = 0.01


def free_port(first: int | None = None, last: int | None = None) -> int:
    """The first port of first..last that binds (a test keeps to its own range so tests running
    side by side do not collide), or any free port the system hands out."""
    if first is None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]
    for port in range(first, (last or first) + 1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.skip(f"no free port in {first}-{last}")


def wait_until_serving(base: str, seconds: float = 30.0, proc=None, what: str = "serve",
                       said=None) -> None:
    """Poll `base`/health until it answers 200; fail the test after `seconds` (what a quiet
    machine needs at most, stretched by the load measured now), or at once when `proc` (the
    server's process) has exited, with `said()` (what it printed) in the message."""
    import time

    import httpx

    from tests.shared import cpu_stretch

    deadline = time.monotonic() + seconds * cpu_stretch()
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            break  # exited (its port taken?): what answers there is not it
        try:
            if httpx.get(base + "/health", timeout=2).status_code == 200:
                if proc is None or proc.poll() is None:
                    return
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    pytest.fail(f"{what} did not start" + (f": {said()}" if said else ""))
