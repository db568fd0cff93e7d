"""`memrepo log`: memory's history, with who (which kind of writer) wrote each change."""

from __future__ import annotations

import argparse
import math
from datetime import UTC, datetime, timedelta, timezone

from bot import messages
from bot.dates import EXIT_BAD_DATE, parse_when_bound
from bot.errors import MemrepoError
from bot.identity import role_of
from bot.memfs import paths
from bot.memfs.repo import MemoryRepo


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("log", help=messages.LOG_HELP,
                       description="Show the history of memory (or of one file), newest first.",
                       epilog=messages.HISTORY_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path", nargs="?", metavar="PATH")
    p.add_argument("--repo", default=".", metavar="DIR")
    p.add_argument("-n", "--max-count", type=int, metavar="N", help="show at most N commits")
    p.add_argument("--since", metavar="DATE", help=messages.LOG_SINCE_HELP)
    p.add_argument("--until", metavar="DATE", help=messages.LOG_UNTIL_HELP)
    p.set_defaults(func=run)


def time_window(since: str | None, until: str | None) -> tuple[int | None, int | None]:
    """[since, until] in whole seconds of commit time, both ends included; a date alone as
    `until` covers that whole day (as `memrepo search --until` does)."""
    lo = hi = None
    if since is not None:
        lo = math.ceil(parse_when_bound(since)[0].timestamp())
    if until is not None:
        moment, date_only = parse_when_bound(until)
        hi = math.floor((moment + timedelta(days=1)).timestamp()) - 1 if date_only else math.floor(moment.timestamp())
    if lo is not None and hi is not None and lo > hi:
        raise MemrepoError(messages.LOG_EMPTY_RANGE.format(since=since, until=until), exit_code=EXIT_BAD_DATE)
    return lo, hi


def run(args: argparse.Namespace) -> int:
    lo, hi = time_window(args.since, args.until)
    repo = MemoryRepo.open(args.repo)
    path = paths.normalize(args.path, add_md=False) if args.path else None
    if path and repo.read(path) is None and repo.read(path + ".md") is not None:
        path += ".md"
    shown = 0
    for info in repo.log(path=path):
        if args.max_count is not None and shown >= args.max_count:
            break
        if lo is not None or hi is not None:
            committed = repo.git[info.sha].commit_time
            if (lo is not None and committed < lo) or (hi is not None and committed > hi):
                continue
        when = datetime.fromtimestamp(info.time, timezone(timedelta(minutes=info.offset_minutes)))
        print(messages.LOG_LINE.format(
            sha=info.sha[:10], when=when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ"),
            role=role_of(info.author_email), author=info.author_name, summary=info.summary))
        shown += 1
    if shown == 0 and args.max_count != 0:
        if lo is None and hi is None:
            print(messages.LOG_EMPTY.format(path=path or "memory"))
        else:
            print(messages.LOG_NONE_IN_RANGE.format(path=path or "memory", since=args.since or "the start",
                                                    until=args.until or "now"))
    return 0
