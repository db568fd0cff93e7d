"""main's first-parent history as a list of (commit, commit time), oldest first, kept in a
small file under `.git/memrepo/` so that "which commit was main at moment T" costs a binary
search instead of a walk over ten thousand commits.

Semantics are git's own `git rev-list --first-parent --before=T -1 main`: the newest commit on
the first-parent chain whose commit time is at or before T. Commit times on main are usually
increasing but need not be (clock skew, a rebased commit); the search runs over the *suffix
minima* of the times (the earliest time from each commit to the tip), which never decrease,
and the last position whose suffix minimum is at or before T is exactly the newest commit
whose own time is (see `position_at`). The cache is keyed by the tip it was built for: a tip
that moved forward along the chain extends it, anything else rebuilds it; a cache that cannot
be read or written is only a slower answer, never a wrong one.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2

MAGIC = b"memrepo-first-parent 1\n"  # then "<id size> <count> <tip>\n", ids, times, minima


# ------------------------------------------------------------------------------ pure core
def suffix_minima(times: Sequence[int]) -> list[int]:
    """For each position, the earliest time from there to the end (never decreasing)."""
    out = [0] * len(times)
    low: int | None = None
    for i in range(len(times) - 1, -1, -1):
        low = times[i] if low is None or times[i] < low else low
        out[i] = low
    return out


def position_at(minima: Sequence[int], when: int) -> int | None:
    """The newest position whose own time is at or before `when` (None: every commit is later),
    given the suffix minima of the times. The last position with minimum <= when has a time
    <= when itself (its minimum is its own time or a later position's, which would then be
    a later position with minimum <= when), and no later position has a time <= when."""
    i = bisect_right(minima, when) - 1
    return None if i < 0 else i


# ------------------------------------------------------------------------------ the shell
@dataclass(frozen=True)
class Timeline:
    """main's first-parent chain, oldest first: object ids (`size` raw bytes each, end to end),
    commit times and their suffix minima (signed 64-bit arrays, searched without copying)."""

    tip: str
    size: int
    oids: bytes
    times: array
    minima: array

    def __len__(self) -> int:
        return len(self.times)

    def raw(self, position: int) -> bytes:
        return self.oids[position * self.size: (position + 1) * self.size]

    def sha(self, position: int) -> str:
        return self.raw(position).hex()

    def at(self, when: int) -> int | None:
        """Position of main at `when` (seconds since the epoch), None before the first commit."""
        return position_at(self.minima, when)

    def landing(self, git: pygit2.Repository, sha: str) -> int | None:
        """Position of the first commit of the chain that contains `sha` (it, or a merge that
        brought it in), None when main does not contain it. Containment only grows along
        the chain, so this is a binary search of ancestry checks."""
        target = pygit2.Oid(hex=sha)
        lo, hi = 0, len(self)
        if hi == 0 or not _contains(git, self.raw(hi - 1), target):
            return None
        while lo < hi:
            mid = (lo + hi) // 2
            if _contains(git, self.raw(mid), target):
                hi = mid
            else:
                lo = mid + 1
        return lo


def _contains(git: pygit2.Repository, tip: bytes, target: pygit2.Oid) -> bool:
    oid = pygit2.Oid(raw=tip)
    return oid == target or git.descendant_of(oid, target)


def _walk(git: pygit2.Repository, tip: str, stop: str | None) -> tuple[list[bytes], list[int], bool]:
    """(raw ids, commit times) newest first from `tip` down the first parents, until `stop`
    (excluded) or the root; the flag says whether `stop` was met."""
    oids: list[bytes] = []
    times: list[int] = []
    commit = git[tip].peel(pygit2.Commit)
    while True:
        if stop is not None and str(commit.id) == stop:
            return oids, times, True
        oids.append(commit.id.raw)
        times.append(commit.commit_time)
        ids = commit.parent_ids
        if not ids:
            return oids, times, False
        commit = git[ids[0]]


def _cache_path(common_dir: Path, ref: str) -> Path:
    return common_dir / "memrepo" / ("first-parent-" + ref.replace("/", "-") + ".bin")


def _read_cache(path: Path) -> Timeline | None:
    """The cached chain; None when there is none or it is not a whole, well-formed file."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(MAGIC):
        return None
    header_end = data.find(b"\n", len(MAGIC))
    try:
        size_text, count_text, tip = data[len(MAGIC):header_end].decode("ascii").split(" ")
        size, count = int(size_text), int(count_text)
    except (ValueError, UnicodeDecodeError):
        return None
    start = header_end + 1
    if size not in (20, 32) or len(tip) != 2 * size or len(data) != start + count * (size + 16):
        return None
    times, minima = array("q"), array("q")
    times_at = start + count * size
    times.frombytes(data[times_at: times_at + 8 * count])
    minima.frombytes(data[times_at + 8 * count:])
    if sys.byteorder != "little":
        times.byteswap()
        minima.byteswap()
    return Timeline(tip, size, data[start:times_at], times, minima)


def _write_cache(path: Path, timeline: Timeline) -> None:
    """Atomically (a reader sees the old file or the new one); failures are ignored."""
    times, minima = array("q", timeline.times), array("q", timeline.minima)
    if sys.byteorder != "little":
        times.byteswap()
        minima.byteswap()
    header = MAGIC + f"{timeline.size} {len(timeline)} {timeline.tip}\n".encode("ascii")
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(header + timeline.oids + times.tobytes() + minima.tobytes())
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def load(git: pygit2.Repository, common_dir: Path, ref: str, tip: str) -> Timeline:
    """The first-parent chain ending at `tip` (the commit `ref` points at), from the cache
    when it is current, extended when the tip moved forward, rebuilt otherwise."""
    path = _cache_path(common_dir, ref)
    cached = _read_cache(path)
    if cached is not None and cached.tip == tip:
        return cached
    new_oids, new_times, met = _walk(git, tip, cached.tip if cached is not None else None)
    new_oids.reverse()
    new_times.reverse()
    if cached is not None and met:
        oids = cached.oids + b"".join(new_oids)
        times = array("q", cached.times)
        times.extend(new_times)
    else:  # no cache, or a tip that is not a descendant along the chain: the walk went to the root
        oids = b"".join(new_oids)
        times = array("q", new_times)
    size = len(pygit2.Oid(hex=tip).raw)
    timeline = Timeline(tip, size, oids, times, array("q", suffix_minima(times)))
    _write_cache(path, timeline)
    return timeline
