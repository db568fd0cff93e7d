"""Head events: "memory's `main` moved", published on Redis pub/sub for every running agent.

The contract is docs/architecture.md §5.6: `{"repo", "sha", "before", "cause": "merge"|"push", "pr",
"dream_id", "at"}` on channel `memrepo:head:<owner>/<name>`. Publishers (the receiver on a
push, the integrator after a merge) and subscribers (the SSE endpoint, agents) only meet here,
so the event is validated on both sides. The newest event per repository is also kept in a
key, so a subscriber that reconnects can tell whether it missed a move.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from redis import Redis

from bot import messages
from bot.bounded_json import TooDeepError, loads_bounded
from bot.contracts import is_dream_id, is_object_name
from bot.errors import MemrepoError
from bot.redis_keys import head_channel, last_head_key
from bot.settings import is_repo_name

LAST_TTL = 30 * 24 * 3600
CAUSES = ("merge", "push")
KEYS = ("repo", "sha", "before", "cause", "pr", "dream_id", "at")

log = logging.getLogger("memrepo.notify")


def now_iso() -> str:
    """The current UTC time as the contract writes it (ISO 8601, seconds, `Z`)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def channel(repo: str) -> str:
    """The pub/sub channel of `repo` (lower-cased: GitHub names ignore case; bot/redis_keys.py)."""
    return head_channel(repo)


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


@dataclass(frozen=True)
class HeadEvent:
    """`main` of `repo` moved from `before` (None: it did not exist) to `sha`, by a merge of
    pull request `pr` (and dream `dream_id`, if it was one) or by a push."""

    repo: str
    sha: str
    before: str | None
    cause: str
    pr: int | None = None
    dream_id: str | None = None
    at: str = field(default_factory=now_iso)

    def __post_init__(self) -> None:
        problem = self._problem()
        if problem:
            raise MemrepoError(messages.HEAD_EVENT_BAD.format(problem=problem))

    def _problem(self) -> str | None:
        if not is_repo_name(self.repo):
            return messages.HEAD_EVENT_REPO.format(value=self.repo)
        for name in ("sha", "before"):
            value = getattr(self, name)
            if (value is not None or name == "sha") and not is_object_name(value):
                return messages.HEAD_EVENT_SHA.format(name=name, value=value)
        if self.cause not in CAUSES:
            return messages.HEAD_EVENT_CAUSE.format(value=self.cause)
        if self.pr is not None and (not isinstance(self.pr, int) or isinstance(self.pr, bool) or self.pr < 1):
            return messages.HEAD_EVENT_PR.format(value=self.pr)
        if self.cause == "merge" and self.pr is None:
            return messages.HEAD_EVENT_MERGE_PR
        if self.dream_id is not None and not is_dream_id(self.dream_id):
            return messages.HEAD_EVENT_DREAM.format(value=self.dream_id)
        if not isinstance(self.at, str):
            return messages.HEAD_EVENT_AT.format(value=self.at)
        try:
            moment = datetime.fromisoformat(self.at)
        except ValueError:
            return messages.HEAD_EVENT_AT.format(value=self.at)
        if moment.tzinfo is None:
            return messages.HEAD_EVENT_AT.format(value=self.at)
        return None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HeadEvent:
        """A validated event; keys beyond the contract are ignored (a newer publisher may add
        some), missing ones are an error."""
        if not isinstance(data, Mapping):
            raise MemrepoError(messages.HEAD_EVENT_BAD.format(problem=messages.HEAD_EVENT_NOT_OBJECT.format(
                kind=_kind(data))))
        missing = [key for key in KEYS if key not in data]
        if missing:
            raise MemrepoError(messages.HEAD_EVENT_BAD.format(problem=messages.HEAD_EVENT_MISSING.format(
                keys=", ".join(missing))))
        return cls(**{key: data[key] for key in KEYS})

    @classmethod
    def from_json(cls, text: str | bytes) -> HeadEvent:
        try:
            data = loads_bounded(text, what="the event")
        except TooDeepError as exc:
            raise MemrepoError(messages.HEAD_EVENT_BAD.format(problem=exc)) from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise MemrepoError(messages.HEAD_EVENT_BAD.format(problem=messages.HEAD_EVENT_NOT_JSON.format(
                error=exc))) from None
        return cls.from_dict(data)


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
