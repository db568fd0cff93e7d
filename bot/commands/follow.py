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

FOLLOW_DESCRIPTION = """\
Keep a memory folder that a harness writes itself (Letta Code, or any agent that edits the
folder through a shell and commits with git) on one main with its forge, for as long as it runs.

  - The harness's commits are pushed as soon as they are made: fetch, replay onto the forge's
    main when it moved (what cannot be replayed is set aside on a backup ref and said), push,
    never forced.
  - What is merged on the forge (a dream, a person's edit) is brought into the folder at the
    receiver's head event (--events), or at the next fetch (--poll) when no stream is given.
    A harness that reads HEAD before each model call, as Letta Code does, sees it at once.
  - A working tree with uncommitted or staged changes, or new files not added yet, is never
    touched: follow waits, says so once, and goes on when the harness has committed.
  - Each commit is routed as the memory tool routes a call, by the policy of the forge's main:
    a protected path, a rule file (.memrepo/config.yml, .memfs.config.json), a large edit or a
    commit whose `Source` trailers name outside content is taken off the folder's main, kept
    on refs/memrepo/held/..., and proposed as a pull request that waits for the integrator or a
    person; the commits the policy allows are pushed. `repository status` lists what waits.
  - Letta Code's post-commit hook (`/memory-repository set`) may stay: a push of it that the
    forge refuses because main moved is repaired by the next pass, which replays and pushes.
    follow (and `repository set`) install a pre-push hook in the folder that refuses a push
    of main adding a commit the policy holds, so the hook's own push cannot land it before
    follow proposes it; a pre-push hook of your own is kept as pre-push.chained and runs after.

With --transcripts it also imports Letta Code's conversations into the transcript store as
they grow (as `memrepo transcript import --from letta` does), so dreams have them.

The folder must be connected first (`memrepo repository set URL --repo DIR`). The event stream
is opened with the agent's forge token (the identity `memrepo identity set` recorded,
MEMREPO_FORGE_TOKEN, GITHUB_TOKEN, or the token in origin's URL). `memrepo repository status`
shows whether a follower runs. Ctrl-C (or SIGTERM) stops it after the pass under way."""
FOLLOW_REPO_HELP = "the memory folder the harness writes (default: the current folder)"
FOLLOW_EVENTS_HELP = ("the receiver's event stream, http(s)://HOST/v1/repos/OWNER/NAME/events: take the forge's main "
                      "at each head event (without it, follow polls)")
FOLLOW_POLL_HELP = ("fetch the forge's main every SECONDS (default: {default:g}); with --events, only while the "
                    "stream is down")
FOLLOW_TRANSCRIPTS_HELP = ("also import Letta Code's transcripts from DIR as they grow, every poll, so dreams have "
                           "them (default DIR: $LETTA_TRANSCRIPT_ROOT, else ~/.letta/transcripts)")
FOLLOW_ONCE_HELP = ("one pass (push, pull or replay), then exit: 1 if a commit was set aside, if the pull request of "
                    "a commit held for review could not be opened, or if nothing could be synced or imported")

POLL_SECONDS = 30.0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("follow", help=texts.FOLLOW_HELP, description=FOLLOW_DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", metavar="DIR", default=".", help=FOLLOW_REPO_HELP)
    parser.add_argument("--events", metavar="URL", help=FOLLOW_EVENTS_HELP)
    parser.add_argument("--poll", type=float, default=POLL_SECONDS, metavar="SECONDS",
                        help=FOLLOW_POLL_HELP.format(default=POLL_SECONDS))
    parser.add_argument("--transcripts", metavar="DIR", nargs="?", const="", help=FOLLOW_TRANSCRIPTS_HELP)
    parser.add_argument("--home", metavar="DIR", help=texts.HOME_HELP)
    parser.add_argument("--once", action="store_true", help=FOLLOW_ONCE_HELP)
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
        raise MemrepoError(texts.BAD_POLL.format(poll=args.poll))
    if args.events:
        repo_of_url(args.events)  # a malformed URL is refused before anything starts
    importer = letta_importer(args.transcripts or None, args.home, Path(args.repo)) \
        if args.transcripts is not None else None
    follower = Follower(Path(args.repo), events=args.events, poll=args.poll, say=say, importer=importer,
                        router=CommitRouter(home=args.home))
    if args.once:
        return follower.once()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="memrepo follow: %(message)s")
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: follower.stop())
    return follower.run()
