"""`memrepo codex`: wire OpenAI's Codex CLI to a memory (install, uninstall), and the hooks
install registers (`hook session-start`, `hook prompt`, `hook stop`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.codex import texts
from bot.codex.hook import EVENTS
from bot.commands import texts as command_texts

CODEX_DESCRIPTION = """\
Make `codex` (interactive, or headless `codex exec`) use this memory with no further step.
Install merges into Codex's own config.toml ($CODEX_HOME, else ~/.codex; every other key and
comment kept):

  - [mcp_servers.memrepo]: `memrepo mcp --codex --repo MEMDIR`, required = true, so that the
    first request already has its tools (Codex otherwise sends it before the server is up);
    each write names the Codex session (Conversation-ID, from the call's _meta) and the turn
    (Transcript-Range, by the rollout's own item ids);
  - [[hooks.SessionStart]], [[hooks.UserPromptSubmit]] and [[hooks.Stop]]: the compiled core
    memory in the model's context at session start and again at the next prompt after the
    memory moved (once per HEAD), and each turn's rollout imported at its end (dreams then
    run on it as .memrepo/config.yml says);
  - [hooks.state]: the trusted_hash Codex records when a person trusts a hook in /hooks, for
    each of these three hooks: `codex exec` skips a hook without it.

With --project DIR the server and hooks go in DIR/.codex/config.toml, for that project only
(Codex loads it only for a project the user trusts), and their trust in the user's config.toml.
Codex's own memories ($CODEX_HOME/memories) are left alone. Running install again changes
nothing; `uninstall` takes out what install wrote and nothing else."""
INSTALL_HELP = "write the MCP server, the hooks and their trust into Codex's config.toml"
UNINSTALL_HELP = "take out what install wrote"
HOOK_HELP = "a Codex hook (reads the hook's JSON on standard input); install registers these"
CODEX_HOME_HELP = "Codex's home, where its config.toml and sessions are (default: $CODEX_HOME, else ~/.codex)"
HOOK_EVENT_HELP = "session-start (SessionStart), prompt (UserPromptSubmit) or stop (Stop)"
INSTALLED = "memrepo codex: Codex ({config}) uses the memory in {repo}"
ALREADY_INSTALLED = "memrepo codex: Codex ({config}) already uses the memory in {repo}; nothing changed"
NOT_INSTALLED = "memrepo codex: {config} had nothing of memrepo; nothing changed"
PROJECT_HELP = ("the project whose .codex/config.toml gets the server and hooks (Codex loads it only for a trusted "
                "project; their trust goes in the user's config.toml); default: the user's config.toml, every project")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("codex", help=texts.CODEX_HELP, description=CODEX_DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    install = actions.add_parser("install", help=INSTALL_HELP, description=INSTALL_HELP)
    install.add_argument("--repo", metavar="MEMDIR", default=".", help=command_texts.HARNESS_REPO_HELP)
    uninstall = actions.add_parser("uninstall", help=UNINSTALL_HELP, description=UNINSTALL_HELP)
    for action in (install, uninstall):
        action.add_argument("--codex-home", metavar="DIR", help=CODEX_HOME_HELP)
        action.add_argument("--project", metavar="DIR", help=PROJECT_HELP)
    install.set_defaults(func=run_install)
    uninstall.set_defaults(func=run_uninstall)
    hook = actions.add_parser("hook", help=HOOK_HELP, description=HOOK_HELP)
    hook.add_argument("event", choices=list(EVENTS), help=HOOK_EVENT_HELP)
    hook.add_argument("--repo", metavar="MEMDIR", default=".", help=command_texts.HARNESS_REPO_HELP)
    hook.add_argument("--codex-home", metavar="DIR", help=CODEX_HOME_HELP)
    hook.set_defaults(func=run_hook)


def _home(args: argparse.Namespace) -> Path:
    from bot.transcript.codex_import import codex_home

    return Path(args.codex_home).expanduser().absolute() if args.codex_home else codex_home()


def run_install(args: argparse.Namespace) -> int:
    from bot.codex.install import CONFIG, ConfigFile, install, memory_trust, project_trust

    home, project = _home(args), _project(args)
    lines = install(Path(args.repo), home, project)
    repo = Path(args.repo).expanduser().resolve()
    config = (project / ".codex" if project else home) / CONFIG
    print((INSTALLED if lines else ALREADY_INSTALLED).format(config=config, repo=repo))
    for line in lines:
        print(line)
    if project is not None:
        print(project_trust(ConfigFile.read(home), project))
    print(memory_trust(repo))
    return 0


def _project(args: argparse.Namespace) -> Path | None:
    return Path(args.project).expanduser().resolve() if args.project else None


def run_uninstall(args: argparse.Namespace) -> int:
    from bot.codex.install import CONFIG, uninstall

    home, project = _home(args), _project(args)
    lines = uninstall(home, project)
    config = (project / ".codex" if project else home) / CONFIG
    print(("memrepo codex: took the memory out of {config}" if lines else NOT_INSTALLED).format(config=config))
    for line in lines:
        print(line)
    return 0


def run_hook(args: argparse.Namespace) -> int:
    from bot.codex.hook import run

    return run(args.event, args.repo, str(_home(args) / "sessions"))
