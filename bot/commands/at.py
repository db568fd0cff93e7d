"""`memrepo at DATE [PATH]`: memory as it was at a moment (main's first-parent history)."""

from __future__ import annotations

import argparse
import json

from bot import texts as shared_texts
from bot.commands import texts
from bot.dates import parse_when
from bot.memfs import at

AT_HEADER = "memory at {when}: commit {sha} on {ref} from {committed} by {author} ({role}){latest}\n  {summary}"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("at", help=texts.AT_HELP,
                       description=texts.AT_DESCRIPTION.format(forms=shared_texts.HISTORY_DATE_FORMS),
                       epilog=texts.HISTORY_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("date", metavar="DATE", help=texts.AT_DATE_HELP)
    p.add_argument("path", nargs="?", metavar="PATH", help=texts.AT_PATH_HELP)
    p.add_argument("--repo", default=".", metavar="DIR", help=texts.WHY_REPO_HELP)
    p.add_argument("--json", action="store_true", help=texts.AT_JSON_HELP)
    p.set_defaults(func=run)


def render_at(report: dict) -> str:
    """A file's text as it was, or the tree's listing under a one-line header."""
    if report.get("path") is not None:
        return report["text"]
    lines = [AT_HEADER.format(
        when=report["when"], sha=report["commit"][:10], ref=report["ref"],
        committed=report["committed_at"].replace("T", " "), author=report["author"]["name"], role=report["role"],
        latest=", main's latest" if report["latest"] else "", summary=report["summary"])]
    for f in report["files"]:
        lines.append("{size:>8}  {path}{description}".format(size=f["size"], path=f["path"],
                                               description=f"  — {f['description']}" if f["description"] else ""))
    if not report["files"]:
        lines.append("(no files)")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    report = at(args.repo, parse_when(args.date), args.path)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(render_at(report), end="")  # a file's bytes exactly as they were
    return 0
