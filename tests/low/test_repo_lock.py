"""bot/repo_lock.py, the repository lock, on a real Redis: exclusive per repository (case
ignored) and expiring, so a crashed holder does not stop the next; and what its holders rely on
beyond that: the token is the instance's, so another thread may extend or release it; a failed
extend or release answers False; the scripts survive a server that forgot them; a blocked acquire
gives up at its timeout."""

from __future__ import annotations

import threading

import pytest
import redis

from bot.errors import MemrepoError
from bot.redis_keys import lock_key
from bot.repo_lock import repo_lock

REPO = "alice/memory"


def test_the_repository_lock_is_exclusive_and_expires(rclient: redis.Redis) -> None:
    first = repo_lock(rclient, REPO, ttl=0.3)
    assert first.acquire(blocking=False)
    assert not repo_lock(rclient, "ALICE/memory", ttl=5).acquire(blocking=False)
    assert repo_lock(rclient, "alice/notes", ttl=5).acquire(blocking=False)  # other repositories run in parallel
    second = repo_lock(rclient, REPO, ttl=5)
    assert second.acquire(timeout=3)  # the first holder "crashed": its lock expired
    assert not first.release()  # and it cannot release the new holder's lock
    assert second.owned()
    assert second.extend(10) and 5 < rclient.pttl(lock_key(REPO)) / 1000 <= 10
    assert second.release() and not second.owned()


def test_the_lock_as_a_context_manager(rclient: redis.Redis) -> None:
    with repo_lock(rclient, REPO, ttl=5) as held:
        assert held.owned()
        with pytest.raises(MemrepoError, match="another integrator has held the lock on alice/memory"), \
                repo_lock(rclient, REPO, ttl=5, wait=0.1):
            pass
    assert rclient.get(lock_key(REPO)) is None


def test_the_key_holds_the_instances_token(rclient: redis.Redis) -> None:
    lock = repo_lock(rclient, REPO, ttl=5)
    assert lock.acquire(blocking=False)
    assert rclient.get(lock_key(REPO)) == lock.token.encode()
    assert 4 < rclient.pttl(lock_key(REPO)) / 1000 <= 5


def test_another_thread_extends_and_releases_it(rclient: redis.Redis) -> None:
    lock = repo_lock(rclient, REPO, ttl=5)
    assert lock.acquire(blocking=False)
    answers: dict[str, bool] = {}

    def elsewhere() -> None:
        answers["owned"] = lock.owned()
        answers["extend"] = lock.extend(30)
        answers["release"] = lock.release()

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert answers == {"owned": True, "extend": True, "release": True}
    assert rclient.get(lock_key(REPO)) is None


def test_extend_without_a_ttl_restores_the_locks_own(rclient: redis.Redis) -> None:
    lock = repo_lock(rclient, REPO, ttl=5)
    assert lock.acquire(blocking=False)
    assert lock.extend(60)
    assert lock.extend()
    assert 4 < rclient.pttl(lock_key(REPO)) / 1000 <= 5


def test_a_lock_not_held_answers_false(rclient: redis.Redis) -> None:
    lock = repo_lock(rclient, REPO, ttl=5)
    assert not lock.release()
    assert not lock.extend()
    assert not lock.owned()
    assert lock.acquire(blocking=False) and lock.release()
    assert not lock.release()  # twice
    rclient.set(lock_key(REPO), "someone-else", px=5000)
    assert not lock.extend() and not lock.release() and not lock.owned()
    assert rclient.get(lock_key(REPO)) == b"someone-else"  # untouched


def test_released_then_taken_again_by_the_same_holder(rclient: redis.Redis) -> None:
    """What an integration does around an inline wait: release, then take it back."""
    lock = repo_lock(rclient, REPO, ttl=5)
    assert lock.acquire(blocking=False)
    assert lock.release()
    assert lock.acquire(timeout=1)
    assert lock.owned() and lock.extend()


def test_the_scripts_are_loaded_again_after_a_flush(rclient: redis.Redis) -> None:
    lock = repo_lock(rclient, REPO, ttl=5)
    assert lock.acquire(blocking=False) and lock.extend()
    rclient.script_flush()  # as after a restart of the server
    assert lock.extend()
    rclient.script_flush()
    assert lock.release()


def test_a_blocked_acquire_gives_up_at_its_timeout(rclient: redis.Redis) -> None:
    rclient.set(lock_key(REPO), "someone-else", px=60_000)
    lock = repo_lock(rclient, REPO, ttl=5)
    assert not lock.acquire(timeout=0.05)
    assert not lock.acquire(timeout=0)
    with pytest.raises(MemrepoError), repo_lock(rclient, REPO, ttl=5, wait=0):
        pass


def test_a_ttl_must_be_positive(rclient: redis.Redis) -> None:
    with pytest.raises(ValueError):
        repo_lock(rclient, REPO, ttl=0)
