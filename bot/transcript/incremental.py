"""Reading only what is new in another harness's append-only transcript file, shared by the
importers of Letta Code's and Claude Code's transcripts.

After an import memrepo keeps, per transcript file, how far it was read and the SHA-256 of that
part (a cursor). The next import passes over a file that did not change and takes only the new
lines of one that grew; one that was cut or rewritten is read again from the start and reported.
Importers keep the harness's own message ids, so the store skips every message it already has
and nothing is imported twice either way. An unfinished last line (the harness still writing
it) waits for the next import.

A line is read to at most MAX_LINE bytes (8 MiB: a row's text is at most 4,000,000 characters,
so its JSON, with a harness's own fields around it, stays under it unless escaped throughout);
a longer one is passed over in pieces, never held whole, and reported as a problem of its own
line; its bytes still count in the cursor, so it is neither read again nor the lines after it lost.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.bounded_json import LineSplitter, Overlong, TooDeepError, loads_bounded
from bot.errors import MemrepoError
from bot.transcript import texts
from bot.transcript.model import Message

IMPORT_ROW_LONG = "the line is {size} bytes long, more than the {limit} memrepo reads of a line"

NEW, UNCHANGED, GREW, SHRANK, CHANGED = "new", "unchanged", "grew", "shrank", "changed"
MAX_LINE = 8 * 1024 * 1024  # bytes of one transcript line, its newline counted
READ_SIZE = 1024 * 1024  # bytes read at a time


@dataclass(frozen=True)
class Said:
    """One memrepo message a row of the harness's holds, before its id is given."""

    kind: str
    source: str
    text: str


@dataclass
class Reading:
    """What one transcript file holds for memrepo: the messages of its rows from `start` on
    (in order), the rows skipped by why, and the problems (one per bad line)."""

    messages: list[Message] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Cursor:
    """How much of a transcript file was imported: its first `size` bytes, whose SHA-256 is `sha256`."""

    size: int
    sha256: str


@dataclass(frozen=True)
class Read:
    """A transcript file as an import sees it: its complete lines (Overlong for one past
    MAX_LINE), the byte offset from which they are new, how it changed, the cursor after it,
    and the bytes of an unfinished last line."""

    lines: list[bytes | Overlong]
    start: int
    status: str
    after: Cursor
    unfinished: int


def change(cursor: Cursor | None, complete: bytes) -> tuple[str, int]:
    """How a transcript's complete lines differ from what was imported, and the byte offset
    from which they are new: all of them unless the transcript only grew."""
    prefix = None if cursor is None else hashlib.sha256(complete[:cursor.size]).hexdigest()
    return change_of(cursor, len(complete), prefix)


def change_of(cursor: Cursor | None, size: int, prefix_sha256: str | None) -> tuple[str, int]:
    """`change`, told only the complete lines' size and the SHA-256 of their first
    `cursor.size` bytes."""
    if cursor is None:
        return NEW, 0
    if size < cursor.size:
        return SHRANK, 0
    if prefix_sha256 != cursor.sha256:
        return CHANGED, 0
    return (UNCHANGED if size == cursor.size else GREW), cursor.size


def complete_lines(data: bytes) -> list[bytes]:
    """The lines that end with a newline, each with it (both harnesses split on "\\n" alone)."""
    return [line + b"\n" for line in data.split(b"\n")[:-1]]


def read(path: Path, cursor: Cursor | None) -> Read:
    """The file's complete lines and what is new in them since `cursor`; MemrepoError (one
    line) when it cannot be read. Read in pieces: no line past MAX_LINE is held."""
    splitter = LineSplitter(MAX_LINE)
    lines: list[bytes | Overlong] = []
    running, complete = hashlib.sha256(), hashlib.sha256()  # of all bytes read; of those up to the last newline
    prefix = hashlib.sha256().hexdigest() if cursor is not None and cursor.size == 0 else None
    total = 0
    try:
        with open(path, "rb") as f:
            while chunk := f.read(READ_SIZE):
                line_end = chunk.rfind(b"\n") + 1
                cuts = {len(chunk), line_end} - {0}
                if cursor is not None and 0 < cursor.size - total <= len(chunk):
                    cuts.add(cursor.size - total)
                done = 0
                for cut in sorted(cuts):
                    running.update(chunk[done:cut])
                    done = cut
                    if cursor is not None and total + cut == cursor.size:
                        prefix = running.hexdigest()
                    if cut == line_end:
                        complete = running.copy()
                total += len(chunk)
                lines.extend(splitter.feed(chunk))
    except OSError as exc:
        raise MemrepoError(texts.IMPORT_UNREADABLE.format(path=path, reason=exc.strerror or exc)) from None
    size = total - splitter.pending
    status, start = change_of(cursor, size, prefix)
    return Read([] if status == UNCHANGED else lines, start, status, Cursor(size, complete.hexdigest()),
                total - size)


def load_cursor(path: Path) -> Cursor | None:
    """The cursor kept at `path`; none (read from the start) when it is missing or unreadable,
    which costs only the reading, since the store skips messages it has."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Cursor(int(data["size"]), str(data["sha256"]))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def save_cursor(path: Path, cursor: Cursor) -> None:
    """Replace the cursor at `path` whole (written beside it, then renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps({"size": cursor.size, "sha256": cursor.sha256}) + "\n", encoding="utf-8")
    os.replace(part, path)


def read_lines(lines: Sequence[bytes | Overlong], start: int,
               messages_of: Callable[[object, bool], list[Message] | str],
               needed: Callable[[bytes], bool] = lambda raw: True) -> Reading:
    """The messages of a transcript's complete lines from byte `start` on (the part not
    imported yet), with the rows skipped by why and a problem per bad line. `messages_of`
    turns one parsed row into messages, or says why it is skipped; it sees the lines before
    `start` too when `needed` says so (an importer that numbers ids from the first line, or
    names a tool's result after the call an earlier line made), told it is not new (it need
    make no messages), and what they give is dropped."""
    reading = Reading()
    offset = 0
    for number, raw in enumerate(lines, 1):
        if isinstance(raw, Overlong):
            if offset >= start:
                reading.problems.append(texts.IMPORT_ROW_BAD.format(line=number, problem=IMPORT_ROW_LONG.format(
                    size=raw.size, limit=MAX_LINE)))
            offset += raw.size
            continue
        new, offset = offset >= start, offset + len(raw)
        if not raw.strip() or (not new and not needed(raw)):
            continue
        try:
            made = messages_of(row_json(raw), new)
        except MemrepoError as exc:
            if new:
                reading.problems.append(texts.IMPORT_ROW_BAD.format(line=number, problem=exc))
            continue
        if not new:
            continue
        if isinstance(made, str):
            reading.skipped[made] += 1
        else:
            reading.messages.extend(made)
    return reading


def row_json(raw: bytes) -> object:
    """One line as JSON; MemrepoError saying why it is not."""
    try:
        return loads_bounded(raw.decode("utf-8"), what="the row")
    except UnicodeDecodeError:
        raise MemrepoError("not valid UTF-8") from None
    except TooDeepError:
        raise
    except ValueError as exc:
        raise MemrepoError(f"not valid JSON ({exc})") from None
