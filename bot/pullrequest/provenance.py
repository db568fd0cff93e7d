"""The provenance block at the end of a dream's pull request body (docs/architecture.md §5.3), and of an
agent's edit that became a pull request.

    <!-- memrepo:provenance
    version: 1
    dream_id: ...
    ...
    -->

Machine-readable for the integrator and `memrepo why`, invisible in GitHub's rendering. An
agent's edit has the same block with `dream_id: null` and trigger `agent-edit`; its
conversation is null when the edit was made outside one (`memrepo tool`), and its transcript
null when the turn recorded no messages. A dream's block has neither null.
Rendering never lets the YAML contain `--` (strings holding it are double-quoted with the
second dash escaped as `\\x2d`), so no text in the block can end the HTML comment early or
fake a second block; the YAML is ASCII (other characters are escaped). Parsing looks at the
last block in the body (anything before it, even a quoted block, is ignored) and is strict
about the block's schema: a block that is present but wrong raises ProvenanceError rather
than being half-trusted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from bot.config import load_yaml
from bot.contracts import check_id, is_dream_id, is_object_name
from bot.errors import MemrepoError
from bot.transcript.model import Message, parse_time

# What is wrong with a provenance block (the {problem} of DREAM_PROVENANCE_BAD); {where} names the field.
PROVENANCE_NOT_CLOSED = "the block is not closed with -->"
PROVENANCE_TOO_SMALL = "{where} must be a whole number of at least {minimum}, found {value!r}"
PROVENANCE_BAD_DREAM_ID = "dream_id {value!r} is not a dream id (YYYYMMDDTHHMMSSZ-<8 hex>) or null"
PROVENANCE_EDIT_TRIGGER = "trigger must be {trigger} when dream_id is null, found {value!r}"
PROVENANCE_BAD_TRIGGER = "trigger must be one of {triggers}, found {value!r}"
PROVENANCE_IDS_NOT_LIST = "{where}.message_ids must be a list, found {found}"

OPENER = "<!-- memrepo:provenance"
CLOSER = "-->"
VERSION = 1
TRIGGERS = ("step-count", "compaction", "manual")
EDIT_TRIGGER = "agent-edit"  # the trigger of an agent's edit, whose dream_id is null
EDIT_STRATEGY = "memory-tool"  # what made an agent edit's change: the agent's own memory tool call
KEYS = ("version", "dream_id", "agent_id", "conversation_id", "base_commit", "trigger", "strategy", "model",
        "transcript", "changes")
OPTIONAL_KEYS = ("memory_repository",)  # the writer's own memory, when it proposes to a shared one
TRANSCRIPT_KEYS = ("first_message_id", "last_message_id", "first_at", "last_at", "count")
CHANGE_KEYS = ("path", "summary", "message_ids")
_OPENER = re.compile(re.escape(OPENER) + r"(?=\s)")


class ProvenanceError(MemrepoError):
    """A provenance block is present but does not follow the schema."""


@dataclass(frozen=True)
class TranscriptRange:
    first_message_id: str
    last_message_id: str
    first_at: str
    last_at: str
    count: int

    @property
    def text(self) -> str:
        """`<first-id>..<last-id>`, the Transcript-Range trailer's value."""
        return f"{self.first_message_id}..{self.last_message_id}"

    @classmethod
    def of(cls, window: Sequence[Message]) -> TranscriptRange:
        """The range of a non-empty window of messages, first to last."""
        return cls(window[0].message_id, window[-1].message_id, window[0].captured_at, window[-1].captured_at,
                   len(window))


@dataclass(frozen=True)
class Change:
    path: str
    summary: str
    message_ids: tuple[str, ...]


@dataclass(frozen=True)
class Provenance:
    """A dream's provenance, or an agent edit's (`dream_id` None; `conversation_id` and
    `transcript` may be None there)."""

    dream_id: str | None
    agent_id: str
    conversation_id: str | None
    base_commit: str
    trigger: str
    strategy: str
    model: str | None
    transcript: TranscriptRange | None
    changes: tuple[Change, ...]
    version: int = VERSION
    memory_repository: str | None = None  # the agent's own memory (URL), when the change is to a shared one

    @property
    def is_dream(self) -> bool:
        return self.dream_id is not None

    def as_data(self) -> dict[str, Any]:
        """Plain data in the contract's key order."""
        t = self.transcript
        transcript = None if t is None else {
            "first_message_id": t.first_message_id, "last_message_id": t.last_message_id, "first_at": t.first_at,
            "last_at": t.last_at, "count": t.count}
        data: dict[str, Any] = {
            "version": self.version,
            "dream_id": self.dream_id,
            "agent_id": self.agent_id,
            "conversation_id": self.conversation_id,
            "base_commit": self.base_commit,
            "trigger": self.trigger,
            "strategy": self.strategy,
            "model": self.model,
            "transcript": transcript,
            "changes": [{"path": c.path, "summary": c.summary, "message_ids": list(c.message_ids)}
                        for c in self.changes],
        }
        if self.memory_repository is not None:
            data["memory_repository"] = self.memory_repository
        return data


# ------------------------------------------------------------------------------ render
class _Dumper(yaml.SafeDumper):
    """Strings containing `--` are double-quoted, so their dashes can be escaped afterwards."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if "--" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def render_provenance(provenance: Provenance) -> str:
    """The block, ending with `-->` and a newline; `parse_provenance` reads it back exactly."""
    check_data(provenance.as_data())
    # ASCII only: YAML folds some Unicode line breaks (U+0085, U+2028) in plain scalars, so any
    # non-ASCII character is written as an escape inside double quotes, which reads back exactly.
    text = yaml.dump(provenance.as_data(), Dumper=_Dumper, sort_keys=False, allow_unicode=False,
                     default_flow_style=False, width=1 << 30)
    # Every `--` left in the text is inside a double-quoted scalar, where `\x2d` is a dash.
    text = text.replace("--", "-\\x2d")
    return f"{OPENER}\n{text}{CLOSER}\n"


# ------------------------------------------------------------------------------- parse
def parse_provenance(body: str | None) -> Provenance | None:
    """The provenance of a pull request body: None when it has no block; ProvenanceError
    when the (last) block is there but is not valid YAML or breaks the schema."""
    if not body:
        return None
    starts = [m.start() for m in _OPENER.finditer(body)]
    if not starts:
        return None
    start = starts[-1] + len(OPENER)
    end = body.find(CLOSER, start)
    if end < 0:
        raise _bad(PROVENANCE_NOT_CLOSED)
    try:
        data = load_yaml(body[start:end])
    except yaml.YAMLError as exc:
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise _bad(f"not valid YAML ({problem})") from None
    return from_data(data)


def from_data(data: object) -> Provenance:
    check_data(data)
    assert isinstance(data, dict)
    t = data["transcript"]
    return Provenance(
        dream_id=data["dream_id"], agent_id=data["agent_id"], conversation_id=data["conversation_id"],
        base_commit=data["base_commit"], trigger=data["trigger"], strategy=data["strategy"], model=data["model"],
        transcript=None if t is None else TranscriptRange(
            t["first_message_id"], t["last_message_id"], t["first_at"], t["last_at"], t["count"]),
        changes=tuple(Change(c["path"], c["summary"], tuple(c["message_ids"])) for c in data["changes"]),
        version=data["version"], memory_repository=data.get("memory_repository"),
    )


def _bad(problem: str) -> ProvenanceError:
    return ProvenanceError(f"the provenance block is not valid: {problem}")


def _exact_keys(value: object, keys: tuple[str, ...], where: str, optional: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(f"{where} must be a mapping, found {type(value).__name__}")
    unknown = sorted(str(k) for k in value if k not in keys and k not in optional)
    if unknown:
        raise _bad("{where}: not a key of the block: {keys}".format(where=where, keys=", ".join(unknown)))
    missing = [k for k in keys if k not in value]
    if missing:
        raise _bad("{where}: required but missing: {keys}".format(where=where, keys=", ".join(missing)))
    return value


def _text(value: object, where: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        wording = ("{where} must be text, found {value!r}" if empty
                   else "{where} must be non-empty text, found {value!r}")
        raise _bad(wording.format(where=where, value=value)[:200])
    return value


def _id(value: object, field: str, where: str) -> str:
    try:
        return check_id(value, field)
    except MemrepoError as exc:
        raise _bad(f"{where}: {exc}") from None


def _time(value: object, where: str) -> str:
    text = _text(value, where)
    try:
        parse_time(text, what=where)
    except MemrepoError:
        raise _bad(f"{where} {text!r} is not an ISO 8601 time") from None
    return text


def _int(value: object, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _bad(PROVENANCE_TOO_SMALL.format(where=where, minimum=minimum, value=value))
    return value


def check_data(data: object) -> None:
    """Raise ProvenanceError naming the first field that breaks the schema."""
    d = _exact_keys(data, KEYS, "provenance", OPTIONAL_KEYS)
    if "memory_repository" in d:
        _text(d["memory_repository"], "memory_repository")
    if isinstance(d["version"], bool) or d["version"] != VERSION:
        raise _bad("version must be {version}, found {value!r}".format(version=VERSION, value=d["version"]))
    edit = d["dream_id"] is None  # an agent's edit: no dream, maybe no conversation or transcript
    if not edit and not is_dream_id(d["dream_id"]):
        raise _bad(PROVENANCE_BAD_DREAM_ID.format(value=d["dream_id"]))
    _id(d["agent_id"], "agent_id", "agent_id")
    if not (edit and d["conversation_id"] is None):
        _id(d["conversation_id"], "conversation_id", "conversation_id")
    if not is_object_name(d["base_commit"]):
        raise _bad("base_commit {value!r} is not a full commit id".format(value=d["base_commit"]))
    if edit and d["trigger"] != EDIT_TRIGGER:
        raise _bad(PROVENANCE_EDIT_TRIGGER.format(trigger=EDIT_TRIGGER, value=d["trigger"]))
    if not edit and d["trigger"] not in TRIGGERS:
        raise _bad(PROVENANCE_BAD_TRIGGER.format(triggers=", ".join(TRIGGERS), value=d["trigger"]))
    _text(d["strategy"], "strategy")
    if d["model"] is not None:
        _text(d["model"], "model")
    if edit and d["transcript"] is None:
        _changes(d["changes"])
        return
    t = _exact_keys(d["transcript"], TRANSCRIPT_KEYS, "transcript")
    _id(t["first_message_id"], "message_id", "transcript.first_message_id")
    _id(t["last_message_id"], "message_id", "transcript.last_message_id")
    _time(t["first_at"], "transcript.first_at")
    _time(t["last_at"], "transcript.last_at")
    _int(t["count"], "transcript.count", 1)
    _changes(d["changes"])


def _changes(changes: object) -> None:
    if not isinstance(changes, list):
        raise _bad(f"changes must be a list, found {type(changes).__name__}")
    for number, raw in enumerate(changes, 1):
        where = f"changes[{number}]"
        c = _exact_keys(raw, CHANGE_KEYS, where)
        _text(c["path"], f"{where}.path")
        _text(c["summary"], f"{where}.summary", empty=True)
        if not isinstance(c["message_ids"], list):
            raise _bad(PROVENANCE_IDS_NOT_LIST.format(where=where, found=type(c["message_ids"]).__name__))
        for message_id in c["message_ids"]:
            _id(message_id, "message_id", f"{where}.message_ids")
