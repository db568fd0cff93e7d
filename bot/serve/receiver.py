"""The receiver process (`memrepo serve`): webhooks/'s ASGI application (webhooks.asgi.Receiver)
on uvicorn, built here and nowhere else:

- in production (`run`), under gunicorn: `workers` pre-forked processes, each uvicorn's asyncio
  loop (event streams: a coroutine each, one Redis subscription per process) with a pool of
  `threads` threads for webhook intake and health, the palace of every memory it serves at
  /palace/OWNER/REPO/ (bot/serve/palace.py), configured by the environment; gunicorn is
  imported only then, so `serve --local` never needs it;
- on a thread of this process (`ReceiverServer`): `serve --local`, tests, benchmarks.

uvicorn is asked for asyncio and h11 (pure Python, the same on every machine), lifespan on
(the Redis subscription is made per process, after the fork), and a short graceful timeout:
open event streams are ended when the receiver stops, so a stop never waits on them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import socket
import threading
import time
from typing import Any

import uvicorn

from bot import sockets
from bot.errors import MemrepoError
from bot.serve import texts
from bot.settings import Problems, Settings
from webhooks.asgi import Receiver

# The receiver in production (receiver.py).
SERVE_SERVING = "memrepo serve: webhook receiver at http://{host}:{port}/webhooks/github, agent events at " \
                "http://{host}:{port}/v1/repos/<owner>/<repo>/events (Ctrl-C stops)"
PALACE_SERVED_OFF = ("the palace (/palace/OWNER/REPO/) is not served: the receiver has no forge credentials to "
                     "fetch memory with (set MEMREPO_GITHUB_TOKEN, or a GitHub App's MEMREPO_APP_ID and key)")

log = logging.getLogger("memrepo.serve.receiver")

GRACEFUL_SECONDS = 2.0  # how long a stopping receiver lets requests finish (streams are ended at once)
GUNICORN_GRACEFUL_SECONDS = 10  # how long gunicorn's master lets a stopping worker process finish
BACKLOG = 4096
START_TIMEOUT = 15.0
UVICORN = {"loop": "asyncio", "http": "h11", "lifespan": "on", "timeout_graceful_shutdown": GRACEFUL_SECONDS,
           "ws": "none", "access_log": False, "server_header": False}


def raise_fd_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit (each open event
    stream is a socket; the usual soft limit of 1,024 would cap a receiver far below what it
    holds). The limit in force afterwards."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def listen(host: str, port: int, backlog: int = BACKLOG) -> socket.socket:
    """A listening socket (SO_REUSEADDR), or a one-line MemrepoError (port in use, bad host)."""
    return sockets.listen(host, port, backlog)


class ReceiverServer:
    """The receiver on a background thread with its own event loop, on `sock` (or a new
    socket on host:port; port 0 picks a free one). `start()` returns once it serves; `stop()`
    ends the open streams and stops it (the clients see their streams end, as in a restart)."""

    def __init__(self, app: Receiver, host: str = "127.0.0.1", port: int = 0, *,
                 sock: socket.socket | None = None) -> None:
        self.app = app
        self.sock = sock or listen(host, port)
        self.host = host
        self.port = int(self.sock.getsockname()[1])
        self.server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def for_settings(cls, settings: Settings, host: str = "127.0.0.1", port: int = 0, **receiver: Any
                     ) -> ReceiverServer:
        return cls(Receiver(settings, **receiver), host, port)

    @property
    def url(self) -> str:
        return f"http://{f'[{self.host}]' if ':' in self.host else self.host}:{self.port}"

    def start(self) -> ReceiverServer:
        config = uvicorn.Config(self.app, log_config=None, log_level="warning", backlog=BACKLOG, **UVICORN)
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name=f"receiver-{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self.server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.005)  # uvicorn says it started by a flag only
        if not self.server.started:
            raise MemrepoError(texts.SERVE_LOCAL_CANNOT_START.format(problem="the receiver did not start"))
        return self

    def _run(self) -> None:
        assert self.server is not None
        try:
            asyncio.run(self.server.serve(sockets=[self.sock]))
        except Exception:
            log.exception("the receiver stopped with an error")

    def stop(self, timeout: float = 10.0) -> None:
        if self.server is None:
            return
        self.app.end_streams()
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        with contextlib.suppress(OSError):
            self.sock.close()
        self.server = None



# ------------------------------------------------------------------ production: gunicorn
@functools.cache
def worker_class() -> type:
    """gunicorn's worker class for the receiver: uvicorn's, asked for what UVICORN asks of
    uvicorn everywhere. Made on first use, so that only production imports gunicorn."""
    from uvicorn_worker import UvicornWorker

    class ReceiverWorker(UvicornWorker):  # type: ignore[misc]
        CONFIG_KWARGS: dict[str, Any] = dict(UVICORN)  # noqa: RUF012 (the base class's own attribute)

    return ReceiverWorker


def gunicorn_options(listener: socket.socket, workers: int, threads: int) -> dict[str, Any]:
    """gunicorn's settings for the receiver (bench/webhooks.py measures exactly these).
    `threads` is not gunicorn's here: the worker class is uvicorn's (asyncio), and the number
    is the size of the receiver's webhook intake pool."""
    host, port = listener.getsockname()[:2]
    return {
        "workers": workers, "threads": threads, "worker_class": worker_class(),
        "bind": [f"[{host}]:{port}" if listener.family == socket.AF_INET6 else f"{host}:{port}"],
        "backlog": BACKLOG, "keepalive": 5, "graceful_timeout": GUNICORN_GRACEFUL_SECONDS,
        "timeout": 60,  # a stuck worker (its event loop) is replaced
        "accesslog": None, "errorlog": "-", "loglevel": "info",  # the receiver logs each delivery itself
        "proc_name": "memrepo-serve",
        "control_socket_disable": True,  # no ~/.gunicorn/gunicorn.ctl: nothing here uses gunicornc
    }


def gunicorn_app(app: Receiver, options: dict[str, Any], listener: socket.socket) -> Any:
    """gunicorn (gunicorn.app.base.BaseApplication) serving `app` on `listener`, a socket bound
    here, so a bad setting or a busy port is one line before gunicorn starts."""
    from gunicorn.app.base import BaseApplication
    from gunicorn.arbiter import Arbiter
    from gunicorn.sock import TCP6Socket, TCPSocket

    class Gunicorn(BaseApplication):  # type: ignore[misc]
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

    return Gunicorn()


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


def run(host: str, port: int, workers: int, threads: int) -> int:
    """The receiver under gunicorn, configured by the environment (missing or bad variables:
    one MemrepoError naming them all, before gunicorn starts). SIGTERM or SIGINT: a graceful stop
    (gunicorn's master), exit code 0."""
    problems = Problems()  # every bad setting named in one run
    found = problems.read(Settings.from_env, None)
    access = problems.read(access_from_env, None)
    problems.check()
    assert found is not None  # check() raised otherwise
    settings = found
    try:
        import gunicorn  # noqa: F401
    except ImportError:
        raise MemrepoError("memrepo serve needs gunicorn (pip install gunicorn)") from None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    raise_fd_limit()  # every open event stream is a socket
    # In the master, before the fork: Redis connects lazily, and the subscription and the pools
    # are made per worker process when its lifespan starts.
    from bot.serve.palace import from_env as palaces_from_env

    palaces = palaces_from_env(settings, access, os.environ)
    app = Receiver(settings, access=access, intake_threads=threads, palace=palaces.app() if palaces else None,
                   palace_token=palaces.stream_token if palaces else None)
    listener = listen(host, port)
    bound = listener.getsockname()[1]
    print(SERVE_SERVING.format(host=host, port=bound), flush=True)
    if palaces is None:
        logging.getLogger("memrepo.serve").warning(PALACE_SERVED_OFF)
    try:
        gunicorn_app(app, gunicorn_options(listener, workers, threads), listener).run()
    except SystemExit as exc:  # gunicorn's master ends with sys.exit (0 after SIGTERM)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


__all__ = ["GRACEFUL_SECONDS", "UVICORN", "ReceiverServer", "access_from_env", "gunicorn_app", "gunicorn_options",
           "listen", "raise_fd_limit", "run", "worker_class"]
