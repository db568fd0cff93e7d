"""`memrepo why PATH[:LINE]`: the chain of evidence behind a line of memory."""

from __future__ import annotations

import argparse
import json
import re

from bot.commands import texts
from bot.provenance.why import EXIT_NO_SUCH_LINE, NoSuchLineError, render_why, why

WHY_BAD_LINE = "{value!r} is not a line number: write PATH:LINE with LINE a whole number from 1"

_NUMBERISH = re.compile(r"\s*[+-]?\d*([.,]\d*)?\s*")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("why", help=texts.WHY_HELP, description=texts.WHY_DESCRIPTION,
                       epilog=texts.HISTORY_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("target", metavar="PATH[:LINE]", help=texts.WHY_TARGET_HELP)
    p.add_argument("--repo", default=".", metavar="DIR", help=texts.WHY_REPO_HELP)
    p.add_argument("--json", action="store_true", help=texts.WHY_JSON_HELP)
    p.add_argument("--no-forge", action="store_true", help=texts.WHY_NO_FORGE_HELP)
    p.add_argument("--no-transcripts", action="store_true", help=texts.WHY_NO_TRANSCRIPTS_HELP)
    p.add_argument("--home", metavar="DIR", help=texts.WHY_HOME_HELP)
    p.set_defaults(func=run)


def split_target(target: str) -> tuple[str, int | None]:
    """`path:12` -> ("path", 12); `path` -> ("path", None). A suffix after the last colon that
    looks like a number but is not a whole number from 1 is refused (`x.md:0`, `x.md:2.5`)."""
    path, sep, suffix = target.rpartition(":")
    if not sep:
        return target, None
    if suffix.isdecimal() and suffix.isascii() and int(suffix) >= 1:
        return path, int(suffix)
    if _NUMBERISH.fullmatch(suffix):
        raise NoSuchLineError(WHY_BAD_LINE.format(value=suffix), exit_code=EXIT_NO_SUCH_LINE)
    return target, None


def run(args: argparse.Namespace) -> int:
    path, line = split_target(args.target)
    transcripts = False if args.no_transcripts else None
    store = None
    if transcripts is None and args.home:
        from bot.transcript.store import TranscriptStore

        store = transcripts = TranscriptStore(args.home)
    try:
        report = why(args.repo, path, line, forge=False if args.no_forge else None, transcripts=transcripts)
    finally:
        if store is not None:
            store.close()
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(render_why(report), end="")
    return 0
