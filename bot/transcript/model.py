"""Transcript rows: their fields, their validation and their ids, as pure functions.

A row is one JSON object on one line of `<agent>/<conversation>.jsonl`:

    message_id       "m_" + 26 Crockford base32 characters (48-bit milliseconds, 80 random
                     bits: time-ordered, unique across processes without a lock); imported
                     rows keep their own id if it is a safe path component
    agent_id         the agent (a safe path component, the same rule as agent ids elsewhere)
    conversation_id  the conversation (a safe path component)
    kind             user | assistant | reasoning | tool_call | tool_result | system | compaction
    source           user | agent | human | tool:<name> | external:<uri>
    captured_at      when the store wrote the row, by its own clock (UTC, ISO 8601 with Z,
                     microseconds); `import` keeps the file's time instead
    stated_at        optional: the time the caller said the message has (`at=`, `--time`);
                     never used for ordering or filtering, only carried
    imported_at      optional: when `import` wrote the row (its captured_at is the file's)
    text             the message, non-empty text without NUL characters
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from bot import dates
from bot.contracts import check_id
from bot.errors import MemrepoError

# Rows, the logs and the index; memrepo's own rows imported.
TRANSCRIPT_KIND_BAD = "kind {value!r} is not one of: {kinds}"
TRANSCRIPT_SOURCE_BAD = (
    "source {value!a} is not valid; use one of: {sources} (a tool name is ASCII letters, digits, "
    "'.', '_', '/' or '-'; a URI has no spaces)"
)
TRANSCRIPT_TEXT_LONG = "text has {size:,} characters, over the limit of {limit:,} for one transcript row"
TRANSCRIPT_TEXT_SURROGATE = "text is not valid Unicode (a lone surrogate at character {offset})"

KINDS = ("user", "assistant", "reasoning", "tool_call", "tool_result", "system", "compaction")
SOURCES = ("user", "agent", "human", "tool:<name>", "external:<uri>")

# Who usually says each kind of message, when the caller does not say.
DEFAULT_SOURCE = {
    "user": "user", "assistant": "agent", "reasoning": "agent", "tool_call": "agent",
    "compaction": "agent", "system": "human",
}

MAX_TEXT_CHARS = 4_000_000
# Matched with fullmatch, as bot.contracts' ids are: `$` would also match before a trailing newline.
_TOOL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,127}")
_URI = re.compile(r"[^\s\x00-\x1f\x7f]{1,2048}")
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_CANONICAL_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")
ROW_KEYS = ("message_id", "agent_id", "conversation_id", "kind", "source", "captured_at",
            "stated_at", "imported_at", "text")
_REQUIRED = ("agent_id", "conversation_id", "kind", "text")


@dataclass(frozen=True)
class Message:
    """One transcript row."""

    message_id: str
    agent_id: str
    conversation_id: str
    kind: str
    source: str
    captured_at: str
    text: str
    stated_at: str | None = None
    imported_at: str | None = None

    def to_row(self) -> dict[str, str]:
        """The JSON object of the log line: fixed key order, optional times only when set."""
        data = asdict(self)
        return {key: data[key] for key in ROW_KEYS if data[key] is not None}


class MessageNotFoundError(MemrepoError):
    """`read(after=...)` named a message id that the conversation does not have."""


# ---------------------------------------------------------------------------- validation

def check_kind(value: object) -> str:
    if value not in KINDS:
        raise MemrepoError(TRANSCRIPT_KIND_BAD.format(value=value, kinds=", ".join(KINDS)))
    return value  # type: ignore[return-value]


def check_source(value: object) -> str:
    """user, agent, human, tool:<name> or external:<uri>."""
    if isinstance(value, str):
        if value in ("user", "agent", "human"):
            return value
        family, _, rest = value.partition(":")
        if family == "tool" and _TOOL.fullmatch(rest):
            return value
        if family == "external" and _URI.fullmatch(rest):
            return value
    raise MemrepoError(TRANSCRIPT_SOURCE_BAD.format(value=value, sources=", ".join(SOURCES)))


def default_source(kind: str) -> str:
    source = DEFAULT_SOURCE.get(kind)
    if source is None:
        raise MemrepoError(f"a {kind} message needs a source: tool:<name>, the tool that produced it")
    return source


def check_text(value: object) -> str:
    if not isinstance(value, str):
        raise MemrepoError(f"text must be a string, found {type(value).__name__}")
    if not value.strip():
        raise MemrepoError("text is empty; a transcript row needs the message's text")
    if "\x00" in value:
        raise MemrepoError("text contains a NUL character; transcripts hold text, not binary data")
    if len(value) > MAX_TEXT_CHARS:
        raise MemrepoError(TRANSCRIPT_TEXT_LONG.format(size=len(value), limit=MAX_TEXT_CHARS))
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise MemrepoError(TRANSCRIPT_TEXT_SURROGATE.format(offset=exc.start)) from None
    return value


# ----------------------------------------------------------------------------- times

def format_time(moment: datetime) -> str:
    """UTC, ISO 8601, microseconds, Z: sorts as text in time order."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: object, *, what: str = "time") -> datetime:
    """A moment in UTC from the forms `bot.dates` reads (a time without a zone is UTC)."""
    return dates.parse_when(text, what=what)


def parse_time_bound(text: object, *, what: str = "time") -> tuple[datetime, bool]:
    """(moment, date_only), as `bot.dates.parse_when_bound`."""
    return dates.parse_when_bound(text, what=what)


def time_range(since: object | None, until: object | None) -> tuple[int | None, int | None]:
    """[since, until) in microseconds since the epoch, by `bot.dates.parse_range`'s rule (a
    date-only `until` ends with its day)."""
    start, end = dates.search_range(since, until)
    return (None if start is None else to_micros(start)), (None if end is None else to_micros(end))


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_micros(moment: datetime) -> int:
    delta = moment - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def canonical_time(value: object, what: str) -> str:
    """A time as the store writes it (a stored value is returned as it is, cheaply)."""
    if isinstance(value, str) and _CANONICAL_TIME.fullmatch(value):
        try:
            datetime.fromisoformat(value)
            return value
        except ValueError:
            pass
    return format_time(parse_time(value, what=what))


def micros_of(stamp: str) -> int:
    """Microseconds of a stored captured_at."""
    return to_micros(datetime.fromisoformat(stamp))


# ------------------------------------------------------------------------------- ids

class IdFactory:
    """ULID-like ids: monotonic within a process (same millisecond -> random part + 1)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = -1
        self._last_rand = 0

    def new(self, ms: int | None = None) -> str:
        with self._lock:
            now = int(time.time() * 1000) if ms is None else ms
            if now <= self._last_ms:
                now = self._last_ms
                rand = (self._last_rand + 1) & ((1 << 80) - 1)
            else:
                rand = secrets.randbits(80)
            self._last_ms, self._last_rand = now, rand
        value = (now << 80) | rand
        chars = []
        for _ in range(26):
            chars.append(_CROCKFORD[value & 31])
            value >>= 5
        return "m_" + "".join(reversed(chars))


new_id = IdFactory().new

IMPORTED_PREFIX = "i_"


def imported_id(row: Mapping[str, object], position: int) -> str:
    """The id of an imported row that names none: the same row at the same place always gets
    the same one, so importing a file again, or a longer copy of it, adds no row twice (a new
    random id each time did). `position` is how many rows of the same agent and conversation
    came before it in the input; it keeps apart a sentence said twice. Made from the row as
    written (every key, the agent and conversation among them), whatever the file is called."""
    canonical = json.dumps([position, {str(k): v for k, v in row.items() if k != "message_id"}],
                           sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return IMPORTED_PREFIX + hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:32]


# ---------------------------------------------------------------------------- building

def build(agent_id: object, conversation_id: object, kind: object, text: object, *,
          source: object | None, captured_at: str, message_id: str | None = None,
          stated_at: object | None = None, imported_at: str | None = None) -> Message:
    """A validated Message (raises MemrepoError naming the first bad field)."""
    kind = check_kind(kind)
    return Message(
        message_id=check_id(message_id, "message_id") if message_id is not None else new_id(),
        agent_id=check_id(agent_id, "agent_id"),
        conversation_id=check_id(conversation_id, "conversation_id"),
        kind=kind,
        source=check_source(source) if source is not None else default_source(kind),
        captured_at=captured_at,
        text=check_text(text),
        stated_at=canonical_time(stated_at, "time") if stated_at is not None else None,
        imported_at=imported_at,
    )


def from_row(row: object, *, imported_at: str | None = None) -> Message:
    """A Message from a JSON object (a log line or a row to import), validated.

    Imports (`imported_at` given) may leave out message_id, source and captured_at; a log
    line has them all."""
    if not isinstance(row, Mapping):
        raise MemrepoError(f"a row must be a JSON object, found {type(row).__name__}")
    unknown = sorted(set(row) - set(ROW_KEYS))
    if unknown:
        raise MemrepoError("not a field of a row: {keys} (the fields are {allowed})".format(
            keys=", ".join(unknown), allowed=", ".join(ROW_KEYS)))
    required = _REQUIRED if imported_at is not None else (*_REQUIRED, "message_id", "source", "captured_at")
    missing = [key for key in required if row.get(key) is None]
    if missing:
        raise MemrepoError("required but missing: {keys}".format(keys=", ".join(missing)))
    captured = row.get("captured_at")
    captured_at = canonical_time(captured, "captured_at") if captured is not None else imported_at
    stored_import = row.get("imported_at")
    if imported_at is None and stored_import is not None:
        imported_at = canonical_time(stored_import, "imported_at")
    return build(row["agent_id"], row["conversation_id"], row["kind"], row["text"],
                 source=row.get("source"), captured_at=captured_at or "", message_id=row.get("message_id"),
                 stated_at=row.get("stated_at"), imported_at=imported_at)
