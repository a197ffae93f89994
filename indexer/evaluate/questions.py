"""Read and validate a QUESTIONS.jsonl file: one question a line, errors that name the line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# The kinds the corpora use. Any other label is accepted too (a book's own question sets name
# their kinds as they like: "para-goal", "exam"...): "unanswerable" is the one that means the
# book does not answer it, and a label ending in "followup" or "multi" ("para-followup") takes
# those kinds' rules.
KINDS = ("concept", "fact", "howto", "keyword", "structured", "typo", "multi", "followup",
         "unanswerable")
ANSWERABLE_KINDS = KINDS[:-1]
KIND_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
ROLES = ("user", "assistant")
FIELDS = ("id", "question", "expected_url", "expected_page", "kind")
MAX_REPORTED = 20  # problems listed in one error; the rest are counted


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    expected_url: str | None  # page URL + '#' + heading id, exactly as served; None if unanswerable
    expected_page: str | None
    kind: str
    line: int  # 1-based line in the file, for messages
    history: tuple[dict, ...] = ()  # earlier {role, content} turns of a follow-up
    also_url: str | None = None  # the second section a `multi` answer should cite

    @property
    def answerable(self) -> bool:
        return self.kind != "unanswerable"


class QuestionFileError(ValueError):
    """The question file cannot be used; the message lists every problem with its line."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        shown = problems[:MAX_REPORTED]
        more = len(problems) - len(shown)
        lines = [f"{source}: {len(problems)} problem(s) in the question file:"] + [
            f"  {p}" for p in shown
        ]
        if more:
            lines.append(f"  ... and {more} more")
        super().__init__("\n".join(lines))


def base_kind(kind: str) -> str:
    """The rule a kind label takes: its last dash-separated part ("para-followup" -> "followup")."""
    return kind.rsplit("-", 1)[-1]


def _check(obj: object, where: str) -> tuple[Question | None, list[str]]:
    """One parsed line -> a Question, or the problems found in it."""
    if not isinstance(obj, dict):
        return None, [f"{where}: expected a JSON object {{...}}, found {type(obj).__name__}"]
    missing = [f for f in FIELDS if f not in obj]
    if missing:
        return None, [
            f"{where}: missing field(s) {', '.join(missing)}; every line needs "
            f"{', '.join(FIELDS)} (expected_url/expected_page may be null for unanswerable)"
        ]
    problems = []
    for name in ("id", "question"):
        if not isinstance(obj[name], str) or not obj[name].strip():
            problems.append(f"{where}: {name!r} must be a non-empty string")
    kind = obj["kind"]
    if not isinstance(kind, str) or not KIND_LABEL.fullmatch(kind):
        problems.append(f"{where}: kind {kind!r} must be a short label of letters, digits, '-' "
                        f"or '_' (e.g. {', '.join(KINDS)}; 'unanswerable' when the book does "
                        "not answer it)")
    elif kind == "unanswerable":
        for name in ("expected_url", "expected_page"):
            if obj[name] is not None:
                problems.append(f"{where}: {name} must be null for an unanswerable question")
    else:
        for name in ("expected_url", "expected_page"):
            if not isinstance(obj[name], str) or not obj[name].strip():
                problems.append(
                    f"{where}: {name} must be a URL path such as /docs/page#heading "
                    f"for a {kind} question (null only for unanswerable)"
                )
        url, page = obj["expected_url"], obj["expected_page"]
        if not problems and url.split("#", 1)[0] != page:
            problems.append(
                f"{where}: expected_url {url!r} is not on expected_page {page!r} "
                "(expected_url should be expected_page + '#' + heading id)"
            )
    history = obj.get("history") or []
    if not isinstance(history, list) or not all(
        isinstance(t, dict) and t.get("role") in ROLES and isinstance(t.get("content"), str)
        for t in history
    ):
        problems.append(f"{where}: history must be a list of {{\"role\": \"user\"|\"assistant\", "
                        "\"content\": \"...\"}} turns")
    elif isinstance(kind, str) and base_kind(kind) == "followup" and not history:
        problems.append(f"{where}: a followup question needs the earlier turns in \"history\"")
    also = obj.get("also")
    also_url = also.get("expected_url") if isinstance(also, dict) else None
    multi = isinstance(kind, str) and base_kind(kind) == "multi"
    if multi and not (isinstance(also_url, str) and also_url.strip()):
        problems.append(f"{where}: a multi question needs \"also\": {{\"expected_url\": ...}} "
                        "naming its second section")
    if problems:
        return None, problems
    return Question(
        id=obj["id"],
        question=obj["question"],
        expected_url=obj["expected_url"],
        expected_page=obj["expected_page"],
        kind=kind,
        line=0,
        history=tuple({"role": t["role"], "content": t["content"]} for t in history),
        also_url=also_url if multi else None,
    ), []


def parse_questions(lines: Iterable[str], source: str = "questions.jsonl") -> list[Question]:
    """Validate every line (blank lines are skipped); raise QuestionFileError listing all problems."""
    questions: list[Question] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"{source}:{number}"
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        question, found = _check(obj, where)
        problems += found
        if question is None:
            continue
        if question.id in seen:
            problems.append(f"{where}: id {question.id!r} is already used on line {seen[question.id]}")
            continue
        seen[question.id] = number
        questions.append(Question(**{**question.__dict__, "line": number}))
    if not questions and not problems:
        problems.append(
            f"{source}: the file has no questions; write one JSON object per line with "
            f"{', '.join(FIELDS)}"
        )
    if problems:
        raise QuestionFileError(source, problems)
    return questions


def read_questions(path: str | Path) -> list[Question]:
    """Read a question file; a missing or non-UTF-8 file raises QuestionFileError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise QuestionFileError(str(path), [f"{path}: no such file"]) from None
    except UnicodeDecodeError as exc:
        raise QuestionFileError(
            str(path), [f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8"]
        ) from None
    except OSError as exc:
        raise QuestionFileError(str(path), [f"{path}: cannot be read ({exc.strerror})"]) from None
    return parse_questions(text.splitlines(), source=str(path))
