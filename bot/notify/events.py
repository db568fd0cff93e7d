"""Head events: "memory's `main` moved", the one contract publishers and followers share.

The contract is docs/architecture.md §5.6: `{"repo", "sha", "before", "cause": "merge"|"push", "pr",
"dream_id", "at"}` on channel `memrepo:head:<owner>/<name>`. The publisher's side (publisher.py:
the receiver on a push, the integrator after a merge) and the followers' (the receiver's event
stream, the agents' follower.py) only meet here, so the event is validated on both sides.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot.bounded_json import TooDeepError, loads_bounded
from bot.contracts import is_dream_id, is_object_name
from bot.errors import MemrepoError
from bot.redis_keys import head_channel
from bot.settings import is_repo_name

# A head event that does not read (events.py, the contract both sides import).
HEAD_EVENT_BAD = "not a valid head event: {problem}"
HEAD_EVENT_SHA = "'{name}' must be a full commit sha (40 or 64 lower-case hex digits), found {value!r}"
HEAD_EVENT_DREAM = "'dream_id' must be a dream id (YYYYMMDDTHHMMSSZ-<8 hex>) or null, found {value!r}"
HEAD_EVENT_AT = "'at' must be an ISO 8601 time with a time zone, found {value!r}"

CAUSES = ("merge", "push")
KEYS = ("repo", "sha", "before", "cause", "pr", "dream_id", "at")


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
            raise MemrepoError(HEAD_EVENT_BAD.format(problem=problem))

    def _problem(self) -> str | None:
        if not is_repo_name(self.repo):
            return f"'repo' must be owner/name, found {self.repo!r}"
        for name in ("sha", "before"):
            value = getattr(self, name)
            if (value is not None or name == "sha") and not is_object_name(value):
                return HEAD_EVENT_SHA.format(name=name, value=value)
        if self.cause not in CAUSES:
            return f"'cause' must be merge or push, found {self.cause!r}"
        if self.pr is not None and (not isinstance(self.pr, int) or isinstance(self.pr, bool) or self.pr < 1):
            return f"'pr' must be a pull request number or null, found {self.pr!r}"
        if self.cause == "merge" and self.pr is None:
            return "a merge names its pull request: 'pr' must not be null when 'cause' is merge"
        if self.dream_id is not None and not is_dream_id(self.dream_id):
            return HEAD_EVENT_DREAM.format(value=self.dream_id)
        if not isinstance(self.at, str):
            return HEAD_EVENT_AT.format(value=self.at)
        try:
            moment = datetime.fromisoformat(self.at)
        except ValueError:
            return HEAD_EVENT_AT.format(value=self.at)
        if moment.tzinfo is None:
            return HEAD_EVENT_AT.format(value=self.at)
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
            raise MemrepoError(HEAD_EVENT_BAD.format(problem=f"expected a JSON object, found {_kind(data)}"))
        missing = [key for key in KEYS if key not in data]
        if missing:
            raise MemrepoError(HEAD_EVENT_BAD.format(problem="missing {keys}".format(
                keys=", ".join(missing))))
        return cls(**{key: data[key] for key in KEYS})

    @classmethod
    def from_json(cls, text: str | bytes) -> HeadEvent:
        try:
            data = loads_bounded(text, what="the event")
        except TooDeepError as exc:
            raise MemrepoError(HEAD_EVENT_BAD.format(problem=exc)) from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise MemrepoError(HEAD_EVENT_BAD.format(problem=f"not JSON ({exc})")) from None
        return cls.from_dict(data)
