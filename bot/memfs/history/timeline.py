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

Next to it, the *landing index*: for every commit main contains, the position of the first
commit of the chain that contains it (itself, or the merge that brought it in), which is what
`memrepo why` asks of each line's commit. Chain commits are visited oldest first and each one's
other parents are walked down to the commits already indexed, so one pass over the history
answers every commit (`new_landings`); the answers are kept sorted by object id in a second
file, looked up by binary search, and extended the same way when main moves forward.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import zlib
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2

MAGIC = b"memrepo-first-parent 2\n"  # then "<id size> <count> <tip>\n", ids, times, minima, CRC-32
LANDING_MAGIC = b"memrepo-landing 2\n"  # then "<id size> <count> <chain length> <tip>\n", sorted ids, positions,
# CRC-32


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


def new_landings(chain: Sequence[bytes], start: int, parents: Callable[[bytes], Sequence[bytes]],
                 known: Callable[[bytes], bool]) -> dict[bytes, int]:
    """Where each commit brought in by positions `start`.. of the first-parent `chain` landed:
    {commit: position}. `parents(commit)` lists a commit's parents, first parent first;
    `known(commit)` says whether a commit landed before `start` (every ancestor of
    chain[start - 1] did). Each chain commit lands at its own position; a commit reachable from
    its other parents and not from the previous chain commit lands there too. The walk stops
    at commits already placed, so each commit is visited once."""
    found: dict[bytes, int] = {}
    for position in range(start, len(chain)):
        tip = chain[position]
        found[tip] = position
        todo = list(parents(tip)[1:])
        while todo:
            oid = todo.pop()
            if oid in found or known(oid):
                continue
            found[oid] = position
            todo.extend(parents(oid))
    return found


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


# ------------------------------------------------------------------------------ cache files
# Both caches are one header line ("<magic><fields separated by spaces>\n"), then raw ids and
# little-endian numbers, then the CRC-32 of all that (4 bytes, little-endian), under
# <git common dir>/memrepo/. The checksum is what makes a damaged file a rebuild rather than
# a wrong answer or a failure: the sizes alone miss damage that keeps the file's length.
def _cache_file(common_dir: Path, kind: str, ref: str) -> Path:
    return common_dir / "memrepo" / f"{kind}-{ref.replace('/', '-')}.bin"


def _read_file(path: Path, magic: bytes, fields: int) -> tuple[list[int], str, bytes, int] | None:
    """(the header's numbers, its tip, the file's bytes, where its body starts); None when
    there is no file, its checksum does not match, or its header is not `magic` and `fields`
    fields, the tip last."""
    try:
        whole = path.read_bytes()
    except OSError:
        return None
    data, crc = whole[:-4], whole[-4:]
    if len(whole) < 4 or zlib.crc32(data).to_bytes(4, "little") != crc:
        return None
    end = data.find(b"\n", len(magic))
    if not data.startswith(magic) or end < 0:
        return None
    try:
        *numbers, tip = data[len(magic):end].decode("ascii").split(" ")
        values = [int(n) for n in numbers]
    except (ValueError, UnicodeDecodeError):
        return None
    if len(values) != fields - 1 or values[0] not in (20, 32) or len(tip) != 2 * values[0]:
        return None
    return values, tip, data, end + 1


def _little(numbers: array) -> array:
    """`numbers` as the files hold them (little-endian), or back: a copy, swapped on a big-endian machine."""
    copy = array(numbers.typecode, numbers)
    if sys.byteorder != "little":
        copy.byteswap()
    return copy


def _write_file(path: Path, data: bytes) -> None:
    """Atomically (a reader sees the old file or the new one); failures are ignored: a cache
    that cannot be written is only a slower answer next time."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.write(zlib.crc32(data).to_bytes(4, "little"))
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _read_cache(path: Path) -> Timeline | None:
    """The cached chain; None when there is none or it is not a whole, well-formed file."""
    found = _read_file(path, MAGIC, 3)
    if found is None:
        return None
    (size, count), tip, data, start = found
    if len(data) != start + count * (size + 16):
        return None
    times_at = start + count * size
    times = _little(array("q", data[times_at: times_at + 8 * count]))
    minima = _little(array("q", data[times_at + 8 * count:]))
    return Timeline(tip, size, data[start:times_at], times, minima)


def _write_cache(path: Path, timeline: Timeline) -> None:
    header = MAGIC + f"{timeline.size} {len(timeline)} {timeline.tip}\n".encode("ascii")
    _write_file(path, header + timeline.oids + _little(timeline.times).tobytes() + _little(timeline.minima).tobytes())


def load(git: pygit2.Repository, common_dir: Path, ref: str, tip: str) -> Timeline:
    """The first-parent chain ending at `tip` (the commit `ref` points at), from the cache
    when it is current, extended when the tip moved forward, rebuilt otherwise."""
    path = _cache_file(common_dir, "first-parent", ref)
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


# ------------------------------------------------------------------------------ the landing index
class _Ids(Sequence[bytes]):
    """Object ids laid end to end in one bytes object, as a sequence (for bisect)."""

    def __init__(self, data: bytes, size: int) -> None:
        self.data, self.size = data, size

    def __len__(self) -> int:
        return len(self.data) // self.size

    def __getitem__(self, i: int) -> bytes:  # type: ignore[override]
        return self.data[i * self.size: (i + 1) * self.size]


@dataclass(frozen=True)
class Landings:
    """Where every commit main contains landed on its first-parent chain: ids sorted (`size`
    raw bytes each, end to end) and the chain position of each (unsigned 32-bit), built for
    the chain of `length` commits ending at `tip`."""

    tip: str
    length: int
    size: int
    ids: bytes
    positions: array

    def __len__(self) -> int:
        return len(self.positions)

    def _index(self, raw: bytes) -> int | None:
        ids = _Ids(self.ids, self.size)
        i = bisect_left(ids, raw)
        return i if i < len(ids) and ids[i] == raw else None

    def position(self, sha: str) -> int | None:
        """The chain position of the first commit of main that contains `sha` (itself, or the
        merge that brought it in); None for a commit main does not contain. One binary search."""
        i = self._index(bytes.fromhex(sha))
        return None if i is None else self.positions[i]

    def knows(self, raw: bytes) -> bool:
        return self._index(raw) is not None

    def extended(self, tip: str, length: int, found: dict[bytes, int]) -> Landings:
        """These landings with `found`'s added (none of them known yet), for the chain now
        `length` long ending at `tip`: each new id goes in at its place, the rest is copied."""
        ids = _Ids(self.ids, self.size)
        out_ids: list[bytes] = []
        out_positions = array("I")
        done = 0
        for raw in sorted(found):
            at = bisect_left(ids, raw, done)
            out_ids.append(self.ids[done * self.size: at * self.size])
            out_positions.extend(self.positions[done:at])
            out_ids.append(raw)
            out_positions.append(found[raw])
            done = at
        out_ids.append(self.ids[done * self.size:])
        out_positions.extend(self.positions[done:])
        return Landings(tip, length, self.size, b"".join(out_ids), out_positions)


def _parents(git: pygit2.Repository) -> Callable[[bytes], list[bytes]]:
    def parents(raw: bytes) -> list[bytes]:
        try:
            commit = git[pygit2.Oid(raw=raw)]
        except KeyError:  # beyond a shallow clone's edge: nothing more to bring in
            return []
        return [oid.raw for oid in commit.parent_ids]

    return parents


def _read_landings(path: Path) -> Landings | None:
    """The cached landings; None when there are none or the file is not whole and well formed."""
    found = _read_file(path, LANDING_MAGIC, 4)
    if found is None or array("I").itemsize != 4:
        return None
    (size, count, length), tip, data, start = found
    if len(data) != start + count * (size + 4):
        return None
    positions = _little(array("I", data[start + count * size:]))
    return Landings(tip, length, size, data[start: start + count * size], positions)


def _write_landings(path: Path, landings: Landings) -> None:
    if array("I").itemsize != 4:
        return
    header = LANDING_MAGIC + f"{landings.size} {len(landings)} {landings.length} {landings.tip}\n".encode("ascii")
    _write_file(path, header + landings.ids + _little(landings.positions).tobytes())


def load_landings(git: pygit2.Repository, common_dir: Path, ref: str, chain: Timeline) -> Landings:
    """The landing index of `chain` (`load`'s answer for `ref`): from the cache when it was
    built for this tip, extended when the chain grew past the tip it was built for, built
    from the root otherwise (one walk over the history)."""
    path = _cache_file(common_dir, "landing", ref)
    cached = _read_landings(path)
    if cached is not None and cached.tip == chain.tip and cached.length == len(chain):
        return cached
    ids = _Ids(chain.oids, chain.size)
    parents = _parents(git)
    if (cached is not None and cached.size == chain.size and 0 < cached.length <= len(chain)
            and chain.sha(cached.length - 1) == cached.tip):
        found = new_landings(ids, cached.length, parents, cached.knows)
        landings = cached.extended(chain.tip, len(chain), found)
    else:
        found = new_landings(ids, 0, parents, lambda _raw: False)
        order = sorted(found)
        landings = Landings(chain.tip, len(chain), chain.size, b"".join(order), array("I", (found[r] for r in order)))
    _write_landings(path, landings)
    return landings
