"""How long to wait between tries: one schedule for every retry and polling loop.

A `Backoff` is a pure description of the delays (the first, how each grows, a cap, and how
much of each is random); `pause_before` decides the next pause given the clock and a
deadline, and never lets a pause run past that deadline, so the last try lands on it rather
than after it. `poll` and `pause` are the only parts that sleep; both take the clock, the
sleep and the random draw as arguments, so tests drive them without waiting.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

# Backoff schedules (bot/backoff.py), which our own code builds.
BACKOFF_BAD_SCHEDULE = "not a backoff schedule: {schedule!r}"

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    """Delay `n` (0 for the pause after the first failed try) is `first * factor**n`, at most
    `cap`, scaled by a factor drawn from `jitter` (low, high): (1, 1) waits exactly that,
    (0.5, 1) is "equal jitter" (never under half, so tries spread out but none comes back at
    once), (0.5, 1.5) spreads around the step."""

    first: float
    factor: float = 2.0
    cap: float = math.inf
    jitter: tuple[float, float] = (1.0, 1.0)

    def __post_init__(self) -> None:
        low, high = self.jitter
        if self.first < 0 or self.factor < 1 or self.cap < 0 or not 0 <= low <= high:
            raise ValueError(BACKOFF_BAD_SCHEDULE.format(schedule=self))

    def step(self, n: int) -> float:
        """Delay `n` before jitter."""
        if n < 0:
            raise ValueError("n must be >= 0")
        if self.first == 0:
            return 0.0
        try:
            raw = self.first * self.factor ** n
        except OverflowError:
            raw = math.inf
        return min(self.cap, raw)

    def delay(self, n: int, draw: float = 0.0) -> float:
        """Delay `n` with jitter; `draw` in [0, 1] picks where in the jitter range it falls
        (values outside are clamped, so a bad source of randomness cannot stretch a wait)."""
        low, high = self.jitter
        scale = low + (high - low) * min(max(draw, 0.0), 1.0)
        return self.step(n) * scale if scale > 0 else 0.0


def pause_before(schedule: Backoff, n: int, draw: float, now: float, deadline: float | None) -> float | None:
    """The pause after failed try number `n` (0-based) at `now`: the schedule's delay, cut to
    end at `deadline`; None when the deadline has come (no try is left)."""
    delay = schedule.delay(n, draw)
    if deadline is None:
        return delay
    if now >= deadline:
        return None
    return min(delay, deadline - now)


def poll(attempt: Callable[[], T], schedule: Backoff, *, until: Callable[[T], object] = bool,
         timeout: float | None = None, tries: int | None = None,
         clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
         draw: Callable[[], float] = random.random) -> T:
    """Call `attempt` until `until(answer)` holds, pausing by `schedule` between calls, for at
    most `timeout` seconds and `tries` calls (None: no bound). The last answer either way: the
    caller tells success from giving up with the same `until`."""
    deadline = None if timeout is None else clock() + timeout
    n = 0
    while True:
        answer = attempt()
        if until(answer) or (tries is not None and n + 1 >= tries):
            return answer
        wait = pause_before(schedule, n, draw(), clock(), deadline)
        if wait is None:
            return answer
        sleep(wait)
        n += 1


def pause(schedule: Backoff, n: int, *, sleep: Callable[[float], None] = time.sleep,
          draw: Callable[[], float] = random.random) -> float:
    """Sleep delay `n` of `schedule`, for loops that keep their own count; the seconds slept."""
    wait = schedule.delay(n, draw())
    sleep(wait)
    return wait
