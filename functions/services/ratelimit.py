"""Per-client-IP rate limits and the deployment's daily token cap: in-process, or DynamoDB counters.

Fixed windows (a minute, a UTC day). DynamoDB counters are one conditional `UpdateItem` each
(`ADD count :one` only while `count < limit`), so concurrent Lambdas never let a request over
the limit through; every item carries `expires_at` for TTL. Client IPs are stored hashed.
A limit of 0 or less switches that limit off.

The day's budget counts what answers still being written have reserved (`held`) apart from what
is spent: a reservation stands in the way of the next one, so the cap stays exact, but a
refusal that only reservations cause is "busy, try again in seconds", not "used up for hours"
(`Refusal.in_flight`). A reservation its request never settled (the function was stopped)
counts as spent once HOLD_SECONDS have passed since the last one was made.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from functions.services.dynamo import ConditionFailed, DynamoClient, shared_client

DAY = 86_400
MINUTE = 60
HOLD_SECONDS = 30  # the longest a request lives (Lambda stops it at 25 s)
IN_FLIGHT_RETRY = 5.0  # Retry-After when only reservations in flight stand in the way


@dataclass(frozen=True)
class Refusal:
    """The daily budget refused a reservation: ask again in `wait` seconds. `in_flight`: only
    what requests still running have reserved stands in the way (most of it comes back)."""

    wait: float
    in_flight: bool = False


class RateLimiter(Protocol):
    def hit(self, client_id: str) -> float | None:
        """Count one request: None = allowed, else seconds to wait (Retry-After)."""
        ...


class SpendCap(Protocol):
    def reserve(self, tokens: int) -> Refusal | None:
        """Book tokens before calling the model: None = ok, else a Refusal."""
        ...

    def settle(self, reserved: int, actual: int) -> None:
        """A reservation is over: the model really used `actual` tokens (0 when it failed)."""
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


def _refusal(budget: int, spent: int, tokens: int, held: bool, now: float) -> Refusal:
    """The refusal of `tokens` when spent + held + tokens is over the budget."""
    if held and spent + tokens <= budget:
        return Refusal(IN_FLIGHT_RETRY, in_flight=True)
    return Refusal(until_midnight(now))


class MemorySpendCap:
    """The day's token total in this process: spent, and held by requests in flight."""

    def __init__(self, daily_budget: int, clock: Callable[[], float] = time.time):
        self.budget, self.clock = daily_budget, clock
        self._day, self._spent, self._held, self._held_until = "", 0, 0, 0.0
        self._lock = threading.Lock()

    @property
    def _used(self) -> int:
        return self._spent + self._held

    def _roll(self, now: float) -> None:
        if day_key(now) != self._day:
            self._day, self._spent, self._held = day_key(now), 0, 0
        if self._held and now > self._held_until:  # never settled: its request is over
            self._spent, self._held = self._spent + self._held, 0

    def reserve(self, tokens: int) -> Refusal | None:
        now = self.clock()
        with self._lock:
            self._roll(now)
            if self.budget > 0 and self._used + tokens > self.budget:
                return _refusal(self.budget, self._spent, tokens, self._held > 0, now)
            self._held += tokens
            self._held_until = now + HOLD_SECONDS
            return None

    def settle(self, reserved: int, actual: int) -> None:
        with self._lock:
            self._roll(self.clock())
            given_back = min(reserved, self._held)  # a new day, or gone stale: less to give
            self._held -= given_back
            self._spent = max(0, self._spent + actual - (reserved - given_back))


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
                    self.table, pk, key, "hits", 1, end + 3600, below=limit), use="limits")
            except ConditionFailed:
                return wait
        return None

    def check(self) -> None:
        """Raises when the table cannot be read (GET /health)."""
        self.client.call("GetItem", {"TableName": self.table, "Key": {
            "pk": {"S": "rate#health"}, "sk": {"S": "check"}}}, use="limits")


class DynamoSpendCap:
    """One item per UTC day for the whole deployment: `tokens` (spent + held, what the cap's
    condition reads), `held` (reserved by requests in flight), `held_until` (the last
    reservation's end at the latest)."""

    def __init__(self, client: DynamoClient, table: str, daily_budget: int,
                 clock: Callable[[], float] = time.time):
        self.client, self.table, self.budget, self.clock = client, table, daily_budget, clock

    def _key(self, now: float) -> dict:
        return {"pk": {"S": "spend"}, "sk": {"S": f"day#{day_key(now)}"}}

    def reserve(self, tokens: int) -> Refusal | None:
        now = self.clock()
        if self.budget <= 0:
            return None
        if tokens > self.budget:
            return Refusal(until_midnight(now))
        end = (int(now) // DAY + 1) * DAY
        try:  # used + tokens <= budget  <=>  used < budget - tokens + 1
            self.client.call("UpdateItem", {
                "TableName": self.table, "Key": self._key(now),
                "UpdateExpression": "ADD tokens :n, held :n SET expires_at = :exp, "
                                    "held_until = :until",
                "ConditionExpression": "attribute_not_exists(tokens) OR tokens < :below",
                "ExpressionAttributeValues": {
                    ":n": {"N": str(tokens)}, ":below": {"N": str(self.budget - tokens + 1)},
                    ":exp": {"N": str(end + DAY)}, ":until": {"N": str(now + HOLD_SECONDS)}},
            }, use="limits")
        except ConditionFailed:
            return self._refused(now, tokens)
        return None

    def _refused(self, now: float, tokens: int) -> Refusal:
        item = self.client.call("GetItem", {"TableName": self.table, "Key": self._key(now),
                                            "ConsistentRead": True}, use="limits").get("Item", {})
        used, held = (int(float(item.get(k, {}).get("N", 0))) for k in ("tokens", "held"))
        if now > float(item.get("held_until", {}).get("N", 0)):
            held = 0  # reservations never settled: their requests are over, count them spent
        return _refusal(self.budget, used - held, tokens, held > 0, now)

    def settle(self, reserved: int, actual: int) -> None:
        if self.budget <= 0:
            return
        # the reservation leaves `held`; a settle that finds less held (a new day's item) is
        # dropped: refunds are best effort, and never take a day's counters below zero
        try:
            self.client.call("UpdateItem", {
                "TableName": self.table, "Key": self._key(self.clock()),
                "UpdateExpression": "ADD tokens :delta, held :minus",
                "ConditionExpression": "held >= :reserved",
                "ExpressionAttributeValues": {
                    ":delta": {"N": str(actual - reserved)}, ":minus": {"N": str(-reserved)},
                    ":reserved": {"N": str(reserved)}},
            }, use="limits")
        except ConditionFailed:
            pass

    def check(self) -> None:
        """Raises when the table cannot be read (GET /health)."""
        self.client.call("GetItem", {"TableName": self.table, "Key": self._key(self.clock())},
                         use="limits")


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
