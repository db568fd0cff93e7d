"""`memrepo shared`: attach shared memories to an agent's memory, and detach, list and sync them
(bot/memfs/shared/). The record is committed in the agent's memory, so its history says when
each was attached and by whom."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from bot.commands import texts


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("shared", help=texts.SHARED_HELP, description=texts.SHARED_HELP)
    sub = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    def action(name: str, help_text: str, func: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--repo", metavar="MEM", default=".", help=texts.SHARED_DIR_HELP)
        p.set_defaults(func=func)
        return p

    attach = action("attach", texts.SHARED_ATTACH_HELP, run_attach)
    attach.add_argument("url", metavar="URL", help=texts.SHARED_URL_HELP)
    attach.add_argument("--as", dest="name", metavar="NAME", help=texts.SHARED_AS_HELP)
    attach.add_argument("--read-only", action="store_true", help=texts.SHARED_READ_ONLY_HELP)
    detach = action("detach", texts.SHARED_DETACH_HELP, run_detach)
    detach.add_argument("name", metavar="NAME", help=texts.SHARED_NAME_HELP)
    listing = action("list", texts.SHARED_LIST_HELP, run_list)
    listing.add_argument("--json", action="store_true", help=texts.SHARED_JSON_HELP)
    action("sync", texts.SHARED_SYNC_HELP, run_sync)


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
    from bot.memfs import MemoryRepo, shared_texts
    from bot.memfs import shared_projection as shared

    repo = MemoryRepo.open(args.repo)
    rows = shared.rows(repo)
    if args.json:
        print(json.dumps([row.as_data() for row in rows], indent=2))
        return 0
    if not rows:
        print(shared_texts.LIST_NONE.format(path=repo.root))
    states = {"missing": shared_texts.STATE_MISSING, "read-only": shared_texts.STATE_READ_ONLY,
              "read-write": shared_texts.STATE_WRITABLE}
    for row in rows:
        print(shared_texts.LIST_ROW.format(name=row.name, url=row.url, head=(row.head or "-")[:12],
                                           state=states[row.state]))
    return 0


def run_sync(args: argparse.Namespace) -> int:
    from bot.memfs import MemoryRepo
    from bot.memfs import shared_projection as shared

    done = shared.sync_all(MemoryRepo.open(args.repo))
    for one in done:
        print(one.line)
    return 0 if all(one.ok for one in done) else 1
