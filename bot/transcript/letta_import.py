"""Letta Code's transcript folders into the transcript store, incrementally (`memrepo transcript
import --from letta`, and `import_letta` for a process that follows a memory).

PATH is Letta's transcripts root, one agent's folder or one conversation's folder: a folder
holding transcript.jsonl is a conversation (its parent folder names the agent), a folder whose
folders hold one is an agent, a folder whose folders' folders hold one is the root. Without
PATH it is Letta Code's own: $LETTA_TRANSCRIPT_ROOT, else ~/.letta/transcripts. How rows
become messages, and Letta's ids memrepo's: `bot.transcript.letta`.

Incremental (bot.transcript.incremental): a cursor per conversation at
`<home>/imports/letta/<agent>/<conversation>.json`; messages keep Letta's ids, so nothing is
imported twice. An unfinished last line (Letta still writing it) waits for the next import.

All or nothing. Every conversation is read and checked before anything is written: one bad
line imports nothing, and the error names every bad line. Progress is remembered only after the
store has the messages; imports run one at a time (a lock beside the progress files).
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot.errors import MemrepoError
from bot.texts import Text
from bot.transcript import home as homes
from bot.transcript import incremental, log, texts
from bot.transcript.import_rows import invalid_import
from bot.transcript.incremental import CHANGED, SHRANK, UNCHANGED, Cursor, Reading, load_cursor, save_cursor
from bot.transcript.letta import (
    EMPTY,
    ERROR,
    NO_KIND,
    REPEATED,
    ROOT_ENV,
    TRANSCRIPT,
    UNKNOWN,
    read_conversation,
    to_memrepo_id,
)
from bot.transcript.model import Message, format_time
from bot.transcript.store import TranscriptStore
from bot.transcript.texts import LETTA_PLACES

# `memrepo transcript import --from letta` (letta.py, letta_import.py).
LETTA_IMPORT_DONE = Text(
    "imported {imported:|message|messages} from {conversations:|Letta conversation|Letta conversations} in "
    "{path}; {duplicates:|message|messages} memrepo already had skipped{skipped}"
)
LETTA_SKIP = {
    "error": Text("{count:|error row|error rows} (Letta Code's own errors)"),
    "empty": Text("{count:|row|rows} without text"),
    "repeated": Text("{count:|repeated row|repeated rows}"),
    "no kind": Text("{count:|row|rows} without a kind"),
    "unknown": Text("{count:|row|rows} of unknown kind {kind!a}"),
}
LETTA_NOT_FOUND = "{path} does not exist; " + LETTA_PLACES
LETTA_NOT_DIR = "{path} is a file; " + LETTA_PLACES
LETTA_REWRITTEN = (
    "{transcript} changed since the last import ({how}): it was read again from the start, and only "
    "messages memrepo did not have were imported"
)
LETTA_UNFINISHED = "{transcript} ends with an unfinished line ({size} bytes); it is imported once Letta Code ends it"


@dataclass
class LettaImportReport:
    """What an import did: conversations found, messages imported, messages the store already
    had, rows skipped by why (see bot.transcript.letta), and notes for a person: transcripts
    read again from the start, and unfinished last lines left for the next import."""

    conversations: int = 0
    imported: int = 0
    duplicates: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    written: list[Message] = field(default_factory=list)  # the messages new to the store, in order

    def describe(self, path: str | os.PathLike[str]) -> str:
        """The one line that says what an import of `path` did."""
        return LETTA_IMPORT_DONE.format(imported=self.imported, conversations=self.conversations,
                                              path=path, duplicates=self.duplicates,
                                              skipped=skipped_text(self.skipped))


@dataclass(frozen=True)
class Source:
    """One Letta conversation: its transcript and the ids memrepo keeps it under."""

    transcript: Path
    agent_id: str
    conversation_id: str


# --------------------------------------------------------------------------- decisions

def default_root(env: Mapping[str, str] | None = None) -> Path:
    """Where Letta Code keeps transcripts: $LETTA_TRANSCRIPT_ROOT (trimmed, as Letta reads it), else
    ~/.letta/transcripts."""
    value = (os.environ if env is None else env).get(ROOT_ENV, "").strip()
    return Path(value).expanduser() if value else Path.home() / ".letta" / "transcripts"


def skipped_text(skipped: Mapping[str, int]) -> str:
    """`; rows skipped: 1 error row, ...` for the rows an import skipped, by why; "" for none."""
    rows = [LETTA_SKIP[why].format(count=skipped[why])
            for why in (ERROR, EMPTY, REPEATED, NO_KIND) if skipped.get(why)]
    rows += [LETTA_SKIP["unknown"].format(count=count, kind=why.removeprefix(UNKNOWN))
             for why, count in sorted(skipped.items()) if why.startswith(UNKNOWN) and count]
    return "; rows skipped: {rows}".format(rows=", ".join(rows)) if rows else ""


# ------------------------------------------------------------------------ the folders

def conversation_folders(path: Path) -> list[Path]:
    """The conversation folders PATH stands for (see the module's docstring), sorted."""
    if (path / TRANSCRIPT).is_file():
        return [path]
    children = _folders(path)
    conversations = [child for child in children if (child / TRANSCRIPT).is_file()]
    if conversations:
        return conversations
    return [folder for child in children for folder in _folders(child) if (folder / TRANSCRIPT).is_file()]


def _folders(path: Path) -> list[Path]:
    try:
        return sorted(entry for entry in path.iterdir() if entry.is_dir())
    except OSError:
        return []


def sources(path: Path, problems: list[str]) -> list[Source]:
    """Each conversation under `path` with memrepo's ids for its folders' names; a name no id
    can keep is a problem."""
    found: list[Message] = []
    for folder in conversation_folders(path):
        try:
            found.append(Source(folder / TRANSCRIPT, to_memrepo_id(folder.parent.name, "agent_id"),
                                to_memrepo_id(folder.name, "conversation_id")))
        except MemrepoError as exc:
            problems.append(texts.IMPORT_WHERE.format(where=folder, problem=exc))
    return found


def read_source(source: Source, cursor: Cursor | None, imported_at: str) -> tuple[Reading, Cursor, str | None]:
    """The conversation's new messages, the cursor after them, and a note for a person."""
    found = incremental.read(source.transcript, cursor)
    note = _note(source.transcript, found.status, cursor, found.unfinished)
    if found.status == UNCHANGED:
        return Reading(), found.after, note
    return read_conversation(source.agent_id, source.conversation_id, found.lines, imported_at, found.start), \
        found.after, note


def _note(transcript: Path, status: str, cursor: Cursor | None, unfinished: int) -> str | None:
    if status in (SHRANK, CHANGED) and cursor is not None:
        how = ("it is shorter than the {size} bytes imported before" if status == SHRANK
               else "its first {size} bytes are not the ones imported before")
        return LETTA_REWRITTEN.format(transcript=transcript, how=how.format(size=cursor.size))
    if unfinished:
        return LETTA_UNFINISHED.format(transcript=transcript, size=unfinished)
    return None


# ------------------------------------------------------------------------- cursors

def cursor_path(home: Path, source: Source) -> Path:
    return homes.letta_cursors(home) / source.agent_id / f"{source.conversation_id}.json"


# -------------------------------------------------------------------------- import

def import_letta(store: TranscriptStore, root: str | os.PathLike[str] | None = None) -> LettaImportReport:
    """Import the Letta Code conversations under `root` (default: Letta's own root) into
    `store`: only what is new since the last import, all or nothing. Safe to call again and
    again (a process that follows a memory does): an unchanged transcript costs one read."""
    path = Path(root).expanduser() if root is not None and str(root) else default_root()
    if not path.is_dir():
        raise MemrepoError((LETTA_NOT_DIR if path.exists() else LETTA_NOT_FOUND).format(path=path))
    with log.locked(homes.letta_cursors(store.home)):
        return _import(store, path)


def _import(store: TranscriptStore, path: Path) -> LettaImportReport:
    """Read every conversation first and write only when none has a problem, then move the
    cursors: a failure anywhere leaves the store and the cursors as they were."""
    report = LettaImportReport()
    problems: list[str] = []
    stamp = format_time(store.clock())
    done: list[tuple[Path, Cursor]] = []
    found: list[Message] = []
    for source in sources(path, problems):
        where = cursor_path(store.home, source)
        reading, after, note = read_source(source, load_cursor(where), stamp)
        problems.extend(f"{source.transcript} {problem}" for problem in reading.problems)
        report.skipped.update(reading.skipped)
        report.notes.extend([note] if note else [])
        found.extend(reading.messages)
        done.append((where, after))
    if problems:
        raise invalid_import(str(path), problems, texts.HARNESS_IMPORT_INVALID)
    written = store.import_messages(found)
    for where, after in done:
        save_cursor(where, after)
    report.conversations, report.imported, report.duplicates = len(done), written.imported, written.duplicates
    report.written = written.written
    return report


def stamp(root: str | os.PathLike[str] | None = None) -> tuple[tuple[str, int, int], ...]:
    """What the transcripts under `root` look like from outside (path, size, modification
    time of each): a follower that sees it change imports at once instead of at its next
    poll. Cheap: a listing and a stat per conversation, no reading."""
    path = Path(root).expanduser() if root is not None and str(root) else default_root()
    found = []
    for folder in conversation_folders(path):
        with contextlib.suppress(OSError):
            status = (folder / TRANSCRIPT).stat()
            found.append((str(folder), status.st_size, status.st_mtime_ns))
    return tuple(found)
