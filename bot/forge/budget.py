"""The request budget of one forge identity, the pure part: may a request go now, and if not,
how long until it may.

GitHub documents limits per identity, whatever repository a request is for: no more than 80
content-generating requests a minute and 500 an hour, 900 points a minute (a GET, HEAD or
OPTIONS 1 point, a POST, PATCH, PUT or DELETE 5), 5,000 requests an hour, and 100 requests in
flight at once (that one is a count of leases in Redis, `bot.forge.shared.InFlight`, not a
window). Every worker of
one App or token shares them, so the requests spent are kept in Redis (`bot.forge.shared`)
and every worker asks `wait` before it sends one: a request that would break a limit in any
sliding window waits until the oldest requests in that window have left it. The windows are
exact (a log of when each request went), not a token bucket, because a full bucket refilled
during the same minute would let through twice the limit GitHub counts.

Nothing here reads a clock, Redis or the network: the numbers come in, a number of seconds
goes out, so every rule is a row in a table test and the limit itself a hypothesis property
(tests/forge/test_forge_budget.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MINUTE = 60.0
HOUR = 3600.0
READ_POINTS = 1  # GitHub: most GET, HEAD and OPTIONS requests
WRITE_POINTS = 5  # GitHub: most POST, PATCH, PUT and DELETE requests
EPSILON = 0.001  # a wait ends just after the oldest request left its window, never on its edge


@dataclass(frozen=True)
class Limits:
    """GitHub's documented limits for one identity (a GitHub Enterprise may set others)."""

    writes_per_minute: float = 80
    writes_per_hour: float = 500
    points_per_minute: float = 900
    requests_per_hour: float = 5000
    concurrent: int = 100  # requests in flight at once (GitHub: 100, REST and GraphQL together)

    def as_tuple(self) -> tuple[float, float, float, float]:
        """The four windows' limits (the concurrent requests are not a window)."""
        return self.writes_per_minute, self.writes_per_hour, self.points_per_minute, self.requests_per_hour


GITHUB = Limits()


@dataclass(frozen=True)
class Spent:
    """One request already sent: when, and whether it generated content (a write)."""

    at: float
    write: bool

    @property
    def points(self) -> int:
        return WRITE_POINTS if self.write else READ_POINTS


def _window_wait(spent: list[tuple[float, float]], now: float, length: float, limit: float, cost: float) -> float:
    """Seconds until `cost` more fits in the window of `length` seconds ending at now: the
    weights (at, weight) still inside it, oldest first, leave it one by one."""
    inside = [(at, weight) for at, weight in spent if at > now - length]
    total = sum(weight for _, weight in inside)
    if total + cost <= limit:
        return 0.0
    if cost > limit:  # never fits: a limit below one request's cost is a setting's mistake
        return length
    for at, weight in sorted(inside):
        total -= weight
        if total + cost <= limit:
            return max(0.0, at + length - now + EPSILON)
    return length


def wait(limits: Limits, spent: Iterable[Spent], now: float, write: bool, until: float = 0.0) -> float:
    """Seconds a request (a write or a read) must wait so that no limit is passed in any window,
    and not before `until` (the shared back-off after GitHub answered a secondary limit);
    0 when it may go now."""
    log = list(spent)
    writes = [(s.at, 1.0) for s in log if s.write]
    cost_points = float(WRITE_POINTS if write else READ_POINTS)
    waits = [max(0.0, until - now),
             _window_wait([(s.at, 1.0) for s in log], now, HOUR, limits.requests_per_hour, 1.0),
             _window_wait([(s.at, float(s.points)) for s in log], now, MINUTE, limits.points_per_minute, cost_points)]
    if write:
        waits.append(_window_wait(writes, now, MINUTE, limits.writes_per_minute, 1.0))
        waits.append(_window_wait(writes, now, HOUR, limits.writes_per_hour, 1.0))
    return max(waits)


def back_off_until(current: float, now: float, asked: float) -> float:
    """The shared "until" after GitHub answered a secondary limit asking `asked` seconds: never
    earlier than one already set (two workers told at once wait for the longer)."""
    return max(current, now + max(0.0, asked))
