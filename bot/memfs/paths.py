"""Paths the memory tool accepts, normalised to repository-relative POSIX paths.

Pure: the symbolic-link check, which needs the file system, lives in the repository shell.
"""

from __future__ import annotations

import re

from bot import messages
from bot.errors import MemrepoError

MAX_PATH = 400
_RESERVED = (
    (".git", "git's own data (.git/)"),
    (".memrepo", "memrepo's machine state (.memrepo/)"),
    (".github", "the repository's CI configuration (.github/)"),
)
_CONTROL = re.compile(r"[\x01-\x1f\x7f]")


def normalize(raw: object, *, add_md: bool = True) -> str:
    """The repository path the agent means, or a MemrepoError saying what is wrong.

    Accepts Letta's optional leading `memory/` and omitted `.md`; refuses absolute paths,
    home folders, `..`, NUL and control characters, and git's and memrepo's own folders.
    """
    if not isinstance(raw, str):
        raise MemrepoError(messages.PATH_EMPTY if raw is None else
                           f"path must be text, found {type(raw).__name__}")
    path = raw.strip()
    if "\0" in path:
        raise MemrepoError(messages.PATH_NUL)
    if not path:
        raise MemrepoError(messages.PATH_EMPTY)
    if _CONTROL.search(path):
        raise MemrepoError(messages.PATH_BAD_CHARS.format(path=path.encode("unicode_escape").decode()))
    if len(path) > MAX_PATH:
        raise MemrepoError(messages.PATH_TOO_LONG.format(path=path[:40] + "...", limit=MAX_PATH))
    if path.startswith(("~", "$HOME", "${HOME}")):
        raise MemrepoError(messages.PATH_HOME.format(path=path))
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", path):
        raise MemrepoError(messages.PATH_ABSOLUTE.format(path=path))
    parts = [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]
    if ".." in parts:
        raise MemrepoError(messages.PATH_PARENT.format(path=path))
    if parts and parts[0] == "memory" and len(parts) > 1:
        parts = parts[1:]
    if not parts:
        raise MemrepoError(messages.PATH_EMPTY)
    for name, area in _RESERVED:
        if parts[0] == name:
            raise MemrepoError(messages.PATH_RESERVED.format(path=path, area=area))
    result = "/".join(parts)
    if add_md and not result.endswith(".md") and "." not in parts[-1]:
        result += ".md"
    return result


def is_under(path: str, folder: str) -> bool:
    """True when `path` is `folder` itself or inside it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")
