"""rq jobs for tests/integrator/test_lock_renewal.py, in a module of their own so a work horse imports
only this to run them. Each notes what it does in the Redis list EVENTS and holds the
repository's lock as the integrator does (`with repo_lock(...)`, the default short TTL)."""

from __future__ import annotations

import sys

from rq import get_current_job

from bot.repo_lock import repo_lock

EVENTS = "test:lock:events"
REPO = "alice/memory"
HOLD_SECONDS = 120  # how long a job told to hold waits for a release that never comes


def hold_the_repository(name: str, hold: bool) -> str:
    """Take the lock on REPO; with `hold`, keep it until test:lock:release:NAME is pushed (the
    test kills the worker instead)."""
    job = get_current_job()
    assert job is not None
    conn = job.connection
    conn.rpush(EVENTS, f"{name} waits")
    with repo_lock(conn, REPO, wait=HOLD_SECONDS) as lock:
        conn.rpush(EVENTS, f"{name} holds {lock.token}")
        if hold:
            conn.blpop([f"test:lock:release:{name}"], timeout=HOLD_SECONDS)
        conn.rpush(EVENTS, f"{name} done")
    return name


def worker_main() -> int:
    """`memrepo worker ARGS...` (sys.argv) that also runs `hold_the_repository`: memrepo's worker
    runs only memrepo's own job functions (bot.queue.refusal), so this process, and only it,
    lets it run this module's job too; everything else is judged as in production."""
    import bot.queue
    from bot.cli import main

    own = bot.queue.refusal

    def refusal(job: bot.queue.JobFacts) -> str | None:
        if job.readable and job.func_name == f"{__name__}.hold_the_repository" and not job.kwargs:
            return None
        return own(job)

    bot.queue.refusal = refusal
    sys.argv[0] = "memrepo"
    return main()  # as the console script runs it
