"""Whether a follower runs for a folder. `memrepo follow` holds an exclusive lock on
`.git/memrepo/follow.lock` for as long as it runs (the kernel releases it however the process
ends), so two never follow one folder; and it keeps a record in `.git/memrepo/follow.json`
(pid, host, since when, how it learns of the forge's moves, a heartbeat), which
`repository status` reads without taking anything. A record whose process is gone, or whose
heartbeat stopped, is stale: the follower ended without cleaning up.

The commits a follower held back from main for review are recorded beside it, one file per
pull request in `.git/memrepo/held/` (the commits, why, the ref that keeps them, the pull
request once opened), which `repository status` lists as what waits for review."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from bot.errors import MemrepoError
from bot.file_lock import file_lock
from bot.memfs import MemoryRepo
from bot.texts import Text

FOLLOW_ALREADY = "a follower already runs for {path} (pid {pid}); one per folder is enough"
STATUS_FOLLOWER = "follower"
STATUS_FOLLOWER_RUNNING = Text("running (pid {pid}, since {started:when}; {mode}; last seen {age:.0f}s ago)")
STATUS_FOLLOWER_STALE = Text("stale: pid {pid} is gone or silent since {seen:when} without stopping cleanly; "
                             "nothing follows this folder")
STATUS_HELD_OPEN = "#{number} {url}: {subjects} ({reasons})"
STATUS_HELD_UNPROPOSED = "not proposed yet, kept at {ref}: {subjects} ({reasons}; {problem})"

HEARTBEAT = 5.0  # seconds between two writes of the record
STALE_AFTER = 6 * HEARTBEAT  # a record not written for this long belongs to no running follower
LOCK_NAME, RECORD_NAME = "follow.lock", "follow.json"

Liveness = Literal["running", "stale"]


@dataclass(frozen=True)
class Record:
    """What a running follower says of itself."""

    pid: int
    host: str
    started: str  # ISO 8601, UTC
    seen: float  # wall-clock seconds of the last heartbeat
    events: bool  # follows head events (else polls)
    poll: float

    def mode(self) -> str:
        return "head events" if self.events else f"a fetch every {self.poll:g}s"


def new_record(events: bool, poll: float) -> Record:
    return Record(os.getpid(), socket.gethostname(), datetime.now(UTC).isoformat(timespec="seconds"), time.time(),
                  events, poll)


def liveness(record: Record | None, now: float, alive: bool) -> Liveness | None:
    """Whether the follower a record describes runs: None without a record, stale when its
    process is gone (`alive` False) or its heartbeat is older than STALE_AFTER at `now`."""
    if record is None:
        return None
    return "running" if alive and now - record.seen <= STALE_AFTER else "stale"


def place(repo: MemoryRepo) -> Path:
    """The folder under .git where the lock and the record live."""
    return Path(repo.git.path) / "memrepo"


@contextmanager
def claim(folder: Path, path: Path) -> Iterator[None]:
    """Hold the follow lock of the clone whose marker folder is `folder` (the clone is at
    `path`, for the refusal), or refuse when another follower holds it."""
    with file_lock(folder / LOCK_NAME, wait=False) as held:
        if not held:
            other = read(folder)
            raise MemrepoError(FOLLOW_ALREADY.format(path=path, pid=other.pid if other else "?"))
        yield


def write(folder: Path, record: Record) -> None:
    """Replace the record at once (a reader never sees half of one)."""
    temporary = folder / f".{RECORD_NAME}.{os.getpid()}"
    temporary.write_text(json.dumps(asdict(record)), encoding="utf-8")
    os.replace(temporary, folder / RECORD_NAME)


def read(folder: Path) -> Record | None:
    try:
        data = json.loads((folder / RECORD_NAME).read_text(encoding="utf-8"))
        return Record(int(data["pid"]), str(data["host"]), str(data["started"]), float(data["seen"]),
                      bool(data["events"]), float(data["poll"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remove(folder: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (folder / RECORD_NAME).unlink()


def process_alive(record: Record) -> bool:
    """Whether the record's process runs; on another host it cannot be told, and the
    heartbeat alone decides."""
    if record.host != socket.gethostname():
        return True
    try:
        os.kill(record.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def follower(repo: MemoryRepo) -> tuple[Record | None, Liveness | None]:
    record = read(place(repo))
    return record, liveness(record, time.time(), record is not None and process_alive(record))


def status_row(repo: MemoryRepo) -> tuple[str, str]:
    """`repository status`'s follower line."""
    record, state = follower(repo)
    if record is None or state is None:
        return STATUS_FOLLOWER, "none (`memrepo follow` keeps a folder a harness writes in sync)"
    seen = datetime.fromtimestamp(record.seen, UTC)
    if state == "stale":
        return STATUS_FOLLOWER, STATUS_FOLLOWER_STALE.format(pid=record.pid, seen=seen)
    return STATUS_FOLLOWER, STATUS_FOLLOWER_RUNNING.format(
        pid=record.pid, started=record.started, mode=record.mode(), age=max(0.0, time.time() - record.seen))


def status_data(repo: MemoryRepo) -> dict[str, Any] | None:
    """`repository status --json`'s follower: None, or the record with its state."""
    record, state = follower(repo)
    if record is None:
        return None
    return {"state": state, **asdict(record), "seen": datetime.fromtimestamp(record.seen, UTC).isoformat(
        timespec="seconds")}


HELD_DIR = "held"


@dataclass(frozen=True)
class Held:
    """Commits a follower took off the folder's main because the policy holds them for review.
    `ref` keeps the folder's main as it was (the commits themselves, never lost); `number` and
    `url` are the pull request's once it is open, `problem` why it is not yet; `unnamed`: its
    pull request says the turn behind the commits cannot be known, until an import names it."""

    name: str
    ref: str
    commits: tuple[tuple[str, str | None], ...]  # (sha, parent), oldest first
    subjects: tuple[str, ...]
    reasons: tuple[str, ...]
    number: int | None = None
    url: str = ""
    problem: str = ""
    unnamed: bool = False

    def shown(self) -> str:
        return ", ".join(f"{sha[:12]} \"{subject}\"" for (sha, _), subject in zip(self.commits, self.subjects,
                                                                                 strict=True))

    def as_data(self) -> dict[str, Any]:
        data = asdict(self)
        data["commits"] = [{"commit": sha, "parent": parent, "subject": subject}
                           for (sha, parent), subject in zip(self.commits, self.subjects, strict=True)]
        del data["subjects"]
        return data


def write_held(folder: Path, held: Held) -> None:
    """Record `held` at once (a reader never sees half of it)."""
    place = folder / HELD_DIR
    place.mkdir(parents=True, exist_ok=True)
    temporary = place / f".{held.name}.{os.getpid()}"
    temporary.write_text(json.dumps(held.as_data()), encoding="utf-8")
    os.replace(temporary, place / f"{held.name}.json")


def held_records(folder: Path) -> list[Held]:
    """Every held record, oldest first; an unreadable one is left out (never guessed)."""
    found = []
    for path in sorted((folder / HELD_DIR).glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            commits = tuple((str(c["commit"]), None if c["parent"] is None else str(c["parent"]))
                            for c in data["commits"])
            found.append(Held(str(data["name"]), str(data["ref"]), commits,
                              tuple(str(c["subject"]) for c in data["commits"]),
                              tuple(str(r) for r in data["reasons"]),
                              None if data["number"] is None else int(data["number"]), str(data["url"]),
                              str(data["problem"]), bool(data.get("unnamed", False))))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def drop_held(folder: Path, held: Held) -> None:
    with contextlib.suppress(FileNotFoundError):
        (folder / HELD_DIR / f"{held.name}.json").unlink()


def held_rows(repo: MemoryRepo) -> tuple[tuple[str, str], ...]:
    """`repository status`'s lines for what waits for review."""
    rows = []
    for held in held_records(place(repo)):
        reasons = "; ".join(held.reasons)
        if held.number is not None:
            value = STATUS_HELD_OPEN.format(number=held.number, url=held.url, subjects=held.shown(),
                                                  reasons=reasons)
        else:
            value = STATUS_HELD_UNPROPOSED.format(ref=held.ref, subjects=held.shown(), reasons=reasons,
                                                        problem=held.problem)
        rows.append(("waiting for review", value))
    return tuple(rows)
