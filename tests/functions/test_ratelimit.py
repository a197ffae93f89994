"""Rate limits and the spend cap: the same behaviour tests over memory and DynamoDB (moto server)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from functions.services.dynamo import DynamoClient, DynamoError
from functions.services.ratelimit import (
    HOLD_SECONDS,
    SLOT_SECONDS,
    DynamoRateLimiter,
    DynamoSpendCap,
    MemoryRateLimiter,
    MemorySpendCap,
    Refusal,
    Reservation,
    make_limits,
)
from functions.settings import Settings
from tests.fakes.aws import MotoServer, create_table
from tests.shared import in_one_minute

T0 = datetime(2026, 3, 14, 12, 0, 0, tzinfo=UTC).timestamp()  # a minute and a day start


class Clock:
    def __init__(self, now: float = T0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="session")
def dynamo_endpoint():
    """moto's DynamoDB over HTTP on 127.0.0.1 (tests/fakes/aws.py): one request at a time, as
    DynamoDB serialises writes to one item; the clients stay concurrent, which is what the
    limiter code must survive."""
    pytest.importorskip("flask", reason="moto's server needs moto[server] (flask)")
    with MotoServer() as server:
        yield server.endpoint


def aws_env(endpoint: str) -> dict[str, str]:
    return {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "eu-west-1", "AWS_ENDPOINT_URL": endpoint}


def scan(endpoint: str, table: str) -> list[dict]:
    import boto3

    b = boto3.client("dynamodb", endpoint_url=endpoint, region_name="eu-west-1",
                     aws_access_key_id="testing", aws_secret_access_key="testing")
    return b.scan(TableName=table)["Items"]


@pytest.fixture(params=["memory", "dynamo"])
def limits(request):
    """A factory: (per_minute, per_day, budget, clock) -> (RateLimiter, SpendCap)."""
    if request.param == "memory":
        return lambda pm, pd, budget, clock: (MemoryRateLimiter(pm, pd, clock),
                                              MemorySpendCap(budget, clock))
    endpoint = request.getfixturevalue("dynamo_endpoint")
    client, table = DynamoClient.from_env(aws_env(endpoint)), create_table(endpoint)
    return lambda pm, pd, budget, clock: (DynamoRateLimiter(client, table, pm, pd, clock),
                                          DynamoSpendCap(client, table, budget, clock))


@pytest.mark.slow  # over 1 s of CPU (pytest --cpu-durations): the quick loop keeps under 90 s
def test_concurrent_hits_never_pass_the_limit(limits):
    limiter, _ = limits(25, 1000, 0, Clock())
    allowed, lock = [], threading.Lock()

    def client():
        for _ in range(10):
            ok = limiter.hit("203.0.113.7") is None
            with lock:
                allowed.append(ok)

    threads = [threading.Thread(target=client) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(allowed) == 200
    assert sum(allowed) == 25


def test_minute_window_resets_and_retry_after_counts_down(limits):
    clock = Clock(T0 + 15.2)
    limiter, _ = limits(3, 100, 0, clock)
    assert [limiter.hit("a") for _ in range(3)] == [None, None, None]
    assert limiter.hit("a") == 45.0  # 44.8 s left in the minute, rounded up
    assert limiter.hit("b") is None  # other clients keep their own counters
    clock.now = T0 + 59.9
    assert limiter.hit("a") == 1.0  # never 0
    clock.now = T0 + 60
    assert limiter.hit("a") is None


def test_day_limit_waits_until_utc_midnight(limits):
    clock = Clock(T0)
    limiter, _ = limits(100, 4, 0, clock)
    for i in range(4):
        clock.now = T0 + 61 * i  # spread over minutes
        assert limiter.hit("a") is None
    assert limiter.hit("a") == 12 * 3600 - 3 * 61
    clock.now = T0 + 12 * 3600  # the next UTC day
    assert limiter.hit("a") is None


def test_zero_switches_a_limit_off(limits):
    limiter, cap = limits(0, 0, 0, Clock())
    assert all(limiter.hit("a") is None for _ in range(50))
    assert isinstance(cap.reserve(10**9), Reservation)


def booked(cap, tokens: int) -> Reservation:
    reservation = cap.reserve(tokens)
    assert isinstance(reservation, Reservation), reservation
    assert reservation.tokens == tokens
    return reservation


def test_spend_cap_reserve_settle_and_reset(limits):
    clock = Clock(T0 + 3600)
    _, cap = limits(10, 10, 1000, clock)
    cap.settle(booked(cap, 600), 600)  # the model used all of it
    assert cap.reserve(500) == Refusal(11 * 3600)  # 1100 > 1000: refused until midnight
    cap.settle(booked(cap, 300), 0)  # the model used none of it: given back
    last = booked(cap, 400)  # exactly the budget
    assert cap.reserve(1) == Refusal(5, in_flight=True)  # 400 of it still in flight
    cap.settle(last, 500)  # used more than reserved: counted, over budget
    assert cap.held() == 0
    assert cap.reserve(1) == Refusal(11 * 3600)
    assert cap.reserve(5000) == Refusal(11 * 3600)  # more than a whole day's budget
    clock.now = T0 + 12 * 3600
    booked(cap, 1000)


def test_reservations_in_flight_are_not_the_day_s_spending(limits):
    """A burst near the cap: what requests still running have reserved (most of which they will
    give back) is not 'used up for hours'. The reader is asked to try again in a few seconds,
    and answered once those requests settle; the cap itself stays exact."""
    clock = Clock(T0 + 3600)
    _, cap = limits(10, 10, 1000, clock)
    cap.settle(booked(cap, 200), 200)  # spent: 200
    held = [booked(cap, 250) for _ in range(3)]  # three answers on their way: 750 reserved
    assert cap.held() == 750
    refusal = cap.reserve(300)
    assert refusal == Refusal(5, in_flight=True)  # 200 spent + 300 fits; the holds are in the way
    for reservation in held:
        cap.settle(reservation, 60)  # each used far less than it reserved
    cap.settle(booked(cap, 300), 300)  # 200 + 180 + 300 <= 1000
    assert cap.reserve(400) == Refusal(11 * 3600)  # 680 spent: truly over for today
    assert cap.held() == 0


def test_a_reservation_never_settled_counts_as_spent_once_its_request_is_over(limits):
    """A request killed before it settled (a Lambda timed out) leaves its reservation behind:
    after the longest a request may live it is spending, not a reason to say 'busy'."""
    clock = Clock(T0 + 3600)
    _, cap = limits(10, 10, 1000, clock)
    booked(cap, 900)  # never settled
    assert cap.reserve(200) == Refusal(5, in_flight=True)
    clock.now += HOLD_SECONDS + SLOT_SECONDS
    assert cap.reserve(200) == Refusal(11 * 3600 - HOLD_SECONDS - SLOT_SECONDS)
    assert cap.held() == 0


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_a_killed_request_s_reservation_is_spent_while_others_come_and_go(limits):
    """Readers keep asking (a reservation every few seconds, each settled) after one request
    was killed before it settled: its reservation still ends with its own time, counted as
    spent, and nothing stays held once nothing is in flight (it used to wait for a quiet
    HOLD_SECONDS after the last reservation, which steady traffic never leaves)."""
    clock = Clock(T0 + 3600)
    _, cap = limits(10, 10, 10_000, clock)
    booked(cap, 3000)  # killed: never settled
    for _ in range(30):  # a question every 3 s for 90 s, each settled
        clock.now += 3
        cap.settle(booked(cap, 500), 100)
    assert cap.held() == 0
    assert cap.reserve(6000) == Refusal(11 * 3600 - 90)  # 3000 + 3000 spent: not "busy"
    cap.settle(booked(cap, 4000), 4000)  # what is left of the day is all there
    assert cap.reserve(1) == Refusal(11 * 3600 - 90)


def test_a_reservation_made_before_midnight_is_settled_on_its_own_day(limits):
    """An answer reserved at 23:59:58 and settled after midnight: the new day owes nothing,
    and the day it was made on holds nothing more."""
    clock = Clock(T0 + 12 * 3600 - 2)  # 23:59:58 UTC
    _, cap = limits(10, 10, 1000, clock)
    late = booked(cap, 700)
    clock.now += 5  # the next day
    fresh = booked(cap, 1000)  # the new day's whole budget
    cap.settle(late, 50)
    assert cap.held() == 1000  # the new day's reservation only
    cap.settle(fresh, 0)
    assert cap.held() == 0
    cap.settle(booked(cap, 1000), 0)  # still the whole budget


def test_a_settle_past_the_request_s_deadline_still_gives_back(limits):
    """The request's time is over when its answer settles (the work ran late): the reservation
    is given back all the same, on time of its own (it used to fail 'Busy' on DynamoDB and
    hold the tokens for the rest of the day)."""
    from functions.deadline import Deadline, within
    from functions.services.budget import reserve, settle

    clock, request_clock = Clock(T0 + 3600), Clock(1000.0)
    _, cap = limits(10, 10, 1000, clock)
    with within(Deadline(10.0, request_clock)) as deadline:
        reservation = reserve(cap, 900)
        request_clock.now += 11  # the answer took longer than the request had
        assert deadline.left() == 0
        settle(cap, reservation, 100)
    assert cap.held() == 0
    cap.settle(booked(cap, 900), 0)  # 100 spent, 900 more fit


@pytest.mark.slow  # about 1 s or more (pytest --durations / --cpu-durations): the quick loop keeps under 90 s
def test_concurrent_reservations_stay_within_budget(limits):
    _, cap = limits(10, 10, 1000, Clock())
    results, lock = [], threading.Lock()

    def client():
        for _ in range(5):
            ok = isinstance(cap.reserve(30), Reservation)
            with lock:
                results.append(ok)

    threads = [threading.Thread(target=client) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(results) == 1000 // 30
    assert cap.held() == 1000 // 30 * 30


def test_dynamo_items_carry_ttl_and_no_raw_ip(dynamo_endpoint):
    table, clock = create_table(dynamo_endpoint), Clock(T0)
    client = DynamoClient.from_env(aws_env(dynamo_endpoint))
    DynamoRateLimiter(client, table, 5, 50, clock).hit("198.51.100.23")
    DynamoSpendCap(client, table, 100, clock).reserve(10)
    items = scan(dynamo_endpoint, table)
    assert len(items) == 3  # minute, day, spend
    for item in items:
        assert int(item["expires_at"]["N"]) > T0
        assert "198.51.100.23" not in str(item)
    minute = next(i for i in items if i["sk"]["S"].startswith("minute#"))
    assert int(minute["expires_at"]["N"]) == T0 + 60 + 3600


def test_missing_table_is_a_clear_error(dynamo_endpoint):
    client = DynamoClient.from_env(aws_env(dynamo_endpoint))
    with pytest.raises(DynamoError, match="does not exist.*serverless deploy") as err:
        DynamoRateLimiter(client, "no-such-table", 5, 50).hit("a")
    assert err.value.code == "ResourceNotFoundException"


def test_unreachable_dynamo_is_a_clear_error():
    client = DynamoClient("eu-west-1", "http://127.0.0.1:9", aws_env(""), attempts=2)
    with pytest.raises(DynamoError, match="cannot be reached"):
        DynamoSpendCap(client, "t", 100).reserve(1)


def test_make_limits_picks_the_backend(dynamo_endpoint):
    memory = make_limits(Settings(rate_limit_per_minute=2))
    assert isinstance(memory[0], MemoryRateLimiter) and isinstance(memory[1], MemorySpendCap)
    table = create_table(dynamo_endpoint)
    limiter, cap = make_limits(Settings(dynamodb_table=table, rate_limit_per_minute=2),
                               env=aws_env(dynamo_endpoint))
    assert isinstance(limiter, DynamoRateLimiter) and isinstance(cap, DynamoSpendCap)
    # the limiter's own clock (calendar minutes): a burst that straddles a minute's end is
    # counted in two windows, so it runs again, as another reader (at load 13 it straddled one)
    readers = iter(range(10))

    def burst():
        reader = f"x{next(readers)}"
        return [limiter.hit(reader) is None for _ in range(3)]

    assert in_one_minute(burst) == [True, True, False]


def test_dynamo_limits_never_import_boto3(dynamo_endpoint):
    """boto3 + a client cost ~0.45 s of cold start; the limiter speaks DynamoDB over httpx."""
    import json
    import subprocess
    import sys

    table = create_table(dynamo_endpoint)
    code = (
        "import json, sys\n"
        "from functions.services.ratelimit import make_limits\n"
        "from functions.settings import Settings\n"
        f"limiter, cap = make_limits(Settings(dynamodb_table={table!r}), {aws_env(dynamo_endpoint)!r})\n"
        "print(json.dumps([limiter.hit('a'), type(cap.reserve(5)).__name__,\n"
        "                  sorted(m for m in ('boto3', 'botocore') if m in sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [None, "Reservation", []]
