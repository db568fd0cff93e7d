"""An advisory `flock` on a file, written once: the clone's writers (bot/memfs/store/repo.py), one
follower per clone (bot/follow/marker.py), an agent's transcripts (bot/transcript/log.py: shared
for readers), and one process at a time in a folder several processes of one machine use (the
integrator's mirror of a memory, the receiver's clone for the palace). The lock is let go when
its holder leaves the block or dies.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.backoff import Backoff, poll

LOCK_POLL = Backoff(0.005, factor=1.0)  # another holder has it: look again this often


@contextmanager
def file_lock(path: Path, *, wait: bool = True, timeout: float | None = None,
              schedule: Backoff = LOCK_POLL, shared: bool = False) -> Iterator[bool]:
    """Hold the lock on `path` (made, with its folder, if missing) for the block: exclusive,
    or `shared` with other shared holders (readers). Yields True once held: `wait` waits for
    another holder to let go, for at most `timeout` seconds when one is given (looking again
    by `schedule`); without `wait`, or when the timeout passed, it yields False at once and
    holds nothing."""
    mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:

        def take() -> bool:
            try:
                fcntl.flock(handle, mode | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            return True

        if wait and timeout is None:
            fcntl.flock(handle, mode)
            held = True
        else:
            held = poll(take, schedule, timeout=timeout) if wait else take()
        if not held:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold the folder's lock for the block (waiting for another holder to let go): the lock
    file is `.<name>.lock` beside the folder."""
    with file_lock(folder.parent / f".{folder.name}.lock"):
        yield
