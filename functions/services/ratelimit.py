"""Per-client-IP rate limits and the deployment's daily token cap: in-process, or DynamoDB counters.

Fixed windows (a minute, a UTC day). DynamoDB counters are one conditional `UpdateItem` each
(`ADD count :one` only while `count < limit`), so concurrent Lambdas never let a request over
the limit through; every item carries `expires_at` for TTL. Client IPs are stored hashed.
A limit of 0 or less switches that limit off.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

from functions.services.dynamo import ConditionFailed, DynamoClient, shared_client

DAY = 86_400
MINUTE = 60


class RateLimiter(Protocol):
    def hit(self, client_id: str) -> float | None:
        """Count one request: None = allowed, else seconds to wait (Retry-After)."""
        ...


class SpendCap(Protocol):
    def reserve(self, tokens: int) -> float | None:
        """Book tokens before calling the model: None = ok, else seconds until UTC midnight."""
        ...

    def settle(self, reserved: int, actual: int) -> None:
        """Correct a reservation by what the model really used."""
        ...


def windows(now: float) -> tuple[tuple[str, int, float], ...]:
    """(key, window end, Retry-After) of the minute and the UTC day containing now."""
    minute_end = (int(now) // MINUTE + 1) * MINUTE
    day_end = (int(now) // DAY + 1) * DAY
    return (
        (f"minute#{minute_end - MINUTE}", minute_end, _wait(minute_end - now)),
        (f"day#{day_key(now)}", day_end, _wait(day_end - now)),
    )


def day_key(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")


def until_midnight(now: float) -> float:
    return _wait((int(now) // DAY + 1) * DAY - now)


def _wait(seconds: float) -> float:
    return float(max(1, math.ceil(seconds)))  # Retry-After is whole seconds, never 0


def client_key(client_id: str) -> str:
    return hashlib.sha256(client_id.encode()).hexdigest()[:24]


class MemoryRateLimiter:
    """Counters in this process (local `serve`, tests); a lock makes hits atomic."""

    def __init__(self, per_minute: int, per_day: int, clock: Callable[[], float] = time.time):
        self.limits = (per_minute, per_day)
        self.clock = clock
        self._counts: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def hit(self, client_id: str) -> float | None:
        now, who = self.clock(), client_key(client_id)
        keys = windows(now)
        with self._lock:
            if len(self._counts) > 10_000:  # forget closed windows
                open_ = {key for key, _, _ in keys}
                self._counts = {k: v for k, v in self._counts.items() if k[1] in open_}
            for (key, _, wait), limit in zip(keys, self.limits, strict=True):
                if limit <= 0:
                    continue
                count = self._counts.get((who, key), 0)
                if count >= limit:  # as in DynamoDB: the minute is counted before the day
                    return wait
                self._counts[(who, key)] = count + 1
            return None


class MemorySpendCap:
    """The day's token total in this process."""

    def __init__(self, daily_budget: int, clock: Callable[[], float] = time.time):
        self.budget, self.clock = daily_budget, clock
        self._day, self._used = "", 0
        self._lock = threading.Lock()

    def _roll(self, now: float) -> None:
        if day_key(now) != self._day:
            self._day, self._used = day_key(now), 0

    def reserve(self, tokens: int) -> float | None:
        now = self.clock()
        with self._lock:
            self._roll(now)
            if self.budget > 0 and self._used + tokens > self.budget:
                return until_midnight(now)
            self._used += tokens
            return None

    def settle(self, reserved: int, actual: int) -> None:
        with self._lock:
            self._roll(self.clock())
            self._used = max(0, self._used + actual - reserved)


def _count_update(table: str, pk: str, sk: str, field: str, amount: int, expires_at: int,
                  below: int | None) -> dict:
    """An atomic `ADD field :n` (kept under `below` when given) that also sets the TTL."""
    req = {
        "TableName": table,
        "Key": {"pk": {"S": pk}, "sk": {"S": sk}},
        "UpdateExpression": "ADD #f :n SET expires_at = :exp",
        "ExpressionAttributeNames": {"#f": field},
        "ExpressionAttributeValues": {":n": {"N": str(amount)}, ":exp": {"N": str(expires_at)}},
    }
    if below is not None:
        req["ConditionExpression"] = "attribute_not_exists(#f) OR #f < :below"
        req["ExpressionAttributeValues"][":below"] = {"N": str(below)}
    return req


class DynamoRateLimiter:
    """Minute then day counter per hashed client IP; a refusal by the minute leaves the day alone."""

    def __init__(self, client: DynamoClient, table: str, per_minute: int, per_day: int,
                 clock: Callable[[], float] = time.time):
        self.client, self.table, self.clock = client, table, clock
        self.limits = (per_minute, per_day)

    def hit(self, client_id: str) -> float | None:
        now, pk = self.clock(), f"rate#{client_key(client_id)}"
        for (key, end, wait), limit in zip(windows(now), self.limits, strict=True):
            if limit <= 0:
                continue
            try:
                self.client.call("UpdateItem", _count_update(
                    self.table, pk, key, "hits", 1, end + 3600, below=limit))
            except ConditionFailed:
                return wait
        return None


class DynamoSpendCap:
    """One token counter per UTC day for the whole deployment."""

    def __init__(self, client: DynamoClient, table: str, daily_budget: int,
                 clock: Callable[[], float] = time.time):
        self.client, self.table, self.budget, self.clock = client, table, daily_budget, clock

    def _update(self, now: float, amount: int, below: int | None) -> None:
        end = (int(now) // DAY + 1) * DAY
        self.client.call("UpdateItem", _count_update(
            self.table, "spend", f"day#{day_key(now)}", "tokens", amount, end + DAY, below))

    def reserve(self, tokens: int) -> float | None:
        now = self.clock()
        if self.budget <= 0:
            return None
        if tokens > self.budget:
            return until_midnight(now)
        try:  # used + tokens <= budget  <=>  used < budget - tokens + 1
            self._update(now, tokens, below=self.budget - tokens + 1)
        except ConditionFailed:
            return until_midnight(now)
        return None

    def settle(self, reserved: int, actual: int) -> None:
        if self.budget <= 0 or actual == reserved:
            return
        # a refund never takes a (new) day's counter below zero: refunds are best effort
        req = _count_update(self.table, "spend", f"day#{day_key(self.clock())}", "tokens",
                            actual - reserved, (int(self.clock()) // DAY + 2) * DAY, None)
        if actual < reserved:
            req["ConditionExpression"] = "#f >= :refund"
            req["ExpressionAttributeValues"][":refund"] = {"N": str(reserved - actual)}
        try:
            self.client.call("UpdateItem", req)
        except ConditionFailed:
            pass


def make_limits(settings, env=None) -> tuple[RateLimiter, SpendCap]:
    """DynamoDB counters when settings.dynamodb_table is set, else in-process ones."""
    if settings.dynamodb_table:
        client = shared_client(env)
        return (
            DynamoRateLimiter(client, settings.dynamodb_table, settings.rate_limit_per_minute,
                              settings.rate_limit_per_day),
            DynamoSpendCap(client, settings.dynamodb_table, settings.daily_token_budget),
        )
    return (
        MemoryRateLimiter(settings.rate_limit_per_minute, settings.rate_limit_per_day),
        MemorySpendCap(settings.daily_token_budget),
    )
