"""Named steps of a release's writes where a test kills the process (`kill -9` at that step).

A test sets TEXTBOOK_CHAT_KILL_AT to a step's name and runs the real command in a subprocess: at
that step the process SIGKILLs itself, as a lost runner or the OOM killer would, with no cleanup
run. Unset (always, outside tests), a checkpoint does nothing.
"""

from __future__ import annotations

import os
import signal

KILL_AT = "TEXTBOOK_CHAT_KILL_AT"


def checkpoint(step: str) -> None:
    if os.environ.get(KILL_AT) == step:
        os.kill(os.getpid(), signal.SIGKILL)
