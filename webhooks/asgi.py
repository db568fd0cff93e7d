"""The receiver as one ASGI application: the agents' event streams on the event loop, the
webhook intake and health on a pool of threads of their own.

Why asyncio (and not a cooperative worker class such as gevent's): a waiting stream is then a
coroutine of a few kilobytes with no thread, and the one place that has to be cooperative is
the one written for it (webhooks/streams/endpoint.py, webhooks/streams/fanout.py); nothing is monkey-patched,
so the threads of the webhook intake, redis-py and rq, and in `serve --local` localhub and git,
stay ordinary threads. uvicorn serves it, standalone or as gunicorn's worker class.

Routing: `GET /v1/repos/<owner>/<repo>/events` is a stream; `/palace/...` goes to the palace's
WSGI application when one is given (bot/serve builds it: it reads git, which this package never
loads), on a pool of its own (`palace_threads`), and `/palace/<owner>/<repo>/events` is that
memory's event stream for an open page, the viewer's token read from the page's cookie by the
`palace_token` hook the palace gives; every other request goes to the Flask
application (webhooks/intake/__init__.py: `POST /webhooks/github`, `GET /healthz`), called on the
intake pool (`intake_threads` threads per process) that no stream or page ever holds, so however
many agents listen and people look, GitHub's deliveries are answered in milliseconds.

Lifespan: the process's one Redis subscription (webhooks/streams/fanout.py) and the pools are made at
start-up (after gunicorn forks, in each worker), and let go at shutdown, when open streams are
ended first so that their agents reconnect (to another receiver behind the load balancer).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import re
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from flask import Flask
from redis import Redis

from bot.settings import Settings
from webhooks.streams.endpoint import AccessCheck, EventStreams, Receive, Scope, Send
from webhooks.streams.fanout import DEFAULT_BUFFER, Fanout

# The receiver as the server that runs it configures it (asgi.py, streams/fanout.py).
RECEIVER_BAD_THREADS = "intake_threads must be at least 1"

log = logging.getLogger("memrepo.receiver")

# Stream paths, matched whole (fullmatch: a `$` would take "/events\n", from "/events%0A").
EVENTS_PATH = re.compile(r"/v1/repos/([^/]+)/([^/]+)/events/?")
PALACE_PATH = "/palace/"
PALACE_EVENTS_PATH = re.compile(r"/palace/([^/]+)/([^/]+)/events/?")
DEFAULT_INTAKE_THREADS = 16
DEFAULT_PALACE_THREADS = 4
ACCESS_THREADS = 8  # concurrent forge requests of the access check, per process


class Receiver:
    """The ASGI callable. `flask` defaults to `webhooks.intake.create_app(settings, redis=redis)`;
    `palace` is a WSGI application for `/palace/...` (None: not served); `palace_token(scope)`
    the viewer's token a palace page's request carries (None: none), for its event stream."""

    def __init__(self, settings: Settings, *, redis: Redis | None = None, flask: Flask | None = None,
                 access: AccessCheck | None = None, intake_threads: int = DEFAULT_INTAKE_THREADS,
                 buffer: int = DEFAULT_BUFFER, palace: Any = None,
                 palace_threads: int = DEFAULT_PALACE_THREADS,
                 palace_token: Callable[[Scope], str | None] | None = None) -> None:
        from webhooks.intake import create_app

        if intake_threads < 1:
            raise ValueError(RECEIVER_BAD_THREADS)
        self.settings = settings
        self.flask = flask or create_app(settings, redis=redis, streams=self.open_streams)
        self.access = access
        self.intake_threads = intake_threads
        self.buffer = buffer
        self.palace = palace
        self.palace_threads = palace_threads
        self.palace_token = palace_token
        self._palace_pool: ThreadPoolExecutor | None = None
        self.fanout: Fanout | None = None
        self.streams: EventStreams | None = None
        self._intake: ThreadPoolExecutor | None = None
        self._access_pool: ThreadPoolExecutor | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._starting: asyncio.Task[None] | None = None

    def open_streams(self) -> int:
        """How many event streams this process holds now (for /healthz)."""
        return self.fanout.count if self.fanout is not None else 0

    # ------------------------------------------------------------------ lifespan
    async def startup(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._intake = ThreadPoolExecutor(self.intake_threads, thread_name_prefix="memrepo-intake")
        self._access_pool = ThreadPoolExecutor(ACCESS_THREADS, thread_name_prefix="memrepo-access")
        if self.palace is not None:
            self._palace_pool = ThreadPoolExecutor(self.palace_threads, thread_name_prefix="memrepo-palace")
        self.fanout = Fanout(self.settings.redis_url, buffer=self.buffer)
        self.streams = EventStreams(self.settings, self.fanout, self.access, lambda: self._access_pool)
        await self.fanout.start()  # Redis down: streams answer 503 until the subscription is back

    async def shutdown(self) -> None:
        if self.fanout is not None:
            await self.fanout.stop()
        for pool in (self._intake, self._access_pool, self._palace_pool):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)

    def end_streams(self) -> None:
        """End every open stream now (thread-safe): a stopping server does this first, so its
        agents reconnect at once instead of waiting on a connection that goes nowhere."""
        loop, fanout = self.loop, self.fanout
        if loop is None or fanout is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(fanout.end_all, "stopping")

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.startup()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # ------------------------------------------------------------------ requests
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if kind != "http":
            return  # websockets: not served (the server refuses the upgrade)
        if self.streams is None:  # a server that runs no lifespan: start on first use, once
            if self._starting is None:
                self._starting = asyncio.ensure_future(self.startup())
            await asyncio.shield(self._starting)
        match = EVENTS_PATH.fullmatch(scope["path"])
        if match is not None:
            assert self.streams is not None
            await self.streams(scope, receive, send, match.group(1), match.group(2))
            return
        if self.palace is not None and scope["path"].startswith(PALACE_PATH):
            match = PALACE_EVENTS_PATH.fullmatch(scope["path"]) if self.palace_token is not None else None
            if match is not None:
                assert self.streams is not None and self.palace_token is not None
                await self.streams(_with_bearer(scope, self.palace_token(scope)), receive, send, match.group(1),
                                   match.group(2))
                return
            await self._wsgi(scope, receive, send, self.palace, self._palace_pool)
            return
        await self._wsgi(scope, receive, send, self.flask, self._intake)

    async def _wsgi(self, scope: Scope, receive: Receive, send: Send, app: Any, pool: ThreadPoolExecutor | None
                    ) -> None:
        """A WSGI app on a pool of threads. The body is read here, at most one byte past the
        limit (the Flask side answers 413 from what it sees), before a thread is taken."""
        limit = self.settings.max_body_bytes + 1
        declared = _content_length(scope)
        body = b"" if declared is not None and declared > limit else await _read_body(receive, limit)
        environ = _environ(scope, body, declared)
        loop = asyncio.get_running_loop()
        status, headers, content = await loop.run_in_executor(pool, _call_wsgi, app, environ)
        code = int(status.split(" ", 1)[0])
        await send({"type": "http.response.start", "status": code,
                    "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]})
        await send({"type": "http.response.body", "body": content, "more_body": False})


def _with_bearer(scope: Scope, token: str | None) -> Scope:
    """`scope` with `Authorization: Bearer <token>` (a browser's EventSource cannot send one;
    its cookie held the token), or unchanged when there is none or it sent one itself."""
    headers = scope.get("headers", ())
    if token is None or any(name == b"authorization" for name, _ in headers):
        return scope
    return {**scope, "headers": [*headers, (b"authorization", f"Bearer {token}".encode("latin-1", "replace"))]}


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _read_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)[:limit]


def _environ(scope: Scope, body: bytes, declared: int | None) -> dict[str, Any]:
    """PEP 3333's environ for an ASGI HTTP scope whose body was read already."""
    server = scope.get("server") or ("localhost", 80)
    client = scope.get("client") or ("", 0)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": scope.get("root_path", "").encode("utf-8").decode("latin-1"),
        "PATH_INFO": scope["path"].encode("utf-8").decode("latin-1"),
        "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1] or 80),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "REMOTE_ADDR": str(client[0]),
        "REMOTE_PORT": str(client[1]),
        "CONTENT_LENGTH": str(declared if declared is not None else len(body)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    for name, value in scope.get("headers", ()):
        key = name.decode("latin-1").upper().replace("-", "_")
        text = value.decode("latin-1")
        if key == "CONTENT_TYPE":
            environ["CONTENT_TYPE"] = text
            continue
        if key == "CONTENT_LENGTH":
            continue
        key = "HTTP_" + key
        environ[key] = f"{environ[key]},{text}" if key in environ else text
    return environ


def _call_wsgi(app: Any, environ: dict[str, Any]) -> tuple[str, list[tuple[str, str]], bytes]:
    started: list[Any] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        started[:] = [status, headers]
        return lambda data: None

    result: Iterable[bytes] = app(environ, start_response)
    try:
        content = b"".join(result)
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    return started[0], started[1], content


__all__ = ["DEFAULT_INTAKE_THREADS", "DEFAULT_PALACE_THREADS", "PALACE_PATH", "Receiver"]
