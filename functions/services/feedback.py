"""Answer records and reader feedback (SQLite locally, DynamoDB deployed), and what authors read back.

Every answer is recorded by request id (question, citations, low_confidence, mode) for 90 days;
`up`/`down` feedback attaches to that record. `list_low_confidence` groups the questions the book
did not answer well, which is what an author wants to see ("Ask about this" answers apart).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from functions.services.dynamo import ConditionFailed, DynamoClient, shared_client

RETENTION = 90 * 86_400
DEFAULT_PATH = ".textbook-chat/feedback.sqlite3"
BY_DAY_INDEX = "by_day"  # sparse GSI over answer records: day (hash), created_at (range)
MAX_TEXT = 2000
CITATION_FIELDS = ("n", "title", "section_title", "url", "doc_path", "score")


class FeedbackStore(Protocol):
    def record_answer(self, request_id: str, question: str, citations: list[dict],
                      low_confidence: bool, mode: str) -> None: ...

    def save_feedback(self, request_id: str, rating: str, comment: str | None) -> bool:
        """Attach a rating to a recorded answer; False when the request id is unknown."""
        ...

    def answers(self, since: float) -> Iterator[dict]:
        """Answer records created at or after `since` (epoch seconds)."""
        ...


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


def _compact(citations: list[dict]) -> list[dict]:
    return [{k: c[k] for k in CITATION_FIELDS if k in c} for c in citations]


class SQLiteFeedbackStore:
    """One file, one table; safe across the threads of `textbook-chat serve`."""

    def __init__(self, path: str | os.PathLike = DEFAULT_PATH, clock=time.time):
        import sqlite3  # only off AWS: the deployed functions keep records in DynamoDB

        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.clock, self._lock = clock, threading.Lock()
        self.db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")  # a log: one fsync per write is not needed
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("""CREATE TABLE IF NOT EXISTS answers (
            request_id TEXT PRIMARY KEY, created_at REAL NOT NULL, question TEXT NOT NULL,
            citations TEXT NOT NULL, low_confidence INTEGER NOT NULL, mode TEXT NOT NULL,
            rating TEXT, comment TEXT, feedback_at REAL)""")
        self.db.execute("DELETE FROM answers WHERE created_at < ?", (clock() - RETENTION,))

    def record_answer(self, request_id, question, citations, low_confidence, mode) -> None:
        with self._lock:
            self.db.execute(
                "INSERT OR REPLACE INTO answers (request_id, created_at, question, citations, "
                "low_confidence, mode) VALUES (?, ?, ?, ?, ?, ?)",
                (request_id, self.clock(), question[:MAX_TEXT], json.dumps(_compact(citations)),
                 int(bool(low_confidence)), mode))

    def save_feedback(self, request_id, rating, comment) -> bool:
        with self._lock:
            cur = self.db.execute(
                "UPDATE answers SET rating = ?, comment = ?, feedback_at = ? WHERE request_id = ?",
                (rating, (comment or "")[:MAX_TEXT] or None, self.clock(), request_id))
            return cur.rowcount == 1

    def answers(self, since: float) -> Iterator[dict]:
        with self._lock:
            rows = self.db.execute(
                "SELECT request_id, created_at, question, citations, low_confidence, mode, rating, "
                "comment FROM answers WHERE created_at >= ? ORDER BY created_at DESC, rowid DESC",
                (since,)).fetchall()
        for rid, created, q, cites, low, mode, rating, comment in rows:
            yield {"request_id": rid, "created_at": _iso(created), "question": q,
                   "citations": json.loads(cites), "low_confidence": bool(low), "mode": mode,
                   "rating": rating, "comment": comment}


class DynamoFeedbackStore:
    """Item `answer#<request_id>`/`answer` with TTL; feedback is a conditional update of it."""

    def __init__(self, client: DynamoClient, table: str, clock=time.time):
        self.client, self.table, self.clock = client, table, clock

    def record_answer(self, request_id, question, citations, low_confidence, mode) -> None:
        now = self.clock()
        self.client.call("PutItem", use="feedback", payload={"TableName": self.table, "Item": {
            "pk": {"S": f"answer#{request_id}"}, "sk": {"S": "answer"},
            "day": {"S": _iso(now)[:10]}, "created_at": {"S": _iso(now)},
            "question": {"S": question[:MAX_TEXT] or " "},
            "citations": {"S": json.dumps(_compact(citations))},
            "low_confidence": {"BOOL": bool(low_confidence)}, "mode": {"S": mode or "chat"},
            "expires_at": {"N": str(int(now) + RETENTION)},
        }})

    def save_feedback(self, request_id, rating, comment) -> bool:
        values = {":r": {"S": rating}, ":t": {"S": _iso(self.clock())},
                  ":c": {"S": comment[:MAX_TEXT]} if comment else {"NULL": True}}
        try:
            self.client.call("UpdateItem", use="feedback", payload={
                "TableName": self.table,
                "Key": {"pk": {"S": f"answer#{request_id}"}, "sk": {"S": "answer"}},
                "UpdateExpression": "SET rating = :r, #c = :c, feedback_at = :t",
                "ConditionExpression": "attribute_exists(pk)",
                "ExpressionAttributeNames": {"#c": "comment"},
                "ExpressionAttributeValues": values,
            })
        except ConditionFailed:
            return False
        return True

    def check(self) -> None:
        """Raises when the table cannot be read (GET /health)."""
        self.client.call("GetItem", {"TableName": self.table, "Key": {
            "pk": {"S": "answer#health"}, "sk": {"S": "answer"}}}, use="feedback")

    def answers(self, since: float) -> Iterator[dict]:
        """Newest first, one Query per day on the `by_day` index (the author's credentials)."""
        day = int(self.clock()) // 86_400
        while day * 86_400 + 86_400 > since:
            start: dict | None = None
            while True:
                req = {"TableName": self.table, "IndexName": BY_DAY_INDEX,
                       "KeyConditionExpression": "#d = :d AND created_at >= :s",
                       "ExpressionAttributeNames": {"#d": "day"}, "ScanIndexForward": False,
                       "ExpressionAttributeValues": {":d": {"S": _iso(day * 86_400)[:10]},
                                                     ":s": {"S": _iso(since)}}}
                if start:
                    req["ExclusiveStartKey"] = start
                page = self.client.call("Query", req, use="feedback")
                yield from (_from_item(i) for i in page.get("Items", []))
                start = page.get("LastEvaluatedKey")
                if not start:
                    break
            day -= 1


def _from_item(item: Mapping[str, dict]) -> dict:
    def s(name):
        v = item.get(name, {})
        return v.get("S") if "S" in v else None

    return {"request_id": s("pk")[len("answer#"):], "created_at": s("created_at"),
            "question": s("question"), "citations": json.loads(s("citations") or "[]"),
            "low_confidence": item.get("low_confidence", {}).get("BOOL", False),
            "mode": s("mode"), "rating": s("rating"), "comment": s("comment")}


def make_feedback_store(settings, env: Mapping[str, str] | None = None,
                        path: str | None = None) -> FeedbackStore:
    """DynamoDB when settings.dynamodb_table is set, else SQLite (in /tmp on Lambda)."""
    env = os.environ if env is None else env
    if settings.dynamodb_table:
        return DynamoFeedbackStore(shared_client(env), settings.dynamodb_table)
    if path is None:
        on_lambda = bool(env.get("AWS_LAMBDA_FUNCTION_NAME"))
        path = "/tmp/textbook-chat/feedback.sqlite3" if on_lambda else DEFAULT_PATH
    return SQLiteFeedbackStore(path)


def export_feedback(store: FeedbackStore, days: int = 90, rated_only: bool = False,
                    now: float | None = None) -> list[dict]:
    """Answer records of the last `days` days, newest first (only rated ones if asked)."""
    since = (time.time() if now is None else now) - days * 86_400
    return [a for a in store.answers(since) if a["rating"] or not rated_only]


def list_low_confidence(store: FeedbackStore, days: int = 90, now: float | None = None,
                        selection: bool = False) -> list[dict]:
    """Questions the book did not answer well (low confidence or rated down), most asked first.
    "Ask about this" answers (mode `selection`) are about the passage a reader selected, not
    gaps in the book, and offline every one is low confidence (it quotes, it cannot rephrase):
    they are left out, or with `selection` they alone are listed, those rated down."""
    groups: dict[str, dict] = {}
    for a in export_feedback(store, days, now=now):
        if (a["mode"] == "selection") != selection:
            continue
        if not ((a["low_confidence"] and not selection) or a["rating"] == "down"):
            continue
        key = " ".join(a["question"].lower().split()).rstrip("?!. ")
        g = groups.setdefault(key, {"question": a["question"], "asked": 0, "low_confidence": 0,
                                    "rated_down": 0, "last_asked": a["created_at"],
                                    "comments": []})
        g["asked"] += 1
        g["low_confidence"] += int(a["low_confidence"] and not selection)
        g["rated_down"] += int(a["rating"] == "down")
        if a["comment"]:
            g["comments"].append(a["comment"])
    return sorted(groups.values(), key=lambda g: (-g["asked"], g["question"]))
