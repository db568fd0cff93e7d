"""`memrepo shared`: attach shared memories to an agent's memory, and detach, list and sync them
(bot/memfs/shared/). The record is committed in the agent's memory, so its history says when
each was attached and by whom."""

from __future__ import annotations

import argparse
import json

from bot.commands import texts
from bot.commands.actions import actions

SHARED_ATTACH_HELP = "attach the shared memory at URL: clone its projection and record it in this memory"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("shared", help=texts.SHARED_HELP, description=texts.SHARED_HELP)
    action = actions(parser, repo_help=texts.SHARED_DIR_HELP, repo_metavar="MEM")

    attach = action("attach", SHARED_ATTACH_HELP, run_attach)
    attach.add_argument("url", metavar="URL", help=texts.SHARED_URL_HELP)
    attach.add_argument("--as", dest="name", metavar="NAME", help=texts.SHARED_AS_HELP)
    attach.add_argument("--read-only", action="store_true", help=texts.SHARED_READ_ONLY_HELP)
    detach = action("detach", "detach the shared memory NAME and remove its projection", run_detach)
    detach.add_argument("name", metavar="NAME", help=texts.SHARED_NAME_HELP)
    listing = action("list", "list the attached shared memories: name, URL, projected HEAD, state", run_list)
    listing.add_argument("--json", action="store_true", help=texts.SHARED_JSON_HELP)
    action("sync", "bring every attachment's projection to its forge's main", run_sync)


def run_attach(args: argparse.Namespace) -> int:
    from bot.memfs import MemoryRepo
    from bot.memfs import shared_projection as shared

    print(shared.attach(MemoryRepo.open(args.repo), args.url, name=args.name, read_only=args.read_only))
    return 0


def run_detach(args: argparse.Namespace) -> int:
    from bot.memfs import MemoryRepo
    from bot.memfs import shared_projection as shared

    print(shared.detach(MemoryRepo.open(args.repo), args.name))
    return 0


def run_list(args: argparse.Namespace) -> int:
    from bot.memfs import MemoryRepo
    from bot.memfs import shared_projection as shared

    repo = MemoryRepo.open(args.repo)
    rows = shared.rows(repo)
    if args.json:
        print(json.dumps([row.as_data() for row in rows], indent=2))
        return 0
    if not rows:
        print(f"no shared memory is attached to {repo.root}")
    states = {"missing": "not projected (memrepo shared sync)", "read-only": "read-only",
              "read-write": "read-write"}
    for row in rows:
        print("{name}  {url}  {head}  {state}".format(name=row.name, url=row.url, head=(row.head or "-")[:12],
                                           state=states[row.state]))
    return 0


def run_sync(args: argparse.Namespace) -> int:
    from bot.memfs import MemoryRepo
    from bot.memfs import shared_projection as shared
    from bot.pullrequest import git_token

    done = shared.sync_all(MemoryRepo.open(args.repo), ready=git_token.ensure)  # as the recorded identity
    for one in done:
        print(one.line)
    return 0 if all(one.ok for one in done) else 1
