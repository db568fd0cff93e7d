"""`memrepo claude-code`: wire Claude Code in a project to a memory (install, uninstall), and
the hooks install registers (`hook session-start`, `hook prompt`, `hook stop`, `hook session-end`,
`hook post-tool`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.claude_code import texts
from bot.claude_code.auto_memory import DEFAULT_FOLDER
from bot.claude_code.hook import EVENTS


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("claude-code", help=texts.CLAUDE_CODE_HELP,
                                   description=texts.CLAUDE_CODE_DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    install = actions.add_parser("install", help=texts.INSTALL_HELP, description=texts.INSTALL_HELP)
    install.add_argument("--repo", metavar="MEMDIR", default=".", help=texts.REPO_HELP)
    install.add_argument("--auto-memory", metavar="FOLDER", nargs="?", const=DEFAULT_FOLDER,
                         help=texts.AUTO_MEMORY_HELP)
    uninstall = actions.add_parser("uninstall", help=texts.UNINSTALL_HELP, description=texts.UNINSTALL_HELP)
    for action in (install, uninstall):
        action.add_argument("--project", metavar="DIR", default=".", help=texts.PROJECT_HELP)
    install.set_defaults(func=run_install)
    uninstall.set_defaults(func=run_uninstall)
    hook = actions.add_parser("hook", help=texts.HOOK_HELP, description=texts.HOOK_HELP)
    hook.add_argument("event", choices=list(EVENTS), help=texts.HOOK_EVENT_HELP)
    hook.add_argument("--repo", metavar="MEMDIR", default=".", help=texts.REPO_HELP)
    hook.set_defaults(func=run_hook)


def run_install(args: argparse.Namespace) -> int:
    from bot.claude_code.install import install, memory_trust

    lines = install(Path(args.repo), Path(args.project), auto_memory=args.auto_memory)
    project, repo = Path(args.project).resolve(), Path(args.repo).resolve()
    print((texts.INSTALLED if lines else texts.ALREADY_INSTALLED).format(project=project, repo=repo))
    for line in lines:
        print(line)
    print(memory_trust(repo))
    return 0


def run_uninstall(args: argparse.Namespace) -> int:
    from bot.claude_code.install import uninstall

    lines = uninstall(Path(args.project))
    print((texts.UNINSTALLED if lines else texts.NOT_INSTALLED).format(project=Path(args.project).resolve()))
    for line in lines:
        print(line)
    return 0


def run_hook(args: argparse.Namespace) -> int:
    from bot.claude_code.hook import run

    return run(args.event, args.repo)
