"""The one backoff schedule: its delays as tables, the deadline rule, and the sleeper driven by
a fake clock (no real sleeping)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.backoff import Backoff, pause, pause_before, poll

DOUBLING = Backoff(0.5, cap=20.0)
EQUAL = Backoff(0.5, cap=20.0, jitter=(0.5, 1.0))
SPREAD = Backoff(0.05, cap=1.0, jitter=(0.5, 1.5))
FIXED = Backoff(0.2, factor=1.0)


@pytest.mark.parametrize(("schedule", "n", "draw", "expected"), [
    (DOUBLING, 0, 0.0, 0.5),
    (DOUBLING, 1, 0.9, 1.0),  # no jitter: the draw does not matter
    (DOUBLING, 3, 0.0, 4.0),
    (DOUBLING, 5, 0.0, 16.0),
    (DOUBLING, 6, 0.0, 20.0),  # capped
    (DOUBLING, 5000, 0.0, 20.0),  # no overflow however long it went on
    (EQUAL, 0, 0.0, 0.25),  # equal jitter: half fixed...
    (EQUAL, 0, 1.0, 0.5),  # ...half random
    (EQUAL, 2, 0.5, 1.5),
    (EQUAL, 10, 0.0, 10.0),
    (EQUAL, 10, 2.0, 20.0),  # a draw out of [0, 1] is clamped
    (EQUAL, 10, -1.0, 10.0),
    (SPREAD, 0, 0.0, 0.025),
    (SPREAD, 0, 1.0, 0.075),
    (SPREAD, 9, 0.5, 1.0),
    (FIXED, 0, 0.3, 0.2),
    (FIXED, 40, 0.3, 0.2),
    (Backoff(0.25, factor=1.5, cap=5.0), 2, 0.0, 0.5625),
    (Backoff(0.0), 3, 0.0, 0.0),
])
def test_delay(schedule: Backoff, n: int, draw: float, expected: float) -> None:
    assert schedule.delay(n, draw) == pytest.approx(expected)


@pytest.mark.parametrize("bad", [
    dict(first=-1.0), dict(first=1.0, factor=0.5), dict(first=1.0, cap=-1.0),
    dict(first=1.0, jitter=(1.0, 0.5)), dict(first=1.0, jitter=(-0.1, 1.0)),
])
def test_not_a_schedule(bad: dict) -> None:
    with pytest.raises(ValueError):
        Backoff(**bad)


def test_negative_step() -> None:
    with pytest.raises(ValueError):
        DOUBLING.step(-1)


@pytest.mark.parametrize(("n", "now", "deadline", "expected"), [
    (0, 0.0, None, 0.5),  # no deadline: the schedule's delay
    (3, 100.0, None, 4.0),
    (0, 0.0, 10.0, 0.5),  # well before the deadline
    (3, 8.0, 10.0, 2.0),  # cut to end at the deadline
    (3, 9.999, 10.0, pytest.approx(0.001)),
    (0, 10.0, 10.0, None),  # the deadline has come: no more tries
    (0, 11.0, 10.0, None),
])
def test_pause_before(n: int, now: float, deadline: float | None, expected: float | None) -> None:
    assert pause_before(DOUBLING, n, 0.0, now, deadline) == expected


class FakeTime:
    """A clock that moves only when slept on (and by `cost` per try, if the tries take time)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.slept.append(seconds)
        self.now += seconds


def answers(*values: object):
    items = iter(values)
    return lambda: next(items)


def test_poll_returns_the_first_good_answer() -> None:
    fake = FakeTime()
    got = poll(answers(None, 0, "yes", "never asked"), DOUBLING, clock=fake.clock, sleep=fake.sleep)
    assert got == "yes"
    assert fake.slept == [0.5, 1.0]


def test_poll_until_a_predicate() -> None:
    fake = FakeTime()
    got = poll(answers("wait", "wait", "go"), DOUBLING, until=lambda a: a != "wait", clock=fake.clock,
               sleep=fake.sleep)
    assert got == "go"


def test_poll_gives_up_at_the_deadline_with_the_last_answer() -> None:
    fake = FakeTime()
    got = poll(lambda: False, DOUBLING, timeout=3.0, clock=fake.clock, sleep=fake.sleep)
    assert got is False
    assert fake.slept == [0.5, 1.0, 1.5]  # the last pause is cut so the last try is at the deadline
    assert fake.now == 3.0


def test_poll_bounded_by_tries() -> None:
    fake = FakeTime()
    calls: list[int] = []
    got = poll(lambda: calls.append(1), FIXED, tries=3, clock=fake.clock, sleep=fake.sleep)
    assert got is None
    assert len(calls) == 3
    assert fake.slept == [0.2, 0.2]  # between the tries, not after the last


def test_poll_without_a_timeout_draws_jitter() -> None:
    fake = FakeTime()
    poll(answers(0, 0, 1), EQUAL, clock=fake.clock, sleep=fake.sleep, draw=lambda: 1.0)
    assert fake.slept == [0.5, 1.0]


def test_pause_sleeps_the_delay() -> None:
    fake = FakeTime()
    assert pause(SPREAD, 2, sleep=fake.sleep, draw=lambda: 0.5) == pytest.approx(0.2)
    assert fake.slept == [pytest.approx(0.2)]


schedules = st.builds(
    Backoff,
    first=st.floats(0, 100),
    factor=st.floats(1, 10),
    cap=st.floats(0, 1000) | st.just(math.inf),
    jitter=st.tuples(st.floats(0, 2), st.floats(0, 2)).map(sorted).map(tuple),
)


@given(schedules, st.integers(0, 3000), st.floats(0, 1))
def test_property_delay_is_within_its_band(schedule: Backoff, n: int, draw: float) -> None:
    """Every delay is the capped step scaled into the jitter range, and steps never shrink."""
    low, high = schedule.jitter
    step = schedule.step(n)
    assert step <= schedule.cap
    assert step <= schedule.step(n + 1)
    def scaled(k: float) -> float:
        return step * k if k else 0.0

    assert scaled(low) * (1 - 1e-12) <= schedule.delay(n, draw) <= scaled(high) * (1 + 1e-12)


@given(schedules, st.floats(0, 50), st.lists(st.floats(0, 1), max_size=60), st.floats(0, 5))
def test_property_poll_never_sleeps_past_the_deadline(schedule: Backoff, timeout: float, draws: list[float],
                                                      cost: float) -> None:
    """Tries that each take `cost` seconds, none succeeding: poll stops at or just after the
    deadline (by at most one try's cost), and no pause ends after it."""
    fake = FakeTime()
    source = iter(draws)

    def attempt() -> bool:
        fake.now += cost
        return False

    poll(attempt, schedule, timeout=timeout, tries=len(draws) + 1, clock=fake.clock, sleep=fake.sleep,
         draw=lambda: next(source))
    assert fake.now <= timeout + cost + 1e-9
    elapsed = 0.0
    for seconds in fake.slept:
        elapsed += cost + seconds
        assert elapsed <= timeout + 1e-9
