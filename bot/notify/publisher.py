"""Publishing head events on Redis: the receiver on a push to `main`, the integrator after a
merge. Each event (bot/notify/events.py) goes out on its repository's channel and is kept as
the repository's newest head (`last_head`), so a follower that reconnects can tell whether it
missed a move. `subscribe` reads one repository's channel directly (tools and tests; agents
follow through the receiver's event stream, bot/notify/follower.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

from redis import Redis

from bot.errors import MemrepoError
from bot.notify.events import HeadEvent, channel
from bot.redis_keys import last_head_key

LAST_TTL = 30 * 24 * 3600

log = logging.getLogger("memrepo.notify")


# Publish unless the newest event already announced this sha: GitHub sends a push event for
# every merge the integrator makes, so each merge would otherwise reach agents twice. A merge
# event still follows a push event for the same sha, because it says which pull request.
_PUBLISH = """
local last = redis.call('GET', KEYS[1])
if last then
  local ok, seen = pcall(cjson.decode, last)
  if ok and type(seen) == 'table' and seen['sha'] == ARGV[2] and (ARGV[3] == 'push' or seen['cause'] == 'merge') then
    return -1
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
return redis.call('PUBLISH', KEYS[2], ARGV[1])
"""


def publish_head(redis: Redis, event: HeadEvent) -> int | None:
    """Publish `event` and remember it as the newest of its repository; the number of
    subscribers that got it, or None when the newest event already announced its sha."""
    text = event.to_json()
    receivers = redis.eval(_PUBLISH, 2, last_head_key(event.repo), channel(event.repo),
                           text, event.sha, event.cause, LAST_TTL)
    if int(receivers) < 0:
        log.info("head of %s at %s already announced; not again (%s)", event.repo, event.sha, event.cause)
        return None
    log.info("head of %s moved to %s (%s)", event.repo, event.sha, event.cause)
    return int(receivers)


def last_head(redis: Redis, repo: str) -> HeadEvent | None:
    """The newest event published for `repo`, or None (none yet, or an unreadable one)."""
    text = redis.get(last_head_key(repo))
    if text is None:
        return None
    try:
        return HeadEvent.from_json(text)
    except MemrepoError as exc:
        log.warning("ignoring the stored head of %s: %s", repo, exc)
        return None


class Subscription:
    """Head events of one repository, from the moment this object exists (it subscribes at
    once, so nothing published after `subscribe` returns is missed). Iterate for a blocking
    stream, or `get(timeout)` to wake up regularly (heartbeats)."""

    def __init__(self, redis: Redis, repo: str) -> None:
        self.repo = repo
        self.channel = channel(repo)
        self._pubsub = redis.pubsub(ignore_subscribe_messages=True)
        self._pubsub.subscribe(self.channel)

    def get(self, timeout: float) -> HeadEvent | None:
        """The next event, or None after `timeout` seconds without one. Malformed messages on
        the channel are logged and skipped. Raises redis' ConnectionError when Redis is gone."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            message = self._pubsub.get_message(timeout=remaining)
            if message is None or message.get("type") != "message":
                continue
            try:
                return HeadEvent.from_json(message["data"])
            except MemrepoError as exc:
                log.warning("ignoring a message on %s: %s", self.channel, exc)

    def __iter__(self) -> Iterator[HeadEvent]:
        while True:
            event = self.get(timeout=60.0)
            if event is not None:
                yield event

    def close(self) -> None:
        try:
            self._pubsub.close()
        except Exception:  # closing a connection to a Redis that is gone must not raise
            log.debug("closing the subscription to %s failed", self.channel, exc_info=True)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def subscribe(redis: Redis, repo: str) -> Subscription:
    """`for event in subscribe(redis, "owner/name"): ...` (close it, or use `with`, when done)."""
    return Subscription(redis, repo)
