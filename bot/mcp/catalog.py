"""What the MCP server offers, as plain data: its tools (name, JSON Schema of the arguments,
hints) and its one resource. Their words (the server's instructions, titles, descriptions, each
argument's description) are in templates/mcp/tools.yml.j2, read once per process the first time
one is needed (`words`).

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
from functools import cache
from typing import Any

from bot.config import DEFAULT_POLICY, load_yaml
from bot.memfs import calls
from bot.templating import render
from bot.transcript.model import KINDS

WORDS = "mcp/tools.yml.j2"
CORE_MEMORY_URI = "memrepo://core-memory"
CORE_MEMORY_NAME = "core-memory"


@cache
def words() -> dict[str, Any]:
    """templates/mcp/tools.yml.j2, rendered and parsed once per process."""
    return load_yaml(render(WORDS, core_memory_uri=CORE_MEMORY_URI,
                            max_changed_lines=DEFAULT_POLICY.direct_commit.max_changed_lines,
                            protected=", ".join(DEFAULT_POLICY.protected)))


def instructions() -> str:
    """What the server tells a client it is, in its initialize answer."""
    return words()["instructions"]


def core_memory_title() -> str:
    return words()["resource"]["title"]


def core_memory_description() -> str:
    return words()["resource"]["description"]


_TEXT = {"type": "string"}


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool. `command` is the memory tool command it performs (None: not a memory edit);
    `properties` are its arguments' schemas, whose descriptions `input_schema` adds from the
    words; `routed`: an edit whose result says where it went (its description says so too)."""

    name: str
    properties: Mapping[str, Any]
    required: tuple[str, ...] = ()
    command: str | None = None
    read_only: bool = False
    destructive: bool = False
    routed: bool = False

    @property
    def title(self) -> str:
        return words()["tools"][self.name]["title"]

    @property
    def description(self) -> str:
        text = words()["tools"][self.name]["description"]
        return f"{text} {words()['route_note']}" if self.routed else text

    def argument_description(self, argument: str) -> str:
        own = words()["tools"][self.name].get("arguments") or {}
        return own[argument] if argument in own else words()["shared_arguments"][argument]

    @property
    def input_schema(self) -> dict[str, Any]:
        properties = {name: {**schema, "description": self.argument_description(name)}
                      for name, schema in self.properties.items()}
        schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
        if self.required:
            schema["required"] = list(self.required)
        return schema


def _edit(name: str, command: str, properties: dict[str, Any], required: tuple[str, ...], *,
          destructive: bool = False) -> ToolSpec:
    props = {**properties, "reason": _TEXT, "expected_revision": _TEXT}
    return ToolSpec(name, props, required, command, destructive=destructive, routed=True)


MEMORY_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("memory_view",
             {"path": {"type": "string", "default": ""},
              "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}},
             (), "view", read_only=True),
    _edit("memory_create", "create",
          {"path": _TEXT, "file_text": _TEXT, "description": _TEXT},
          ("path", "file_text")),
    _edit("memory_str_replace", "str_replace",
          {"path": _TEXT, "old_str": _TEXT, "new_str": _TEXT},
          ("path", "old_str", "new_str")),
    _edit("memory_insert", "insert",
          {"path": _TEXT, "insert_line": {"type": "integer"}, "insert_text": _TEXT},
          ("path", "insert_line", "insert_text")),
    _edit("memory_delete", "delete", {"path": _TEXT}, ("path",), destructive=True),
    _edit("memory_rename", "rename", {"old_path": _TEXT, "new_path": _TEXT},
          ("old_path", "new_path")),
    _edit("memory_update_description", "update_description",
          {"path": _TEXT, "description": _TEXT}, ("path", "description")),
    _edit("memory_apply_patch", "apply_patch", {"patch": _TEXT}, ("patch",), destructive=True),
    _edit("core_memory_append", "core_memory_append",
          {"label": _TEXT, "content": _TEXT}, ("label", "content")),
    _edit("core_memory_replace", "core_memory_replace",
          {"label": _TEXT, "old_content": _TEXT, "new_content": _TEXT},
          ("label", "old_content", "new_content")),
    _edit("archival_memory_insert", "archival_memory_insert",
          {"content": {"type": "string", "minLength": 1}, "tags": {"type": "array", "items": {"type": "string"}}},
          ("content",)),
)

_QUERY = {"type": "string", "minLength": 1}
_PAGE = {"type": "integer", "minimum": 0, "default": 0}
_LIMIT = {"type": "integer", "minimum": 1, "maximum": calls.SEARCH_MAX_LIMIT, "default": calls.SEARCH_PAGE_SIZE}
MEMGPT_SEARCHES: tuple[ToolSpec, ...] = (
    ToolSpec("archival_memory_search",
             {"query": _QUERY, "page": _PAGE, "limit": _LIMIT, "start_date": _TEXT, "end_date": _TEXT},
             ("query",), "archival_memory_search", read_only=True),
    ToolSpec("conversation_search",
             {"query": _QUERY, "page": _PAGE, "limit": _LIMIT, "start_date": _TEXT, "end_date": _TEXT,
              "roles": {"type": "array", "items": {"type": "string"}}},
             ("query",), "conversation_search", read_only=True),
)

SEARCH_SCOPES = ("all", "memory", "transcripts")
MAX_SEARCH_RESULTS = 50

SEARCH_TOOL = ToolSpec(
    "memory_search",
    {"query": _QUERY, "scope": {"type": "string", "enum": list(SEARCH_SCOPES), "default": "all"},
     "k": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS, "default": 5},
     "conversation": _TEXT, "since": _TEXT, "until": _TEXT},
    ("query",), read_only=True)

WHY_TOOL = ToolSpec("memory_why", {"path": _TEXT, "line": {"type": "integer", "minimum": 1}}, ("path",),
                    read_only=True)

AT_TOOL = ToolSpec("memory_at", {"when": _TEXT, "path": _TEXT}, ("when",), read_only=True)

RECORD_TOOL = ToolSpec(
    "memory_record",
    {"kind": {"type": "string", "enum": list(KINDS)}, "text": {"type": "string", "minLength": 1},
     "source": _TEXT},
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
