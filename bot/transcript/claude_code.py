"""Claude Code's session transcripts as memrepo messages, as pure functions.

Claude Code (2.1) keeps each session at `<config>/projects/<project>/<session-id>.jsonl`
(`<config>` is $CLAUDE_CONFIG_DIR, else ~/.claude; `<project>` the working folder with every
character outside `[A-Za-z0-9]` made `-`), and gives its hooks that file's path as
`transcript_path`. It appends one JSON object a line. The rows of the conversation carry `type`
`user` or `assistant`, a `message` as the Messages API has it, their own `uuid`, `timestamp`
and `isSidechain`; the rest (`attachment`, `queue-operation`, `last-prompt`, API bookkeeping,
...) is Claude Code's own and is skipped. Each row becomes memrepo messages so:

    user, text (a string, or text blocks)   -> user (source user): the user's words
    user, tool_result blocks                -> tool_result from `tool:<the tool's name>`, as
                                               memrepo's own agents record a tool's output
                                               (untrusted unless the memory's
                                               trusted_sources lists it); `Error: ` before a
                                               failed result
    user with isMeta (Claude Code's own)    -> skipped
    user with an `origin` (Claude Code put   -> tool_result from `tool:<origin kind>`: a task
      it there, not the user)                  notification carries a subagent's output
    user, a command's output                -> tool_result from `tool:local-command`
      (<local-command-stdout>, <bash-stdout>)
    user with isCompactSummary              -> compaction (source agent): the summary
    assistant, text / thinking / tool_use   -> assistant / reasoning / tool_call
                                               `<name>(<input as JSON>)` (source agent)
    system (compact_boundary, ...)          -> skipped: the summary row after a boundary is the compaction

A subagent's rows (`isSidechain`, and every row of its own file, which Claude Code keeps at
`<session-id>/subagents/agent-<id>.jsonl` beside the session's) are marked: their text starts
with SIDECHAIN_MARK, and what the parent agent asked the subagent is not the user's (a `user`
message from source `agent`, which starts no turn and is never quoted as the user's words).

Ids: the session id is the conversation's; a row's `uuid` is its first message's id, and the
second and later messages of one row get `.2`, `.3`, ... after it (a uuid already meets
memrepo's id rule). A row seen before gives the same ids, so the store skips it.
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

CLAUDE_CONTENT_BAD = "message.content must be text or a list of blocks, found {kind}"

CONVERSATION_TYPES = ("user", "assistant", "system")
SIDECHAIN_MARK = "[subagent] "
OWN = "own"  # a row of Claude Code's own (not the conversation): skipped, counted
META = "meta"  # a user row Claude Code wrote itself (isMeta): skipped, counted
EMPTY = "empty"
TOOL_USE = b'"tool_use"'
# What Claude Code writes in the user's turn as a command's output (a slash command's, `!`'s):
# output, not the user's words.
LOCAL_OUTPUT = ("<local-command-stdout>", "<local-command-stderr>", "<bash-stdout>", "<bash-stderr>")
LOCAL_SOURCE = "tool:local-command"


@dataclass(frozen=True)
class Row:
    """A row to import: its uuid, its time and the messages it holds."""

    uuid: str
    captured_at: str
    said: tuple[Said, ...]


def read_row(row: object, tools: MutableMapping[str, str], sidechain: bool = False) -> Row | str:
    """A transcript row as memrepo messages, or why it is skipped (OWN, META, EMPTY). `tools`
    maps each tool call's id to its tool's name: read_row adds the calls it sees, and names a
    result's source by it. `sidechain`: the row is a subagent's whatever it says (it is in a
    subagent's file). A row Claude Code would not write is a MemrepoError saying what is wrong."""
    if not isinstance(row, Mapping):
        raise MemrepoError(texts.IMPORT_ROW_NOT_OBJECT.format(kind=type(row).__name__))
    kind = row.get("type")
    if kind not in CONVERSATION_TYPES or kind == "system":
        return OWN
    if row.get("isMeta") is True:
        return META
    uuid = row.get("uuid")
    if not isinstance(uuid, str) or not uuid:
        raise MemrepoError(texts.IMPORT_FIELD_MISSING.format(field="uuid"))
    check_id(uuid, "message_id")
    try:
        at = canonical_time(row.get("timestamp"), "timestamp")
    except MemrepoError as exc:
        raise MemrepoError(texts.IMPORT_WHERE.format(where="timestamp", problem=exc)) from None
    message = row.get("message")
    if not isinstance(message, Mapping):
        raise MemrepoError(texts.IMPORT_FIELD_MISSING.format(field="message"))
    sidechain = sidechain or row.get("isSidechain") is True
    if kind == "user":
        origin = row.get("origin")
        relayed = origin.get("kind") if isinstance(origin, Mapping) else None
        said = _user(message.get("content"), tools, sidechain, row.get("isCompactSummary") is True,
                     None if relayed in (None, "user") else _source(str(relayed)))
    else:
        said = _assistant(message.get("content"), tools)
    if sidechain:
        said = tuple(Said(s.kind, s.source, SIDECHAIN_MARK + s.text) for s in said)
    return Row(uuid, at, said) if said else EMPTY


def _blocks(content: object) -> list[Mapping[str, object]]:
    """A message's content as blocks: a string is one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise MemrepoError(CLAUDE_CONTENT_BAD.format(kind=type(content).__name__))
    return [block for block in content if isinstance(block, Mapping)]


def _text_of(value: object) -> str:
    """A tool result's content as text: a string, or its text blocks joined (an image is named)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [b.get("text") if b.get("type") == "text" else f"[{b.get('type')}]"
                 for b in value if isinstance(b, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _source(name: str) -> str:
    try:
        return check_source(f"tool:{name}")
    except MemrepoError:
        raise MemrepoError(texts.IMPORT_TOOL_NAME_BAD.format(name=name)) from None


def _user(content: object, tools: Mapping[str, str], sidechain: bool, summary: bool,
          relayed: str | None) -> tuple[Said, ...]:
    """A user row's messages; `relayed`: the source of what Claude Code put in the user's turn
    itself (a subagent's task notification), which is not the user's words."""
    said: list[Said] = []
    for block in _blocks(content):
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            if summary:
                said.append(Said("compaction", "agent", block["text"]))
            elif relayed is not None:
                said.append(Said("tool_result", relayed, block["text"]))
            elif block["text"].lstrip().startswith(LOCAL_OUTPUT):
                said.append(Said("tool_result", LOCAL_SOURCE, block["text"]))
            else:
                said.append(Said("user", "agent" if sidechain else "user", block["text"]))
        elif kind == "tool_result":
            text = _text_of(block.get("content"))
            if block.get("is_error") is True and text.strip() and not text.lower().startswith("error"):
                text = f"Error: {text}"
            if text.strip():
                said.append(Said("tool_result", _source(tools.get(str(block.get("tool_use_id")), "unknown")), text))
    return tuple(said)


def _assistant(content: object, tools: MutableMapping[str, str]) -> tuple[Said, ...]:
    said: list[Said] = []
    for block in _blocks(content):
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            said.append(Said("assistant", "agent", block["text"]))
        elif kind == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"].strip():
            said.append(Said("reasoning", "agent", block["thinking"]))
        elif kind in ("tool_use", "server_tool_use") and isinstance(block.get("name"), str):
            name = block["name"]
            _source(name)
            tools[str(block.get("id"))] = name
            said.append(Said("tool_call", "agent", f"{name}({json.dumps(block.get('input'), ensure_ascii=False)})"))
        elif isinstance(kind, str) and kind.endswith("_tool_result"):  # a server tool's result (web search)
            text = _text_of(block.get("content"))
            if text.strip():
                said.append(Said("tool_result", _source(tools.get(str(block.get("tool_use_id")), kind)), text))
    return tuple(said)


def read_session(agent_id: str, conversation_id: str, lines: Sequence[bytes], imported_at: str,
                 start: int = 0, sidechain: bool = False) -> Reading:
    """The memrepo messages of a session's complete lines. Lines before byte `start` (imported
    before) give nothing but the names of the tools they called (read only when they hold one,
    so a long session costs little); lines from `start` on give messages, skipped rows and
    problems (one per bad line). `sidechain`: the lines are a subagent's file."""
    tools: dict[str, str] = {}

    def messages_of(value: object, new: bool) -> list[Message] | str:
        row = read_row(value, tools, sidechain)
        if isinstance(row, str):
            return row
        if not new:
            return []  # a line imported before: read for the names of the tools it called
        return [build(agent_id, conversation_id, s.kind, s.text, source=s.source, captured_at=row.captured_at,
                      message_id=row.uuid if n == 1 else f"{row.uuid}.{n}", imported_at=imported_at)
                for n, s in enumerate(row.said, 1)]

    return read_lines(lines, start, messages_of, lambda raw: TOOL_USE in raw)
