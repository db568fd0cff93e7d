"""An exclusive lock on a folder that several processes of one machine use (the integrator's
mirror of a memory, the receiver's clone for the palace): an advisory `flock` on a
`.<name>.lock` file beside the folder, released when the holder leaves the block or dies."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold the folder's lock for the block (waiting for another holder to let go)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
