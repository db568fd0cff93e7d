"""Letta Code's transcripts as memrepo messages: ids, rows and conversations, as pure functions.

Letta Code (0.32) keeps each conversation of each agent at
`<root>/<agent>/<conversation>/transcript.jsonl`, `<root>` being $LETTA_TRANSCRIPT_ROOT or
`~/.letta/transcripts`, with its reflection bookkeeping in `state.json` beside it (memrepo
neither reads nor writes that file). The folder names are Letta's ids with every character
outside `[A-Za-z0-9._-]` made `_`. At the end of each turn Letta appends the turn's rows, one
JSON object a line:

    {"kind": "user" | "assistant" | "reasoning", "text", "captured_at", "source_line_id", "source_message_id"}
    {"kind": "tool_call", "name", "argsText", "resultText", "resultOk", "captured_at", "source_line_id"}
    {"kind": "error", "text", "captured_at", "source_line_id"}

`source_message_id` is Letta's message id (`message-<uuid>`), there when Letta knows it;
`source_line_id` is the row's own id in Letta's transcript (the message id, a client id such
as `user-<otid>`, a tool call's id, or `assistant:<message id>` when a reasoning row and an
assistant row share one message id). Each row becomes memrepo messages so:

    user        -> user (source user)
    assistant   -> assistant (source agent)
    reasoning   -> reasoning (source agent)
    tool_call   -> tool_call `<name>(<argsText>)` (source agent), then its result, if any, as
                   tool_result from `tool:<name>`, as memrepo's own agents record a tool's output
                   (untrusted unless the memory's trusted_sources lists it); `Error: ` before a
                   failed result, as Letta reads it
    error       -> skipped: Letta Code's own errors (a failed request), not the conversation
    other kinds -> skipped and counted (a later Letta may write kinds this one does not know)

A row without text is skipped and counted; a row seen before (same `source_line_id`) too.

Ids. Agent and conversation ids are the folder names; a message's id is Letta's id for it (its
message id, else its row id); the second and later memrepo messages of one Letta id (the
assistant text after the reasoning of the same Letta message, a tool call's result) get
`.2`, `.3`, ... after it, in the order of the transcript, which Letta only appends to. Letta's
ids already meet memrepo's id rule (`bot.contracts.check_id`); one that does not (one starting
with `x.`, too) is kept reversibly as `x.` followed by its UTF-8 bytes, letters, digits and
`-` as they are and every other byte as `_` and two hex digits (`assistant:message-1` is
`x.assistant_3Amessage-1`). `to_letta_id` undoes it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bot.contracts import ID_LIMITS, ID_PATTERN
from bot.errors import MemrepoError
from bot.transcript import texts
from bot.transcript.incremental import Reading, Said, read_lines
from bot.transcript.model import Message, build, canonical_time, check_source

LETTA_ID_TOO_LONG = "Letta's {field} {value!a} is longer than the {limit} characters memrepo keeps"
LETTA_ID_TAKEN = "message id {message_id} is already an earlier message's in this conversation"

TRANSCRIPT = "transcript.jsonl"
ROOT_ENV = "LETTA_TRANSCRIPT_ROOT"
ESCAPED = "x."
SPOKEN = {"user": ("user", "user"), "assistant": ("assistant", "agent"), "reasoning": ("reasoning", "agent")}
ERROR = "error"
EMPTY = "empty"
REPEATED = "repeated"
NO_KIND = "no kind"
UNKNOWN = "unknown:"  # + the row's kind
_ESCAPE = re.compile(rb"[^A-Za-z0-9-]")
_ESCAPE_CODE = re.compile(rb"_([0-9A-F]{2})")


# ------------------------------------------------------------------------------- ids

def to_memrepo_id(value: str, field_name: str) -> str:
    """Letta's id as memrepo keeps it: as it is when memrepo's id rule takes it (and it neither
    starts with the escape mark nor ends with '.', which a part number would double), else
    escaped; an id too long for memrepo even so is refused."""
    limit = ID_LIMITS[field_name]
    plain = ID_PATTERN.fullmatch(value) and ".." not in value and not value.endswith(".")
    if plain and not value.startswith(ESCAPED) and len(value) <= limit:
        return value
    raw = value.encode("utf-8", "surrogatepass")
    escaped = ESCAPED + _ESCAPE.sub(lambda m: f"_{m.group()[0]:02X}".encode(), raw).decode("ascii")
    if len(escaped) > limit:
        raise MemrepoError(LETTA_ID_TOO_LONG.format(field=field_name, value=value, limit=limit))
    return escaped


def to_letta_id(value: str) -> str:
    """The Letta id a memrepo id stands for (`to_memrepo_id` undone); a part number (`.2`) is
    not part of it and stays."""
    if not value.startswith(ESCAPED):
        return value
    body, dot, part = value[len(ESCAPED):].partition(".")
    raw = _ESCAPE_CODE.sub(lambda m: bytes([int(m.group(1), 16)]), body.encode("ascii"))
    return raw.decode("utf-8", "surrogatepass") + dot + part


def part_id(record: str, part: int) -> str:
    """The memrepo id of the `part`-th message (from 1) made from Letta's id `record`."""
    base = to_memrepo_id(record, "message_id")
    return base if part == 1 else f"{base}.{part}"


# ------------------------------------------------------------------------------ rows

@dataclass(frozen=True)
class Row:
    """A Letta row to import: its row id, Letta's id for its message, its time and messages."""

    line_id: str
    record: str
    captured_at: str
    said: tuple[Said, ...]


def read_row(row: object) -> Row | str:
    """A row of transcript.jsonl as memrepo messages, or why it is skipped (ERROR, EMPTY,
    NO_KIND or UNKNOWN + its kind); a row Letta would not write is a MemrepoError saying what
    is wrong."""
    if not isinstance(row, Mapping):
        raise MemrepoError(texts.IMPORT_ROW_NOT_OBJECT.format(kind=type(row).__name__))
    kind = row.get("kind")
    if kind == ERROR:
        return ERROR
    if not isinstance(kind, str):
        return NO_KIND
    if kind not in (*SPOKEN, "tool_call"):
        return UNKNOWN + kind
    line_id = _text(row, "source_line_id")
    if not line_id:
        raise MemrepoError(texts.IMPORT_FIELD_MISSING.format(field="source_line_id"))
    message_id = _text(row, "source_message_id")
    said = _spoken(row, kind) if kind in SPOKEN else _tool(row)
    if not said:
        return EMPTY
    try:
        at = canonical_time(row.get("captured_at"), "captured_at")
    except MemrepoError as exc:
        raise MemrepoError(texts.IMPORT_WHERE.format(where="captured_at", problem=exc)) from None
    return Row(line_id, message_id or line_id, at, said)


def _text(row: Mapping[str, object], key: str) -> str:
    """A text field ("" when absent or null); any other value is an error naming the field."""
    value = row.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MemrepoError(f"{key} must be text, found {type(value).__name__}")
    return value


def _spoken(row: Mapping[str, object], kind: str) -> tuple[Said, ...]:
    text = _text(row, "text")
    memrepo_kind, source = SPOKEN[kind]
    return (Said(memrepo_kind, source, text),) if text.strip() else ()


def _tool(row: Mapping[str, object]) -> tuple[Said, ...]:
    """A tool call and its result; the result is the tool's, so untrusted by default."""
    name = _text(row, "name") or "unknown"
    try:
        source = check_source(f"tool:{name}")
    except MemrepoError:
        raise MemrepoError(texts.IMPORT_TOOL_NAME_BAD.format(name=name)) from None
    call = Said("tool_call", "agent", f"{name}({_text(row, 'argsText')})")
    result = _text(row, "resultText")
    if row.get("resultOk") is False and result.strip() and not result.lower().startswith("error"):
        result = f"Error: {result}"
    return (call, Said("tool_result", source, result)) if result.strip() else (call,)


# ---------------------------------------------------------------------- conversations

def read_conversation(agent_id: str, conversation_id: str, lines: Sequence[bytes], imported_at: str,
                      start: int = 0) -> Reading:
    """The memrepo messages of a conversation's complete lines. Every line is read, since ids
    are numbered from the first; only lines from byte `start` on (the part not imported yet)
    give messages, skipped rows and problems."""
    ids = _Ids()
    return read_lines(lines, start, lambda row, _new: _row_messages(agent_id, conversation_id, row, ids, imported_at))


@dataclass
class _Ids:
    """The ids a conversation gave so far: Letta's row ids, the messages made of each Letta id,
    and memrepo's ids (no two messages may share one)."""

    rows: set[str] = field(default_factory=set)
    parts: Counter[str] = field(default_factory=Counter)
    taken: set[str] = field(default_factory=set)

    def give(self, record: str) -> str:
        self.parts[record] += 1
        message_id = part_id(record, self.parts[record])
        if message_id in self.taken:
            raise MemrepoError(LETTA_ID_TAKEN.format(message_id=message_id))
        self.taken.add(message_id)
        return message_id


def _row_messages(agent_id: str, conversation_id: str, value: object, ids: _Ids,
                  imported_at: str) -> list[Message] | str:
    """The messages of one row, or why it is skipped (a row seen before is REPEATED)."""
    row = read_row(value)
    if isinstance(row, str):
        return row
    if row.line_id in ids.rows:
        return REPEATED
    ids.rows.add(row.line_id)
    return [build(agent_id, conversation_id, said.kind, said.text, source=said.source,
                  captured_at=row.captured_at, message_id=ids.give(row.record), imported_at=imported_at)
            for said in row.said]
