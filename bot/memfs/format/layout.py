"""The two memory layouts Letta Code knows, told apart as Letta tells them. Pure.

- v1 (MemFS): core memory is `system/**.md`; everything else is external memory.
- v2 (root MemFS): the memory has a root `MEMORY.md`. Core memory is the Markdown files at
  the root; every other folder is memory only when it has its own `MEMORY.md` index, which
  is what the prompt shows of it (the agent opens what it needs); `skills/` is apart.

Letta's harness records a layout policy in `.git/letta-memory-layout-policy`: `legacy-only`
(a local MemFS) keeps v1 rules even where a `MEMORY.md` exists; otherwise the root index
decides, in its hook and its tool alike.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

V1, V2 = "v1", "v2"
LAYOUTS = (V1, V2)
INDEX = "MEMORY.md"
POLICY_FILE = "letta-memory-layout-policy"
LEGACY_ONLY = "legacy-only"
SKILLS = "skills/"


def detect(has_root_index: bool, letta_policy: str | None = None) -> str:
    """The layout of a memory whose root does or does not hold MEMORY.md."""
    return V2 if has_root_index and letta_policy != LEGACY_ONLY else V1


def of(paths: Collection[str]) -> str:
    """The layout of a commit's files (path -> anything), as its paths say: v2 where a root
    MEMORY.md is among them. (A clone's own Letta policy can only narrow that: `detect`.)"""
    return detect(INDEX in paths)


def is_index(path: str) -> bool:
    """A MEMORY.md index (v2: no frontmatter), at the root or in a folder."""
    return path == INDEX or path.endswith("/" + INDEX)


def is_core(path: str, layout: str) -> bool:
    """A file compiled into the system prompt: system/**.md in v1, root Markdown in v2."""
    if not path.endswith(".md"):
        return False
    if layout == V2:
        return "/" not in path
    return path.startswith(("system/", "memory/system/"))


def is_core_file(path: str, layout: str) -> bool:
    """A core memory file an agent keeps (its persona, what it knows of the user): core, and
    not v2's root MEMORY.md, which indexes the rest."""
    return is_core(path, layout) and not is_index(path)


def is_memory_file(path: str, layout: str) -> bool:
    """A file v2's rules apply to: Markdown outside skills/ and memrepo's and git's own folders."""
    return (layout == V2 and path.endswith(".md") and not path.startswith(SKILLS)
            and not path.startswith((".memrepo/", ".github/", ".git/")))


def missing_index(path: str, paths: Collection[str]) -> str | None:
    """The first folder index `path` lacks among `paths` (Letta checks from the root down),
    or None when every folder above it has its MEMORY.md."""
    parts = path.split("/")[:-1]
    current = ""
    for part in parts:
        current = f"{current}/{part}" if current else part
        index = f"{current}/{INDEX}"
        if index not in paths:
            return index
    return None


def letta_policy(git_dir: str | Path) -> str | None:
    """The layout policy Letta's harness left in a clone's git folder (a worktree's is in the
    common folder), or None where Letta never installed its hooks."""
    folder = Path(git_dir)
    common = folder / "commondir"
    if common.is_file():
        folder = (folder / common.read_text(encoding="utf-8").strip()).resolve()
    try:
        return (folder / POLICY_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None
