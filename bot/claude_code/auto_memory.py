"""Claude Code's own auto memory, kept in a memrepo clone and reviewed like any agent's edits.

`memrepo claude-code install --auto-memory [FOLDER]` points Claude Code's `autoMemoryDirectory`
at FOLDER inside the memory (default `auto-memory/`), where Claude writes its `MEMORY.md` index
and topic files with its own Write and Edit tools, and registers a PostToolUse hook on those
tools. The hook (`python -m bot.claude_code.hook post-tool --repo MEMDIR`) turns each write that
landed inside the memory into a memory tool call made by the memory's agent in that session:

- the file on disk is put back as HEAD has it (the memory tool writes only from a clean tree),
  and the new text goes through the agent's write path as a whole-file `create` based on HEAD;
- that path decides as for any agent edit: a small trusted edit is one commit on `main`, pushed
  when the memory has a remote; a protected path, a large edit or a turn that read untrusted
  content becomes a pull request (Claude is told it is not in main yet); a refusal (a limit,
  a path rule) leaves the file as HEAD has it, and Claude is told why, with its text still in
  its context and its transcript;
- the commit names the session and its turn, as an MCP write does (bot/claude_code/transcript.py).

Layout: the folder is ordinary external memory (outside `system/`, so not compiled into the
prompt; Claude Code loads its MEMORY.md itself). Every rule of the memory holds there: path
rules, file and folder limits, protected paths. Claude's topic files carry frontmatter with a
`description`; its MEMORY.md index has none, which memrepo accepts for a file outside core memory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

AUTO_MEMORY_REFUSED = ("memrepo did not keep this write to the memory, and put the file back as it was: {problem} "
                       "Change the write so that it meets this, and write the file again.")

DEFAULT_FOLDER = "auto-memory"
TOOLS = "Write|Edit|MultiEdit"


def inside(root: Path, file_path: object) -> str | None:
    """The memory path of a file a tool wrote, when it is inside the memory (and not in .git)."""
    if not isinstance(file_path, str) or not file_path:
        return None
    try:
        relative = Path(os.path.realpath(file_path)).relative_to(os.path.realpath(root))
    except ValueError:
        return None
    posix = PurePosixPath(*relative.parts)
    return None if not posix.parts or posix.parts[0] == ".git" else str(posix)


def call_for(path: str, text: str, head: str, tool: str) -> dict[str, Any]:
    """The memory tool call that makes `path` hold `text`: a whole-file create, based on `head`
    (a file HEAD already has is replaced only if nobody changed it since)."""
    return {"command": "create", "path": path, "file_text": text, "expected_revision": head,
            "reason": f"Claude Code's auto memory: {tool} {path}"}


def output(result: Any) -> str | None:
    """What Claude is told: nothing for a commit on main, a note for a pull request, and a
    blocking reason for a refusal."""
    if not result.ok:
        return json.dumps({"decision": "block", "reason": AUTO_MEMORY_REFUSED.format(problem=result.message)})
    if result.route == "pull-request":
        note = f"memrepo: this auto memory write is not in main yet: {result.message}"
        return json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": note}})
    return None


def after_write(root: Path, hook_input: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str | None:
    """Route one Write or Edit that landed in the memory; the hook's output, if any."""
    from bot.agent import AgentSession
    from bot.claude_code.transcript import SessionTranscript
    from bot.memfs import MemoryRepo

    tool_input = hook_input.get("tool_input")
    path = inside(root, tool_input.get("file_path") if isinstance(tool_input, Mapping) else None)
    session = hook_input.get("session_id")
    if path is None or not isinstance(session, str) or not session:
        return None
    disk = root / path
    try:
        text = disk.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    repo = MemoryRepo.open(root)
    before = repo.read(path)
    if before is not None and before == text.encode("utf-8"):
        return None
    head = repo.head_sha()
    assert head is not None  # MemoryRepo.open refuses a repository without commits
    _put_back(disk, before)
    try:
        with AgentSession(repo, session, env=env) as agent:
            SessionTranscript(repo.root, session, os.environ if env is None else env).catch_up(agent)
            result = agent.handle_tool_call(call_for(path, text, head, str(hook_input.get("tool_name") or "Write")))
    except BaseException:
        disk.write_text(text, encoding="utf-8")  # nothing decided: Claude's text stays where it wrote it
        raise
    return output(result)


def _put_back(disk: Path, before: bytes | None) -> None:
    if before is None:
        disk.unlink()
    else:
        disk.write_bytes(before)
