"""The worker process (`memrepo worker`): an rq worker for the integrator's jobs, configured by
the environment.

It reads JSON jobs and runs only memrepo's own job functions (bot.queue.Worker): a job naming
anything else, or pickled, fails with one log line and nothing of it runs.

Run as many as wanted, on any machine that reaches Redis; the per-repository lock keeps them
from acting on one repository at once. Each worker runs rq's scheduler too (delayed
`wake` jobs: an integration that must come back later), and a small timer that enqueues
`reconcile` for every known repository every `reconcile_every` seconds, so a webhook that
never arrived delays a merge but never strands it. Several workers enqueueing the same
reconcile collapse into one job (`bot.queue.enqueue_reconcile`).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from bot.settings import Problems, repos_from_env

if TYPE_CHECKING:  # Redis, rq and the integrator load when the worker runs, not when memrepo's parser is built
    from redis import Redis

# The worker (worker.py).
WORKER_STARTING = "memrepo worker: serving on {redis} (queues: {queues}); work folder {work_dir}"
WORKER_RECONCILE = "memrepo worker: reconciling {repos} every {seconds:g}s"

log = logging.getLogger("memrepo.worker")


def reconcile_all(redis: Redis, configured: frozenset[str] | None) -> list[str]:
    """Enqueue `reconcile` for the configured repositories and every one a job has seen."""
    from bot.integrator.jobs import known_repos
    from bot.queue import enqueue_reconcile

    repos = sorted(set(configured or ()) | set(known_repos(redis)))
    for repo in repos:
        enqueue_reconcile(redis, repo)
    return repos


class Reconciler(threading.Thread):
    """Every `interval` seconds, `reconcile_all`; a Redis hiccup is logged and retried next time."""

    def __init__(self, redis: Redis, configured: frozenset[str] | None, interval: float) -> None:
        super().__init__(name="memrepo-reconcile", daemon=True)
        self.redis = redis
        self.configured = configured
        self.interval = interval
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            try:
                reconcile_all(self.redis, self.configured)
            except Exception:  # the worker keeps working; the next tick tries again
                log.exception("periodic reconciliation failed")

    def stop(self) -> None:
        self.stopped.set()


def run(*, reconcile_every: float, burst: bool = False, name: str | None = None) -> int:
    """The worker, configured by the environment (missing or bad settings: one MemrepoError naming them all),
    until SIGTERM (rq lets the running job finish) or, with `burst`, until its queues are empty.
    `reconcile_every`: seconds between reconciliations of every known repository (0: never;
    with `burst`, once at start)."""
    from bot.integrator.context import Context, set_context
    from bot.queue import QUEUES, Worker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    problems = Problems()  # every bad setting named in one run
    found = problems.read(Context.from_env, None)
    configured = problems.read(repos_from_env, None)
    problems.check()
    assert found is not None  # check() raised otherwise
    context = found
    set_context(context)
    redis = context.redis
    print(WORKER_STARTING.format(queues=", ".join(QUEUES), redis=_shown(redis),
                                       work_dir=context.work_dir), flush=True)
    reconciler = None
    if reconcile_every > 0:
        repos = reconcile_all(redis, configured)
        if not burst:
            print(WORKER_RECONCILE.format(repos=", ".join(repos) or "-", seconds=reconcile_every), flush=True)
            reconciler = Reconciler(redis, configured, reconcile_every)
            reconciler.start()
    worker = Worker(list(QUEUES), connection=redis, name=name)
    try:
        worker.work(burst=burst, with_scheduler=True)
    finally:
        if reconciler is not None:
            reconciler.stop()
    return 0


def _shown(redis: Redis) -> str:
    """Where Redis is, without a password."""
    kw = redis.connection_pool.connection_kwargs
    if kw.get("path"):
        return f"unix://{kw['path']}"
    return f"redis://{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"
