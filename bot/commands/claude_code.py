"""`memrepo claude-code`: wire Claude Code in a project to a memory (install, uninstall), and
the hooks install registers (`hook session-start`, `hook prompt`, `hook stop`, `hook session-end`,
`hook post-tool`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.claude_code import texts
from bot.claude_code.auto_memory import DEFAULT_FOLDER
from bot.claude_code.hook import EVENTS
from bot.commands import texts as command_texts

CLAUDE_CODE_DESCRIPTION = """\
Make `claude` started in a project use this memory with no further step, interactive or
headless (`claude -p`):

  - PROJECT/.mcp.json registers `memrepo mcp --claude-code --repo MEMDIR` as the MCP server
    "memrepo" (project scope: where Claude Code keeps a project's MCP servers); each write it
    makes names the session (Conversation-ID) and the turn (Transcript-Range);
  - PROJECT/.claude/settings.local.json (this machine's settings of the project, not shared)
    adds the hooks that put the compiled core memory in the model's context at session start
    (startup, resume, clear, compact) and again at the next prompt after the memory moved,
    and that import the session's transcript at the end of each turn and of the session
    (dreams then run on it as .memrepo/config.yml says); it approves the "memrepo" server of
    .mcp.json and allows its tools (mcp__memrepo). Headless runs deny tools no setting allows,
    and Claude Code ignores the allow rules of the shared .claude/settings.json in a folder
    nobody has trusted; it honours the local file's. It also sets MCP_CONNECTION_NONBLOCKING
    to false for the session: Claude Code otherwise sends a headless run's first request
    before the MCP server is connected, without the memory's tools.

With --auto-memory [FOLDER], settings.local.json also points Claude Code's auto memory
(autoMemoryDirectory) at FOLDER inside the memory and adds a PostToolUse hook on Write and Edit:
each write there is committed by the memory's agent with the session's provenance, under the
memory's rules (a protected path, a large edit or an untrusted turn becomes a pull request).

Entries already there are kept; running it again changes nothing. `uninstall` takes out what
install wrote and nothing else."""
INSTALL_HELP = "write the MCP server, permission and hooks for a project"
UNINSTALL_HELP = "take out what install wrote"
HOOK_HELP = "a Claude Code hook (reads the hook's JSON on standard input); install registers these"
PROJECT_HELP = "the project where `claude` is started (default: the current folder)"
HOOK_EVENT_HELP = ("session-start (SessionStart), prompt (UserPromptSubmit), stop (Stop), session-end (SessionEnd) "
                   "or post-tool (PostToolUse)")
AUTO_MEMORY_HELP = ("also keep Claude Code's own auto memory in FOLDER of the memory (default: auto-memory), "
                    "its writes committed, reviewed and synced like any agent edit")
INSTALLED = "memrepo claude-code: {project} uses the memory in {repo}"
ALREADY_INSTALLED = "memrepo claude-code: {project} already uses the memory in {repo}; nothing changed"
UNINSTALLED = "memrepo claude-code: took the memory out of {project}"
NOT_INSTALLED = "memrepo claude-code: {project} had nothing of memrepo; nothing changed"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("claude-code", help=texts.CLAUDE_CODE_HELP,
                                   description=CLAUDE_CODE_DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    install = actions.add_parser("install", help=INSTALL_HELP, description=INSTALL_HELP)
    install.add_argument("--repo", metavar="MEMDIR", default=".", help=command_texts.HARNESS_REPO_HELP)
    install.add_argument("--auto-memory", metavar="FOLDER", nargs="?", const=DEFAULT_FOLDER,
                         help=AUTO_MEMORY_HELP)
    uninstall = actions.add_parser("uninstall", help=UNINSTALL_HELP, description=UNINSTALL_HELP)
    for action in (install, uninstall):
        action.add_argument("--project", metavar="DIR", default=".", help=PROJECT_HELP)
    install.set_defaults(func=run_install)
    uninstall.set_defaults(func=run_uninstall)
    hook = actions.add_parser("hook", help=HOOK_HELP, description=HOOK_HELP)
    hook.add_argument("event", choices=list(EVENTS), help=HOOK_EVENT_HELP)
    hook.add_argument("--repo", metavar="MEMDIR", default=".", help=command_texts.HARNESS_REPO_HELP)
    hook.set_defaults(func=run_hook)


def run_install(args: argparse.Namespace) -> int:
    from bot.claude_code.install import install, memory_trust

    lines = install(Path(args.repo), Path(args.project), auto_memory=args.auto_memory)
    project, repo = Path(args.project).resolve(), Path(args.repo).resolve()
    print((INSTALLED if lines else ALREADY_INSTALLED).format(project=project, repo=repo))
    for line in lines:
        print(line)
    print(memory_trust(repo))
    return 0


def run_uninstall(args: argparse.Namespace) -> int:
    from bot.claude_code.install import uninstall

    lines = uninstall(Path(args.project))
    print((UNINSTALLED if lines else NOT_INSTALLED).format(project=Path(args.project).resolve()))
    for line in lines:
        print(line)
    return 0


def run_hook(args: argparse.Namespace) -> int:
    from bot.claude_code.hook import run

    return run(args.event, args.repo)
