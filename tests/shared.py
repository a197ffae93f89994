"""Where the team's shared data lives (../shared beside the checkout, or $TEXTBOOK_CHAT_SHARED)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """$TEXTBOOK_CHAT_SHARED, else ../shared beside the checkout (may not exist: tests skip)."""
    return Path(os.environ.get("TEXTBOOK_CHAT_SHARED") or REPO.parent / "shared")
