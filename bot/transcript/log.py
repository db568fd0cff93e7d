"""The append-only JSON Lines logs: atomic appends, locking, torn tails.

Every row is one line written by one os.write() on a descriptor opened with O_APPEND, under
the agent's exclusive lock (a flock on `<agent>/.lock` through bot/file_lock.py, so processes
and threads exclude each other), so rows never interleave and a crash can only leave the last line
unfinished. Before every append and every indexing pass the writer checks that the log
ends with a newline; if it does not, the unfinished bytes are moved into `<log>.torn`
(appended there, then the log is cut back to its last full row) and a TranscriptWarning
says so: the bytes are kept for a person to look at, and every earlier row stays readable.

fsync policy: by default every append is fsync'ed before it returns (a row the caller was
told about survives a power cut), and the folder is fsync'ed when a log is created.
`fsync=False` leaves flushing to the operating system: a crash of the machine (not of the
process) may then lose the last rows, never corrupt earlier ones.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bot.bounded_json import loads_bounded
from bot.errors import MemrepoError
from bot.file_lock import file_lock
from bot.transcript.model import Message, from_row

TRANSCRIPT_TORN = (
    "{log}: an unfinished last line ({size} bytes at offset {offset}) was moved to {torn}; "
    "every earlier row is intact"
)
TRANSCRIPT_LOG_DAMAGED = (
    "{log}, line {line}: {problem}; the transcript log is damaged there (fix or remove that line, "
    "then run `memrepo transcript rebuild`)"
)

SUFFIX = ".jsonl"
TORN_SUFFIX = ".torn"
LOCK_NAME = ".lock"


class TranscriptWarning(UserWarning):
    """Something was repaired or skipped; the message says what and where."""


@dataclass(frozen=True)
class Torn:
    """Bytes of an unfinished last line that were set aside."""

    log: Path
    torn_file: Path
    offset: int
    size: int

    def describe(self) -> str:
        return TRANSCRIPT_TORN.format(size=self.size, log=self.log, offset=self.offset,
                                            torn=self.torn_file)


def serialize(message: Message) -> bytes:
    """The log line of a message (UTF-8, one line: JSON escapes every newline)."""
    return (json.dumps(message.to_row(), ensure_ascii=False) + "\n").encode("utf-8")


@contextlib.contextmanager
def locked(folder: Path, *, exclusive: bool = True) -> Iterator[None]:
    """The agent's lock: exclusive for writers (appends, repairs, indexing), shared for readers."""
    with file_lock(folder / LOCK_NAME, shared=not exclusive):
        yield


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def append(path: Path, data: bytes, *, fsync: bool = True) -> int:
    """Append whole lines; the caller holds the exclusive lock and has called repair().
    Returns the offset at which `data` starts."""
    created = not path.exists()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        offset = os.fstat(fd).st_size
        written = os.write(fd, data)
        while written < len(data):  # a short write (disk full, signal): finish the row
            written += os.write(fd, data[written:])
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    if created and fsync:
        _fsync_dir(path.parent)
    return offset


def complete_size(path: Path) -> tuple[int, int]:
    """(size of the file, size up to and including its last newline)."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            if size == 0:
                return 0, 0
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return size, size
            position = size
            while position > 0:
                step = min(65536, position)
                position -= step
                f.seek(position)
                chunk = f.read(step)
                newline = chunk.rfind(b"\n")
                if newline != -1:
                    return size, position + newline + 1
            return size, 0
    except FileNotFoundError:
        return 0, 0


def repair(path: Path, *, fsync: bool = True) -> Torn | None:
    """Set an unfinished last line aside (the caller holds the exclusive lock)."""
    size, complete = complete_size(path)
    if size == complete:
        return None
    with open(path, "rb") as f:
        f.seek(complete)
        tail = f.read(size - complete)
    torn_file = path.with_name(path.name + TORN_SUFFIX)
    append(torn_file, tail + b"\n", fsync=fsync)
    os.truncate(path, complete)
    if fsync:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    torn = Torn(path, torn_file, complete, size - complete)
    warnings.warn(torn.describe(), TranscriptWarning, stacklevel=3)
    return torn


def _line_number(path: Path, offset: int) -> int:
    with open(path, "rb") as f:
        return f.read(offset).count(b"\n") + 1


def parse_line(path: Path, offset: int, line: bytes) -> Message:
    """A log line as a Message; a damaged line is an error naming the file and line."""
    try:
        return from_row(loads_bounded(line, what="the line"))
    except (ValueError, MemrepoError) as exc:
        problem = str(exc) if isinstance(exc, MemrepoError) else "not valid JSON"
        raise MemrepoError(TRANSCRIPT_LOG_DAMAGED.format(
            log=path, line=_line_number(path, offset), problem=problem)) from None


def rows(path: Path, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int, Message]]:
    """(offset, end offset, message) of every complete line from `start` up to `end`
    (default: the last complete line)."""
    if end is None:
        end = complete_size(path)[1]
    if end <= start:
        return
    with open(path, "rb") as f:
        f.seek(start)
        offset = start
        while offset < end:
            line = f.readline()
            if not line.endswith(b"\n"):
                break
            next_offset = offset + len(line)
            if next_offset > end:
                break
            if line.strip():
                yield offset, next_offset, parse_line(path, offset, line)
            offset = next_offset
