"""`GET /v1/repos/<owner>/<repo>/events`: server-sent events telling agents that `main` moved,
served on the receiver's event loop (ASGI): an open stream is a coroutine and a `Subscriber`
of the process's one Redis subscription (webhooks/streams/fanout.py), never a thread or a connection.

Protocol (what `bot.notify.follower.HeadSubscriber` reads): `retry: 3000` and a
`: connected to <repo>` comment first, then each head event (docs/architecture.md §5.6) as `event: head`,
`id: <sha>`, `data: <json>`, and a `: keepalive` comment every heartbeat interval, so proxies
and load balancers keep idle connections open. Each stream's heartbeats keep their own phase
(a random offset at connect), so ten thousand idle streams do not all write at once.

Once the response's head and first bytes are out, a stream on a server that lets it reach its
connection (uvicorn, h11 or httptools) attaches that connection to its subscriber, and events
are written into it by the fan-out directly, framed as the server frames the response (one
chunk each, when it is chunked); the stream's coroutine then wakes only for its heartbeats and
its end. On any other server events go through ASGI's `send` as usual.

Reconnection (`Last-Event-ID`): the head is a state, not a log, so what a reconnecting agent
needs is the newest head: when the id it sent is not the newest sha, the newest event is sent
first. The stream listens before that head is read, so nothing falls between them.

Who may follow: the bearer is the agent's own forge token, and the injected access check
(bot/access.py, built by bot/serve) asks the forge whether it can read the repository, cached
for at most five minutes. An open stream asks again at its heartbeats once the cached answer
has expired, and ends when the answer became no, so a revoked person's agents stop hearing
within the cache's lifetime. The operator token (MEMREPO_AGENT_TOKEN) opens any served
repository's stream, for operators; agents never need it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import socket
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from typing import Any, Protocol

from redis.exceptions import RedisError

from bot.access import ALLOWED, BAD_TOKEN, REFUSED, UNAVAILABLE
from bot.errors import MemrepoError
from bot.settings import Settings, is_repo_name
from webhooks import texts
from webhooks.streams.fanout import END, Fanout, Subscriber, format_event

# The agents' event stream (streams/endpoint.py): its access check against the forge.
EVENTS_NO_TOKEN = ("a bearer token is required: send Authorization: Bearer <your forge token> (the token the agent "
                   "uses for git)")
EVENTS_BAD_TOKEN = "the forge does not accept this token (401): send the token the agent uses for git"
EVENTS_NO_ACCESS = "{repo} is not a repository this server serves, or this token cannot read it"
EVENTS_FORGE_UNAVAILABLE = ("the forge could not be asked whether this token may read {repo} ({error}); "
                            "try again shortly")
EVENTS_OPERATOR_ONLY = ("this receiver checks no forge tokens (it has no forge configured), so an agent's forge token "
                        "cannot open streams here: only the operator token does, and this is not it")

log = logging.getLogger("memrepo.webhooks.streams")

RETRY_MS = 3000  # how long EventSource clients wait before reconnecting
RETRY_AFTER_SECONDS = 5
SEND_BUFFER = 16 * 1024  # bytes the kernel may hold unsent per stream (it doubles it)
WRITE_BUFFER = 16 * 1024  # bytes the process may hold unsent per stream before the writer waits
HEARTBEAT = b": keepalive\n\n"

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class AccessCheck(Protocol):
    """What the stream needs of an access check (bot.access.ForgeAccess is one): `check`
    blocks (it may ask the forge), `cached` does not. `token=None`: the operator's stream,
    only whether the repository is served."""

    def check(self, token: str | None, repo: str) -> str: ...

    def cached(self, token: str | None, repo: str) -> str | None: ...


async def answer(send: Send, status: int, message: str, headers: dict[str, str] | None = None,
                 **extra: Any) -> None:
    """A JSON answer `{"message": ...}`, as the Flask side answers."""
    body = json.dumps({"message": message, **extra}).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    head += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            token = token.strip()
            return token if scheme.lower() == "bearer" and token else None
    return None


def header(scope: Scope, wanted: bytes) -> str:
    for name, value in scope.get("headers", ()):
        if name == wanted:
            return value.decode("latin-1")
    return ""


def _transport(send: Send) -> Any:
    """The connection's asyncio transport, where the server lets us reach it (uvicorn's send
    is a method of an object that holds it), else None."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    return transport if hasattr(transport, "abort") else None


def _bound_buffers(send: Send) -> None:
    """Keep what a stream may have unsent small, in the kernel and in the process: a stream
    sends a few hundred bytes now and then, and ten thousand of them must not reserve megabytes
    each. A reader that stops reading then fills them soon, and it is dropped (webhooks/streams/fanout.py)."""
    transport = _transport(send)
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
    with contextlib.suppress(Exception):
        transport.set_write_buffer_limits(high=WRITE_BUFFER)


def _attachable(send: Send, scope: Scope) -> tuple[Any, bool] | None:
    """The connection's transport and whether the response is chunked, for a GET whose
    response head was sent, on a server whose framing we know (uvicorn's h11 chunks an
    HTTP/1.1 response without a length and not an HTTP/1.0 one; its httptools says which);
    else None (events then go through `send`)."""
    transport = _transport(send)
    if transport is None or scope.get("method") != "GET" or not hasattr(transport, "get_write_buffer_size"):
        return None
    cycle = getattr(send, "__self__", None)
    chunked = getattr(cycle, "chunked_encoding", None)  # uvicorn's httptools protocol
    if chunked is None:
        version = getattr(getattr(cycle, "conn", None), "their_http_version", None)  # uvicorn's h11 protocol
        if version not in (b"1.0", b"1.1"):
            return None
        chunked = version == b"1.1"
    return transport, bool(chunked)


def _abort(send: Send) -> bool:
    """Cut the connection under a stream at once, unsent bytes and all (True), where the
    server lets us reach its transport (uvicorn does); a graceful close would wait for a
    reader that stopped reading."""
    transport = _transport(send)
    if transport is None:
        return False
    transport.abort()
    return True


class EventStreams:
    """The stream endpoint; `fanout` is started and stopped by the app's lifespan."""

    def __init__(self, settings: Settings, fanout: Fanout, access: AccessCheck | None,
                 executor: Callable[[], Executor | None]) -> None:
        self.settings = settings
        self.fanout = fanout
        self.access = access
        self._executor = executor
        self._asking: dict[tuple[str | None, str], asyncio.Future[str]] = {}

    async def verdict(self, token: str | None, repo: str, *, fresh: bool = False) -> str:
        """The access check's verdict; one forge request at a time per token and repository."""
        assert self.access is not None
        if not fresh:
            known = self.access.cached(token, repo)
            if known is not None:
                return known
        key = (token, repo.lower())
        pending = self._asking.get(key)
        if pending is None:
            loop = asyncio.get_running_loop()
            pending = asyncio.ensure_future(loop.run_in_executor(self._executor(), self.access.check, token, repo))
            self._asking[key] = pending
            pending.add_done_callback(lambda _: self._asking.pop(key, None))
        try:
            return await asyncio.shield(pending)
        except Exception as exc:  # a bug in the check must not take the loop down: "try again"
            log.warning("access check for %s failed: %s", repo, exc)
            return UNAVAILABLE

    async def __call__(self, scope: Scope, receive: Receive, send: Send, owner: str, name: str) -> None:
        if scope.get("method") not in ("GET", "HEAD"):
            await answer(send, 405, "the event stream answers GET only", {"Allow": "GET"})
            return
        token = bearer(scope)
        if token is None:
            await answer(send, 401, EVENTS_NO_TOKEN, {"WWW-Authenticate": 'Bearer realm="memrepo"'})
            return
        repo = f"{owner}/{name}"
        if not is_repo_name(repo) or not self.settings.accepts(repo):
            await answer(send, 404, EVENTS_NO_ACCESS.format(repo=repo))
            return
        operator = self.settings.is_operator(token)
        who = None if operator else token
        if self.access is None:
            verdict = ALLOWED if operator else BAD_TOKEN
        else:
            verdict = await self.verdict(who, repo)
        if verdict == BAD_TOKEN:
            text = EVENTS_BAD_TOKEN if self.access is not None else EVENTS_OPERATOR_ONLY
            await answer(send, 401, text, {"WWW-Authenticate": 'Bearer realm="memrepo", error="invalid_token"'})
            return
        if verdict == REFUSED:
            await answer(send, 404, EVENTS_NO_ACCESS.format(repo=repo))
            return
        if verdict != ALLOWED:
            await answer(send, 503, EVENTS_FORGE_UNAVAILABLE.format(repo=repo, error="no answer"),
                         {"Retry-After": str(RETRY_AFTER_SECONDS)})
            return
        try:
            sub = self.fanout.add(repo)
        except MemrepoError as exc:
            await answer(send, 503, texts.REDIS_UNAVAILABLE.format(error=exc.message or "not subscribed"),
                         {"Retry-After": str(RETRY_AFTER_SECONDS)})
            return
        try:
            await self._stream(scope, receive, send, repo, who, sub)
        finally:
            self.fanout.remove(sub)

    async def _stream(self, scope: Scope, receive: Receive, send: Send, repo: str, who: str | None,
                      sub: Subscriber) -> None:
        seen = header(scope, b"last-event-id").strip().lower()
        try:
            newest = await self.fanout.newest(repo) if seen else None
        except RedisError as exc:
            await answer(send, 503, texts.REDIS_UNAVAILABLE.format(error=type(exc).__name__),
                         {"Retry-After": str(RETRY_AFTER_SECONDS)})
            return
        _bound_buffers(send)
        task = asyncio.current_task()
        sub.on_drop = lambda: _abort(send) or (task is not None and task.cancel())
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no")]})
        first = f"retry: {RETRY_MS}\n: connected to {repo}\n\n".encode()
        if newest is not None and newest.sha != seen:
            first += format_event(newest)
        watcher = asyncio.ensure_future(self._until_gone(receive, sub))
        loop = asyncio.get_running_loop()
        beat = self.settings.heartbeat_seconds
        try:
            await send({"type": "http.response.body", "body": first, "more_body": True})
            direct = _attachable(send, scope)
            if direct is not None:
                self.fanout.attach(sub, direct[0], chunked=direct[1])
            deadline = loop.time() + beat * random.uniform(0.5, 1.0)
            while True:
                data = await sub.next(deadline)
                if data is END:
                    break
                if data is None:  # the heartbeat: still allowed?
                    deadline += beat
                    if loop.time() > deadline:  # the loop was busy for a while: do not catch up beats
                        deadline = loop.time() + beat
                    if self.access is not None and await self._revoked(who, repo):
                        log.info("a stream of %s ends: its token may no longer read it", repo)
                        break
                    data = HEARTBEAT
                if sub.transport is not None:
                    self.fanout.write(sub, data)
                    continue
                await send({"type": "http.response.body", "body": data, "more_body": True})
            sub.end("revoked")  # (a no-op if it ended already) nothing is written past the response's end
            if sub.dropped:
                await asyncio.sleep(0)  # the cut connection's end is seen before the handler returns
            else:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError:
            sub.end("stopping")
            if not sub.dropped:  # the server stopping (its graceful timeout): end the response cleanly
                with contextlib.suppress(Exception):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                raise
        finally:
            watcher.cancel()

    async def _revoked(self, who: str | None, repo: str) -> bool:
        assert self.access is not None
        verdict = self.access.cached(who, repo)
        if verdict is None:
            verdict = await self.verdict(who, repo, fresh=True)
        return verdict in (REFUSED, BAD_TOKEN)

    @staticmethod
    async def _until_gone(receive: Receive, sub: Subscriber) -> None:
        """End the subscriber when the client goes away (the server tells by a disconnect)."""
        with contextlib.suppress(Exception):
            while (await receive()).get("type") != "http.disconnect":
                pass
        sub.end("client gone")
