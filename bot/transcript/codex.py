"""Codex CLI's session rollouts as memrepo messages, as pure functions.

Codex (0.171) writes each session to `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session
id>.jsonl` (CODEX_HOME defaults to ~/.codex) and gives its hooks that file's path as
`transcript_path`. It appends one JSON object a line: `{"timestamp", "type", "payload"}`. The
rows of the conversation are `type` `response_item`, whose payload is a Responses-API item with
its own `id`; `compacted` rows hold the summary of a compaction; the rest (`session_meta`,
`turn_context`, `event_msg`, `world_state`, token bookkeeping) is Codex's own and skipped. Each
row becomes memrepo messages so:

    message, role user, the user's text       -> user (source user)
    message, role user, Codex's own context   -> skipped: <environment_context>, AGENTS.md, ...
      (provenance not the user's)
    message, role developer or system         -> skipped: instructions and hooks' context
    message, role assistant (output_text)     -> assistant (source agent)
    reasoning (its summary text)              -> reasoning (source agent)
    function_call, custom_tool_call,          -> tool_call `<name>(<arguments>)` (source agent); a
      local_shell_call, web_search_call          namespaced tool is `<namespace>__<name>`
                                                 (an MCP server's: mcp__memrepo__memory_view)
    function_call_output, custom_tool_call_   -> tool_result from `tool:<the call's name>`, as
      output                                     memrepo's own agents record a tool's output
    compacted                                 -> compaction (source agent): the summary

Ids: the session id (the file's, and session_meta's) is the conversation's; a row's item `id`
is its first message's id (a row without one gets `<session>.<ordinal>` from the row's place),
and the second and later messages of one row get `.2`, `.3`, ... after it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass

from bot.contracts import check_id
from bot.errors import MemrepoError
from bot.transcript import texts
from bot.transcript.incremental import Reading, Said, read_lines
from bot.transcript.model import Message, build, canonical_time, check_source

CODEX_CONTENT_BAD = "payload.content must be a list of content items, found {kind}"

OWN = "own"
EMPTY = "empty"
CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
RESULTS = ("function_call_output", "custom_tool_call_output")
CALL_MARK = b'_call"'
# What Codex itself puts in the user's role before older rollouts carried a provenance.
OWN_USER_TEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<turn_aborted>")


@dataclass(frozen=True)
class Row:
    """A row to import: its id, its time and the messages it holds."""

    id: str
    captured_at: str
    said: tuple[Said, ...]


def _texts(content: object, kinds: tuple[str, ...]) -> list[str]:
    if not isinstance(content, list):
        raise MemrepoError(CODEX_CONTENT_BAD.format(kind=type(content).__name__))
    return [b["text"] for b in content if isinstance(b, Mapping) and b.get("type") in kinds
            and isinstance(b.get("text"), str) and b["text"].strip()]


def _provenance_is_user(item: Mapping[str, object]) -> bool | None:
    """Whether Codex marked the message's content as the user's (None: the rollout says nothing)."""
    passthrough = item.get("internal_chat_message_metadata_passthrough")
    metadata = passthrough.get("content_item_metadata") if isinstance(passthrough, Mapping) else None
    if not isinstance(metadata, list) or not metadata:
        return None
    return all(isinstance(m, Mapping) and isinstance(m.get("provenance"), Mapping)
               and m["provenance"].get("type") == "user" for m in metadata)


def tool_name(item: Mapping[str, object]) -> str:
    """A call's tool as memrepo names its source: `<namespace>__<name>` for a namespaced tool."""
    kind = item.get("type")
    if kind == "local_shell_call":
        return "local_shell"
    if kind == "web_search_call":
        return "web_search"
    name, namespace = item.get("name"), item.get("namespace")
    if not isinstance(name, str) or not name:
        raise MemrepoError(texts.IMPORT_FIELD_MISSING.format(field="payload.name"))
    full = f"{namespace}__{name}" if isinstance(namespace, str) and namespace else name
    try:
        check_source(f"tool:{full}")
    except MemrepoError:
        raise MemrepoError(texts.IMPORT_TOOL_NAME_BAD.format(name=full)) from None
    return full


def _arguments(item: Mapping[str, object]) -> str:
    for key in ("arguments", "input", "action"):
        value = item.get(key)
        if isinstance(value, str):
            return value
        if value is not None:
            return json.dumps(value, ensure_ascii=False)
    return ""


def _output(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return value["content"]
    if isinstance(value, list):
        return "\n".join(b["text"] for b in value if isinstance(b, Mapping) and isinstance(b.get("text"), str))
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _said(item: Mapping[str, object], tools: MutableMapping[str, str]) -> tuple[Said, ...] | str:
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        if role == "assistant":
            return tuple(Said("assistant", "agent", t) for t in _texts(item.get("content"), ("output_text",)))
        if role != "user":
            return OWN
        said = _texts(item.get("content"), ("input_text",))
        users = _provenance_is_user(item)
        if users is False or (users is None and any(t.lstrip().startswith(OWN_USER_TEXT) for t in said)):
            return OWN
        return tuple(Said("user", "user", t) for t in said)
    if kind == "reasoning":
        summary = item.get("summary")
        parts = _texts(summary, ("summary_text",)) if isinstance(summary, list) else []
        return tuple(Said("reasoning", "agent", t) for t in parts)
    if kind in CALLS:
        name = tool_name(item)
        call = item.get("call_id")
        if isinstance(call, str):
            tools[call] = name
        return (Said("tool_call", "agent", f"{name}({_arguments(item)})"),)
    if kind in RESULTS:
        text = _output(item.get("output"))
        name = tools.get(str(item.get("call_id")), "unknown")
        return (Said("tool_result", f"tool:{name}", text),) if text.strip() else ()
    return OWN


def read_row(row: object, tools: MutableMapping[str, str], session: str) -> Row | str:
    """A rollout row as memrepo messages, or why it is skipped (OWN, EMPTY). `tools` maps each
    call's id to its tool's name: read_row adds the calls it sees, and names a result's source
    by it. A row Codex would not write is a MemrepoError saying what is wrong."""
    if not isinstance(row, Mapping):
        raise MemrepoError(texts.IMPORT_ROW_NOT_OBJECT.format(kind=type(row).__name__))
    kind, payload = row.get("type"), row.get("payload")
    if kind not in ("response_item", "compacted"):
        return OWN
    if not isinstance(payload, Mapping):
        raise MemrepoError(texts.IMPORT_FIELD_MISSING.format(field="payload"))
    try:
        at = canonical_time(row.get("timestamp"), "timestamp")
    except MemrepoError as exc:
        raise MemrepoError(texts.IMPORT_WHERE.format(where="timestamp", problem=exc)) from None
    if kind == "compacted":
        summary = payload.get("message")
        said: tuple[Said, ...] | str = (Said("compaction", "agent", summary),) \
            if isinstance(summary, str) and summary.strip() else ()
    else:
        said = _said(payload, tools)
    if isinstance(said, str):
        return said
    if not said:
        return EMPTY
    item_id = payload.get("id")
    if not isinstance(item_id, str) or not item_id:
        ordinal = row.get("ordinal")
        if not isinstance(ordinal, int):
            raise MemrepoError(texts.IMPORT_FIELD_MISSING.format(field="payload.id"))
        item_id = f"{session}.{ordinal}"
    check_id(item_id, "message_id")
    return Row(item_id, at, said)


def read_rollout(agent_id: str, conversation_id: str, lines: Sequence[bytes], imported_at: str,
                 start: int = 0) -> Reading:
    """The memrepo messages of a rollout's complete lines from byte `start` on; the lines
    before it are read only for the names of the tools they called."""
    tools: dict[str, str] = {}

    def messages_of(value: object, new: bool) -> list[Message] | str:
        row = read_row(value, tools, conversation_id)
        if isinstance(row, str) or not new:
            return row if isinstance(row, str) else []
        return [build(agent_id, conversation_id, s.kind, s.text, source=s.source, captured_at=row.captured_at,
                      message_id=row.id if n == 1 else f"{row.id}.{n}", imported_at=imported_at)
                for n, s in enumerate(row.said, 1)]

    return read_lines(lines, start, messages_of, lambda raw: CALL_MARK in raw)
