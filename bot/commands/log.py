"""`memrepo log`: memory's history, with who (which kind of writer) wrote each change."""

from __future__ import annotations

import argparse
import math
from datetime import timedelta
from typing import Any

from bot.commands import texts
from bot.dates import EXIT_BAD_DATE, parse_when_bound
from bot.errors import MemrepoError

LOG_LINE = "{sha}  {when}  {role:<10}  {author:<20}  {summary}"
LOG_EMPTY = "no commits touch {path}"
LOG_EMPTY_RANGE = "--since {since} is after --until {until}; nothing can be in between"
LOG_NONE_IN_RANGE = "no commits touch {path} between {since} and {until}"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("log", help=texts.LOG_HELP,
                       description=texts.LOG_DESCRIPTION,
                       epilog=texts.HISTORY_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path", nargs="?", metavar="PATH")
    p.add_argument("--repo", default=".", metavar="DIR")
    p.add_argument("-n", "--max-count", type=int, metavar="N", help=texts.LOG_MAX_COUNT_HELP)
    p.add_argument("--since", metavar="DATE", help=texts.LOG_SINCE_HELP)
    p.add_argument("--until", metavar="DATE", help=texts.LOG_UNTIL_HELP)
    p.add_argument("--json", action="store_true", help=texts.LOG_JSON_HELP)
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
        raise MemrepoError(LOG_EMPTY_RANGE.format(since=since, until=until), exit_code=EXIT_BAD_DATE)
    return lo, hi


def entry(sha: str, time: str, author_name: str, author_email: str, role: str, summary: str,
          paths: list[str]) -> dict[str, Any]:
    """One commit as `memrepo log --json` gives it."""
    return {"sha": sha, "time": time, "author": {"name": author_name, "email": author_email}, "role": role,
            "summary": summary, "paths": paths}


def run(args: argparse.Namespace) -> int:
    import json

    from bot.identity import writer
    from bot.memfs import MemoryRepo, iso, paths

    lo, hi = time_window(args.since, args.until)
    repo = MemoryRepo.open(args.repo)
    # Any tracked file has a history worth reading, the policy's included: no write rules here.
    path = paths.normalize(args.path, add_md=False, reserved=False) if args.path else None
    if path and repo.read(path) is None and repo.read(path + ".md") is not None:
        path += ".md"
    entries: list[dict[str, Any]] = []
    shown = 0
    for info in repo.log(path=path):
        if args.max_count is not None and shown >= args.max_count:
            break
        commit = repo.git[info.sha]
        if (lo is not None and commit.commit_time < lo) or (hi is not None and commit.commit_time > hi):
            continue
        role = writer(info.author_email, commit.committer.email, info.message)
        if args.json:
            entries.append(entry(info.sha, iso(info.time), info.author_name, info.author_email, role, info.summary,
                                 _changed_paths(repo.git, commit)))
        else:
            print(LOG_LINE.format(sha=info.sha[:10], when=iso(info.time).replace("T", " "), role=role,
                                        author=info.author_name, summary=info.summary))
        shown += 1
    if args.json:
        print(json.dumps(entries, indent=2, ensure_ascii=False))
    elif shown == 0 and args.max_count != 0:
        if lo is None and hi is None:
            print(LOG_EMPTY.format(path=path or "memory"))
        else:
            print(LOG_NONE_IN_RANGE.format(path=path or "memory", since=args.since or "the start",
                                                 until=args.until or "now"))
    return 0


def _changed_paths(git: Any, commit: Any) -> list[str]:
    """The files a commit changed on the line it is on: against its first parent (for a merge,
    what it brought in), or every file of a root commit."""
    diff = git.diff(commit.parents[0].tree, commit.tree) if commit.parents else commit.tree.diff_to_tree(swap=True)
    found = set()
    for delta in diff.deltas:
        found.update((delta.old_file.path, delta.new_file.path))
    return sorted(found)
