"""The cursor file (docs/architecture.md §5.4): how far the dreamer has consumed one conversation.

`.memrepo/cursors/<agent-id>/<conversation-id>.json` holds
`{"through_message_id", "through_captured_at", "dream_id", "updated_at"}`. It changes only in
a dream's own commit, so it reaches `main` exactly when the dream is merged. Pure: parsing
and rendering bytes; reading it at a commit is the runner's business.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from bot.bounded_json import TooDeepError, loads_bounded
from bot.contracts import check_id, is_dream_id
from bot.errors import MemrepoError
from bot.texts import noun
from bot.transcript.model import parse_time

# What is wrong with a cursor file (the {problem} of DREAM_CURSOR_BAD).
DREAM_CURSOR_TIME_NOT_TEXT = "{key} must be an ISO 8601 time, found {found}"

CURSOR_DIR = ".memrepo/cursors"
KEYS = ("through_message_id", "through_captured_at", "dream_id", "updated_at")


class CursorError(MemrepoError):
    """A cursor file that is not what the contract says."""


@dataclass(frozen=True)
class Cursor:
    through_message_id: str
    through_captured_at: str
    dream_id: str | None
    updated_at: str


def cursor_path(agent_id: str, conversation_id: str) -> str:
    """The file's path in the memory repository (ids checked: they become path components)."""
    check_id(agent_id, "agent_id")
    check_id(conversation_id, "conversation_id")
    return f"{CURSOR_DIR}/{agent_id}/{conversation_id}.json"


def render_cursor(cursor: Cursor) -> bytes:
    """Stable text (fixed key order, two-space indent, final newline) so diffs stay small."""
    data = {key: getattr(cursor, key) for key in KEYS}
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def parse_cursor(data: bytes, path: str = "cursor") -> Cursor:
    """A Cursor from the file's bytes, or CursorError naming what is wrong."""
    def bad(problem: str) -> CursorError:
        return CursorError(f"the dream cursor {path} is not valid: {problem}")

    try:
        raw = loads_bounded(data.decode("utf-8"), what="the cursor")
    except TooDeepError as exc:
        raise bad(str(exc)) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise bad(f"not JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise bad(f"expected a JSON object, found {type(raw).__name__}")
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise bad("unknown {key} {keys}".format(key=noun(len(unknown), "key"), keys=", ".join(unknown)))
    missing = [key for key in KEYS if key not in raw]
    if missing:
        raise bad("missing {key} {keys}".format(key=noun(len(missing), "key"), keys=", ".join(missing)))
    message_id = raw["through_message_id"]
    try:
        check_id(message_id, "message_id")
    except MemrepoError as exc:
        raise bad(f"through_message_id: {exc}") from None
    for key in ("through_captured_at", "updated_at"):
        value = raw[key]
        if not isinstance(value, str):
            raise bad(DREAM_CURSOR_TIME_NOT_TEXT.format(key=key, found=type(value).__name__))
        try:
            parse_time(value, what=key)
        except MemrepoError:
            raise bad(f"{key} {value!r} is not an ISO 8601 time") from None
    dream_id = raw["dream_id"]
    if dream_id is not None and not is_dream_id(dream_id):
        raise bad(f"dream_id {dream_id!r} is not a dream id")
    return Cursor(message_id, raw["through_captured_at"], dream_id, raw["updated_at"])
