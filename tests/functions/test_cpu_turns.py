"""CPU steps take turns within their requests' deadlines (functions/cpu_turns.py): a step its
deadline cannot hold is busy at once, a waiting step whose deadline runs out is busy, the turn
goes to the request that ends first, and work outside a request is never held back."""

from __future__ import annotations

import threading

import pytest

from functions.cpu_turns import Turns
from functions.deadline import Deadline, within
from functions.errors import Busy
from tests.shared import eventually


def test_outside_a_request_steps_run_as_they_come():
    turns, ran = Turns(), []
    with turns.turn(10_000), turns.turn(10_000):  # no deadline: not even the turn is taken
        ran.append(True)
    assert ran == [True]


def test_a_step_its_deadline_cannot_hold_does_not_wait_for_the_turn():
    turns = Turns()
    turns.fixed, turns.per_token = 0.1, 0.01  # 2,000 tokens take ~20 s
    holding, release, ran = threading.Event(), threading.Event(), []

    def holder():
        with within(Deadline(600.0)), turns.turn(10):
            holding.set()
            release.wait(600)

    first = threading.Thread(target=holder)
    first.start()
    holding.wait(600)
    try:
        with within(Deadline(18.0)), pytest.raises(Busy), turns.turn(2000):
            ran.append("large")  # busy at once: it would wait, and 18 s cannot hold it
    finally:
        release.set()
        first.join(600)
    assert ran == []
    with within(Deadline(18.0)), turns.turn(2000):  # the turn is free: it may still fit
        ran.append("large")
    with within(Deadline(18.0)), turns.turn(20):
        ran.append("small")
    assert ran == ["large", "small"]


def test_a_step_that_waits_past_what_its_deadline_holds_is_busy():
    turns = Turns()
    turns.fixed = 0.01
    holding, release, outcome = threading.Event(), threading.Event(), []

    def holder():
        with within(Deadline(600.0)), turns.turn(10):
            holding.set()
            release.wait(600)

    def waiter():
        try:
            with within(Deadline(0.3)), turns.turn(10):
                outcome.append("ran")
        except Busy:
            outcome.append("busy")

    first = threading.Thread(target=holder)
    first.start()
    holding.wait(600)
    second = threading.Thread(target=waiter)
    second.start()
    second.join(600)
    release.set()
    first.join(600)
    assert outcome == ["busy"]
    with within(Deadline(18.0)), turns.turn(10):  # the turn it gave up is free again
        outcome.append("ran")
    assert outcome == ["busy", "ran"]


def test_the_turn_goes_to_the_request_that_ends_first():
    turns = Turns()
    holding, release, order = threading.Event(), threading.Event(), []

    def holder():
        with within(Deadline(600.0)), turns.turn(10):
            holding.set()
            release.wait(600)

    def step(name: str, seconds: float):
        with within(Deadline(seconds)), turns.turn(10):
            order.append(name)

    first = threading.Thread(target=holder)
    first.start()
    holding.wait(600)
    late = threading.Thread(target=step, args=("ends later", 500.0))
    late.start()
    eventually(lambda: len(turns._waiting) == 1, "the first step waiting")
    soon = threading.Thread(target=step, args=("ends sooner", 300.0))
    soon.start()
    eventually(lambda: len(turns._waiting) == 2, "the second step waiting")
    release.set()
    for t in (first, late, soon):
        t.join(600)
    assert order == ["ends sooner", "ends later"]
