"""The repository lock is short and renewed while its holder works (bot/repo_lock.py RepoLock), on
a real Redis: a held lock outlives its TTL, a renewal that finds it taken or cannot reach Redis
in time marks it lost, and an integration whose lock was lost acts no further. Then real
workers: one killed with SIGKILL in the middle of a job lets go of the repository within the
TTL, and a second job of the same repository, waiting on another worker, carries on."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.errors import MemrepoError
from bot.integrator.jobs import INTEGRATOR_LOCK_LOST
from bot.queue import connect, get_queue
from bot.redis_keys import lock_key
from bot.repo_lock import LOCK_TTL, repo_lock
from tests.lock_jobs import EVENTS
from tests.processes import descendants
from tests.redis_server import RedisServer
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
REPO = "alice/memory"
TTL = 0.6  # the unit tests' lock: renewed every 0.2 s


def renewers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("lock-renewer")]


# ------------------------------------------------------------------------------ renewal
def test_the_default_lock_is_a_few_seconds() -> None:
    from bot.integrator.context import Context

    assert LOCK_TTL <= 10
    assert Context.__dataclass_fields__["lock_ttl"].default == LOCK_TTL
    assert repo_lock(redis.Redis(), REPO).ttl == LOCK_TTL


def test_a_held_lock_is_renewed_past_its_ttl_and_let_go_at_the_end(rclient: redis.Redis) -> None:
    with repo_lock(rclient, REPO, ttl=TTL) as lock:
        taken = time.monotonic()
        wait_until(lambda: lock.renewals >= 3 and time.monotonic() - taken > 2 * TTL, 10,
                   lambda: f"renewals past twice the TTL (renewals: {lock.renewals})")
        assert rclient.get(lock_key(REPO)) == lock.token.encode()  # still the first holder's
        assert 0 < rclient.pttl(lock_key(REPO)) <= TTL * 1000
        assert not lock.lost.is_set()
        assert len(renewers()) == 1
    assert rclient.get(lock_key(REPO)) is None
    assert renewers() == []


def test_a_renewal_that_finds_the_lock_taken_marks_it_lost(rclient: redis.Redis) -> None:
    with repo_lock(rclient, REPO, ttl=TTL) as lock:
        rclient.set(lock_key(REPO), "another-integrator", px=60_000)  # as after it lapsed and was taken
        assert lock.lost.wait(10)
        assert rclient.get(lock_key(REPO)) == b"another-integrator"  # not touched
    assert rclient.get(lock_key(REPO)) == b"another-integrator"  # nor released at the end


def test_a_renewal_that_cannot_reach_redis_before_the_lock_lapses_marks_it_lost() -> None:
    with RedisServer() as server:
        client = connect(server.url)
        try:
            with repo_lock(client, REPO, ttl=TTL) as lock:
                server.stop()
                assert lock.lost.wait(20)
                server.start()  # the same port, empty: the lock is gone with it
            assert client.get(lock_key(REPO)) is None
        finally:
            client.close()


def test_a_released_lock_is_left_alone_until_it_is_taken_again(rclient: redis.Redis) -> None:
    """What an integration's inline wait does: release, let others in, take it back."""
    lock = repo_lock(rclient, REPO, ttl=TTL)
    assert lock.acquire(blocking=False)
    assert lock.release()
    rclient.set(lock_key(REPO), "another-integrator", px=60_000)
    assert lock.renew() and not lock.lost.is_set()  # not held: nothing to renew, nothing lost
    assert rclient.get(lock_key(REPO)) == b"another-integrator"
    rclient.delete(lock_key(REPO))
    assert lock.acquire(blocking=False)
    assert lock.renew() and lock.renewals == 1


# ------------------------------------------------------------------------------ an integration
@pytest.fixture
def world(localhub: Any, tmp_path: Path, redis_url: str) -> Iterator[Any]:
    from tests.integrator.test_integrator_jobs import built_world

    with built_world(localhub, tmp_path, redis_url) as w:
        yield w


def test_an_integration_whose_lock_is_lost_acts_no_further(world: Any) -> None:
    """The lock is taken from under the integration while it reads the pull request: the
    renewer notices, and the run stops before its first action (no status, no merge)."""
    from bot.integrator.jobs import Integration
    from tests.integrator.test_integrator_jobs import FACTS, FACTS_TEXT

    number, head, _ = world.open_dream({FACTS: FACTS_TEXT + "- has a cat called Mo\n"})
    lock = repo_lock(world.redis, REPO, ttl=TTL)

    def forge(repo: str) -> Any:
        client = world.ctx.forge(repo)
        read = client.combined_status

        def combined_status(sha: str) -> Any:
            world.redis.set(lock_key(REPO), "another-integrator", px=60_000)
            assert lock.lost.wait(20), "the renewer never noticed"
            return read(sha)

        client.combined_status = combined_status
        return client

    ctx = dataclasses.replace(world.ctx, forge=forge)
    client = ctx.forge(REPO)
    try:
        with lock, pytest.raises(MemrepoError) as raised:
            Integration(ctx, REPO, number, client, lock).run()
    finally:
        client.close()
    assert str(raised.value) == INTEGRATOR_LOCK_LOST.format(repo=REPO)
    assert world.status(head) == (None, None)
    assert not world.pull(number).merged and world.comments(number) == []
    assert world.redis.get(lock_key(REPO)) == b"another-integrator"
    # The other holder lets go; the job's retry reads afresh and merges.
    world.redis.delete(lock_key(REPO))
    world.integrate(number)
    assert world.pull(number).merged


# ------------------------------------------------------------------------------ a worker killed
def start_worker(redis_url: str, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    """`memrepo worker`, as production runs it (rq's forking worker, with its scheduler), but
    allowed to run the test's job as well (tests/lock_jobs.py: worker_main)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMREPO_")}
    env.update({"REDIS_URL": redis_url, "MEMREPO_GITHUB_TOKEN": "not-used", "MEMREPO_WORK_DIR": str(log.parent)})
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-c", "import sys; from tests.lock_jobs import worker_main; "
                                 "sys.exit(worker_main())", "worker", "--reconcile-every", "0", *extra],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the worker and everything it forked (its work horse runs in a session of its
    own, so the process group is not enough)."""
    forked = descendants(process.pid)
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGKILL)
    for pid in forked:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    process.wait(timeout=10)


def test_a_worker_killed_mid_job_lets_go_of_the_repository_within_the_ttl(redis_url: str, rclient: redis.Redis,
                                                                           tmp_path: Path) -> None:
    def events() -> list[str]:
        return [e.decode() for e in rclient.lrange(EVENTS, 0, -1)]

    def logs() -> str:
        return "".join(p.read_text(errors="replace")[-3000:] for p in sorted(tmp_path.glob("*.log")))

    queue = get_queue(rclient)
    job = "tests.lock_jobs.hold_the_repository"
    queue.enqueue(job, "first", True, job_id="first", job_timeout=600)
    first = start_worker(redis_url, tmp_path / "first.log")
    second = None
    try:
        holds = wait_until(lambda: next((e for e in events() if e.startswith("first holds")), None), 60,
                           lambda: f"the first job to take the lock; {events()}\n{logs()}")
        token = holds.split()[-1].encode()
        # While it runs, the lock is renewed: its time to live goes back up.
        left = rclient.pttl(lock_key(REPO))
        assert 0 < left <= LOCK_TTL * 1000
        wait_until(lambda: rclient.pttl(lock_key(REPO)) > left, 3 * LOCK_TTL, "a renewal of the lock")
        # A second job of the same repository, on another worker, waits for it.
        queue.enqueue(job, "second", False, job_id="second", job_timeout=600)
        second = start_worker(redis_url, tmp_path / "second.log", "--burst")
        wait_until(lambda: "second waits" in events(), 60, lambda: f"the second job to start; {events()}\n{logs()}")
        kill(first)
        left = rclient.pttl(lock_key(REPO))
        rclient.rpush(EVENTS, "first killed")
        assert rclient.get(lock_key(REPO)) in (token, None)  # the dead job's, until it lapses
        assert left <= LOCK_TTL * 1000  # it lapses within the TTL: nobody renews it now
        assert second.wait(timeout=60) == 0, logs()
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                kill(process)
    said = events()
    assert [e.rsplit(" ", 1)[0] if "holds" in e else e for e in said] == [
        "first waits", "first holds", "second waits", "first killed", "second holds", "second done"], said
    assert rclient.get(lock_key(REPO)) is None  # the second let go at its end
