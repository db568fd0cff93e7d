"""One Redis subscription per receiver process, fanned out to every open event stream in it.

A stream costs a `Subscriber`: a few slots and a short buffer, no thread and no Redis
connection. The process holds one pattern subscription (`memrepo:head:*`) on one connection,
made at start-up, so a stream is listening from the moment it is added, before the newest head
is read for its catch-up, and no event can fall between the two.

An event is encoded once and the same bytes go to every subscriber of its repository. Where
the server lets the stream reach its connection (uvicorn does), the stream `attach`es it and
`deliver` writes the event straight into each connection's transport, in one pass and without
waking a coroutine per stream: ten thousand streams then cost ten thousand `write` calls, not
ten thousand task steps through the server's HTTP layer. Elsewhere the event is queued and the
stream's coroutine sends it through ASGI.

Bounds: a subscriber that has stopped reading is dropped when the next event comes: a written
one whose connection holds more than `unsent` bytes the kernel would not take, or a queued one
with `buffer` events waiting. Its connection is cut, and its agent reconnects with
`Last-Event-ID` and is given the newest head, which is all it needs (the head is a state, not
a log). The newest head per repository is cached here (read from Redis once, then kept by the
events), so a thousand reconnecting agents cost one GET.

Redis going away ends every stream of the process (their agents reconnect and catch up) and the
subscription is made again with backoff; until it is back, new streams are refused (503).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections import deque
from collections.abc import Callable
from typing import Protocol
from urllib.parse import urlsplit

from redis.asyncio import BlockingConnectionPool
from redis.asyncio import Redis as AsyncRedis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from bot.backoff import Backoff
from bot.errors import MemrepoError
from bot.notify.events import HeadEvent
from bot.redis_keys import HEAD_CHANNELS, last_head_key, repo_key

log = logging.getLogger("memrepo.webhooks.streams.fanout")

DEFAULT_BUFFER = 16  # events a queued subscriber may be behind before it is dropped
DEFAULT_UNSENT = 16 * 1024  # bytes a written subscriber's connection may hold unsent before it is dropped
GET_CONNECTIONS = 4  # connections for reading the newest head (one GET per repository, then cached)
READ_SECONDS = 30.0  # how long one wait for a message lasts (the loop then waits again)
RECONNECT = Backoff(0.1, cap=5.0, jitter=(0.5, 1.0))  # making the subscription again after Redis went away

END = b""  # what `Subscriber.next` returns when the stream must end


def format_event(event: HeadEvent) -> bytes:
    """A head event as server-sent event bytes (docs/architecture.md §5.6: `event: head`, `id: <sha>`)."""
    return f"event: head\nid: {event.sha}\ndata: {event.to_json()}\n\n".encode()


def chunk(data: bytes) -> bytes:
    """`data` as one chunk of HTTP/1.1's chunked transfer coding (what the server would have
    made of it), for a stream whose response is chunked."""
    return b"%x\r\n%b\r\n" % (len(data), data)


class Transport(Protocol):
    """What a subscriber needs of its connection (an asyncio transport is one)."""

    def write(self, data: bytes) -> None: ...

    def is_closing(self) -> bool: ...

    def get_write_buffer_size(self) -> int: ...


class Subscriber:
    """One open stream's place in the fan-out. Queued (until `attach`): `next(deadline)` gives
    the next event's bytes, None at the deadline (time for a heartbeat), or END when the stream
    must end (dropped for not reading, Redis gone, the receiver stopping, the client gone).
    Attached: events are written to its transport as they come, and `next` gives only None
    or END."""

    __slots__ = ("_waiter", "buffer", "chunked", "dropped", "ended", "key", "on_drop", "reason", "transport",
                 "unsent")

    def __init__(self, key: str, buffer: int, unsent: int = DEFAULT_UNSENT) -> None:
        self.key = key
        self.buffer: deque[bytes] = deque(maxlen=buffer + 1)
        self.ended = False
        self.dropped = False
        self.reason = ""
        self.on_drop: Callable[[], None] | None = None  # cuts the connection of a stuck writer
        self.transport: Transport | None = None
        self.chunked = False
        self.unsent = unsent
        self._waiter: asyncio.Future[None] | None = None

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _drop(self) -> bool:
        self.dropped = True
        self.end("stopped reading")
        if self.on_drop is not None:
            self.on_drop()
        return False

    def attach(self, transport: Transport, *, chunked: bool) -> bool:
        """From now on write to `transport` (the response's head and first bytes are sent;
        `chunked`: frame each write as a chunk). Events queued meanwhile are written first;
        False when that found the reader stuck (the subscriber is dropped)."""
        self.transport, self.chunked = transport, chunked
        while self.buffer:
            if not self.write(self.buffer.popleft()):
                return False
        return True

    def write(self, data: bytes, framed: bytes | None = None) -> bool:
        """Write `data` to the attached transport (`framed`: the same as a chunk, made once
        for every subscriber); False (and the subscriber ends) when the connection already
        holds more than `unsent` bytes the reader did not take."""
        transport = self.transport
        assert transport is not None
        if self.ended or transport.is_closing():
            return True  # a client gone: its stream ends by the server's disconnect
        if transport.get_write_buffer_size() > self.unsent:
            return self._drop()
        if self.chunked:
            transport.write(framed if framed is not None else chunk(data))
        else:
            transport.write(data)
        return True

    def push(self, data: bytes, limit: int, framed: bytes | None = None) -> bool:
        """Write `data` (attached) or queue it; False (and the subscriber ends) when the reader
        has stopped reading: see `write`, or `limit` events already wait."""
        if self.ended:
            return True
        if self.transport is not None:
            return self.write(data, framed)
        if len(self.buffer) >= limit:
            return self._drop()
        self.buffer.append(data)
        self._wake()
        return True

    def end(self, reason: str) -> None:
        if not self.ended:
            self.ended = True
            self.reason = reason
        self._wake()

    async def next(self, deadline: float) -> bytes | None:
        if self.buffer:
            return self.buffer.popleft()
        if self.ended:
            return END
        loop = asyncio.get_running_loop()
        self._waiter = waiter = loop.create_future()
        timer = loop.call_at(deadline, self._wake)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None
        if self.buffer:
            return self.buffer.popleft()
        return END if self.ended else None


class Fanout:
    """Start it in the process's event loop (`await start()`), `add` a subscriber per stream,
    `remove` it when the stream ends, `await stop()` at shutdown."""

    def __init__(self, redis_url: str, *, buffer: int = DEFAULT_BUFFER, unsent: int = DEFAULT_UNSENT,
                 client: Callable[[], AsyncRedis] | None = None) -> None:
        if buffer < 1 or unsent < 0:
            raise ValueError("buffer must be at least 1 and unsent at least 0")
        self.redis_url = redis_url
        self.limit = buffer
        self.unsent = unsent
        # The subscription's connection waits for messages as long as it takes (no read timeout;
        # TCP keepalive notices a peer that vanished, where there is TCP: a Unix socket's peer
        # going away closes it); reads of the newest head share a few pooled connections that
        # give up within seconds.
        keepalive = {} if urlsplit(redis_url).scheme == "unix" else {"socket_keepalive": True}
        self._client_factory = client or (lambda: AsyncRedis.from_url(
            redis_url, socket_connect_timeout=2, **keepalive))
        self._reader_factory = lambda: AsyncRedis(connection_pool=BlockingConnectionPool.from_url(
            redis_url, socket_connect_timeout=2, socket_timeout=5, max_connections=GET_CONNECTIONS, timeout=5))
        self._redis: AsyncRedis | None = None
        self._subscribers: dict[str, set[Subscriber]] = {}
        self._newest: dict[str, HeadEvent | None] = {}
        self._reading: dict[str, asyncio.Future[HeadEvent | None]] = {}
        self._task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()
        self.error = "not started"
        self.stopping = False
        self.count = 0
        self.delivered = 0
        self.drops = 0

    # ------------------------------------------------------------------ subscribers
    def add(self, repo: str) -> Subscriber:
        """A subscriber for `repo`, listening from now on. Raises MemrepoError (its text says
        why) when the subscription is not up."""
        if not self.ready.is_set() or self.stopping:
            raise MemrepoError(self.error)
        sub = Subscriber(repo_key(repo), self.limit, self.unsent)
        self._subscribers.setdefault(sub.key, set()).add(sub)
        self.count += 1
        return sub

    def remove(self, sub: Subscriber) -> None:
        group = self._subscribers.get(sub.key)
        if group is not None and sub in group:
            group.discard(sub)
            self.count -= 1
            if not group:
                del self._subscribers[sub.key]
                self._newest.pop(sub.key, None)  # no one keeps it up to date now
        sub.end("closed")

    def subscribers(self, repo: str) -> tuple[Subscriber, ...]:
        """The open streams' subscribers of `repo` in this process."""
        return tuple(self._subscribers.get(repo_key(repo), ()))

    def end_all(self, reason: str) -> None:
        for group in list(self._subscribers.values()):
            for sub in list(group):
                sub.end(reason)

    def attach(self, sub: Subscriber, transport: Transport, *, chunked: bool) -> bool:
        """`sub.attach`, counting a drop as `deliver` does."""
        return sub.attach(transport, chunked=chunked) or self._dropped(sub)

    def write(self, sub: Subscriber, data: bytes) -> bool:
        """Write `data` (a heartbeat) to an attached subscriber, counting a drop as `deliver` does."""
        return sub.write(data) or self._dropped(sub)

    def _dropped(self, sub: Subscriber) -> bool:
        self.drops += 1
        log.info("dropped a stream of %s: it stopped reading", sub.key)
        return False

    def deliver(self, event: HeadEvent) -> int:
        """Hand `event` to every subscriber of its repository (in this loop, at once: written
        to the attached ones, queued for the others); how many got it."""
        key = repo_key(event.repo)
        self._newest[key] = event
        group = self._subscribers.get(key)
        if not group:
            return 0
        data = format_event(event)
        framed = chunk(data)
        limit = self.limit
        got = 0
        for sub in list(group):
            if sub.push(data, limit, framed):
                got += 1
            else:
                self._dropped(sub)
        self.delivered += got
        return got

    async def newest(self, repo: str) -> HeadEvent | None:
        """The newest head of `repo` (cached while it has subscribers; one GET for many
        callers). Raises RedisError."""
        key = repo_key(repo)
        if key in self._newest:
            return self._newest[key]
        pending = self._reading.get(key)
        if pending is None:
            pending = asyncio.get_running_loop().create_future()
            self._reading[key] = pending
            try:
                assert self._redis is not None
                text = await self._redis.get(last_head_key(key))
                event = None
                if text is not None:
                    try:
                        event = HeadEvent.from_json(text)
                    except MemrepoError as exc:
                        log.warning("ignoring the stored head of %s: %s", key, exc)
                if key not in self._newest and key in self._subscribers:
                    self._newest[key] = event  # an event that came meanwhile is newer: keep it
                pending.set_result(self._newest.get(key, event))
            except BaseException as exc:
                pending.set_exception(exc)
                raise
            finally:
                self._reading.pop(key, None)
        return await asyncio.shield(pending)

    # ------------------------------------------------------------------ the subscription
    async def start(self) -> None:
        """Subscribe, and keep subscribed in the background; returns once the first attempt
        ended (ready or not: `ready` tells)."""
        self.stopping = False
        self._redis = self._reader_factory()
        first = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._run(first), name="memrepo-fanout")
        await first

    async def stop(self) -> None:
        self.stopping = True
        self.ready.clear()
        self.end_all("stopping")
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        if self._redis is not None:
            with contextlib.suppress(Exception):
                await self._redis.aclose()
            self._redis = None

    async def _run(self, first: asyncio.Future[None]) -> None:
        attempt = 0
        while not self.stopping:
            redis = self._client_factory()
            pubsub = redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.psubscribe(HEAD_CHANNELS)
                self._newest.clear()  # events may have been missed while it was down
                self.ready.set()
                self.error = ""
                attempt = 0
                if not first.done():
                    first.set_result(None)
                await self._read(pubsub)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                self.error = f"{type(exc).__name__}"
                log.warning("head event subscription lost: %s", exc)
            finally:
                was_ready = self.ready.is_set()
                self.ready.clear()
                if was_ready:
                    self.end_all("Redis went away")  # the agents reconnect and catch up
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                with contextlib.suppress(Exception):
                    await redis.aclose()
                if not first.done():
                    first.set_result(None)
            if self.stopping:
                return
            delay = RECONNECT.delay(attempt, random.random())
            attempt += 1
            await asyncio.sleep(delay)

    async def _read(self, pubsub: PubSub) -> None:
        while True:
            message = await pubsub.get_message(timeout=READ_SECONDS)
            if message is None or message.get("type") != "pmessage":
                continue
            try:
                event = HeadEvent.from_json(message["data"])
            except MemrepoError as exc:
                log.warning("ignoring a message on %s: %s", message.get("channel"), exc)
                continue
            if self.deliver(event):
                # Let the streams write before the next message: messages that arrived together
                # are read without waiting, and a reader that keeps up must not look stuck.
                await asyncio.sleep(0)
