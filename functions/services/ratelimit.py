"""Per-client-IP rate limits and the deployment's daily token cap: in-process, or DynamoDB counters.

Fixed windows (a minute, a UTC day). DynamoDB counters are one conditional `UpdateItem` each
(`ADD count :one` only while `count < limit`), so concurrent Lambdas never let a request over
the limit through; every item carries `expires_at` for TTL. Client IPs are stored hashed.
A limit of 0 or less switches that limit off.

The day's budget counts what answers still being written have reserved (`held`) apart from what
is spent: a reservation stands in the way of the next one, so the cap stays exact, but a
refusal that only reservations cause is "busy, try again in seconds", not "used up for hours"
(`Refusal.in_flight`). A reservation is settled on the day and in the slot it was booked in,
with time of its own whatever its request's deadline has left (functions.deadline.beyond).
One its request never settled (the process was killed, DynamoDB failed) counts as spent once its
slot is over: reservations are held by slot (when their requests are over at the latest, at most
HOLD_SECONDS + SLOT_SECONDS after they were made), so that happens while others come and go.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from functions.deadline import beyond
from functions.services.dynamo import ConditionFailed, DynamoClient, DynamoError, shared_client

DAY = 86_400
MINUTE = 60
HOLD_SECONDS = 30  # the longest a request lives (Lambda stops it at 25 s)
SLOT_SECONDS = 10  # reservations are held by the 10 s in which their requests are over at the latest
SLOT_PREFIX = "held_"  # DynamoDB: the attribute of a slot, held_<its end in epoch seconds>
OWN_PREFIX = "rsv_"  # DynamoDB: a reservation's own attribute, rsv_<slot>_<random>, until settled
SWEEP_MOST = 20  # slots swept in one update (an expression's size stays small)
SETTLE_SECONDS = 1.0  # a settle's own time, past the request's deadline if need be
IN_FLIGHT_RETRY = 5.0  # Retry-After when only reservations in flight stand in the way


@dataclass(frozen=True)
class Refusal:
    """The daily budget refused a reservation: ask again in `wait` seconds. `in_flight`: only
    what requests still running have reserved stands in the way (most of it comes back)."""

    wait: float
    in_flight: bool = False


@dataclass(frozen=True)
class Reservation:
    """Tokens booked against the day's budget until settled: `day` the UTC day it was booked on
    (settled there, whatever the clock says then), `slot` when its request is over at the latest
    (epoch seconds): a slot that is over is counted as spent. `name`: its own attribute on
    DynamoDB (a retried call finds it there, so no reservation is booked or settled twice)."""

    tokens: int
    day: str
    slot: int
    name: str = ""


class RateLimiter(Protocol):
    def hit(self, client_id: str, limits: tuple[int, int] | None = None) -> float | None:
        """Count one request: None = allowed, else seconds to wait (Retry-After). `limits`:
        (a minute, a day) for this bucket, when not the limiter's own (the box's search)."""
        ...


class SpendCap(Protocol):
    def reserve(self, tokens: int) -> Reservation | Refusal:
        """Book tokens before calling the model: the Reservation to settle, or a Refusal."""
        ...

    def settle(self, reservation: Reservation, actual: int) -> None:
        """A reservation is over: the model really used `actual` tokens (0 when it failed)."""
        ...

    def held(self) -> int:
        """Tokens reserved by requests still in flight (those over counted as spent first)."""
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

    def hit(self, client_id: str, limits: tuple[int, int] | None = None) -> float | None:
        now, who = self.clock(), client_key(client_id)
        keys = windows(now)
        with self._lock:
            if len(self._counts) > 10_000:  # forget closed windows
                open_ = {key for key, _, _ in keys}
                self._counts = {k: v for k, v in self._counts.items() if k[1] in open_}
            for (key, _, wait), limit in zip(keys, limits or self.limits, strict=True):
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


def _slot(now: float) -> int:
    """The slot of a reservation made now: when its request is over at the latest."""
    return math.ceil((now + HOLD_SECONDS) / SLOT_SECONDS) * SLOT_SECONDS


class MemorySpendCap:
    """The day's token total in this process: spent, and held by requests in flight (by slot)."""

    def __init__(self, daily_budget: int, clock: Callable[[], float] = time.time):
        self.budget, self.clock = daily_budget, clock
        self._day, self._spent = "", 0
        self._slots: dict[int, int] = {}  # slot -> tokens its reservations still hold
        self._lock = threading.Lock()

    @property
    def _used(self) -> int:
        return self._spent + sum(self._slots.values())

    def _roll(self, now: float) -> None:
        if day_key(now) != self._day:
            self._day, self._spent, self._slots = day_key(now), 0, {}
        for slot in [s for s in self._slots if s < now]:  # never settled: its requests are over
            self._spent += self._slots.pop(slot)

    def reserve(self, tokens: int) -> Reservation | Refusal:
        now = self.clock()
        with self._lock:
            self._roll(now)
            if self.budget > 0 and self._used + tokens > self.budget:
                return _refusal(self.budget, self._spent, tokens, bool(self._slots), now)
            slot = _slot(now)
            self._slots[slot] = self._slots.get(slot, 0) + tokens
            return Reservation(tokens, self._day, slot)

    def settle(self, reservation: Reservation, actual: int) -> None:
        with self._lock:
            self._roll(self.clock())
            if reservation.day != self._day:  # yesterday's counters are gone
                return
            held = self._slots.get(reservation.slot, 0)
            if held >= reservation.tokens:
                self._slots[reservation.slot] = held - reservation.tokens
                self._spent += actual
            else:  # swept as spent already: what it did not use comes back
                self._spent = max(0, self._spent + actual - reservation.tokens)

    def held(self) -> int:
        with self._lock:
            self._roll(self.clock())
            return sum(self._slots.values())


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

    def hit(self, client_id: str, limits: tuple[int, int] | None = None) -> float | None:
        now, pk = self.clock(), f"rate#{client_key(client_id)}"
        for (key, end, wait), limit in zip(windows(now), limits or self.limits, strict=True):
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


def _number(value: dict | None) -> int:
    return int(float((value or {}).get("N", 0)))


def _slots(item: dict) -> dict[str, tuple[int, int]]:
    """The item's slot attributes: name -> (slot, tokens held)."""
    return {name: (int(name[len(SLOT_PREFIX):]), _number(value)) for name, value in item.items()
            if name.startswith(SLOT_PREFIX) and name[len(SLOT_PREFIX):].isdigit()}


def _own(item: dict, slots: set[int]) -> list[str]:
    """The attributes of the reservations booked in these slots (not settled)."""
    return [name for name in item if name.startswith(OWN_PREFIX)
            and name[len(OWN_PREFIX):].split("_")[0].isdigit()
            and int(name[len(OWN_PREFIX):].split("_")[0]) in slots]


class DynamoSpendCap:
    """One item per UTC day for the whole deployment: `tokens` (spent + held, what the cap's
    condition reads), `held` (reserved by requests in flight) and one `held_<slot>` per slot
    (what the reservations of that slot still hold; `held` is their sum). A slot whose time is
    over is swept: its tokens leave `held` and stay in `tokens`, spent."""

    def __init__(self, client: DynamoClient, table: str, daily_budget: int,
                 clock: Callable[[], float] = time.time):
        self.client, self.table, self.budget, self.clock = client, table, daily_budget, clock

    def _key(self, day: str) -> dict:
        return {"pk": {"S": "spend"}, "sk": {"S": f"day#{day}"}}

    def reserve(self, tokens: int) -> Reservation | Refusal:
        now = self.clock()
        day, slot = day_key(now), _slot(now)
        if self.budget <= 0:
            return Reservation(0, day, slot)  # nothing counted, nothing to settle
        if tokens > self.budget:
            return Refusal(until_midnight(now))
        end = (int(now) // DAY + 1) * DAY
        own = f"{OWN_PREFIX}{slot}_{uuid.uuid4().hex[:12]}"
        try:  # used + tokens <= budget  <=>  used < budget - tokens + 1; booked once
            item = self.client.call("UpdateItem", {
                "TableName": self.table, "Key": self._key(day),
                "UpdateExpression": "ADD tokens :n, held :n, #slot :n SET expires_at = :exp, "
                                    "#own = :n",
                "ConditionExpression": "attribute_not_exists(#own) AND "
                                       "(attribute_not_exists(tokens) OR tokens < :below)",
                "ExpressionAttributeNames": {"#slot": f"{SLOT_PREFIX}{slot}", "#own": own},
                "ExpressionAttributeValues": {
                    ":n": {"N": str(tokens)}, ":below": {"N": str(self.budget - tokens + 1)},
                    ":exp": {"N": str(end + DAY)}},
                "ReturnValues": "ALL_NEW",
            }, use="limits").get("Attributes", {})
        except ConditionFailed:
            item = self._read(day)
            if own not in item:  # refused (not a try whose reply was lost, booked already)
                return self._refused(now, tokens, item)
        self._sweep(day, item, now)
        return Reservation(tokens, day, slot, own)

    def _read(self, day: str) -> dict:
        return self.client.call("GetItem", {"TableName": self.table, "Key": self._key(day),
                                            "ConsistentRead": True}, use="limits").get("Item", {})

    def _refused(self, now: float, tokens: int, item: dict) -> Refusal:
        held = sum(n for slot, n in _slots(item).values() if slot >= now)
        self._sweep(day_key(now), item, now)
        return _refusal(self.budget, _number(item.get("tokens")) - held, tokens, held > 0, now)

    def _sweep(self, day: str, item: dict, now: float) -> None:
        """Count the slots whose requests are over as spent: they leave `held` (with their
        reservations' own attributes), in one update that applies only while they hold what
        was read (else a settle came first: next time). Best effort: a slot left stands in no
        one's way, it only keeps `held` up."""
        stale = sorted((slot, name, n) for name, (slot, n) in _slots(item).items()
                       if slot < now)[:SWEEP_MOST]
        if not stale:
            return
        names = {f"#s{i}": name for i, (_, name, _) in enumerate(stale)}
        names |= {f"#o{i}": name for i, name in
                  enumerate(_own(item, {slot for slot, _, _ in stale})[:SWEEP_MOST * 5])}
        values = {f":v{i}": {"N": str(n)} for i, (_, _, n) in enumerate(stale)}
        values[":minus"] = {"N": str(-sum(n for _, _, n in stale))}
        try:
            self.client.call("UpdateItem", {
                "TableName": self.table, "Key": self._key(day),
                "UpdateExpression": "ADD held :minus REMOVE " + ", ".join(names),
                "ConditionExpression": " AND ".join(f"#s{i} = :v{i}" for i in range(len(stale))),
                "ExpressionAttributeNames": names, "ExpressionAttributeValues": values,
            }, use="limits")
        except DynamoError:  # ConditionFailed among them
            pass

    def settle(self, reservation: Reservation, actual: int) -> None:
        """On the reservation's own day and slot, once, whatever the request's deadline has left
        (SETTLE_SECONDS of its own): what was reserved leaves `held`, what was used stays."""
        if self.budget <= 0 or not reservation.tokens:
            return
        key, reserved = self._key(reservation.day), reservation.tokens
        slot = f"{SLOT_PREFIX}{reservation.slot}"
        with beyond(SETTLE_SECONDS):
            try:
                self.client.call("UpdateItem", {
                    "TableName": self.table, "Key": key,
                    "UpdateExpression": "ADD tokens :delta, held :minus, #slot :minus "
                                        "REMOVE #own",
                    "ConditionExpression": "attribute_exists(#own)",
                    "ExpressionAttributeNames": {"#slot": slot, "#own": reservation.name},
                    "ExpressionAttributeValues": {
                        ":delta": {"N": str(actual - reserved)}, ":minus": {"N": str(-reserved)}},
                }, use="limits")
            except ConditionFailed:  # settled by a try whose reply was lost, or swept
                if slot in self._read(reservation.day):
                    return  # its slot is still there: it was settled
                try:  # swept (counted spent): what it did not use comes back
                    self.client.call("UpdateItem", {
                        "TableName": self.table, "Key": key,
                        "UpdateExpression": "ADD tokens :delta",
                        "ConditionExpression": "attribute_exists(tokens)",
                        "ExpressionAttributeValues": {":delta": {"N": str(actual - reserved)}},
                    }, use="limits")
                except ConditionFailed:
                    pass

    def held(self) -> int:
        """What requests still in flight hold (the slots whose time is over swept first)."""
        now = self.clock()
        day = day_key(now)
        item = self._read(day)
        self._sweep(day, item, now)
        return sum(n for slot, n in _slots(item).values() if slot >= now)

    def check(self) -> None:
        """Raises when the table cannot be read (GET /health)."""
        self.client.call("GetItem", {"TableName": self.table,
                                     "Key": self._key(day_key(self.clock()))}, use="limits")


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
