"""What the MCP server offers, as plain data: its tools (name, description, JSON Schema of the
arguments, hints) and its one resource.

One tool per memory command rather than one `memory` tool with a `command` switch: each tool
gets a flat object schema whose `required` list is exact (a switch needs `oneOf`, which
several model providers refuse at the top of a tool schema, or else marks every argument
optional), and its own annotations, so a client can let `memory_view` run unasked and ask a
person before `memory_delete`. The argument names are the Anthropic memory tool's, which the
memory tool accepts as they are (bot/memfs/tool/calls.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.config import DEFAULT_POLICY
from bot.memfs import SEARCH_MAX_LIMIT, SEARCH_PAGE_SIZE
from bot.transcript.model import KINDS

CORE_MEMORY_URI = "memrepo://core-memory"
CORE_MEMORY_NAME = "core-memory"
CORE_MEMORY_TITLE = "Compiled core memory"
CORE_MEMORY_DESCRIPTION = (
    "The agent's system prompt as compiled from core memory (the files under system/, or a MemFS v2 memory's root "
    "files and MEMORY.md indexes) at the memory's HEAD "
    "(the same text as `memrepo compile`). Subscribe to it: it is announced as updated whenever HEAD moves."
)
SERVER_INSTRUCTIONS = (
    "This server is an agent's long-term memory: a git repository of markdown files. Files under system/ (in a "
    "MemFS v2 memory: the files at the root) are the core memory, compiled into the resource " + CORE_MEMORY_URI
    + "; everything else is read on "
    "demand with memory_view. Every accepted memory_* edit is one commit, checked before it is written; a "
    "refused edit changes nothing and says what to do instead. A small edit goes straight to main (route "
    "`direct`). An edit that changes more lines than the memory's policy allows ("
    + str(DEFAULT_POLICY.direct_commit.max_changed_lines) + " by default), touches a protected path ("
    + ", ".join(DEFAULT_POLICY.protected) + " by default), or is made in a turn that saw external content goes to a "
    "pull request instead (route `pull-request`, with its number and URL): it is NOT in memory until a "
    "person or the integrator merges it, so do not rely on it yet. Pass `reason` to say why you edit (it "
    "becomes the commit message). memory_search finds words in memory files and past conversations; "
    "memory_why tells where a line came from; memory_at shows memory as it was at a past time. MemGPT's "
    "archival_memory_insert, archival_memory_search and conversation_search work too."
)
ROUTE_NOTE = (" The result's `route` says where the edit went: `direct` (committed to main), `pull-request` (not in "
              "main until merged: see `pull_request` and `url`) or `refused` (nothing changed).")

_REASON = {"type": "string", "description": "Why this change is made, in one line; it becomes the commit message."}
_EXPECTED = {
    "type": "string",
    "description": "The commit you last saw (a `revision` from an earlier result). If a file this call touches "
                   "changed since, the call is refused and returns the file's current content.",
}
_PATH = {"type": "string", "description": "A file path inside the memory, e.g. system/human.md."}


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool. `command` is the memory tool command it performs (None: not a memory edit)."""

    name: str
    title: str
    description: str
    properties: Mapping[str, Any]
    required: tuple[str, ...] = ()
    command: str | None = None
    read_only: bool = False
    destructive: bool = False

    @property
    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": dict(self.properties),
                                  "additionalProperties": False}
        if self.required:
            schema["required"] = list(self.required)
        return schema


def _edit(name: str, command: str, title: str, description: str, properties: dict[str, Any],
          required: tuple[str, ...], *, destructive: bool = False) -> ToolSpec:
    props = {**properties, "reason": _REASON, "expected_revision": _EXPECTED}
    return ToolSpec(name, title, description + ROUTE_NOTE, props, required, command, destructive=destructive)


MEMORY_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "memory_view", "View memory",
        "Show a memory file with numbered lines, or list a folder (the whole memory when `path` is empty) with "
        "each file's size and description.",
        {"path": {"type": "string", "default": "",
                  "description": "A file or folder; empty for the whole memory. `.md` may be left out."},
         "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2,
                        "description": "[first line, last line] to show part of a file; last may be -1."}},
        (), "view", read_only=True),
    _edit("memory_create", "create", "Create a memory file",
          "Create a new markdown file. Give either `file_text` with its own frontmatter (--- description: ... ---) "
          "or `description` and the body. Refused if the file exists, unless `expected_revision` is given (then "
          "the whole file is replaced, if nobody changed it since).",
          {"path": _PATH, "file_text": {"type": "string", "description": "The file's text."},
           "description": {"type": "string", "description": "What the file holds (its frontmatter description)."}},
          ("path", "file_text")),
    _edit("memory_str_replace", "str_replace", "Replace text in a memory file",
          "Replace `old_str` with `new_str` in a file. `old_str` must occur exactly once; otherwise the call is "
          "refused with the number of matches.",
          {"path": _PATH, "old_str": {"type": "string", "description": "The exact text to replace."},
           "new_str": {"type": "string", "description": "The text to put in its place (may be empty)."}},
          ("path", "old_str", "new_str")),
    _edit("memory_insert", "insert", "Insert lines into a memory file",
          "Insert text into a file: `insert_line` 0 puts it at the top, N after line N, -1 at the end.",
          {"path": _PATH, "insert_line": {"type": "integer", "description": "0: top, N: after line N, -1: end."},
           "insert_text": {"type": "string", "description": "The text to insert."}},
          ("path", "insert_line", "insert_text")),
    _edit("memory_delete", "delete", "Delete a memory file or folder",
          "Delete a file, or a folder with everything in it. Files marked read_only cannot be deleted.",
          {"path": {"type": "string", "description": "A file or folder inside the memory."}},
          ("path",), destructive=True),
    _edit("memory_rename", "rename", "Move or rename a memory file or folder",
          "Move or rename a file or folder. Refused if the new path exists.",
          {"old_path": {"type": "string", "description": "The file or folder to move."},
           "new_path": {"type": "string", "description": "Where to move it."}},
          ("old_path", "new_path")),
    _edit("memory_update_description", "update_description", "Change a memory file's description",
          "Replace the `description` in a file's frontmatter, keeping its body.",
          {"path": _PATH, "description": {"type": "string", "description": "The new description (not empty)."}},
          ("path", "description")),
    _edit("memory_apply_patch", "apply_patch", "Apply a patch to memory",
          "Apply a patch in the `*** Begin Patch` / `*** Update File:` / `*** Add File:` / `*** Delete File:` "
          "format to one or more files, as one commit.",
          {"patch": {"type": "string", "description": "The patch text, from *** Begin Patch to *** End Patch."}},
          ("patch",), destructive=True),
    _edit("core_memory_append", "core_memory_append", "Append to a core memory block",
          "MemGPT's core_memory_append: add `content` at the end of the block system/<label>.md.",
          {"label": {"type": "string", "description": "The block, e.g. human or persona."},
           "content": {"type": "string", "description": "The text to append."}},
          ("label", "content")),
    _edit("core_memory_replace", "core_memory_replace", "Replace text in a core memory block",
          "MemGPT's core_memory_replace: replace `old_content` (exactly one occurrence) with `new_content` in the "
          "block system/<label>.md.",
          {"label": {"type": "string", "description": "The block, e.g. human or persona."},
           "old_content": {"type": "string", "description": "The exact text to replace."},
           "new_content": {"type": "string", "description": "The text to put in its place."}},
          ("label", "old_content", "new_content")),
    _edit("archival_memory_insert", "archival_memory_insert", "Archive a passage",
          "MemGPT's archival_memory_insert: record a passage in external memory (never core memory), as one dated "
          "entry signed by this agent in archival/<year>-<month>.md. Find it again with archival_memory_search.",
          {"content": {"type": "string", "minLength": 1, "description": "The passage to keep."},
           "tags": {"type": "array", "items": {"type": "string"}, "description": "Optional tags for the entry."}},
          ("content",)),
)

_PAGE = {"type": "integer", "minimum": 0, "default": 0, "description": "Which page of results, from 0."}
_LIMIT = {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX_LIMIT, "default": SEARCH_PAGE_SIZE,
          "description": "Results per page."}
_SINCE = {"type": "string", "description": "Only results from this ISO time on."}
_UNTIL = {"type": "string", "description": "Only results before this ISO time."}
MEMGPT_SEARCHES: tuple[ToolSpec, ...] = (
    ToolSpec(
        "archival_memory_search", "Search archival memory",
        "MemGPT's archival_memory_search: search external memory (archived passages, and every file outside core "
        "memory) by BM25. Answers `Showing N of M results (page P/L): [...]`, each result with its timestamp.",
        {"query": {"type": "string", "minLength": 1, "description": "What to look for."}, "page": _PAGE,
         "limit": _LIMIT, "start_date": _SINCE, "end_date": _UNTIL},
        ("query",), "archival_memory_search", read_only=True),
    ToolSpec(
        "conversation_search", "Search past conversations",
        "MemGPT's conversation_search: search this agent's recorded conversations by BM25. Answers "
        "`Showing N of M results (page P/L): [...]`, each result `timestamp: ..., role - text`.",
        {"query": {"type": "string", "minLength": 1, "description": "What to look for."}, "page": _PAGE,
         "limit": _LIMIT, "start_date": _SINCE, "end_date": _UNTIL,
         "roles": {"type": "array", "items": {"type": "string"},
                   "description": "Only these roles: user, assistant, tool, ..."}},
        ("query",), "conversation_search", read_only=True),
)

SEARCH_SCOPES = ("all", "memory", "transcripts")
MAX_SEARCH_RESULTS = 50

SEARCH_TOOL = ToolSpec(
    "memory_search", "Search memory and past conversations",
    "Find words in the memory files (at HEAD) and in this agent's recorded conversations, ranked by BM25 "
    "(English stemming; Korean, Japanese and Chinese too). Quote words to find them next to each other.",
    {"query": {"type": "string", "minLength": 1, "description": "What to look for."},
     "scope": {"type": "string", "enum": list(SEARCH_SCOPES), "default": "all",
               "description": "all, memory (files only) or transcripts (conversations only)."},
     "k": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS, "default": 5,
           "description": "How many results of each kind."},
     "conversation": {"type": "string", "description": "Only this conversation's messages."},
     "since": {"type": "string", "description": "Only messages captured at or after this ISO time."},
     "until": {"type": "string", "description": "Only messages captured before this ISO time."}},
    ("query",), read_only=True)

WHY_TOOL = ToolSpec(
    "memory_why", "Why is this in memory",
    "Tell where a memory file, or one line of it, came from: the commits that wrote it, who made them (agent, "
    "dreamer, integrator or person), their reasons, and the conversation messages a dream rests on.",
    {"path": _PATH, "line": {"type": "integer", "minimum": 1, "description": "One line of the file (1-based)."}},
    ("path",), read_only=True)

AT_TOOL = ToolSpec(
    "memory_at", "Memory at a past time",
    "Show memory as main held it at a past moment: the commit then, and a file's text (with `path`) or the list "
    "of files with their descriptions.",
    {"when": {"type": "string",
              "description": "ISO 8601: 2025-03-01 (00:00 UTC), 2025-03-01T14:30 (UTC), 2025-03-01T14:30+02:00, "
                             "or @<seconds since the epoch>."},
     "path": {"type": "string", "description": "A file to show as it was then; leave out for the whole memory."}},
    ("when",), read_only=True)

RECORD_TOOL = ToolSpec(
    "memory_record", "Record a conversation message",
    "For the agent harness, not the model (offered only when the server runs with --record): append one message "
    "to this server's conversation transcript, which dreams read and memory_search finds. A `user` message from "
    "source `user` starts a new turn. A message from an `external:<uri>` source (a fetched page, an e-mail, a "
    "document), or from a `tool:<name>` the memory's policy does not list under trusted_sources, is untrusted: "
    "every memory edit goes to a pull request labelled memrepo:untrusted that a person must approve, until a "
    "`compaction` message says the context no longer holds it. An `assistant` message counts a step towards the "
    "next dream.",
    {"kind": {"type": "string", "enum": list(KINDS), "description": "What the message is."},
     "text": {"type": "string", "minLength": 1, "description": "The message's text."},
     "source": {"type": "string",
                "description": "Who said it: user, agent, human, tool:<name> or external:<uri>. Leave out for the "
                               "usual one of the kind (user: user; assistant, reasoning, tool_call, compaction: "
                               "agent; system: human); tool_result needs one."}},
    ("kind", "text"))

TOOLS: tuple[ToolSpec, ...] = (*MEMORY_TOOLS, *MEMGPT_SEARCHES, SEARCH_TOOL, WHY_TOOL, AT_TOOL)
BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}


def tools(*, record: bool = False) -> tuple[ToolSpec, ...]:
    """The tools a server offers: memory_record only when asked for (it is the harness's tool)."""
    return (*TOOLS, RECORD_TOOL) if record else TOOLS


def memory_call(spec: ToolSpec, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The memory tool call (bot/memfs/tool/calls.py shape) an MCP tool call stands for."""
    assert spec.command is not None
    return {"command": spec.command, **{k: v for k, v in arguments.items() if v is not None}}
