"""Three-way merge of one text file, line by line (diff3 style). Pure: no git, no I/O.

Sync uses it to replay a local commit onto a remote that moved: two agents that both
appended to the same memory file should both keep their lines, so where both sides inserted
different lines at the same place of an empty base region, the result is their union
(the remote's lines first, as they are already published). Every other overlap is a
conflict, reported with line numbers and never guessed at.

Lines are split on "\\n" only (a "\\r" stays part of its line, so CRLF files survive), and
whether the text ends with a newline is merged separately, so appending to a file whose
last line had no newline is still a clean insertion.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import SequenceMatcher


@dataclass(frozen=True)
class Conflict:
    """Overlapping changes. Line numbers are 1-based; `*_end` is exclusive, so an empty
    range (start == end) means "inserted before this line"."""

    base_start: int
    base_end: int
    ours_start: int
    ours_end: int
    theirs_start: int
    theirs_end: int
    base: tuple[str, ...]
    ours: tuple[str, ...]
    theirs: tuple[str, ...]

    def describe(self) -> str:
        if self.base_end > self.base_start:
            return f"lines {self.base_start}-{self.base_end - 1}" if self.base_end - self.base_start > 1 \
                else f"line {self.base_start}"
        return f"before line {self.base_start}"


@dataclass(frozen=True)
class Merge:
    """`text` is the merged text, or None when there are conflicts."""

    text: str | None
    conflicts: list[Conflict] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.conflicts


def split_lines(text: str) -> tuple[list[str], bool]:
    """(lines without their newline, whether the text ends with a newline)."""
    if not text:
        return [], True
    parts = text.split("\n")
    if parts[-1] == "":
        return parts[:-1], True
    return parts, False


def join_lines(lines: list[str], eol: bool) -> str:
    if not lines:
        return ""
    return "\n".join(lines) + ("\n" if eol else "")


def _aligned(base: list[str], other: list[str]) -> list[int]:
    """For each base line, the index of the same line in `other`, or -1 when it changed."""
    where = [-1] * len(base)
    matcher = SequenceMatcher(None, base, other, autojunk=False)
    for i, j, size in matcher.get_matching_blocks():
        for k in range(size):
            where[i + k] = j + k
    return where


def _sync_runs(base: list[str], ours: list[str], theirs: list[str]) -> list[tuple[int, int, int, int]]:
    """Runs of base lines that both sides kept, contiguous on all three:
    (base start, base end, ours start, theirs start)."""
    a = _aligned(base, ours)
    b = _aligned(base, theirs)
    runs: list[tuple[int, int, int, int]] = []
    i = 0
    while i < len(base):
        if a[i] < 0 or b[i] < 0:
            i += 1
            continue
        start = i
        while i + 1 < len(base) and a[i + 1] == a[i] + 1 and b[i + 1] == b[i] + 1:
            i += 1
        i += 1
        runs.append((start, i, a[start], b[start]))
    return runs


def _union(ours: list[str], theirs: list[str]) -> list[str]:
    """Both insertions: theirs, then our lines theirs does not already have (blank lines,
    which separate paragraphs, are always kept)."""
    present = {line for line in theirs if line.strip()}
    return theirs + [line for line in ours if not line.strip() or line not in present]


def merge3(base: str, ours: str, theirs: str) -> Merge:
    """Merge two edits (`ours`, `theirs`) of the same `base` text."""
    b, b_eol = split_lines(base)
    o, o_eol = split_lines(ours)
    t, t_eol = split_lines(theirs)
    out: list[str] = []
    conflicts: list[Conflict] = []
    iz = io = it = 0

    def unstable(z1: int, o1: int, t1: int) -> None:
        zb, ob, tb = b[iz:z1], o[io:o1], t[it:t1]
        if ob == zb:
            out.extend(tb)
        elif tb == zb or ob == tb:
            out.extend(ob)
        elif not zb:
            out.extend(_union(ob, tb))
        else:
            conflicts.append(Conflict(iz + 1, z1 + 1, io + 1, o1 + 1, it + 1, t1 + 1,
                                      tuple(zb), tuple(ob), tuple(tb)))

    for z0, z1, o0, t0 in _sync_runs(b, o, t):
        unstable(z0, o0, t0)
        out.extend(b[z0:z1])
        iz, io, it = z1, o0 + (z1 - z0), t0 + (z1 - z0)
    unstable(len(b), len(o), len(t))
    if conflicts:
        return Merge(None, conflicts)
    eol = t_eol if o_eol == b_eol else o_eol
    return Merge(join_lines(out, eol))
