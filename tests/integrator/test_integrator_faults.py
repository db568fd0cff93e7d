"""The integrator under faults, injected through localhub (POST /_localhub/faults) and real
process kills: a merge answered 500 after it was made, 405 base modified, 409 head modified
(and a head that really moved to invalid memory just before the merge), secondary rate
limits with Retry-After, a worker killed in the middle of a merge, webhook deliveries that
never arrived. After each: no pull request merged twice, none merged invalid, none stranded."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.forge.shapes import MergeResult
from bot.integrator import jobs
from bot.integrator.context import using
from bot.queue import QUEUE, enqueue_integrate, get_queue, job_key
from bot.redis_keys import lock_key
from localhub.server import LocalhubServer
from tests.conftest import run_cli
from tests.integrator.test_integrator_jobs import FACTS, FACTS_TEXT, World, built_world, doc, drain
from tests.memory_forge import FAST, REPO
from tests.processes import descendants
from tests.redis_server import RedisServer
from tests.waiting import wait_until

MERGE_PATH = f"/repos/{REPO}/pulls/*/merge"
CAT = FACTS_TEXT + "- has a cat called Mo\n"


@pytest.fixture
def world(localhub: LocalhubServer, tmp_path: Path, redis_url: str) -> Iterator[World]:
    with built_world(localhub, tmp_path, redis_url) as w:
        yield w


def assert_settled(world: World, merged: list[int], closed: tuple[int, ...] = ()) -> None:
    """Each of `merged` merged exactly once (one merge commit on main's first-parent line
    each), every `closed` one closed unmerged, nothing else open."""
    assert world.merges_on_main() == len(merged)
    for number in merged:
        assert world.pull(number).merged, number
    for number in closed:
        pull = world.pull(number)
        assert (pull.state, pull.merged) == ("closed", False), number
    assert world.client().list_open_pull_requests() == []


# ------------------------------------------------------------------------------ merge answers
def test_a_merge_answered_500_after_it_was_made_is_not_merged_again_and_announced_once(world: World) -> None:
    number, _, _ = world.open_dream({FACTS: CAT})
    fault = world.arm(method="PUT", path=MERGE_PATH, status=500, apply=True, times=5)
    with world.subscribe() as sub:
        world.integrate(number)
        world.integrate(number)  # an event later, or a retry: nothing happens twice
        events = drain(sub)
    assert world.hits(fault) == 1  # the merge was sent once; the client asked whether it merged
    assert [(e.cause, e.pr) for e in events] == [("merge", number)]
    assert events[0].sha == world.pull(number).merge_commit_sha
    assert_settled(world, [number])


@pytest.mark.parametrize(("status", "message"), [
    (405, "Base branch was modified. Review and try the merge again."),
    (409, "Head branch was modified. Review and try the merge again."),
])
def test_a_merge_refused_because_something_moved_is_re_read_and_merged(world: World, status: int,
                                                                        message: str) -> None:
    number, _, _ = world.open_dream({FACTS: CAT})
    fault = world.arm(method="PUT", path=MERGE_PATH, status=status, body={"message": message})
    world.integrate(number)
    assert world.hits(fault) == 1
    assert_settled(world, [number])


class _PushBeforeMerge(ForgeClient):
    """A person pushes to the branch just as the integrator sends the merge (the head moves
    after the state was read and validated)."""

    push: Any = None

    def merge(self, number: int, expected_head_sha: str, **kw: Any) -> MergeResult:
        if _PushBeforeMerge.push is not None:
            push, _PushBeforeMerge.push = _PushBeforeMerge.push, None
            push()
        return super().merge(number, expected_head_sha, **kw)


def test_a_head_that_moved_to_invalid_memory_before_the_merge_is_never_merged(world: World) -> None:
    number, head, dream_id = world.open_dream({FACTS: CAT})
    branch = world.pull(number).head_ref
    bad: list[str] = []
    _PushBeforeMerge.push = lambda: bad.append(world.commit(
        branch, {"system/notes.md": "no frontmatter\n"}, base=branch, author=f"{dream_id}@dreams.memrepo",
        message=f"Dream again\n\nDream-ID: {dream_id}\n"))
    world.ctx.forge = lambda repo: _PushBeforeMerge(repo, TokenCredentials(world.token),
                                                    base_url=world.server.api_url, policy=FAST,
                                                    min_write_interval=0.0, timeout=10)
    world.integrate(number)
    assert bad, "the push before the merge did not happen"
    assert world.status(head)[0] == "success"  # the old head was valid...
    assert world.status(bad[0])[0] == "failure"  # ...the new one is not, and was validated
    assert_settled(world, [], closed=(number,))


def test_a_secondary_rate_limit_on_merge_is_waited_out(world: World) -> None:
    number, _, _ = world.open_dream({FACTS: CAT})
    fault = world.arm(method="PUT", path=MERGE_PATH, status=403, headers={"Retry-After": "1"},
                      body={"message": "You have exceeded a secondary rate limit. Please wait a few minutes "
                                       "before you try again."})
    start = time.monotonic()
    world.integrate(number)
    assert time.monotonic() - start >= 1.0
    assert world.hits(fault) == 1
    assert_settled(world, [number])


def test_a_long_rate_limit_is_scheduled_instead_of_slept(world: World) -> None:
    from rq.registry import ScheduledJobRegistry

    number, _, _ = world.open_dream({FACTS: CAT})
    fault = world.arm(method="PUT", path=MERGE_PATH, status=429, headers={"Retry-After": "30"},
                      body={"message": "API rate limit exceeded"})
    world.integrate(number)
    assert world.hits(fault) == 1  # asked once, then left to the scheduled wake-up: no second try
    assert not world.pull(number).merged
    registry = ScheduledJobRegistry(queue=get_queue(world.redis))
    assert registry.get_job_ids() == [jobs.wake_job_id(REPO, number)]
    # The scheduled wake-up enqueues the integration again, which merges.
    assert jobs.wake(REPO, number) == "queued"
    world.integrate(number)
    assert_settled(world, [number])


# ------------------------------------------------------------------------------ crashes
def test_a_lock_left_by_a_dead_worker_expires_and_the_job_proceeds(world: World) -> None:
    number, _, _ = world.open_dream({FACTS: CAT})
    world.redis.set(lock_key(REPO), "a-worker-that-died", px=1500)
    start = time.monotonic()
    world.integrate(number)
    assert time.monotonic() - start >= 1.0
    assert_settled(world, [number])


def test_a_worker_killed_in_the_middle_of_a_merge_is_retried_and_merges_exactly_once(
        world: World, redis_url: str, tmp_path: Path) -> None:
    from rq.registry import StartedJobRegistry

    from bot.queue import Worker

    number, _, _ = world.open_dream({FACTS: CAT})
    # The merge is made, and its answer takes 8 s to come: the worker is killed meanwhile.
    fault = world.arm(method="PUT", path=MERGE_PATH, status=500, apply=True, delay_ms=8000)
    assert enqueue_integrate(world.redis, REPO, number).outcome == "queued"
    env = {**os.environ, "REDIS_URL": redis_url, "MEMREPO_GITHUB_URL": world.server.api_url,
           "MEMREPO_GITHUB_TOKEN": world.token, "MEMREPO_WORK_DIR": str(tmp_path / "killed-work"),
           "MEMREPO_LOCK_TTL": "3", "MEMREPO_MERGE_BY_PUSH": "0"}  # the merge API's lost answer
    code = "from bot.cli import main; raise SystemExit(main(['worker', '--burst', '--reconcile-every', '0']))"
    with world.subscribe() as sub:
        proc = subprocess.Popen([sys.executable, "-c", code], env=env, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until(lambda: world.hits(fault) == 1 and world.pull(number).merged, 60, "the merge")
            horses = descendants(proc.pid)
            os.kill(proc.pid, signal.SIGKILL)
            for pid in horses:
                with contextlib.suppress(ProcessLookupError):  # a git it ran may have ended meanwhile
                    os.kill(pid, signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait(timeout=10)
        queue = get_queue(world.redis)
        job = queue.fetch_job(job_key(REPO, number))
        assert job is not None and job.get_status() == "started"  # what a dead worker leaves behind
        assert world.redis.exists(lock_key(REPO))
        # rq notices abandoned jobs once their heartbeat lapses (about 90 s); pretend it has.
        StartedJobRegistry(queue=queue).cleanup(timestamp=time.time() + 3600)
        assert job.get_status() == "queued"
        with using(world.ctx):
            Worker([QUEUE], connection=world.redis).work(burst=True)
        events = drain(sub)
    assert job.get_status() == "finished"
    assert [(e.cause, e.pr) for e in events] == [("merge", number)]
    assert world.hits(fault) == 1
    assert_settled(world, [number])


# ------------------------------------------------------------------------------ lost deliveries
def test_dropped_webhook_deliveries_are_caught_by_reconciliation(world: World, redis_url: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    first, _, _ = world.open_dream({FACTS: CAT})
    second, _, _ = world.open_dream({"reference/pets.md": doc("Pets.", "- Mo, a cat\n")})
    invalid, _, _ = world.open_dream({"system/notes.md": "no frontmatter\n"})
    # No webhook reached anyone: nothing is queued. `memrepo worker --burst` reconciles first.
    assert get_queue(world.redis).count == 0
    for key, value in {"REDIS_URL": redis_url, "MEMREPO_GITHUB_URL": world.server.api_url,
                       "MEMREPO_GITHUB_TOKEN": world.token, "MEMREPO_WORK_DIR": str(tmp_path / "cli-work"),
                       "MEMREPO_REPOS": REPO}.items():
        monkeypatch.setenv(key, value)
    code, out, err = run_cli(capsys, "worker", "--burst")
    assert code == 0, err
    assert "memrepo worker" in out
    assert_settled(world, [first, second], closed=(invalid,))


# ------------------------------------------------------------------------------ Redis restarting
def test_redis_restarting_under_load_strands_nothing_and_merges_nothing_twice(
        localhub: LocalhubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Redis has no persistence here: a restart loses the queue, the locks and the attempt
    counters while a worker is merging. Reconciliation finds every open dream again, and merge
    by head sha keeps a pull request from being merged twice."""
    with RedisServer() as server, built_world(localhub, tmp_path, server.url) as world:
        numbers = [world.open_dream({FACTS: FACTS_TEXT + f"- fact {i}\n"})[0] for i in range(3)]
        numbers += [world.open_dream({f"reference/topic-{i}.md": doc(f"Topic {i}.", f"- note {i}\n")})[0]
                    for i in range(3)]
        for number in numbers:
            assert enqueue_integrate(world.redis, REPO, number).outcome == "queued"
        env = {**os.environ, "REDIS_URL": server.url, "MEMREPO_GITHUB_URL": world.server.api_url,
               "MEMREPO_GITHUB_TOKEN": world.token, "MEMREPO_WORK_DIR": str(tmp_path / "first-work")}
        code = "from bot.cli import main; raise SystemExit(main(['worker', '--reconcile-every', '0']))"
        proc = subprocess.Popen([sys.executable, "-c", code], env=env, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until(lambda: world.merges_on_main() >= 1, 60, "a first merge")
            server.stop()
            time.sleep(0.5)  # the outage itself: the worker's calls fail for a while, not just once
            server.start()  # same port, empty
            assert get_queue(world.redis).count == 0  # the queue is gone with the restart
            # The worker that was merging dies too (as a machine restart takes both): a burst run
            # that races a live worker for the emptied queue may end with jobs still deferred.
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            for key, value in {"REDIS_URL": server.url, "MEMREPO_GITHUB_URL": world.server.api_url,
                               "MEMREPO_GITHUB_TOKEN": world.token, "MEMREPO_WORK_DIR": str(tmp_path / "cli-work"),
                               "MEMREPO_REPOS": REPO}.items():
                monkeypatch.setenv(key, value)
            status, _, err = run_cli(capsys, "worker", "--burst")  # reconciles first, then works the queue
            assert status == 0, err
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        assert_settled(world, numbers)
        facts = world.main_file(FACTS)
        assert all(facts.count(f"- fact {i}\n") == 1 for i in range(3)), facts  # resolved, none lost
