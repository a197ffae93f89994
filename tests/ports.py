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
