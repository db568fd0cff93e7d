"""Running the receiver (webhooks.asgi.Receiver) on uvicorn: as gunicorn's worker class in
production (`memrepo serve`), or on a thread of this process (`memrepo serve --local`, tests,
benchmarks).

uvicorn is asked for asyncio and h11 (pure Python, the same on every machine), lifespan on
(the Redis subscription is made per process, after the fork), and a short graceful timeout:
open event streams are ended when the receiver stops, so a stop never waits on them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from typing import Any

import uvicorn

from bot import sockets
from bot.errors import MemrepoError
from bot.serve import texts
from bot.settings import Settings
from webhooks.asgi import Receiver

log = logging.getLogger("memrepo.serve.receiver")

GRACEFUL_SECONDS = 2.0  # how long a stopping receiver lets requests finish (streams are ended at once)
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
            raise MemrepoError(texts.SERVE_LOCAL_CANNOT_START.format(problem=texts.SERVE_LOCAL_RECEIVER_NOT_STARTED))
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


__all__ = ["GRACEFUL_SECONDS", "UVICORN", "ReceiverServer", "listen", "raise_fd_limit"]
