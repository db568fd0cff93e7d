"""What every worker of one forge identity shares in Redis: the request budget and a GitHub
App's installation tokens.

GitHub counts its limits per identity (a token, or an App's installation), not per process or
repository, so a budget kept in one process would let N workers send N times the limit. Here
each request is logged in one sorted set per identity (the time it went; its member says read
or write), and a worker asks `bot.forge.budget.wait` over that log before it sends; the check
and the spending are one optimistic transaction (WATCH, then MULTI), so two workers never both
take the last request of a window. When GitHub still answers a secondary limit, the worker
that saw it sets a shared "until" and every worker waits for it. GitHub's limit of 100
requests in flight at once is a counting semaphore in Redis (`InFlight`): each request holds a
lease in a sorted set while it is sent, and a lease a dead worker never gave back runs out.

An installation token is good for an hour; every rq job builds its own forge client, so
without a shared cache each job would mint its own (two requests, and GitHub caps them). The
token is kept under a key that expires `margin` seconds before the token does.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Mapping

from redis import Redis
from redis.exceptions import WatchError

from bot import settings
from bot.forge.budget import GITHUB, HOUR, Limits, Spent, back_off_until, wait
from bot.forge.errors import RateLimited
from bot.redis_keys import app_token_key, budget_key, budget_until_key, in_flight_key
from bot.texts import plural

# The shared request budget (bot/forge/shared.py).
FORGE_BUDGET_SPENT = (
    "the request budget of this forge identity is spent for {wait:.0f}s more ({limits}); not sent, "
    "so that GitHub does not answer a secondary rate limit"
)
FORGE_BUDGET_LIMITS = (
    "{0:g} content-generating requests a minute, {1:g} an hour, {2:g} points a minute, {3:g} requests an hour"
)

FORGE_IN_FLIGHT_FULL = (
    "this forge identity already has {requests} in flight and none ended within {wait:.0f}s; not sent"
)

log = logging.getLogger("memrepo.forge")

MAX_WAIT = 300.0  # seconds a request waits for the budget inside a job; longer, the job comes back later
REDIS_TIMEOUT = 5.0  # seconds a one-shot process (a dream) waits on the budget's Redis
SLICE = 5.0  # a waiting worker looks again at least this often (others' requests may leave the windows sooner)


def identity(api_url: str, who: str) -> str:
    """The budget's name for one forge identity: the forge's host and a digest of who acts (an
    App's id, or a token, never written to Redis as it is)."""
    digest = hashlib.sha256(f"{api_url.rstrip('/')}\0{who}".encode()).hexdigest()[:24]
    return digest


class SharedBudget:
    """The budget of one identity, shared through Redis by every worker. `take(write)` returns
    once the request may go (having counted it), or raises RateLimited when it would wait
    longer than `max_wait`, sending nothing; `sending(write)` is that and a slot among the
    identity's requests in flight, held around the request; `back_off(seconds)` makes every
    worker wait."""

    def __init__(self, redis: Redis, name: str, limits: Limits = GITHUB, *, max_wait: float = MAX_WAIT,
                 clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep) -> None:
        self.redis = redis
        self.name = name
        self.limits = limits
        self.max_wait = max_wait
        self._clock, self._sleep = clock, sleep
        self._key, self._until = budget_key(name), budget_until_key(name)
        self.in_flight = InFlight(redis, name, limits.concurrent, max_wait=max_wait, sleep=sleep)

    def _spent(self, raw: list[tuple[bytes | str, float]]) -> list[Spent]:
        found = []
        for member, score in raw:
            text = member.decode() if isinstance(member, bytes) else str(member)
            found.append(Spent(float(score), text.endswith(":w")))
        return found

    def _until_value(self, raw: bytes | str | None) -> float:
        try:
            return float(raw) if raw is not None else 0.0
        except ValueError:
            return 0.0

    def try_take(self, write: bool) -> float:
        """Count one request and return 0 when it may go now; else the seconds it must wait
        (nothing counted)."""
        while True:
            with self.redis.pipeline() as pipe:
                try:
                    pipe.watch(self._key, self._until)
                    now = self._clock()
                    spent = self._spent(pipe.zrangebyscore(self._key, now - HOUR, "+inf", withscores=True))
                    until = self._until_value(pipe.get(self._until))
                    delay = wait(self.limits, spent, now, write, until)
                    if delay > 0:
                        pipe.unwatch()
                        return delay
                    pipe.multi()
                    pipe.zadd(self._key, {f"{uuid.uuid4().hex}:{'w' if write else 'r'}": now})
                    pipe.zremrangebyscore(self._key, "-inf", now - HOUR)
                    pipe.expire(self._key, int(HOUR) + 60)
                    pipe.execute()
                    return 0.0
                except WatchError:  # another worker spent or backed off meanwhile: look again
                    continue

    def take(self, write: bool) -> float:
        """Wait until the request fits the budget and count it; the seconds waited."""
        start = self._clock()
        while True:
            delay = self.try_take(write)
            if delay <= 0:
                return self._clock() - start
            waited = self._clock() - start
            if waited + delay > self.max_wait:
                kind = "write" if write else "read"
                limits = FORGE_BUDGET_LIMITS.format(*self.limits.as_tuple())
                raise RateLimited(FORGE_BUDGET_SPENT.format(wait=delay, limits=limits),
                                  operation=f"wait for the request budget ({kind})", retry_after=delay)
            log.info("budget %s: a %s waits %.1fs", self.name[:8], "write" if write else "read", delay)
            self._sleep(min(delay, SLICE))

    @contextlib.contextmanager
    def sending(self, write: bool) -> Iterator[None]:
        """Around one request: counted in the windows (`take`), then one of the identity's
        slots held while it is in flight (`InFlight`)."""
        self.take(write)
        with self.in_flight.slot():
            yield

    def back_off(self, seconds: float) -> None:
        """GitHub answered a secondary (or primary) limit: no worker sends before `seconds` from now."""
        while True:
            with self.redis.pipeline() as pipe:
                try:
                    pipe.watch(self._until)
                    now = self._clock()
                    until = back_off_until(self._until_value(pipe.get(self._until)), now, seconds)
                    pipe.multi()
                    pipe.set(self._until, repr(until), ex=max(1, int(until - now) + 1))
                    pipe.execute()
                    log.warning("budget %s: every worker waits %.0fs, as the forge asked", self.name[:8], seconds)
                    return
                except WatchError:
                    continue


# A slot for one request in flight, taken atomically: leases that ran out (a worker that died
# holding one) are dropped first, then a slot is leased if fewer than the limit are held. The
# time is Redis's own, so workers on machines whose clocks differ agree on when a lease ends.
_TAKE_SLOT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 1)
  return 1
end
return 0
"""
LEASE = 120.0  # seconds a slot is held at most: well beyond a request's timeout, so only a dead holder's lapses
SLOT_POLL = 0.05  # a request waiting for a slot looks again this often (a slot frees when a request ends)


class InFlight:
    """GitHub's limit of requests in flight at once for one identity (100), shared by every
    worker through Redis: a counting semaphore whose slots are leases in a sorted set, so a
    worker that dies holding one leaks it for `lease` seconds at most, never for good.
    `slot()` is held around one request; it waits for a free slot, or raises RateLimited
    after `max_wait` seconds, sending nothing."""

    def __init__(self, redis: Redis, name: str, limit: int, *, lease: float = LEASE, max_wait: float = MAX_WAIT,
                 poll: float = SLOT_POLL, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.redis = redis
        self.limit = int(limit)
        self.lease = lease
        self.max_wait = max_wait
        self.poll = poll
        self._clock, self._sleep = clock, sleep
        self._key = in_flight_key(name)
        self._take = redis.register_script(_TAKE_SLOT)

    def try_acquire(self) -> str | None:
        """A lease's id when a slot was free (now held), else None."""
        lease = uuid.uuid4().hex
        taken = self._take(keys=[self._key], args=[self.limit, self.lease, lease])
        return lease if int(taken) == 1 else None

    def release(self, lease: str) -> None:
        self.redis.zrem(self._key, lease)

    def held(self) -> int:
        """Slots held now, leases that ran out left uncounted."""
        seconds, micros = self.redis.time()
        return int(self.redis.zcount(self._key, f"({seconds + micros / 1e6}", "+inf"))

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        start = self._clock()
        while (lease := self.try_acquire()) is None:
            if self._clock() - start + self.poll > self.max_wait:
                said = FORGE_IN_FLIGHT_FULL.format(requests=plural(self.limit, "request"), wait=self.max_wait)
                raise RateLimited(said, operation="wait for a request slot", retry_after=self.poll)
            self._sleep(self.poll)
        try:
            yield
        finally:
            self.release(lease)


def limits_from_env(env: Mapping[str, str]) -> Limits:
    """The budget's limits as the environment sets them (GitHub's by default); a setting that is
    not a positive number is a one-line MemrepoError naming it."""
    return Limits(*settings.budget_limits(GITHUB.as_tuple(), env),
                  concurrent=settings.concurrent_requests(GITHUB.concurrent, env))


def env_budget(env: Mapping[str, str], api_url: str, who: str) -> SharedBudget | None:
    """The budget the requests of `who` (`credentials.acting_as`) draw on when a Redis is
    configured (REDIS_URL): the one the integrator's workers keep for that identity, so a
    dreamer on a server shares it with them. None without REDIS_URL (a laptop running
    `memrepo dream` sends as it always has)."""
    url = settings.value(settings.REDIS_URL, env)
    if not url:
        return None
    settings.check_redis_url(url)
    limits = limits_from_env(env)
    redis = Redis.from_url(url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT)
    return SharedBudget(redis, identity(api_url, who), limits)


class SharedTokens:
    """A GitHub App's installation tokens in Redis, one per repository, for every job and
    worker until `margin` seconds before they expire."""

    def __init__(self, redis: Redis, app_id: str, *, margin: float = 300.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.redis = redis
        self.app_id = str(app_id)
        self.margin = margin
        self._clock = clock

    def get(self, repo: str) -> tuple[str, float] | None:
        """(token, expires at) while it has more than `margin` seconds left, else None."""
        raw = self.redis.get(app_token_key(self.app_id, repo))
        if raw is None:
            return None
        text = raw.decode() if isinstance(raw, bytes) else str(raw)
        token, _, expires = text.partition(" ")
        try:
            at = float(expires)
        except ValueError:
            return None
        return (token, at) if token and at - self.margin > self._clock() else None

    def put(self, repo: str, token: str, expires: float) -> None:
        keep = int(expires - self.margin - self._clock())
        if keep > 0:
            self.redis.set(app_token_key(self.app_id, repo), f"{token} {expires!r}", ex=keep)
