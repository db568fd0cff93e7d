"""`memrepo follow`: keep a memory folder that a harness writes itself on one main with its
forge (bot/follow). Ctrl-C and SIGTERM stop it cleanly, after the pass under way."""

from __future__ import annotations

import argparse
import logging
import math
import signal
import sys

from bot.commands import texts
from bot.errors import MemrepoError
from bot.follow import texts as follow_texts

POLL_SECONDS = 30.0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("follow", help=texts.FOLLOW_HELP, description=follow_texts.FOLLOW_DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", metavar="DIR", default=".", help=follow_texts.FOLLOW_REPO_HELP)
    parser.add_argument("--events", metavar="URL", help=follow_texts.FOLLOW_EVENTS_HELP)
    parser.add_argument("--poll", type=float, default=POLL_SECONDS, metavar="SECONDS",
                        help=follow_texts.FOLLOW_POLL_HELP.format(default=POLL_SECONDS))
    parser.add_argument("--transcripts", metavar="DIR", nargs="?", const="", help=follow_texts.FOLLOW_TRANSCRIPTS_HELP)
    parser.add_argument("--home", metavar="DIR", help=texts.HOME_HELP)
    parser.add_argument("--once", action="store_true", help=follow_texts.FOLLOW_ONCE_HELP)
    parser.set_defaults(func=run)


def say(line: str) -> None:
    print(line, flush=True)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from bot.agent.write_path import CommitRouter
    from bot.follow.run import Follower
    from bot.follow.transcripts import letta_importer
    from bot.notify.follower import repo_of_url

    if not (math.isfinite(args.poll) and args.poll > 0):
        raise MemrepoError(follow_texts.FOLLOW_BAD_POLL.format(value=args.poll))
    if args.events:
        repo_of_url(args.events)  # a malformed URL is refused before anything starts
    importer = letta_importer(args.transcripts or None, args.home, Path(args.repo)) \
        if args.transcripts is not None else None
    follower = Follower(Path(args.repo), events=args.events, poll=args.poll, say=say, importer=importer,
                        router=CommitRouter())
    if args.once:
        return follower.once()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="memrepo follow: %(message)s")
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: follower.stop())
    return follower.run()
