"""`memrepo init`: create a memory repository."""

from __future__ import annotations

import argparse

from bot.commands import texts
from bot.errors import MemrepoError

INIT_REMOTE_FAILED = (
    "the memory repository in {path} was created, but connecting it failed: {problem}. "
    "Connect it later with `memrepo repository set {url} --repo {path}`"
)
INIT_DONE = "Created memory repository in {path} for agent {agent_id} ({commit})."


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("init", help=texts.INIT_HELP,
                       description=texts.INIT_DESCRIPTION)
    p.add_argument("directory", nargs="?", default=".", metavar="DIR")
    p.add_argument("--remote", metavar="URL", help=texts.INIT_REMOTE_HELP)
    p.add_argument("--agent-id", default="agent", metavar="ID", help=texts.INIT_AGENT_ID_HELP)
    p.add_argument("--agent-name", metavar="NAME", help=texts.INIT_AGENT_NAME_HELP)
    p.add_argument("--layout", choices=("v1", "v2"), default="v1", help=texts.INIT_LAYOUT_HELP)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bot.memfs import init_repository

    repo = init_repository(args.directory, args.agent_id, args.agent_name, args.layout)
    print(INIT_DONE.format(path=repo.root, agent_id=args.agent_id, commit=repo.head_sha()[:12]))
    if args.remote:
        from bot.memfs import sync

        try:
            print(sync.set_remote(repo, args.remote))
        except MemrepoError as exc:
            raise MemrepoError(INIT_REMOTE_FAILED.format(
                path=repo.root, problem=exc, url=sync.redact(args.remote))) from None
    return 0
