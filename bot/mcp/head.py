"""Telling MCP clients that the compiled core memory changed, whenever the memory's HEAD moves.

HEAD moves by this server's own tool calls, by a person's commit in the clone, or by a sync
(the agent session's head subscriber, with --events, fast-forwarding to a new `main`). All of
them end in the ref files, so the watcher reads HEAD from there (`refs.resolve`: no process, no
repository object) a few times a second, and right after each of its own writes. Clients hear
of it the way their protocol version says: a `subscriptions/listen` stream (2026-07-28,
through the SDK's subscription bus) or a `resources/subscribe` before that (a notification on
the client's connection).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
from mcp.server.session import ServerSession
from mcp.server.subscriptions import ResourceUpdated, SubscriptionBus

from bot.memfs import refs

log = logging.getLogger("memrepo.mcp")

POLL_SECONDS = 0.25


def _connection_key(session: ServerSession) -> object:
    """A session object is made per request; the connection behind it is the client."""
    return getattr(session, "_connection", session)


class HeadWatcher:
    """Announces `uri` as updated to subscribed clients each time HEAD of `root` moves."""

    def __init__(self, root: Path, uri: str, bus: SubscriptionBus, *, interval: float = POLL_SECONDS) -> None:
        self.root = root
        self.uri = uri
        self.bus = bus
        self.interval = interval
        self.head = refs.resolve(root)
        self.announced = 0
        self._sessions: dict[object, ServerSession] = {}
        self._lock = anyio.Lock()

    # ------------------------------------------------------- resources/subscribe (before 2026-07-28)
    def subscribe(self, session: ServerSession) -> None:
        self._sessions[_connection_key(session)] = session

    def unsubscribe(self, session: ServerSession) -> None:
        self._sessions.pop(_connection_key(session), None)

    @property
    def subscribers(self) -> int:
        return len(self._sessions)

    # ------------------------------------------------------------------ watching
    async def check(self) -> bool:
        """Announce a HEAD move since the last check; whether there was one."""
        async with self._lock:
            head = refs.resolve(self.root)
            if head == self.head:
                return False
            log.info("memory HEAD moved from %s to %s", (self.head or "none")[:12], (head or "none")[:12])
            self.head = head
            await self._announce()
            return True

    async def run(self) -> None:
        """Check for ever (until cancelled); a failed check is logged, never fatal."""
        while True:
            try:
                await self.check()
            except Exception:  # a clone being rewritten, an unreadable ref: try again next time
                log.exception("reading HEAD of %s", self.root)
            await anyio.sleep(self.interval)

    async def _announce(self) -> None:
        self.announced += 1
        await self.bus.publish(ResourceUpdated(uri=self.uri))
        for key, session in list(self._sessions.items()):
            try:
                await session.send_resource_updated(self.uri)
            except Exception as exc:  # the client went away without unsubscribing
                log.debug("dropping a subscriber: %s", _describe(exc))
                self._sessions.pop(key, None)


def _describe(exc: Any) -> str:
    return f"{type(exc).__name__}: {exc}"
