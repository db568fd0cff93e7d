"""`memrepo claude-code install` / `uninstall`: what Claude Code reads, merged into its files.

Two files, where Claude Code keeps these (see texts.CLAUDE_CODE_DESCRIPTION for why):
PROJECT/.mcp.json (the MCP server) and PROJECT/.claude/settings.local.json (the hooks, the
approval of .mcp.json's server and the allow rule for its tools). The allow rule is not put in
the shared .claude/settings.json: Claude Code 2.1.332 ignores that file's allow rules in a
folder nobody has trusted (headless runs then deny the tools), and honours the local file's.

Each file is read as JSON, only memrepo's own entries are added or taken out, every other key
and entry is kept, and the file is written whole and renamed into place. A file that is not a
JSON object stops the command before anything is written.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot import texts as shared_texts
from bot.bounded_json import loads_bounded
from bot.claude_code.auto_memory import TOOLS, inside
from bot.claude_code.hook import HOOK_MODULE, POST_TOOL, PROMPT, SESSION_END, SESSION_START, STOP
from bot.config import OWN_SERVER
from bot.errors import MemrepoError

WROTE = "  {path}: {what}"
WHAT_LOCAL = ("SessionStart, UserPromptSubmit, Stop and SessionEnd hooks; .mcp.json's \"memrepo\" approved, its "
              "tools allowed and waited for at start")
UNREADABLE = ("{path} cannot be read as JSON settings ({problem}); nothing was changed: mend or move it, "
              "then run the command again")
NOT_AN_OBJECT = "{path} holds {kind}, not a JSON object of settings; nothing was changed"
OTHER_SERVER = ("{path} already registers an MCP server \"memrepo\" that is not this memory's ({command}); "
                "nothing was changed: uninstall it first, or remove that entry")
TRUSTS = ("memrepo claude-code: the memory trusts these tools' results (.memrepo/config.yml trusted_sources): "
          "{tools}; a turn that read only these writes memory straight to main. Any other tool's result "
          "(WebFetch, WebSearch, Bash, other MCP servers' tools) sends that turn's memory writes to a pull "
          "request a person approves. To change it, edit trusted_sources in {config} and commit it (a person "
          "approves that change); `trusted_sources: []` trusts none.")
TRUSTS_NONE = ("memrepo claude-code: the memory trusts no tool's result (.memrepo/config.yml trusted_sources is "
               "empty): after any Read, Grep or Glob, a turn's memory writes become pull requests a person "
               "approves. To trust reading this machine's files, list tool:Read, tool:Grep, tool:Glob, tool:LS "
               "and tool:NotebookRead under trusted_sources in {config} and commit it.")
WHAT_AUTO_MEMORY = "Claude Code's auto memory in {folder}, its writes committed by a PostToolUse hook"
OTHER_AUTO_MEMORY = ("{path} already points Claude Code's auto memory at {folder}, outside this memory; nothing "
                     "was changed: remove that setting first, or install without --auto-memory")
AUTO_MEMORY_OUTSIDE = "--auto-memory {folder}: the folder must be inside the memory ({repo}), and not in .git"

SERVER = OWN_SERVER  # the name whose memory tools taint no turn (bot/config.py)
ALLOW_RULE = f"mcp__{SERVER}"
SESSION_SOURCES = "startup|resume|clear|compact"
SERVER_ARGS = ("-m", "bot.cli", "mcp", "--claude-code")
AUTO_MEMORY_KEY = "autoMemoryDirectory"
# Claude Code 2.1 connects MCP servers in the background by default, and a headless run's
# first request then goes out before memrepo's tools are there: this makes it wait for them.
SESSION_ENV = {"MCP_CONNECTION_NONBLOCKING": "false"}
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd", "PostToolUse")


@dataclass
class Settings:
    """One JSON settings file: its path, what it holds, and whether it changed."""

    path: Path
    data: dict[str, Any] = field(default_factory=dict)
    existed: bool = False
    original: str = ""

    @classmethod
    def read(cls, path: Path) -> Settings:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls(path)
        except (OSError, UnicodeDecodeError) as exc:
            problem = getattr(exc, "strerror", None) or exc
            raise MemrepoError(UNREADABLE.format(path=path, problem=problem)) from None
        try:
            data = loads_bounded(text, what=str(path)) if text.strip() else {}
        except ValueError as exc:
            raise MemrepoError(UNREADABLE.format(path=path, problem=exc)) from None
        if not isinstance(data, dict):
            raise MemrepoError(NOT_AN_OBJECT.format(path=path, kind=type(data).__name__))
        return cls(path, data, True, json.dumps(data, sort_keys=True))

    @property
    def changed(self) -> bool:
        return json.dumps(self.data, sort_keys=True) != (self.original if self.existed else "{}")

    def write(self) -> None:
        """Written whole beside the file and renamed into place; a file left empty by
        uninstall that install made is removed."""
        if not self.changed:
            return
        if not self.data:
            self.path.unlink(missing_ok=True)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.memrepo-{os.getpid()}")
        temporary.write_text(json.dumps(self.data, indent=2) + "\n", encoding="utf-8")
        os.replace(temporary, self.path)


def python() -> str:
    return sys.executable


def server_entry(repo: Path) -> dict[str, Any]:
    """The MCP server: `memrepo mcp --repo MEMDIR` over stdio, by the interpreter memrepo runs in."""
    return {"type": "stdio", "command": python(), "args": [*SERVER_ARGS, "--repo", str(repo)]}


def hook_command(event: str, repo: Path) -> str:
    return shlex.join([python(), "-m", HOOK_MODULE, event, "--repo", str(repo)])


def hook_groups(repo: Path) -> dict[str, dict[str, Any]]:
    return {
        "SessionStart": {"matcher": SESSION_SOURCES,
                         "hooks": [{"type": "command", "command": hook_command(SESSION_START, repo)}]},
        "UserPromptSubmit": {"hooks": [{"type": "command", "command": hook_command(PROMPT, repo)}]},
        "Stop": {"hooks": [{"type": "command", "command": hook_command(STOP, repo)}]},
        "SessionEnd": {"hooks": [{"type": "command", "command": hook_command(SESSION_END, repo)}]},
    }


def ours(group: Any) -> bool:
    """Whether a hook group is one install wrote (its command runs memrepo's hook module)."""
    return isinstance(group, dict) and any(isinstance(h, dict) and HOOK_MODULE in str(h.get("command", ""))
                                           for h in group.get("hooks") or [])


def looks_like_ours(entry: Any) -> bool:
    """Whether an MCP server entry is one install wrote (this version's or an earlier one's)."""
    args = entry.get("args") if isinstance(entry, dict) else None
    return isinstance(args, list) and args[:3] == ["-m", "bot.cli", "mcp"] and args[-2:-1] == ["--repo"]


def _dict(parent: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = parent.setdefault(key, {})
    if not isinstance(value, dict):
        raise MemrepoError(NOT_AN_OBJECT.format(path=f"{path} ({key})", kind=type(value).__name__))
    return value


def _list(parent: dict[str, Any], key: str, path: Path) -> list[Any]:
    value = parent.setdefault(key, [])
    if not isinstance(value, list):
        raise MemrepoError(NOT_AN_OBJECT.format(path=f"{path} ({key})", kind=type(value).__name__))
    return value


def _prune(parent: dict[str, Any], *keys: str) -> None:
    """Take out the containers install may have made, when nothing is left in them."""
    for key in keys:
        if key in parent and parent[key] in ({}, []):
            del parent[key]


@dataclass
class Files:
    mcp: Settings
    local: Settings

    @classmethod
    def read(cls, project: Path) -> Files:
        return cls(Settings.read(project / ".mcp.json"), Settings.read(project / ".claude" / "settings.local.json"))

    def finish(self) -> list[str]:
        """Write what changed; one line for each file written."""
        lines = [WROTE.format(path=s.path, what=what)
                 for s, what in ((self.mcp, "MCP server \"memrepo\""), (self.local, WHAT_LOCAL)) if s.changed]
        for settings in (self.mcp, self.local):
            settings.write()
        return lines


def auto_memory_group(repo: Path) -> dict[str, Any]:
    return {"matcher": TOOLS, "hooks": [{"type": "command", "command": hook_command(POST_TOOL, repo)}]}


def hook_repo(group: dict[str, Any]) -> Path | None:
    """The memory one of install's hook groups serves (its `--repo`)."""
    for entry in group.get("hooks") or []:
        words = shlex.split(str(entry.get("command", ""))) if isinstance(entry, dict) else []
        if HOOK_MODULE in words and "--repo" in words[:-1]:
            return Path(words[words.index("--repo") + 1])
    return None


def trust_notice(trusted: tuple[str, ...], config: Path, wording: tuple[str, str] = (TRUSTS, TRUSTS_NONE)) -> str:
    """What install says the memory trusts, and how to change it (pure); `wording` is the
    harness's (trusts some, trusts none)."""
    some, none = wording
    if not trusted:
        return none.format(config=config)
    return some.format(tools=", ".join(source.removeprefix("tool:") for source in trusted), config=config)


def memory_trust(repo: Path, wording: tuple[str, str] = (TRUSTS, TRUSTS_NONE)) -> str:
    """The trust notice for the memory at `repo`, from its policy at HEAD."""
    from bot.config import CONFIG_PATH
    from bot.memfs import MemoryRepo

    repo = repo.expanduser().resolve()
    return trust_notice(MemoryRepo.open(repo).policy("HEAD").trusted_sources, repo / CONFIG_PATH, wording)


def install(repo: Path, project: Path, auto_memory: str | None = None) -> list[str]:
    """Merge memrepo's entries in (with `auto_memory`, a folder of the memory: Claude Code's
    auto memory there, and the hook that commits its writes); the lines to print (empty:
    nothing changed)."""
    from bot.memfs import refs

    repo, project = repo.expanduser().resolve(), project.expanduser().resolve()
    if refs.resolve(repo) is None:
        raise MemrepoError(shared_texts.NOT_A_MEMORY.format(repo=repo))
    files = Files.read(project)
    servers = _dict(files.mcp.data, "mcpServers", files.mcp.path)
    present = servers.get(SERVER)
    if present is not None and present != server_entry(repo) and not looks_like_ours(present):
        raise MemrepoError(OTHER_SERVER.format(path=files.mcp.path, command=json.dumps(present)))
    servers[SERVER] = server_entry(repo)

    groups_wanted = hook_groups(repo)
    said: list[str] = []
    if auto_memory is not None:
        folder = repo / auto_memory
        if inside(repo, str(folder)) is None:
            raise MemrepoError(AUTO_MEMORY_OUTSIDE.format(folder=auto_memory, repo=repo))
        present_folder = files.local.data.get(AUTO_MEMORY_KEY)
        if present_folder not in (None, str(folder)) and inside(repo, present_folder) is None:
            raise MemrepoError(OTHER_AUTO_MEMORY.format(path=files.local.path, folder=present_folder))
        files.local.data[AUTO_MEMORY_KEY] = str(folder)
        groups_wanted["PostToolUse"] = auto_memory_group(repo)
        if present_folder != str(folder):
            said.append(WROTE.format(path=files.local.path, what=WHAT_AUTO_MEMORY.format(folder=folder)))
    hooks = _dict(files.local.data, "hooks", files.local.path)
    for event, group in groups_wanted.items():
        groups = _list(hooks, event, files.local.path)
        groups[:] = [g for g in groups if not ours(g) or g == group]
        if group not in groups:
            groups.append(group)
    enabled = _list(files.local.data, "enabledMcpjsonServers", files.local.path)
    if SERVER not in enabled:
        enabled.append(SERVER)

    allow = _list(_dict(files.local.data, "permissions", files.local.path), "allow", files.local.path)
    if ALLOW_RULE not in allow:
        allow.append(ALLOW_RULE)
    env = _dict(files.local.data, "env", files.local.path)
    for key, value in SESSION_ENV.items():
        env.setdefault(key, value)  # a value the user set stays theirs
    return files.finish() + said


def uninstall(project: Path) -> list[str]:
    """Take memrepo's entries out; the lines to print (empty: there were none)."""
    project = project.expanduser().resolve()
    files = Files.read(project)
    servers = files.mcp.data.get("mcpServers")
    if isinstance(servers, dict) and looks_like_ours(servers.get(SERVER)):
        del servers[SERVER]
        _prune(files.mcp.data, "mcpServers")

    hooks = files.local.data.get("hooks")
    if isinstance(hooks, dict):
        served = [hook_repo(g) for g in hooks.get("PostToolUse") or [] if ours(g)]
        folder = files.local.data.get(AUTO_MEMORY_KEY)
        if any(repo is not None and inside(repo, folder) is not None for repo in served):
            del files.local.data[AUTO_MEMORY_KEY]  # the folder install pointed into the memory
        for event in HOOK_EVENTS:
            if isinstance(hooks.get(event), list):
                hooks[event] = [g for g in hooks[event] if not ours(g)]
                _prune(hooks, event)
        _prune(files.local.data, "hooks")
    enabled = files.local.data.get("enabledMcpjsonServers")
    if isinstance(enabled, list) and SERVER in enabled:
        enabled.remove(SERVER)
        _prune(files.local.data, "enabledMcpjsonServers")

    env = files.local.data.get("env")
    if isinstance(env, dict):
        for key, value in SESSION_ENV.items():
            if env.get(key) == value:
                del env[key]
        _prune(files.local.data, "env")

    permissions = files.local.data.get("permissions")
    if isinstance(permissions, dict) and isinstance(permissions.get("allow"), list) \
            and ALLOW_RULE in permissions["allow"]:
        permissions["allow"].remove(ALLOW_RULE)
        _prune(permissions, "allow")
        _prune(files.local.data, "permissions")
    return files.finish()
