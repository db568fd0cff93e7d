"""`memrepo log`: memory's history, with who (which kind of writer) wrote each change."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta, timezone

from bot import messages
from bot.identity import role_of
from bot.memfs import paths
from bot.memfs.repo import MemoryRepo


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("log", help="show memory's history with each writer's role",
                       description="Show the history of memory (or of one file), newest first.")
    p.add_argument("path", nargs="?", metavar="PATH")
    p.add_argument("--repo", default=".", metavar="DIR")
    p.add_argument("-n", "--max-count", type=int, metavar="N", help="show at most N commits")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    repo = MemoryRepo.open(args.repo)
    path = paths.normalize(args.path, add_md=False) if args.path else None
    if path and repo.read(path) is None and repo.read(path + ".md") is not None:
        path += ".md"
    shown = 0
    for info in repo.log(path=path):
        if args.max_count is not None and shown >= args.max_count:
            break
        when = datetime.fromtimestamp(info.time, timezone(timedelta(minutes=info.offset_minutes)))
        print(messages.LOG_LINE.format(
            sha=info.sha[:10], when=when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ"),
            role=role_of(info.author_email), author=info.author_name, summary=info.summary))
        shown += 1
    if shown == 0 and args.max_count != 0:
        print(messages.LOG_EMPTY.format(path=path or "memory"))
    return 0
