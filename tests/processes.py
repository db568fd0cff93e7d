"""Processes a test started, seen through /proc: what a server or worker forked (to check that
stopping it left nothing behind, or to kill it mid-way as a crash would) and whether a process
is still running."""

from __future__ import annotations

from pathlib import Path


def descendants(pid: int) -> set[int]:
    """Every process below `pid`: its children, their children, and so on."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it ended while we looked
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Running: it exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def command_line(pid: int) -> str:
    """What `pid` runs, its arguments joined by NULs ("" once it has ended: a short-lived child,
    a git or a hook, may end between finding it and reading this)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""
