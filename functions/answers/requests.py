"""What a reader asks, typed: the requests the HTTP edge (functions.api.validation) builds from
a body and the answer code reads."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Turn:
    role: str  # "user" | "assistant"
    content: str


@dataclass(frozen=True)
class ChatRequest:
    question: str
    history: tuple[Turn, ...] = ()
    page_url: str | None = None
    filters: dict[str, str] = field(default_factory=dict)
    top_k: int = 5
    mode: str = "hybrid"


@dataclass(frozen=True)
class SelectionRequest:
    question: str
    selected_text: str
    page_url: str | None = None
    anchor: str | None = None
    heading: str | None = None  # the heading's text as the page shows it (the source label)
