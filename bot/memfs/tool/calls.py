"""Memory tool calls as agents send them, normalised into one plain shape.

Letta's (`file_path`, `old_string`, ...), Anthropic's (`path`, `old_str`, `/memories/...`)
and MemGPT's (`core_memory_append(label, content)`) spellings all become a `Call`. Pure:
nothing here touches the repository.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.bounded_json import TooDeepError, loads_bounded
from bot.errors import MemrepoError
from bot.memfs.format import paths
from bot.memfs.texts import CALL_UNKNOWN_COMMAND

# The memory tool.
CALL_NOT_JSON = "the tool call is not valid JSON ({error}); send an object such as {{\"command\": \"view\"}}"
CALL_NOT_OBJECT = "the tool call must be a JSON object with a 'command', found {kind}"
CALL_NO_COMMAND = "the tool call has no 'command'; use one of: {commands}"
CALL_DUPLICATE_PARAM = "'{command}' got two different values for '{param}'; send it once"
CALL_WRONG_TYPE = "'{param}' must be {expected}, found {kind}"
# What CALL_WRONG_TYPE says a parameter must be.
EXPECTED_TEXT = "text"
EXPECTED_WHOLE_NUMBER = "a whole number"
CALL_NOT_UNICODE = ("'{param}' is not valid Unicode: character {index} is {code}, a lone surrogate with no "
                    "UTF-8 form; send the text as UTF-8")
CALL_OUT_OF_RANGE = "'{param}' must be from {low} to {high}, found {value}"
CALL_BAD_RANGE = "'view_range' must be two whole numbers [first line, last line] (last may be -1 for the end)"

_SEARCH_PARAMS: dict[str, tuple[str, ...]] = {
    "query": ("query",), "page": ("page",), "limit": ("limit", "top_k"),
    "since": ("start_date", "start_datetime"), "until": ("end_date", "end_datetime"),
}
# command -> {canonical parameter: accepted spellings}; `reason` and `expected_revision`
# are accepted by every command.
_PARAMS: dict[str, dict[str, tuple[str, ...]]] = {
    "view": {"path": ("path", "file_path"), "view_range": ("view_range",)},
    "create": {
        "path": ("path", "file_path"),
        "file_text": ("file_text", "content", "text"),
        "description": ("description",),
    },
    "str_replace": {
        "path": ("path", "file_path"),
        "old": ("old_str", "old_string"),
        "new": ("new_str", "new_string"),
    },
    "insert": {
        "path": ("path", "file_path"),
        "insert_line": ("insert_line",),
        "insert_text": ("insert_text", "new_str", "text"),
    },
    "delete": {"path": ("path", "file_path")},
    "rename": {"old_path": ("old_path", "path", "file_path"), "new_path": ("new_path",)},
    "update_description": {"path": ("path", "file_path"), "description": ("description",)},
    "apply_patch": {"patch": ("input", "patch")},
    "core_memory_append": {"label": ("label",), "content": ("content",)},
    "core_memory_replace": {
        "label": ("label",),
        "old": ("old_content",),
        "new": ("new_content",),
    },
    # MemGPT's (and Letta V1's) archival memory and conversation search (archival.py, bot/agent/memgpt.py).
    "archival_memory_insert": {"content": ("content",), "tags": ("tags",)},
    "archival_memory_search": _SEARCH_PARAMS,
    "conversation_search": {**_SEARCH_PARAMS, "roles": ("roles",)},
}
_REQUIRED: dict[str, tuple[str, ...]] = {
    "view": (),
    "create": ("path", "file_text"),
    "str_replace": ("path", "old", "new"),
    "insert": ("path", "insert_line", "insert_text"),
    "delete": ("path",),
    "rename": ("old_path", "new_path"),
    "update_description": ("path", "description"),
    "apply_patch": ("patch",),
    "core_memory_append": ("label", "content"),
    "core_memory_replace": ("label", "old", "new"),
    "archival_memory_insert": ("content",),
    "archival_memory_search": ("query",),
    "conversation_search": ("query",),
}
_COMMAND_ALIASES = {"memory_apply_patch": "apply_patch", "patch": "apply_patch",
                    "archival_insert": "archival_memory_insert", "archival_search": "archival_memory_search"}
_COMMON = {"reason": ("reason",), "expected_revision": ("expected_revision",)}
# request_heartbeat: MemGPT's functions all take it; it asks the harness for another step.
_META = ("command", "name", "tool", "type", "arguments", "input_schema", "request_heartbeat")
_ANTHROPIC_ROOT = "/memories"
COMMANDS = tuple(_PARAMS)
SEARCH_COMMANDS = ("archival_memory_search", "conversation_search")  # answered above the core, paged
READ_COMMANDS = ("view", *SEARCH_COMMANDS)
WRITE_COMMANDS = tuple(c for c in COMMANDS if c not in READ_COMMANDS)
SEARCH_PAGE_SIZE = 5  # MemGPT's page of results
SEARCH_MAX_LIMIT = 50
# Spellings only Letta's memory tool uses: a call that has one is edited as Letta's tool edits
# (body-relative insert_line, frontmatter re-rendered as Letta renders it).
LETTA_SPELLINGS = ("file_path", "old_string", "new_string")


@dataclass(frozen=True)
class Call:
    command: str
    args: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    expected_revision: str | None = None
    letta: bool = False  # spelled as Letta Code's tool spells it

    @property
    def writes(self) -> bool:
        return self.command not in READ_COMMANDS


def parse_call(raw: object) -> Call:
    """A Call from a mapping or its JSON text, or a MemrepoError naming what is wrong. The
    one place a raw call is read: every check of its shape is here, so the layers inside take
    the Call and never parse again."""
    if isinstance(raw, (str, bytes)):
        raw = _loads(raw, "the tool call")
    if not isinstance(raw, Mapping):
        raise MemrepoError(CALL_NOT_OBJECT.format(kind=type(raw).__name__))
    data = dict(raw)
    # {"name": "memory", "arguments": {...}} and {"name": "core_memory_append", "input": {...}}
    nested = data.get("arguments", data.get("input") if isinstance(data.get("input"), Mapping) else None)
    if isinstance(nested, str):
        nested = _loads(nested, "the text of the tool call's arguments")
    if isinstance(nested, Mapping):
        outer_name = data.get("name") or data.get("tool")
        data = dict(nested)
        if "command" not in data and isinstance(outer_name, str):
            data["command"] = outer_name
    _check_unicode(data)
    command = data.get("command")
    if not isinstance(command, str) or not command.strip():
        raise MemrepoError(CALL_NO_COMMAND.format(commands=", ".join(COMMANDS)))
    command = _COMMAND_ALIASES.get(command.strip(), command.strip())
    if command not in _PARAMS:
        raise MemrepoError(CALL_UNKNOWN_COMMAND.format(
            command=command, commands=", ".join(COMMANDS)))

    spellings = {**_PARAMS[command], **_COMMON}
    by_spelling = {alias: name for name, aliases in spellings.items() for alias in aliases}
    args: dict[str, Any] = {}
    for key, value in data.items():
        if key in _META:
            continue
        name = by_spelling.get(key)
        if name is None:
            accepted = sorted(alias for aliases in spellings.values() for alias in aliases)
            raise MemrepoError("'{command}' does not take the parameter '{param}' (it takes: {accepted})".format(
                command=command, param=key, accepted=", ".join(accepted)))
        if name in args and args[name] != value:
            raise MemrepoError(CALL_DUPLICATE_PARAM.format(command=command, param=name))
        args[name] = value
    if command == "create" and args.get("file_text") is None and args.get("description") is not None:
        args["file_text"] = ""  # Letta's create: a description alone makes an empty file
    missing = [name for name in _REQUIRED[command] if args.get(name) is None]
    if missing:
        raise MemrepoError("'{command}' needs the parameter '{param}'".format(
            command=command, param=" or ".join(spellings[missing[0]])))

    reason = args.pop("reason", None)
    if reason is not None and not isinstance(reason, str):
        raise MemrepoError(CALL_WRONG_TYPE.format(param="reason", expected=EXPECTED_TEXT,
                                                          kind=type(reason).__name__))
    expected = args.pop("expected_revision", None)
    if expected is not None and (not isinstance(expected, str) or not expected.strip()):
        raise MemrepoError(CALL_WRONG_TYPE.format(
            param="expected_revision", expected="a commit id", kind=type(expected).__name__))
    letta = any(key in data for key in LETTA_SPELLINGS)
    _check_types(command, args, letta)
    _normalise_paths(command, args)
    return Call(command, args, (reason or "").strip() or None, expected.strip() if expected else None, letta)


def named_command(raw: object) -> str:
    """The command a refusal reports for a call that did not parse: the `command` it names,
    or `?`."""
    command = raw.get("command", "?") if isinstance(raw, dict) else "?"
    return printable(str(command))


def printable(text: str) -> str:
    """`text` with what has no UTF-8 form (lone surrogates) written as escapes, so a message
    that quotes it can be printed and committed."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _loads(text: str | bytes, what: str) -> Any:
    """The JSON value of a call's text; a MemrepoError when it nests deeper than any call does
    (json.loads would end in RecursionError) or is not JSON."""
    try:
        return loads_bounded(text, what=what)
    except TooDeepError:
        raise
    except ValueError as exc:
        raise MemrepoError(CALL_NOT_JSON.format(error=exc)) from None


def _check_unicode(data: Mapping[Any, Any]) -> None:
    """Refuse an argument (or its name) holding a lone surrogate: JSON's `\\udcff` escape and
    undecodable bytes read with surrogateescape make one, and it has no UTF-8 form, so no file,
    commit message or output could hold it."""
    for key, value in data.items():
        if key in _META and key != "command":
            continue  # ignored by the parse, so never written or echoed
        for text in (key, value):
            if not isinstance(text, str):
                continue
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise MemrepoError(CALL_NOT_UNICODE.format(
                    param=printable(str(key)), index=exc.start + 1, code=f"U+{ord(text[exc.start]):04X}")) from None


_TEXT_PARAMS = ("file_text", "old", "new", "insert_text", "description", "patch", "content", "label", "query",
                "since", "until")
_LIST_PARAMS = ("tags", "roles")
_DIGITS = re.compile(r"-?[0-9]+")
_NOT_BLANK = {"archival_memory_insert": ("content",), "archival_memory_search": ("query",),
              "conversation_search": ("query",)}


def _letta_line(line: object) -> object:
    """Letta's insert_line is any number, floored (Math.floor); the infinities clamp."""
    if isinstance(line, float) and not isinstance(line, bool):
        if math.isnan(line):
            raise MemrepoError("'insert_line' must be a number")
        return 1 if line == -math.inf else (1 << 62) if line == math.inf else math.floor(line)
    return line


def _check_types(command: str, args: dict[str, Any], letta: bool = False) -> None:
    for name in _TEXT_PARAMS:
        if name in args and args[name] is not None and not isinstance(args[name], str):
            raise MemrepoError(CALL_WRONG_TYPE.format(
                param=name, expected=EXPECTED_TEXT, kind=type(args[name]).__name__))
        if isinstance(args.get(name), str) and "\0" in args[name]:
            raise MemrepoError(f"'{name}' contains a NUL byte; memory holds text, not binary data")
    if "insert_line" in args:
        line = _number(_letta_line(args["insert_line"]) if letta else args["insert_line"])
        if isinstance(line, bool) or not isinstance(line, int):
            raise MemrepoError(CALL_WRONG_TYPE.format(
                param="insert_line", expected=EXPECTED_WHOLE_NUMBER, kind=type(line).__name__))
        args["insert_line"] = line
    for name in _NOT_BLANK.get(command, ()):
        if not args[name].strip():
            raise MemrepoError(f"'{name}' must not be empty")
    for name, low, high in (("page", 0, None), ("limit", 1, SEARCH_MAX_LIMIT)):
        if args.get(name) is not None:
            args[name] = _whole(name, args[name], low, high)
    for name in _LIST_PARAMS:
        value = args.get(name)
        if isinstance(value, str):  # one tag, or a comma-separated list
            value = [part for part in (v.strip() for v in value.split(",")) if part]
        if value is not None and (not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value)):
            raise MemrepoError(CALL_WRONG_TYPE.format(
                param=name, expected="a list of text", kind=type(value).__name__))
        if value is not None:
            args[name] = tuple(v.strip() for v in value if v.strip())
    if "view_range" in args and args["view_range"] is not None:
        rng = args["view_range"]
        if (not isinstance(rng, (list, tuple)) or len(rng) != 2
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in rng)):
            raise MemrepoError(CALL_BAD_RANGE)
        args["view_range"] = (rng[0], rng[1])


def _number(value: object) -> object:
    """A string of ASCII digits (optionally signed) as its int; anything else as it is (so
    "²", which str.isdigit accepts and int() refuses, is reported as text, not a crash)."""
    if isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        return int(value)
    return value


def _whole(name: str, value: object, low: int, high: int | None) -> int:
    """A whole-number argument within [low, high] (a numeric string is taken too)."""
    value = _number(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemrepoError(CALL_WRONG_TYPE.format(param=name, expected=EXPECTED_WHOLE_NUMBER,
                                                        kind=type(value).__name__))
    if high is None and value < low:
        raise MemrepoError(f"'{name}' must be {low} or more, found {value}")
    if high is not None and not low <= value <= high:
        raise MemrepoError(CALL_OUT_OF_RANGE.format(param=name, value=value, low=low, high=high))
    return value


def _strip_root(raw: object) -> object:
    """Anthropic's memory tool roots every path at `/memories`."""
    if isinstance(raw, str):
        text = raw.strip()
        if text == _ANTHROPIC_ROOT or text == _ANTHROPIC_ROOT + "/":
            return ""
        if text.startswith(_ANTHROPIC_ROOT + "/"):
            return text[len(_ANTHROPIC_ROOT) + 1:]
    return raw


def _normalise_paths(command: str, args: dict[str, Any]) -> None:
    if command == "view":
        raw = _strip_root(args.get("path"))
        args["path"] = "" if raw in (None, "", ".", "/") else paths.normalize(raw, add_md=False)
        return
    if command in ("core_memory_append", "core_memory_replace"):
        # system/<label>.md; a v2 memory's core blocks are at the root (the tool moves it there).
        args["path"] = paths.normalize("system/" + str(args.pop("label")).strip())
        return
    for name in ("path", "old_path", "new_path"):
        if name in args:
            folder_ok = command in ("delete", "rename")
            args[name] = paths.normalize(_strip_root(args[name]), add_md=not folder_ok)
