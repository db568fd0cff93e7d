"""`memrepo validate`: the pre-commit hook, CI and people run the same rules."""

from __future__ import annotations

import argparse
import sys

from bot.commands import texts
from bot.texts import Text

VALIDATE_OK = Text("Memory is valid ({count:|file|files} checked).")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help=texts.VALIDATE_HELP,
                       description=texts.VALIDATE_DESCRIPTION)
    p.add_argument("paths", nargs="*", metavar="PATH", help=texts.VALIDATE_PATHS_HELP)
    p.add_argument("--repo", default=".", metavar="DIR")
    p.add_argument("-q", "--quiet", action="store_true", help=texts.VALIDATE_QUIET_HELP)
    p.add_argument("--json", action="store_true", help=texts.VALIDATE_JSON_HELP)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--staged", action="store_true", help=texts.VALIDATE_STAGED_HELP)
    mode.add_argument("--base", metavar="REV", help=texts.VALIDATE_BASE_HELP)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bot.memfs import MemoryRepo, checks, format_problems

    repo = MemoryRepo.open(args.repo)
    base = "HEAD"
    if args.staged:
        changes = checks.staged(repo)
    elif args.base:
        changes = checks.between(repo, args.base)
        base = args.base
    else:
        changes = checks.worktree(repo, args.paths)
    if args.paths and (args.staged or args.base):
        wanted = tuple(p.strip("/") for p in args.paths)
        changes = {p: c for p, c in changes.items()
                   if any(p == w or p.startswith(w + "/") for w in wanted)}
    problems = checks.check(repo, changes, base)
    if not args.quiet and not args.json:
        from bot.commands.ci import stale_warning

        warning = stale_warning(repo.root)
        if warning:
            print(warning, file=sys.stderr)
    if args.json:
        import json

        mode = "staged" if args.staged else "base" if args.base else "worktree"
        print(json.dumps({"valid": not problems, "mode": mode, "base": args.base, "checked": len(changes),
                          "problems": [{"path": p.path, "message": p.message} for p in problems]},
                         indent=2, ensure_ascii=False))
        return 1 if problems else 0
    if problems:
        print(format_problems(problems))
        return 1
    if not args.quiet:
        print(VALIDATE_OK.format(count=len(changes)))
    return 0
