"""bot/queue.py on a real Redis, with a real rq worker where a job must run: job keys, collapsing
enqueues (pending, dirty, one more run, a settled job not run again), and the race with rq
writing down a job that just ended."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import redis
from rq.job import Job

from bot import queue as jobs
from bot.queue import (
    INTEGRATE,
    QUEUE,
    Settled,
    collapsing,
    enqueue_collapsed,
    enqueue_integrate,
    get_queue,
    job_key,
    parse_job_key,
)
from tests.waiting import wait_until
from tests.webhooks.deliveries import (
    REPO,
    queued,
)

ROOT = Path(__file__).resolve().parents[2]

@pytest.mark.parametrize("repo", ["alice/memory", "Alice/Memory", "a-b/c_d.e", "x/y--z", "o/name_5F"])
def test_job_keys_are_valid_rq_ids_and_reversible(repo: str, rclient: redis.Redis) -> None:
    key = job_key(repo, 7)
    assert parse_job_key(key) == ("integrate", repo.lower(), "7")
    Job.create(func=INTEGRATE, id=key, connection=rclient)  # rq accepts it
    assert job_key("a-b/c", 1) != job_key("a/b-c", 1)
    with pytest.raises(ValueError):
        job_key(REPO, 0)


def test_an_enqueue_waits_while_rq_writes_down_a_job_that_just_ended(rclient: redis.Redis,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    job = Job.create(func=INTEGRATE, args=(REPO, 9), id=job_key(REPO, 9), connection=rclient)
    job.save()
    job.set_status("started")
    rclient.set(f"memrepo:job:{job.id}:run", "ended")  # `collapsing` saw no dirty flag and returned
    decisions: list[str] = []
    waiting = threading.Event()
    run_script = jobs._run

    def spy(*args: Any) -> Any:
        decision = run_script(*args)
        decisions.append(decision)
        if decision == "wait":
            waiting.set()
        return decision

    monkeypatch.setattr(jobs, "_run", spy)

    def finish() -> None:  # rq writes the job's end down once the enqueue is waiting for it
        assert waiting.wait(20)
        job.set_status("finished")

    writer = threading.Thread(target=finish)
    writer.start()
    assert enqueue_integrate(rclient, REPO, 9).outcome == "queued"  # not a dirty mark nobody would see
    writer.join()
    assert decisions[0] == "wait" and "enqueue" in decisions
    assert [j.id for j in queued(rclient)] == [job.id]


def test_a_running_job_is_marked_dirty(rclient: redis.Redis) -> None:
    job = Job.create(func=INTEGRATE, args=(REPO, 9), id=job_key(REPO, 9), connection=rclient)
    job.save()
    job.set_status("started")
    assert enqueue_integrate(rclient, REPO, 9).outcome == "dirty"
    assert rclient.exists(f"memrepo:job:{job.id}:dirty")
    assert queued(rclient) == []


# Jobs for the worker below: they count their runs and wait until the test pushes to
# test:NAME:release (a blocking pop, so the test decides when a run ends).
RELEASE_WAIT = 20


@collapsing
def held_job(name: str) -> int:
    """Waits to be released on its first run only."""
    from rq import get_current_job

    conn = get_current_job().connection  # type: ignore[union-attr]
    runs = int(conn.incr(f"test:{name}:runs"))
    if runs == 1:
        assert conn.blpop([f"test:{name}:release"], timeout=RELEASE_WAIT), "the test never released the job"
    return runs


def run_worker(redis_url: str) -> subprocess.Popen[bytes]:
    """A real rq worker in another process, serving the queue until it is empty (rq's own,
    reading JSON as memrepo's does: the jobs here are the test's, not on memrepo's allow-list)."""
    code = ("import sys; from redis import Redis; from rq import Queue, SimpleWorker; "
            "from bot.queue import SERIALIZER as S, Worker; c = Redis.from_url(sys.argv[1]); "
            "W = type('W', (SimpleWorker,), {'subscribe': Worker.subscribe}); "  # exits as soon as memrepo's does
            "W([Queue(sys.argv[2], connection=c, serializer=S)], connection=c, serializer=S).work(burst=True)")
    return subprocess.Popen([sys.executable, "-c", code, redis_url, QUEUE], cwd=ROOT)


def test_events_while_a_job_runs_make_it_run_once_more(redis_url: str, rclient: redis.Redis) -> None:
    func = f"{__name__}.held_job"
    assert enqueue_collapsed(rclient, func, ("a",), "held-a").outcome == "queued"
    worker = run_worker(redis_url)
    try:
        wait_until(lambda: rclient.get("test:a:runs") == b"1", RELEASE_WAIT, "the job's first run")
        outcomes = {enqueue_collapsed(rclient, func, ("a",), "held-a").outcome for _ in range(5)}
        assert outcomes == {"dirty"}
        assert get_queue(rclient).count == 0  # nothing added: it runs again itself
        rclient.lpush("test:a:release", "1")
        assert worker.wait(timeout=30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
    assert rclient.get("test:a:runs") == b"2"  # five events while it ran: one more run
    assert Job.fetch("held-a", connection=rclient).get_status() == "finished"
    assert enqueue_collapsed(rclient, func, ("a",), "held-a").outcome == "queued"  # after it ended: a new job


@collapsing
def settled_job(name: str) -> str:
    from rq import get_current_job

    conn = get_current_job().connection  # type: ignore[union-attr]
    runs = int(conn.incr(f"test:{name}:runs"))
    assert conn.blpop([f"test:{name}:release"], timeout=RELEASE_WAIT), "the test never released the job"
    return Settled(f"run {runs}")


def test_a_settled_job_does_not_run_again_for_events_that_arrived_meanwhile(redis_url: str,
                                                                             rclient: redis.Redis) -> None:
    func = f"{__name__}.settled_job"
    assert enqueue_collapsed(rclient, func, ("s",), "settled-s").outcome == "queued"
    worker = run_worker(redis_url)
    try:
        wait_until(lambda: rclient.get("test:s:runs") == b"1", RELEASE_WAIT, "the job's run")
        assert enqueue_collapsed(rclient, func, ("s",), "settled-s").outcome == "dirty"
        rclient.lpush("test:s:release", "1")
        assert worker.wait(timeout=30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
    assert rclient.get("test:s:runs") == b"1"
    assert Job.fetch("settled-s", connection=rclient).get_status() == "finished"
    assert enqueue_collapsed(rclient, func, ("s",), "settled-s").outcome == "queued"  # ended: the next event counts


def test_a_collapsing_job_called_outside_a_worker_just_runs(rclient: redis.Redis) -> None:
    import bot.queue

    assert bot.queue.get_current_job() is None
    assert held_job.__wrapped__.__name__ == "held_job"  # type: ignore[attr-defined]


def test_pull_request_keys_ignore_case(rclient: redis.Redis) -> None:
    assert enqueue_integrate(rclient, REPO, 5).outcome == "queued"
    assert enqueue_integrate(rclient, "ALICE/MEMORY", 5).outcome == "pending"


def test_waiting_pulls_are_this_repositorys_integrate_jobs_in_queue_order(rclient: redis.Redis) -> None:
    from bot.queue import enqueue_merge_ready, enqueue_reconcile, waiting_pulls

    enqueue_integrate(rclient, "alice/memory", 12)
    enqueue_integrate(rclient, "alice/memory-2", 5)  # a repository whose name starts with this one's
    enqueue_merge_ready(rclient, "alice/memory")
    enqueue_integrate(rclient, "Alice/Memory", 3)
    enqueue_reconcile(rclient, "alice/memory")
    rclient.rpush(get_queue(rclient, QUEUE).key, "integrate-_zz-1")  # not an id memrepo makes
    enqueue_integrate(rclient, "alice/memory", 40)
    assert waiting_pulls(rclient, "alice/memory") == [12, 3, 40]
    assert waiting_pulls(rclient, "ALICE/memory", limit=2) == [12, 3]
    assert waiting_pulls(rclient, "alice/memory-2") == [5]
