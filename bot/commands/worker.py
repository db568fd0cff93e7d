"""`memrepo worker`: its flags; the worker process is bot/serve/worker.py."""

from __future__ import annotations

import argparse

from bot.commands import texts
from bot.errors import MemrepoError

WORKER_BAD_INTERVAL = "--reconcile-every must be 0 (off) or a positive number of seconds, found {value}"

DEFAULT_RECONCILE_SECONDS = 300.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("worker", help=texts.WORKER_HELP, description=texts.WORKER_DESCRIPTION)
    p.add_argument("--burst", action="store_true", help=texts.WORKER_BURST_HELP)
    p.add_argument("--reconcile-every", type=float, default=DEFAULT_RECONCILE_SECONDS, metavar="SECONDS",
                   help=texts.WORKER_RECONCILE_HELP.format(seconds=DEFAULT_RECONCILE_SECONDS))
    p.add_argument("--name", help=texts.WORKER_NAME_HELP)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.reconcile_every < 0 or args.reconcile_every != args.reconcile_every:
        raise MemrepoError(WORKER_BAD_INTERVAL.format(value=args.reconcile_every))
    from bot.serve import worker

    return worker.run(burst=args.burst, reconcile_every=args.reconcile_every, name=args.name)
