"""`memrepo clone`: join a memory repository in one step (a working clone with memrepo's hook,
the agent's identity and origin connected)."""

from __future__ import annotations

import argparse

from bot.commands import texts

CLONE_DONE = (
    "Cloned {url} into {path} for agent {agent_id}: main at {commit}, connected as origin, "
    "pre-commit hook installed."
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("clone", help=texts.CLONE_HELP, description=texts.CLONE_DESCRIPTION)
    p.add_argument("url", metavar="URL", help=texts.CLONE_URL_HELP)
    p.add_argument("directory", nargs="?", metavar="DIR", help=texts.CLONE_DIR_HELP)
    p.add_argument("--agent-id", default="agent", metavar="ID", help=texts.CLONE_AGENT_ID_HELP)
    p.add_argument("--agent-name", metavar="NAME", help=texts.CLONE_AGENT_NAME_HELP)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bot.memfs import clone_repository
    from bot.memfs.sync import redact, remote_url

    repo = clone_repository(args.url, args.directory, args.agent_id, args.agent_name)
    print(CLONE_DONE.format(url=redact(remote_url(repo) or ""), path=repo.root, agent_id=args.agent_id,
                                  commit=(repo.head_sha() or "")[:12]))
    return 0
