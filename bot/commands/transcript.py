"""`memrepo transcript append|import|rebuild`: write agent transcripts and keep their index.

The transcript package is imported when a subcommand runs, not when the parser is built, so
other commands do not pay for it. Long work (rebuilding an index, importing, a dream reading a
long conversation) draws a progress bar on standard error with tqdm, only when standard error
is a terminal (MEMREPO_PROGRESS=1 draws it anyway, =0 never), so pipes and logs get none; tqdm
is imported only when a bar is drawn."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TextIO

from bot.commands import texts
from bot.errors import MemrepoError

if TYPE_CHECKING:
    from bot.transcript import TranscriptStore
    from bot.transcript.store import Progress
from bot.texts import Text
from bot.transcript.texts import LETTA_PLACES

# memrepo transcript and search.
IMPORT_DONE = Text(
    "imported {imported:|row|rows} from {path}; {duplicates:|duplicate|duplicates} skipped (same message_id)"
)
IMPORT_NEEDS_FILE = (
    "name the JSON Lines file to import ('-' for standard input), or import Letta Code's or Claude Code's "
    "transcripts with --from letta or --from claude-code"
)
CLAUDE_NEEDS_AGENT = (
    "which agent's sessions are these? Give --agent ID, or --repo DIR of a memory with an agent "
    "(memrepo.agentId in its git config)"
)
REBUILD_DONE = Text("rebuilt the search index of agent {agent}: {count:,|message|messages} from {logs:|log|logs}")
LETTA_NONE = (
    "no Letta Code transcripts in {path}: no transcript.jsonl in it, in its folders (one agent's "
    "conversations) or in theirs (every agent's); " + LETTA_PLACES
)

PROGRESS_ENV = "MEMREPO_PROGRESS"  # 1: always draw progress bars, 0: never; unset: on a terminal
PROGRESS_DELAY = 0.5  # seconds a task runs before its bar appears on a terminal (short work shows none)


def add_home(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", metavar="DIR", help=texts.HOME_HELP)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("transcript", help=texts.TRANSCRIPT_HELP,
                                   description=texts.TRANSCRIPT_HELP)
    sub = parser.add_subparsers(title="subcommands", metavar="SUBCOMMAND", required=True)

    append = sub.add_parser("append", help=texts.TRANSCRIPT_APPEND_HELP,
                            description=texts.TRANSCRIPT_APPEND_HELP)
    append.add_argument("--agent", required=True, metavar="AGENT")
    append.add_argument("--conversation", required=True, metavar="ID")
    append.add_argument("--kind", required=True, metavar="KIND",
                        help=texts.TRANSCRIPT_KIND_HELP)
    append.add_argument("--text", required=True, metavar="TEXT", help=texts.TRANSCRIPT_TEXT_HELP)
    append.add_argument("--source", metavar="SOURCE", help=texts.TRANSCRIPT_SOURCE_HELP)
    append.add_argument("--time", metavar="ISO", help=texts.TRANSCRIPT_TIME_HELP)
    add_home(append)
    append.set_defaults(func=run_append)

    imp = sub.add_parser("import", help=texts.TRANSCRIPT_IMPORT_HELP,
                         description=texts.TRANSCRIPT_IMPORT_HELP)
    imp.add_argument("--from", dest="format", choices=("memrepo", "letta", "claude-code", "codex"), default="memrepo",
                     help=texts.TRANSCRIPT_IMPORT_FROM_HELP)
    imp.add_argument("file", metavar="PATH", nargs="?", help=texts.TRANSCRIPT_IMPORT_PATH_HELP)
    imp.add_argument("--agent", metavar="AGENT", help=texts.TRANSCRIPT_IMPORT_AGENT_HELP)
    imp.add_argument("--repo", metavar="DIR", default=".", help=texts.TRANSCRIPT_IMPORT_REPO_HELP)
    add_home(imp)
    imp.set_defaults(func=run_import)

    rebuild = sub.add_parser("rebuild", help=texts.TRANSCRIPT_REBUILD_HELP,
                             description=texts.TRANSCRIPT_REBUILD_HELP)
    rebuild.add_argument("--agent", metavar="AGENT", help=texts.TRANSCRIPT_REBUILD_AGENT_HELP)
    add_home(rebuild)
    rebuild.set_defaults(func=run_rebuild)


class ProgressBars:
    """The store's progress hook, drawn as one tqdm bar per task on standard error; nothing at
    all (tqdm not even imported) unless standard error is a terminal or MEMREPO_PROGRESS=1."""

    LABELS: ClassVar[dict[str, str]] = {"index": "indexing transcripts", "read": "reading the transcript",
                                        "import": "importing"}

    def __init__(self, stream: TextIO | None = None, env: Mapping[str, str] | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        wanted = (os.environ if env is None else env).get(PROGRESS_ENV, "")
        self.forced = wanted == "1"
        self.active = self.forced or (wanted != "0" and self.stream.isatty())
        self.bar: Any = None
        self.task: str | None = None

    def __call__(self, task: str, done: int, total: int) -> None:
        if not self.active or total <= 0:
            return
        if self.bar is None or task != self.task or done < self.bar.n:
            self.close()
            from tqdm import tqdm

            in_bytes = task != "import"
            self.bar = tqdm(total=total, desc=self.LABELS.get(task, task), file=self.stream, leave=True,
                            unit="B" if in_bytes else " rows", unit_scale=in_bytes, unit_divisor=1024,
                            delay=0 if self.forced else PROGRESS_DELAY, dynamic_ncols=True)
            self.task = task
        self.bar.update(done - self.bar.n)
        if done >= total:
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar, self.task = None, None


@contextlib.contextmanager
def open_store(args: argparse.Namespace, progress: Progress | None = None) -> Iterator[TranscriptStore]:
    """The store for --home; its warnings are printed as one line each when the command ends
    (whether it succeeded or not), instead of Python's warning format. `progress`: the store's
    progress hook (a ProgressBars)."""
    from bot.transcript import TranscriptStore, TranscriptWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranscriptWarning)
        store = TranscriptStore(args.home, progress=progress)
        try:
            yield store
        finally:
            store.close()
            for text in store.warnings:
                print(f"memrepo: warning: {text}", file=sys.stderr)


def run_append(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.text == "-" else args.text
    with open_store(args) as store:
        message = store.append(args.agent, args.conversation, args.kind, text, source=args.source, at=args.time)
    print(message.message_id)
    return 0


def run_import(args: argparse.Namespace) -> int:
    if args.format == "letta":
        return run_import_letta(args)
    if args.format == "claude-code":
        return run_import_claude_code(args)
    if args.format == "codex":
        return run_import_codex(args)
    if args.file is None:
        raise MemrepoError(IMPORT_NEEDS_FILE)
    bars = ProgressBars()
    with open_store(args, bars) as store:
        try:
            if args.file == "-":
                report = store.import_lines(sys.stdin.buffer.read().splitlines(), "standard input")
            else:
                report = store.import_file(args.file)
        finally:
            bars.close()
    print(IMPORT_DONE.format(imported=report.imported, duplicates=report.duplicates,
                                   path="standard input" if args.file == "-" else args.file))
    return 0


def run_import_letta(args: argparse.Namespace) -> int:
    """Letta Code's transcripts: one line saying what was imported; what a person should know
    (a transcript read again from the start, an unfinished last line) as warnings."""
    from bot.transcript.letta_import import default_root, import_letta

    path = args.file or default_root()
    report = import_harness(args, lambda store: import_letta(store, path))
    if not report.conversations:
        raise MemrepoError(LETTA_NONE.format(path=path))
    print(report.describe(path))
    return 0


def run_import_claude_code(args: argparse.Namespace) -> int:
    """Claude Code's sessions, for the agent named or the memory's: one line saying what was
    imported; a session read again from the start as a warning."""
    from bot.transcript.claude_code_import import default_root, import_claude_code

    agent = args.agent or memory_agent(args.repo)
    path = args.file or default_root()
    print(import_harness(args, lambda store: import_claude_code(store, agent, path)).describe(path))
    return 0


def run_import_codex(args: argparse.Namespace) -> int:
    """Codex's rollouts, for the agent named or the memory's: one line saying what was
    imported; a rollout read again from the start as a warning."""
    from bot.transcript.codex_import import default_root, import_codex

    agent = args.agent or memory_agent(args.repo)
    path = args.file or default_root()
    print(import_harness(args, lambda store: import_codex(store, agent, path)).describe(path))
    return 0


def import_harness(args: argparse.Namespace, run: Callable[[Any], Any]) -> Any:
    """Run one harness's import on the store (progress bars drawn), its notes kept as warnings;
    its report."""
    bars = ProgressBars()
    with open_store(args, bars) as store:
        try:
            report = run(store)
        finally:
            bars.close()
        store.warnings.extend(report.notes)
    return report


def memory_agent(repo: str) -> str:
    """The agent of the memory at `repo` (its memrepo.agentId); MemrepoError saying how to name one."""
    from bot.memfs import MemoryRepo, configured_agent_id

    try:
        agent = configured_agent_id(MemoryRepo.open(repo))
    except MemrepoError:
        agent = None
    if not agent:
        raise MemrepoError(CLAUDE_NEEDS_AGENT)
    return agent


def run_rebuild(args: argparse.Namespace) -> int:
    from bot.transcript import home

    bars = ProgressBars()
    with open_store(args, bars) as store:
        try:
            done = store.rebuild(args.agent)
        finally:
            bars.close()
        if not done:
            print(f"no transcripts in {home.transcripts(store.home)}; nothing to index")
        for agent, count in done.items():
            print(REBUILD_DONE.format(agent=agent, count=count, logs=len(store.conversations(agent))))
    return 0
