"""`memrepo transcript append|import|rebuild`: write agent transcripts and keep their index.

The transcript package is imported when a subcommand runs, not when the parser is built, so
other commands do not pay for it."""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING

from bot import messages

if TYPE_CHECKING:
    from bot.transcript import TranscriptStore


def add_home(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", metavar="DIR", help=messages.HOME_HELP)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("transcript", help=messages.TRANSCRIPT_HELP,
                                   description=messages.TRANSCRIPT_HELP)
    sub = parser.add_subparsers(title="subcommands", metavar="SUBCOMMAND", required=True)

    append = sub.add_parser("append", help=messages.TRANSCRIPT_APPEND_HELP,
                            description=messages.TRANSCRIPT_APPEND_HELP)
    append.add_argument("--agent", required=True, metavar="AGENT")
    append.add_argument("--conversation", required=True, metavar="ID")
    append.add_argument("--kind", required=True, metavar="KIND",
                        help="user, assistant, reasoning, tool_call, tool_result, system or compaction")
    append.add_argument("--text", required=True, metavar="TEXT", help=messages.TRANSCRIPT_TEXT_HELP)
    append.add_argument("--source", metavar="SOURCE", help=messages.TRANSCRIPT_SOURCE_HELP)
    append.add_argument("--time", metavar="ISO", help=messages.TRANSCRIPT_TIME_HELP)
    add_home(append)
    append.set_defaults(func=run_append)

    imp = sub.add_parser("import", help=messages.TRANSCRIPT_IMPORT_HELP,
                         description=messages.TRANSCRIPT_IMPORT_HELP)
    imp.add_argument("file", metavar="FILE", help="a JSON Lines file ('-' for standard input)")
    add_home(imp)
    imp.set_defaults(func=run_import)

    rebuild = sub.add_parser("rebuild", help=messages.TRANSCRIPT_REBUILD_HELP,
                             description=messages.TRANSCRIPT_REBUILD_HELP)
    rebuild.add_argument("--agent", metavar="AGENT", help="only this agent (default: every agent)")
    add_home(rebuild)
    rebuild.set_defaults(func=run_rebuild)


@contextlib.contextmanager
def open_store(args: argparse.Namespace) -> Iterator[TranscriptStore]:
    """The store for --home; its warnings are printed as one line each when the command ends
    (whether it succeeded or not), instead of Python's warning format."""
    from bot.transcript import TranscriptStore, TranscriptWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranscriptWarning)
        store = TranscriptStore(args.home)
        try:
            yield store
        finally:
            store.close()
            for text in store.warnings:
                print(messages.TRANSCRIPT_WARNING.format(message=text), file=sys.stderr)


def run_append(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.text == "-" else args.text
    with open_store(args) as store:
        message = store.append(args.agent, args.conversation, args.kind, text, source=args.source, at=args.time)
    print(message.message_id)
    return 0


class Progress:
    """A one-line progress bar on standard error, drawn only on a terminal."""

    WIDTH = 30

    def __init__(self) -> None:
        self.active = sys.stderr.isatty()
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.active or total <= 0:
            return
        filled = self.WIDTH * done // total
        print(messages.IMPORT_PROGRESS.format(done=done, total=total, bar="#" * filled + " " * (self.WIDTH - filled),
                                              percent=100 * done // total), end="", file=sys.stderr, flush=True)
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            print(file=sys.stderr)


def run_import(args: argparse.Namespace) -> int:
    progress = Progress()
    with open_store(args) as store:
        try:
            if args.file == "-":
                report = store.import_lines(sys.stdin.buffer.read().splitlines(), "standard input", progress)
            else:
                report = store.import_file(args.file, progress)
        finally:
            progress.close()
    print(messages.IMPORT_DONE.format(imported=report.imported, duplicates=report.duplicates,
                                      path="standard input" if args.file == "-" else args.file))
    return 0


def run_rebuild(args: argparse.Namespace) -> int:
    from bot.transcript import home

    with open_store(args) as store:
        done = store.rebuild(args.agent)
        if not done:
            print(messages.REBUILD_NOTHING.format(home=home.transcripts(store.home)))
        for agent, count in done.items():
            print(messages.REBUILD_DONE.format(agent=agent, count=count, logs=len(store.conversations(agent))))
    return 0
