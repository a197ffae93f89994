"""Request bodies: bytes → JSON → typed requests, with 400/413/422 messages a reader understands."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from functions.answers.requests import ChatRequest, SelectionRequest, Turn
from functions.api.http_errors import ApiError
from functions.tokens import count_tokens

MAX_QUESTION_CHARS = 2000
MAX_HISTORY_MESSAGES = 40  # only the last 6 turns are used; more is a misbehaving client
MAX_HISTORY_CHARS = 4000  # per message
MAX_SELECTION_CHARS = 200_000  # the token cap (max_selection_tokens) decides below this
MAX_COMMENT_CHARS = 2000
RETRIEVAL_MODES = ("hybrid", "dense", "sparse")
MAX_DEPTH = 16  # the deepest real body (history -> turn -> content) is 3
_ANCHOR = re.compile(r"^[^\s\"'<>#`\\]{1,200}$")
_CONTROL = re.compile(r"[\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # C0/C1 but tab, CR, LF


@dataclass(frozen=True)
class FeedbackRequest:
    request_id: str
    rating: str
    comment: str | None = None


def parse_json(raw: bytes) -> dict:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "bad_encoding", "The request body must be UTF-8 encoded JSON.") from None
    if not text.strip():
        raise ApiError(400, "empty_body", "The request body is empty; send a JSON object.")
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise _too_deep() from None
    except ValueError as exc:  # also integers of more than 4,300 digits
        raise ApiError(400, "invalid_json",
                       f"The request body is not valid JSON ({str(exc)[:120]}).") from None
    if not isinstance(data, dict):
        raise ApiError(422, "invalid_field", "The request body must be a JSON object.")
    _check_tree(data)
    return data


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _too_deep() -> ApiError:
    return ApiError(400, "too_deep", f"The request body is nested more than {MAX_DEPTH} levels "
                    "deep; send a flat JSON object.")


def _check_tree(data: dict) -> None:
    """Every key and string is real Unicode (no lone surrogates) and nothing is nested deeper
    than MAX_DEPTH. Iterative: a crafted body cannot exhaust the stack."""
    stack: list[tuple[object, int, str]] = [(data, 1, "")]
    while stack:
        node, depth, field_name = stack.pop()
        if depth > MAX_DEPTH:
            raise _too_deep()
        items = (node.items() if isinstance(node, dict)
                 else ((None, v) for v in node) if isinstance(node, list) else ())
        for key, value in items:
            name = field_name or (key if isinstance(key, str) and valid_text(key) else "")
            for text in (key, value):
                if isinstance(text, str) and not valid_text(text):
                    where = f" in `{name[:40]}`" if name else " in a field name"
                    raise ApiError(400, "bad_text",
                                   f"The request has text that is not valid Unicode{where} "
                                   "(a lone surrogate such as \\ud800); send UTF-8 text.")
            if isinstance(value, dict | list):
                stack.append((value, depth + 1, name))


def valid_text(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _unknown(data: dict, allowed: set[str]) -> None:
    extra = sorted(set(data) - allowed)
    if extra:
        raise ApiError(
            422, "unknown_field",
            f"Unknown field(s): {', '.join(map(str, extra))[:200]}. "
            f"Allowed: {', '.join(sorted(allowed))}.",
        )


def _text(data: dict, name: str, required: bool, limit: int, what: str = "") -> str | None:
    value = data.get(name)
    if value is None:
        if required:
            raise ApiError(422, "missing_field", f"`{name}` is required{what}.")
        return None
    if not isinstance(value, str):
        raise ApiError(422, "invalid_field", f"`{name}` must be a string.")
    if "\x00" in value:
        raise ApiError(422, "invalid_field", f"`{name}` contains a NUL character.")
    value = _CONTROL.sub(" ", value)  # invisible control characters: spaces, like a browser
    if required and not value.strip():
        raise ApiError(422, "empty_field", f"`{name}` is empty{what or '; type a question first'}.")
    if len(value) > limit:
        raise ApiError(
            413, "too_large",
            f"`{name}` is {len(value):,} characters long; keep it under {limit:,}.",
        )
    return value.strip()


def _url(data: dict, name: str) -> str | None:
    value = _text(data, name, False, 2000)
    if value and not (value.startswith(("https://", "http://", "/"))):
        raise ApiError(422, "invalid_field", f"`{name}` must be an http(s) URL or a path.")
    return value or None


def _history(value) -> tuple[Turn, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ApiError(422, "invalid_field", "`history` must be a list of {role, content}.")
    if len(value) > MAX_HISTORY_MESSAGES:
        raise ApiError(
            413, "too_large",
            f"`history` has {len(value)} messages; send at most the last {MAX_HISTORY_MESSAGES} "
            "(only the last 6 turns are used).",
        )
    turns = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or set(item) - {"role", "content"}:
            raise ApiError(422, "invalid_field", f"`history[{i}]` must be {{role, content}}.")
        role, content = item.get("role"), item.get("content")
        if role not in ("user", "assistant"):
            raise ApiError(422, "invalid_field", f"`history[{i}].role` must be user or assistant.")
        if not isinstance(content, str):
            raise ApiError(422, "invalid_field", f"`history[{i}].content` must be a string.")
        turns.append(Turn(role, _CONTROL.sub(" ", content[:MAX_HISTORY_CHARS])))
    return tuple(turns)


# version/locale pin the answer to one edition; by default they come from page_url's page.
FILTER_KEYS = frozenset({"module", "doc_path", "version", "locale"})


def _filters(value) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or set(value) - FILTER_KEYS:
        raise ApiError(422, "invalid_field", "`filters` may only have `module`, `doc_path`, "
                       "`version` (e.g. \"1.0\", \"current\") and `locale` (e.g. \"fr\").")
    out = {}
    for key, item in value.items():
        if item is None:
            continue
        if not isinstance(item, str) or len(item) > 500:
            raise ApiError(422, "invalid_field", f"`filters.{key}` must be a short string.")
        if item:
            out[key] = item
    return out


def search_flag(data: dict) -> bool:
    """POST /sources' `search` (true: the sections the words typed so far find, for the widget's
    box as the reader types); taken out of the body, which is /chat's otherwise."""
    flag = data.pop("search", False)
    if flag is None:
        return False
    if not isinstance(flag, bool):
        raise ApiError(422, "invalid_field", "`search` must be true or false.")
    return flag


def chat_request(data: dict) -> ChatRequest:
    _unknown(data, {"question", "history", "page_url", "filters", "top_k", "mode"})
    top_k = data.get("top_k", 5)
    if top_k is None:
        top_k = 5
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= 10:
        raise ApiError(422, "invalid_field", "`top_k` must be a whole number from 1 to 10.")
    mode = data.get("mode") or "hybrid"
    if mode not in RETRIEVAL_MODES:
        raise ApiError(
            422, "invalid_field", f"`mode` must be one of {', '.join(RETRIEVAL_MODES)}."
        )
    return ChatRequest(
        question=_text(data, "question", True, MAX_QUESTION_CHARS) or "",
        history=_history(data.get("history")),
        page_url=_url(data, "page_url"),
        filters=_filters(data.get("filters")),
        top_k=top_k,
        mode=mode,
    )


def selection_request(data: dict) -> SelectionRequest:
    _unknown(data, {"question", "selected_text", "page_url", "anchor", "heading"})
    question = _text(data, "question", True, MAX_QUESTION_CHARS) or ""
    selected = _text(data, "selected_text", True, MAX_SELECTION_CHARS,
                     "; select some text on the page first") or ""
    anchor = _text(data, "anchor", False, 200)
    if anchor:
        anchor = anchor.lstrip("#")
        if not _ANCHOR.match(anchor):
            raise ApiError(422, "invalid_field", "`anchor` must be a heading id such as `pid-tuning`.")
    heading = _text(data, "heading", False, 300)
    return SelectionRequest(question, selected, _url(data, "page_url"), anchor or None,
                            " ".join(heading.split()) if heading else None)


def check_size(selected_text: str, max_tokens: int) -> int:
    """The selection's token count, refused past max_tokens. A cl100k token is at least one
    UTF-8 byte, so short selections skip loading tiktoken (~0.8 s of cold start)."""
    size = len(selected_text.encode("utf-8"))
    if size <= max_tokens:
        return size
    tokens = count_tokens(selected_text)
    if tokens > max_tokens:
        raise ApiError(
            413, "selection_too_large",
            f"The selected text is {tokens:,} tokens long; select at most {max_tokens:,} "
            "(about a few paragraphs) and ask again.",
        )
    return tokens


def feedback_request(data: dict) -> FeedbackRequest:
    _unknown(data, {"request_id", "rating", "comment"})
    request_id = _text(data, "request_id", True, 64) or ""
    rating = data.get("rating")
    if rating not in ("up", "down"):
        raise ApiError(422, "invalid_field", "`rating` must be \"up\" or \"down\".")
    comment = _text(data, "comment", False, MAX_COMMENT_CHARS)
    return FeedbackRequest(request_id, rating, comment or None)
