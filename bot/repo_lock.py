"""The per-repository lock on Redis: one integrator acting on a repository at a time.

The lock is short (`LOCK_TTL`, a few seconds) and renewed by a thread while its holder works
(`with repo_lock(...)`), so a job killed with its worker lets go of the repository within
seconds, however long live jobs run. A renewal that finds the lock gone, or cannot reach Redis
before it lapses, sets `RepoLock.lost`: the holder checks it before each action and stops.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time

from redis import Redis
from redis.exceptions import LockError, RedisError
from redis.lock import Lock

from bot import texts
from bot.backoff import Backoff, poll
from bot.errors import MemrepoError
from bot.redis_keys import lock_key

log = logging.getLogger("memrepo.queue")

LOCK_BACKOFF = Backoff(0.01, cap=0.2)  # a blocked lock trying again
LOCK_TTL = 6.0  # seconds a killed job's lock outlives its last renewal
RENEWALS_PER_TTL = 3  # renewed every LOCK_TTL / 3: two renewals may fail before it lapses


class RepoLock:
    """An exclusive lock on one repository with a short expiry, so a crashed worker's lock
    lapses by itself within seconds; release and extend check the token, so a worker whose lock
    expired never releases the next holder's. redis-py's `Lock` does the locking; this adds the
    key naming, the backoff while blocked, answers as booleans, the busy error and the renewer
    as a context manager. Its token belongs to the instance, not the thread
    (`thread_local=False`), so a lock taken in one thread may be extended or released in another.

    Renewal: inside `with`, a daemon thread extends the lock every `renew_every` seconds
    (default ttl / RENEWALS_PER_TTL) while it is held; a lock released for a while (an inline
    wait) is left alone until it is taken again. When a renewal finds the key gone or another
    holder's, or Redis has not answered by the time the lock would have lapsed, `lost` is set
    and stays set until the lock is taken again: the holder must act no further."""

    def __init__(self, redis: Redis, repo: str, ttl: float, *, wait: float | None = None,
                 renew_every: float | None = None) -> None:
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        self.redis = redis
        self.repo = repo
        self.key = lock_key(repo)
        self.ttl = ttl
        self.wait = wait
        self.renew_every = renew_every if renew_every is not None else ttl / RENEWALS_PER_TTL
        self.token = secrets.token_hex(16)
        self.lost = threading.Event()
        self.renewals = 0  # renewals that succeeded (logs, tests)
        self._lock = Lock(redis, self.key, timeout=ttl, thread_local=False)
        self._mutex = threading.RLock()  # one of acquire, release, extend, renew at a time
        self._held = False
        self._lapses = 0.0  # monotonic time by which the lock has lapsed unless renewed
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        """Take the lock; blocking waits up to `timeout` seconds (None: forever)."""
        def take() -> bool:
            with self._mutex:
                start = time.monotonic()
                if not self._lock.acquire(blocking=False, token=self.token):
                    return False
                self._held, self._lapses = True, start + self.ttl
                self.lost.clear()
                return True

        return poll(take, LOCK_BACKOFF, timeout=timeout) if blocking else take()

    def release(self) -> bool:
        """Release if still ours; False if it had expired (and perhaps been taken by another)."""
        with self._mutex:
            self._held = False
            try:
                self._lock.release()
            except LockError:
                return False
            return True

    def extend(self, ttl: float | None = None) -> bool:
        """Push the expiry to `ttl` (default: the lock's) from now, if still ours."""
        with self._mutex:
            start = time.monotonic()
            try:
                extended = self._lock.extend(ttl or self.ttl, replace_ttl=True)
            except LockError:
                return False
            if extended:
                self._lapses = start + (ttl or self.ttl)
            return bool(extended)

    def owned(self) -> bool:
        return self._lock.owned()

    def renew(self) -> bool:
        """One renewal, as the renewer makes it (nothing while the lock is not held). False,
        and `lost` set, once the lock is known to be lost."""
        with self._mutex:
            if not self._held:
                return True
            try:
                if self.extend():
                    self.renewals += 1
                    return True
                why = "it expired or another holder has it"
            except RedisError as exc:
                if time.monotonic() < self._lapses:
                    log.warning("renewing the lock on %s failed (%s); trying again", self.repo, type(exc).__name__)
                    return True
                why = f"Redis did not answer before it lapsed ({type(exc).__name__})"
            self._held = False
            self.lost.set()
        log.warning("the lock on %s is lost: %s; its holder acts no further", self.repo, why)
        return False

    def _renew_while_running(self) -> None:
        while not self._stop.wait(self.renew_every):
            self.renew()

    def start_renewing(self) -> None:
        """Renew on a daemon thread from now until `stop_renewing()`."""
        if self._renewer is None:
            self._stop.clear()
            self._renewer = threading.Thread(target=self._renew_while_running, name=f"lock-renewer {self.repo}",
                                             daemon=True)
            self._renewer.start()

    def stop_renewing(self) -> None:
        if self._renewer is not None:
            self._stop.set()
            self._renewer.join()
            self._renewer = None

    def __enter__(self) -> RepoLock:
        if not self.acquire(blocking=self.wait is None or self.wait > 0, timeout=self.wait):
            raise MemrepoError(texts.REPO_LOCK_BUSY.format(repo=self.repo, seconds=self.wait or 0))
        self.start_renewing()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_renewing()
        if not self.release():
            log.warning("the lock on %s expired before it was released (ttl %ss)", self.repo, self.ttl)


def repo_lock(redis: Redis, repo: str, ttl: float = LOCK_TTL, *, wait: float | None = None) -> RepoLock:
    """`with repo_lock(redis, repo, ttl):` one integrator acting on `repo` at a time, the lock
    renewed while the block runs; `wait` bounds how long to wait for it (None: until it is
    free; a MemrepoError after `wait`)."""
    return RepoLock(redis, repo, ttl, wait=wait)
