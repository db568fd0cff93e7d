"""`memrepo codex install` / `uninstall`: memrepo's entries in Codex's config.toml.

Codex (0.171) reads `$CODEX_HOME/config.toml` (else ~/.codex/config.toml). Install merges in:
the MCP server `[mcp_servers.memrepo]` (required, so the first request has its tools), one
command hook each for SessionStart, UserPromptSubmit and Stop, appended after the hooks already
there, and in `[hooks.state]` the trust Codex records when a person trusts a hook: the key
`<config.toml's path>:<event label>:<group index>:<handler index>` and the `trusted_hash` of the
hook (`hook_trust`). `codex exec` runs no hook whose hash is not recorded there.

The file is edited with tomlkit, which keeps every other key, table and comment as it was, and
written whole beside it, then renamed into place. A file that is not TOML stops the command
before anything is written. Removing a group shifts the index of the groups after it, so the
trust of those is moved with them, and a person's trust of their own hooks stays whole.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Table

from bot import texts as shared_texts
from bot.claude_code import install as claude_code_install
from bot.codex.hook import HOOK_MODULE, PROMPT, SESSION_START, STOP
from bot.errors import MemrepoError
from bot.transcript.codex_import import codex_home

WHAT_SERVER = "[mcp_servers.memrepo]: memrepo's MCP server, required (its tools are in the first request)"
WHAT_HOOK = "[[hooks.{event}]]: {command}"
WHAT_TRUST = "[hooks.state] \"{key}\": trusted_hash {hash} (Codex runs this hook, in `codex exec` too)"
WHAT_REMOVED = "removed {what}"
WHAT_HOOKS_OF = "[[hooks.{event}]] and its trust"
PROJECT_TRUSTED = "memrepo codex: {project} is a trusted project in {config}, so Codex loads its .codex/config.toml"
PROJECT_UNTRUSTED = ("memrepo codex: Codex loads {project}/.codex/config.toml only for a trusted project, and {config} "
                     "does not trust it yet: trust it when Codex asks, or add [projects.\"{project}\"] with "
                     "trust_level = \"trusted\" (memrepo does not decide that for you)")
UNREADABLE = ("{path} cannot be read as Codex's TOML configuration ({problem}); nothing was changed: mend or "
              "move it, then run the command again")
NOT_A_TABLE = "{path}: {key} is {kind}, not a table; nothing was changed"
OTHER_SERVER = ("{path} already has an MCP server \"memrepo\" that is not memrepo's for Codex ({command}); "
                "nothing was changed: uninstall it first, or remove that table")
TRUSTS = ("memrepo codex: the memory trusts these tools' results (.memrepo/config.yml trusted_sources): {tools}. "
          "A Codex turn that ran a shell command (exec_command), searched the web or called another MCP server's "
          "tool sends its memory writes to a pull request a person approves, unless trusted_sources lists that "
          "tool (tool:exec_command, tool:web_search, tool:mcp__<server>__<tool>); edit it in {config} and commit it "
          "(a person approves that change).")
TRUSTS_NONE = ("memrepo codex: the memory trusts no tool's result (.memrepo/config.yml trusted_sources is empty): "
               "after any tool call of Codex's, a turn's memory writes become pull requests a person approves; "
               "list tools in trusted_sources in {config} and commit it to change that.")

SERVER = "memrepo"
SERVER_ARGS = ("-m", "bot.cli", "mcp", "--codex")
CONFIG = "config.toml"
SERVER_ENV = ("MEMREPO_HOME", "MEMREPO_FORGE_TOKEN", "GITHUB_TOKEN")
DEFAULT_TIMEOUT = 600  # seconds: Codex's own default for a command hook, part of its trust hash
# Codex's event names in config.toml, its labels in trust keys and hashes, and our hook command.
HOOKS = (("SessionStart", "session_start", SESSION_START), ("UserPromptSubmit", "user_prompt_submit", PROMPT),
         ("Stop", "stop", STOP))


def hook_trust(label: str, group: dict[str, Any]) -> str:
    """The trusted_hash Codex computes for a command hook group of one handler (codex-rs
    hooks/src/engine/discovery.rs, command_hook_hash, and config/src/fingerprint.rs,
    version_for_toml): `{"event_name": label, "matcher"?, "hooks": [handler]}` with the
    handler's timeout defaulted to 600 and `async` to false, optional fields left out, as JSON
    with every object's keys sorted and no spaces, SHA-256, hex, after `sha256:` (pure)."""
    handlers = [{"type": "command", "command": h["command"], "timeout": max(int(h.get("timeout", DEFAULT_TIMEOUT)), 1),
                 "async": bool(h.get("async", False)),
                 **({"statusMessage": h["statusMessage"]} if "statusMessage" in h else {})}
                for h in group["hooks"]]
    identity = {"event_name": label, "hooks": handlers,
                **({"matcher": group["matcher"]} if group.get("matcher") is not None else {})}
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def trust_key(config: Path, label: str, group: int, handler: int = 0) -> str:
    return f"{config}:{label}:{group}:{handler}"


def python() -> str:
    return sys.executable


def server_entry(repo: Path) -> dict[str, Any]:
    """The MCP server: `memrepo mcp --codex --repo MEMDIR` over stdio, required. Codex starts
    it with a minimal environment (HOME, PATH, ...), so the variables memrepo reads are named
    to pass through (`env_vars`): its transcript home, and the forge token a push needs."""
    return {"command": python(), "args": [*SERVER_ARGS, "--repo", str(repo)], "required": True,
            "env_vars": list(SERVER_ENV)}


def hook_command(event: str, repo: Path, sessions: Path) -> str:
    return shlex.join([python(), "-m", HOOK_MODULE, event, "--repo", str(repo), "--sessions", str(sessions)])


def hook_group(event: str, repo: Path, sessions: Path) -> dict[str, Any]:
    return {"hooks": [{"type": "command", "command": hook_command(event, repo, sessions)}]}


def ours(group: Any) -> bool:
    """Whether a hook group is one install wrote (its command runs memrepo's Codex hook module)."""
    handlers = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(handlers, list) and any(isinstance(h, dict) and HOOK_MODULE in str(h.get("command", ""))
                                              for h in handlers)


def looks_like_ours(entry: Any) -> bool:
    args = entry.get("args") if isinstance(entry, dict) else None
    return isinstance(args, list) and list(args[:4]) == list(SERVER_ARGS) and "--repo" in args


@dataclass
class ConfigFile:
    """Codex's config.toml: its path, the document, and the text it was read from."""

    path: Path
    document: tomlkit.TOMLDocument
    original: str

    @classmethod
    def read(cls, home: Path) -> ConfigFile:
        path = home.expanduser().absolute() / CONFIG
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        except (OSError, UnicodeDecodeError) as exc:
            raise MemrepoError(UNREADABLE.format(path=path, problem=getattr(exc, "strerror", None) or exc)) \
                from None
        try:
            document = tomlkit.parse(text)
        except (TOMLKitError, ValueError) as exc:
            raise MemrepoError(UNREADABLE.format(path=path, problem=str(exc).splitlines()[0])) from None
        return cls(path, document, text)

    @property
    def key_path(self) -> Path:
        """The path Codex names this file by in trust keys (absolute, links resolved)."""
        return self.path.resolve()

    def table(self, parent: Any, key: str, label: str) -> Any:
        value = parent.get(key)
        if value is None:
            value = tomlkit.table()
            parent[key] = value
        if not isinstance(value, dict):
            raise MemrepoError(NOT_A_TABLE.format(path=self.path, key=label, kind=type(value).__name__))
        return value

    def write(self) -> bool:
        text = tomlkit.dumps(self.document)
        if text == self.original:
            return False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.memrepo-{os.getpid()}")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, self.path)
        return True


def _groups(config: ConfigFile, hooks: Any, event: str) -> list[Any]:
    groups = hooks.get(event)
    if groups is None:
        return []
    if not isinstance(groups, list):
        raise MemrepoError(NOT_A_TABLE.format(path=config.path, key=f"hooks.{event}", kind=type(groups).__name__))
    return list(groups)


def _set_groups(hooks: Any, event: str, groups: list[Any]) -> None:
    if not groups:
        hooks.pop(event, None)
        return
    array = AoT([g if isinstance(g, Table) else _table(g) for g in groups])
    hooks[event] = array


def _table(value: dict[str, Any]) -> Table:
    table = tomlkit.table()
    for key, item in value.items():
        if isinstance(item, list) and item and all(isinstance(i, dict) for i in item):
            table[key] = AoT([_table(i) for i in item])
        else:
            table[key] = item
    return table


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _regroup(config: ConfigFile, state: Any, label: str, kept: list[tuple[int, Any]], handlers: dict[int, int]) -> None:
    """Move the trust of the groups kept to their new index (old index, group) -> position."""
    moves = []
    for new, (old, _) in enumerate(kept):
        if new != old:
            for handler in range(handlers.get(old, 1)):
                moves.append((trust_key(config.key_path, label, old, handler),
                              trust_key(config.key_path, label, new, handler)))
    saved = {old: state.pop(old) for old, _ in moves if old in state}
    for old, new in moves:
        if old in saved:
            state[new] = saved[old]


def _take_out_ours(config: ConfigFile, hooks: Any, state: Any, event: str, label: str,
                   keep: dict[str, Any] | None = None) -> int | None:
    """Take out install's groups of `event` but one equal to `keep`; the trust of those taken
    out goes with them, the trust of the others moves with them. The index of the one kept."""
    groups = _groups(config, hooks, event)
    kept, kept_ours = [], None
    for index, group in enumerate(groups):
        if ours(_plain(group)) and not (keep is not None and kept_ours is None and _plain(group) == keep):
            state.pop(trust_key(config.key_path, label, index), None)
            continue
        if ours(_plain(group)):
            kept_ours = len(kept)
        kept.append((index, group))
    if len(kept) != len(groups):
        handlers = {i: len(_plain(g).get("hooks") or []) for i, g in kept}
        _regroup(config, state, label, kept, handlers)
        _set_groups(hooks, event, [g for _, g in kept])
    return kept_ours


def memory_trust(repo: Path) -> str:
    """The trust notice for the memory at `repo`, in Codex's words."""
    return claude_code_install.memory_trust(repo, (TRUSTS, TRUSTS_NONE))


def _files(home: Path | None, project: Path | None) -> tuple[ConfigFile, ConfigFile]:
    """(the file the server and hooks go in, the user's file the trust goes in): the same file,
    or with `project` its `.codex/config.toml` (Codex reads trust only from the user's)."""
    user = ConfigFile.read((home or codex_home()).expanduser().absolute())
    if project is None:
        return user, user
    return ConfigFile.read(project.expanduser().resolve() / ".codex"), user


def _write(config: ConfigFile, user: ConfigFile, said: list[tuple[Path, str]]) -> list[str]:
    for file in (config, user) if config is not user else (config,):
        file.write()
    return [f"  {path}: {line.strip()}" for path, line in said]


def project_trust(user: ConfigFile, project: Path) -> str:
    """Whether Codex loads `project`'s .codex/config.toml: only for a project the user trusts."""
    projects = user.document.get("projects")
    entry = projects.get(str(project)) if isinstance(projects, dict) else None
    trusted = isinstance(entry, dict) and entry.get("trust_level") == "trusted"
    return (PROJECT_TRUSTED if trusted else PROJECT_UNTRUSTED).format(project=project, config=user.path)


def install(repo: Path, home: Path | None = None, project: Path | None = None) -> list[str]:
    """Merge memrepo's entries into Codex's config.toml (with `project`, the server and hooks
    into the project's .codex/config.toml, their trust into the user's); the lines to print
    (empty: nothing changed)."""
    from bot.memfs import refs

    repo = repo.expanduser().resolve()
    if refs.resolve(repo) is None:
        raise MemrepoError(shared_texts.NOT_A_MEMORY.format(repo=repo))
    home = (home or codex_home()).expanduser().absolute()
    config, user = _files(home, project)
    document = config.document
    said: list[tuple[Path, str]] = []
    servers = config.table(document, "mcp_servers", "mcp_servers")
    present = servers.get(SERVER)
    wanted = server_entry(repo)
    if present is not None and not looks_like_ours(_plain(present)):
        raise MemrepoError(OTHER_SERVER.format(path=config.path, command=json.dumps(_plain(present))))
    if present is None or _plain(present) != wanted:
        servers[SERVER] = _table(wanted)
        said.append((config.path, WHAT_SERVER))

    hooks = config.table(document, "hooks", "hooks")
    user_hooks = user.table(user.document, "hooks", "hooks")
    state = user.table(user_hooks, "state", "hooks.state")
    sessions = home / "sessions"
    for event, label, command in HOOKS:
        group = hook_group(command, repo, sessions)
        index = _take_out_ours(config, hooks, state, event, label, keep=group)
        if index is None:
            groups = _groups(config, hooks, event)
            index = len(groups)
            _set_groups(hooks, event, [*groups, group])
            said.append((config.path, WHAT_HOOK.format(event=event, command=group["hooks"][0]["command"])))
        key, trusted = trust_key(config.key_path, label, index), hook_trust(label, group)
        if _plain(state.get(key)) != {"trusted_hash": trusted}:
            entry = tomlkit.inline_table()
            entry["trusted_hash"] = trusted
            state[key] = entry
            said.append((user.path, WHAT_TRUST.format(key=key, hash=trusted)))
    _prune(user)
    return _write(config, user, said)


def _prune(user: ConfigFile) -> None:
    hooks = user.document.get("hooks")
    if isinstance(hooks, dict):
        if "state" in hooks and not hooks["state"]:
            del hooks["state"]
        if not hooks:
            del user.document["hooks"]


def uninstall(home: Path | None = None, project: Path | None = None) -> list[str]:
    """Take memrepo's entries out of Codex's config.toml (with `project`, out of the project's
    .codex/config.toml, and their trust out of the user's); the lines to print (empty: there
    were none)."""
    config, user = _files(home, project)
    document = config.document
    said: list[tuple[Path, str]] = []
    servers = document.get("mcp_servers")
    if isinstance(servers, dict) and looks_like_ours(_plain(servers.get(SERVER))):
        del servers[SERVER]
        said.append((config.path, WHAT_REMOVED.format(what=WHAT_SERVER)))
        if not servers:
            del document["mcp_servers"]
    hooks = document.get("hooks")
    if isinstance(hooks, dict):
        user_hooks = user.document.get("hooks")
        state = user_hooks.get("state") if isinstance(user_hooks, dict) else None
        state = state if isinstance(state, dict) else {}
        for event, label, _ in HOOKS:
            before = len(_groups(config, hooks, event))
            _take_out_ours(config, hooks, state, event, label)
            if len(_groups(config, hooks, event)) != before:
                said.append((config.path, WHAT_REMOVED.format(what=WHAT_HOOKS_OF.format(event=event))))
        _prune(user)
        if "hooks" in document and not document["hooks"]:
            del document["hooks"]
    return _write(config, user, said)
