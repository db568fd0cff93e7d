"""`memrepo worker`: an rq worker for the integrator's jobs, configured by the environment.

It reads JSON jobs and runs only memrepo's own job functions (bot.queue.Worker): a job naming
anything else, or pickled, fails with one log line and nothing of it runs.

Run as many as wanted, on any machine that reaches Redis; the per-repository lock keeps them
from acting on one repository at once. Each worker runs rq's scheduler too (delayed
`wake` jobs: an integration that must come back later), and a small timer that enqueues
`reconcile` for every known repository every `--reconcile-every` seconds, so a webhook that
never arrived delays a merge but never strands it. Several workers enqueueing the same
reconcile collapse into one job (`bot.queue.enqueue_reconcile`).
"""

from __future__ import annotations

import argparse
import logging
import threading
from typing import TYPE_CHECKING

from bot.commands import texts
from bot.errors import MemrepoError
from bot.settings import repos_from_env

if TYPE_CHECKING:  # Redis, rq and the integrator load when the worker runs, not when its parser is built
    from redis import Redis

log = logging.getLogger("memrepo.worker")

DEFAULT_RECONCILE_SECONDS = 300.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("worker", help=texts.WORKER_HELP, description=texts.WORKER_DESCRIPTION)
    p.add_argument("--burst", action="store_true", help=texts.WORKER_BURST_HELP)
    p.add_argument("--reconcile-every", type=float, default=DEFAULT_RECONCILE_SECONDS, metavar="SECONDS",
                   help=texts.WORKER_RECONCILE_HELP.format(seconds=DEFAULT_RECONCILE_SECONDS))
    p.add_argument("--name", help=texts.WORKER_NAME_HELP)
    p.set_defaults(func=run)


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


def run(args: argparse.Namespace) -> int:
    from bot.integrator.context import Context, set_context
    from bot.queue import QUEUES, Worker

    if args.reconcile_every < 0 or args.reconcile_every != args.reconcile_every:
        raise MemrepoError(texts.WORKER_BAD_INTERVAL.format(value=args.reconcile_every))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    context = Context.from_env()
    set_context(context)
    configured = repos_from_env()
    redis = context.redis
    print(texts.WORKER_STARTING.format(queues=", ".join(QUEUES), redis=_shown(redis),
                                       work_dir=context.work_dir), flush=True)
    reconciler = None
    if args.reconcile_every > 0:
        repos = reconcile_all(redis, configured)
        if not args.burst:
            print(texts.WORKER_RECONCILE.format(repos=", ".join(repos) or "-", seconds=args.reconcile_every),
                  flush=True)
            reconciler = Reconciler(redis, configured, args.reconcile_every)
            reconciler.start()
    worker = Worker(list(QUEUES), connection=redis, name=args.name)
    try:
        worker.work(burst=args.burst, with_scheduler=True)
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
