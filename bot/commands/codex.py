"""`memrepo codex`: wire OpenAI's Codex CLI to a memory (install, uninstall), and the hooks
install registers (`hook session-start`, `hook prompt`, `hook stop`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.codex import texts
from bot.codex.hook import EVENTS


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("codex", help=texts.CODEX_HELP, description=texts.CODEX_DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    install = actions.add_parser("install", help=texts.INSTALL_HELP, description=texts.INSTALL_HELP)
    install.add_argument("--repo", metavar="MEMDIR", default=".", help=texts.REPO_HELP)
    uninstall = actions.add_parser("uninstall", help=texts.UNINSTALL_HELP, description=texts.UNINSTALL_HELP)
    for action in (install, uninstall):
        action.add_argument("--codex-home", metavar="DIR", help=texts.CODEX_HOME_HELP)
        action.add_argument("--project", metavar="DIR", help=texts.PROJECT_HELP)
    install.set_defaults(func=run_install)
    uninstall.set_defaults(func=run_uninstall)
    hook = actions.add_parser("hook", help=texts.HOOK_HELP, description=texts.HOOK_HELP)
    hook.add_argument("event", choices=list(EVENTS), help=texts.HOOK_EVENT_HELP)
    hook.add_argument("--repo", metavar="MEMDIR", default=".", help=texts.REPO_HELP)
    hook.add_argument("--codex-home", metavar="DIR", help=texts.CODEX_HOME_HELP)
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
    print((texts.INSTALLED if lines else texts.ALREADY_INSTALLED).format(config=config, repo=repo))
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
    print((texts.UNINSTALLED if lines else texts.NOT_INSTALLED).format(config=config))
    for line in lines:
        print(line)
    return 0


def run_hook(args: argparse.Namespace) -> int:
    from bot.codex.hook import run

    return run(args.event, args.repo, str(_home(args) / "sessions"))
