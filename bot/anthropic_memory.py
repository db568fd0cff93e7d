"""Claude's memory tool over memrepo's memory tool, for agents built on the Anthropic SDK (the
public entry is bot/agent/anthropic.py); the dreamer's `anthropic` strategy uses it on the
dream's worktree, so it sits below both, above the memory core it needs.

    import anthropic
    from bot.agent import AgentSession
    from bot.agent.anthropic import AnthropicMemoryTool

    with AgentSession("memory", "c1") as session:
        runner = anthropic.Anthropic().beta.messages.tool_runner(
            model=..., max_tokens=..., system=session.system_prompt(), messages=[...],
            tools=[AnthropicMemoryTool(session)])
        reply = runner.until_done()

The SDK's `BetaAbstractMemoryTool` (and its async twin) hands each command to one method; here
every one of them goes to `session.handle_tool_call`, so the session's rules hold exactly as
for any other harness: protected paths and large edits become pull requests, a turn that saw
external content is never committed to `main`, and a refusal changes nothing. A refusal is
raised as the SDK's `ToolError`, which the tool runner sends back as a result with
`is_error: true` carrying memrepo's message. `/memories/...` paths name files of the memory
repository (`/memories/system/human.md` is `system/human.md`), as bot/memfs/tool/calls.py reads them.

A call that did what it was asked answers in the text the SDK's own file-backed memory tool
gives (Claude's memory tool is trained on it), followed by memrepo's line about the commit;
an edit that became a pull request answers with memrepo's message, which says it is not in
memory yet. The session's work is blocking (git, the network): the async tool runs it on a
worker thread, one call at a time per tool.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from bot import texts

try:
    from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
    from anthropic.types.beta import (
        BetaMemoryTool20250818Command,
        BetaMemoryTool20250818CreateCommand,
        BetaMemoryTool20250818DeleteCommand,
        BetaMemoryTool20250818InsertCommand,
        BetaMemoryTool20250818RenameCommand,
        BetaMemoryTool20250818StrReplaceCommand,
        BetaMemoryTool20250818ViewCommand,
    )
    from anyio.to_thread import run_sync
except ImportError as exc:  # the SDK is an optional extra
    raise ImportError(texts.ANTHROPIC_SDK_MISSING.format(problem=exc), name="anthropic") from None

from bot.memfs import MemoryRepo, ToolResult

__all__ = ["AnthropicMemoryTool", "AsyncAnthropicMemoryTool", "MemorySession", "ToolError"]

ANTHROPIC_VIEW_FILE = "Here's the content of {path} with line numbers:\n{content}"
ANTHROPIC_VIEW_FOLDER = "Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
ANTHROPIC_REPLACED = (
    "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{snippet}"
)
ANTHROPIC_EDITED = "The file {path} has been edited."
ANTHROPIC_RENAMED = "Successfully renamed {old} to {new}"
ANTHROPIC_UNKNOWN_COMMAND = (
    "unknown memory command {command!r}; the memory tool has view, create, str_replace, insert, delete and rename"
)
ANTHROPIC_NO_CLEAR_ALL = (
    "memory is a reviewed git repository and is never cleared at once; delete files one by one (each deletion "
    "is a commit a person can see and revert)"
)

ROOT = "/memories"
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
LISTING_DEPTH = 2  # levels below the folder a view lists, as the SDK's tool does
SNIPPET_CONTEXT = 2  # lines shown on each side of a replacement


class MemorySession(Protocol):
    """What the adapter needs of a session: its memory clone (to shape results) and the guarded
    memory tool. `AgentSession` is one; a dream's worktree session is another."""

    repo: MemoryRepo

    def handle_tool_call(self, call: object) -> ToolResult: ...


# ----------------------------------------------------------------------------------- pure
def command_input(command: object) -> dict[str, Any]:
    """The call the model sent, as a mapping: the fields it set (extra ones included, so a
    `reason` reaches the commit message), nothing the SDK's model defaulted."""
    to_dict = getattr(command, "to_dict", None)
    if callable(to_dict):
        return dict(to_dict())
    if isinstance(command, Mapping):
        return dict(command)
    return dict(vars(command))


def human_size(size: int) -> str:
    """A byte count as the SDK's tool lists it: 0B, 812B, 4K, 1.5M."""
    if size <= 0:
        return "0B"
    units = ("B", "K", "M", "G")
    step = min((size.bit_length() - 1) // 10, len(units) - 1)
    value = size / 1024**step
    return f"{int(value)}{units[step]}" if value == int(value) else f"{value:.1f}{units[step]}"


def listing(shown: str, sizes: Mapping[str, int]) -> str:
    """A folder view in the SDK's shape. `sizes`: the folder's files (paths relative to it) and
    their sizes in bytes; hidden files and folders are left out with what is under them, a
    folder's size is that of the files it holds, and entries go two levels deep."""
    visible = {path: size for path, size in sizes.items() if not any(part.startswith(".") for part in path.split("/"))}
    entries: dict[str, int] = {}
    for path, size in visible.items():
        parts = path.split("/")
        for depth in range(1, min(len(parts), LISTING_DEPTH) + 1):
            folder = depth < len(parts)
            name = "/".join(parts[:depth]) + ("/" if folder else "")
            entries[name] = entries.get(name, 0) + size
    root = shown.rstrip("/") or shown
    lines = [ANTHROPIC_VIEW_FOLDER.format(path=shown), f"{human_size(sum(visible.values()))}\t{shown}"]
    lines += [f"{human_size(size)}\t{root}/{name}" for name, size in sorted(entries.items(), key=lambda e: e[0])]
    return "\n".join(lines)


def snippet(before: str, after: str, old: str) -> str:
    """The lines around a replacement, numbered as views number them: where `old` began in
    `before`, shown in `after`."""
    at = before.find(old)
    line = before[: max(at, 0)].count("\n")
    lines = after.split("\n")
    first, last = max(0, line - SNIPPET_CONTEXT), min(len(lines), line + SNIPPET_CONTEXT + 1)
    return "\n".join(f"{n:6d}\t{lines[n - 1]}" for n in range(first + 1, last + 1))


def refusal_text(result: ToolResult) -> str:
    """What the model reads of a refusal: memrepo's message, and the file's current content
    when the refusal carries it (so the model can redo the edit)."""
    text = result.message
    if result.content is not None and result.content != result.message:
        text += "\n\n" + result.content
    return text


def _known(name: object) -> None:
    """A command the SDK would not dispatch is refused in memrepo's words, not as a crash."""
    if name not in COMMANDS:
        raise ToolError(ANTHROPIC_UNKNOWN_COMMAND.format(command=name))


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


# ---------------------------------------------------------------------------------- shell
class _Memory:
    """One session's memory tool calls, one at a time, answered in the SDK's words."""

    def __init__(self, session: MemorySession) -> None:
        self.session = session
        self._lock = threading.Lock()

    def perform(self, command: object) -> str:
        call = command_input(command)
        _known(call.get("command"))
        with self._lock:
            result = self.session.handle_tool_call(call)
            if not result.ok:
                raise ToolError(refusal_text(result))
            return self._answer(call, result)

    def _answer(self, call: Mapping[str, Any], result: ToolResult) -> str:
        route = getattr(result, "route", "direct")
        if route == "pull-request":  # not in memory yet: the SDK has no words for that
            return result.message
        command, path = call["command"], _text(call.get("path"))
        if command == "view":
            return self._view(path, result)
        if command == "create":
            text = f"File created successfully at: {path}"
        elif command == "str_replace":
            text = self._replaced(call, result)
        elif command == "insert":
            text = ANTHROPIC_EDITED.format(path=path)
        elif command == "delete":
            text = f"Successfully deleted {path}"
        else:
            text = ANTHROPIC_RENAMED.format(old=_text(call.get("old_path")), new=_text(call.get("new_path")))
        return f"{text}\n\n{result.message}"

    def _view(self, shown: str, result: ToolResult) -> str:
        shown = shown or ROOT
        (found,) = result.paths or ["."]
        repo = self.session.repo
        if result.revision is not None and repo.read(found, result.revision) is not None:
            return ANTHROPIC_VIEW_FILE.format(path=shown, content=result.content or "")
        folder = "" if found == "." else found
        prefix = folder.rstrip("/") + "/" if folder else ""
        files = repo.files(result.revision or "HEAD", folder)
        return listing(shown, {p[len(prefix):]: len(data) for p, data in files.items() if p.startswith(prefix)})

    def _replaced(self, call: Mapping[str, Any], result: ToolResult) -> str:
        repo = self.session.repo
        paths: Sequence[str] = result.paths
        before = after = None
        if result.commit is not None and len(paths) == 1:
            after = repo.read(paths[0], result.commit)
            parent = repo.resolve(result.commit + "^")
            before = None if parent is None else repo.read(paths[0], parent)
        if before is None or after is None:
            return ANTHROPIC_EDITED.format(path=_text(call.get("path")))
        lines = snippet(before.decode("utf-8", "replace"), after.decode("utf-8", "replace"), _text(call.get("old_str")))
        return ANTHROPIC_REPLACED.format(snippet=lines)


class AnthropicMemoryTool(BetaAbstractMemoryTool):
    """Claude's memory tool (`memory_20250818`) on a session, for `client.beta.messages.tool_runner`."""

    def __init__(self, session: MemorySession, **options: Any) -> None:
        super().__init__(**options)
        self.memory = _Memory(session)

    def execute(self, command: BetaMemoryTool20250818Command) -> Any:
        _known(getattr(command, "command", None))
        return super().execute(command)

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self.memory.perform(command)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self.memory.perform(command)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self.memory.perform(command)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self.memory.perform(command)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self.memory.perform(command)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self.memory.perform(command)

    def clear_all_memory(self) -> str:
        raise ToolError(ANTHROPIC_NO_CLEAR_ALL)


class AsyncAnthropicMemoryTool(BetaAsyncAbstractMemoryTool):
    """The same for `AsyncAnthropic`: each call runs on a worker thread, so git and the forge
    never block the event loop."""

    def __init__(self, session: MemorySession, **options: Any) -> None:
        super().__init__(**options)
        self.memory = _Memory(session)

    async def execute(self, command: BetaMemoryTool20250818Command) -> Any:
        _known(getattr(command, "command", None))
        return await super().execute(command)

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await run_sync(self.memory.perform, command)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await run_sync(self.memory.perform, command)

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await run_sync(self.memory.perform, command)

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await run_sync(self.memory.perform, command)

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await run_sync(self.memory.perform, command)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await run_sync(self.memory.perform, command)

    async def clear_all_memory(self) -> str:
        raise ToolError(ANTHROPIC_NO_CLEAR_ALL)
