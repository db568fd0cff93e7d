"""Read which commit a ref names straight from the files in `.git`, without starting a
process or opening a repository object: the prompt cache asks this on every model call.

Handles `.git` files of linked worktrees (`gitdir:` and `commondir`), symbolic HEAD,
loose refs and `packed-refs` (including peeled lines).
"""

from __future__ import annotations

from pathlib import Path


def git_dirs(worktree: Path) -> tuple[Path, Path] | None:
    """(the worktree's git dir, the common git dir), or None when not a repository."""
    dot_git = worktree / ".git"
    if dot_git.is_dir():
        return dot_git, dot_git
    if dot_git.is_file():
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        if not text.startswith("gitdir:"):
            return None
        gitdir = (worktree / text[len("gitdir:"):].strip()).resolve()
        common_file = gitdir / "commondir"
        if common_file.is_file():
            common = (gitdir / common_file.read_text().strip()).resolve()
            return gitdir, common
        return gitdir, gitdir
    return None


def _packed(common: Path, name: str) -> str | None:
    try:
        text = (common / "packed-refs").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    for line in text.splitlines():
        if not line or line[0] in "#^":
            continue
        sha, _, ref = line.partition(" ")
        if ref == name:
            return sha
    return None


def resolve(worktree: Path, name: str = "HEAD") -> str | None:
    """The sha a ref points at (following symbolic refs), or None when it does not exist."""
    dirs = git_dirs(worktree)
    if dirs is None:
        return None
    gitdir, common = dirs
    for _ in range(5):
        base = gitdir if name == "HEAD" else common
        try:
            text = (base / name).read_text(encoding="utf-8", errors="replace").strip()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            text = _packed(common, name) or ""
        if text.startswith("ref:"):
            name = text[4:].strip()
            continue
        return text or None
    return None
