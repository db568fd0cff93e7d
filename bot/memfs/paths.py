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


def normalize(raw: object, *, add_md: bool = True, reserved: bool = True) -> str:
    """The repository path the agent means, or a MemrepoError saying what is wrong.

    Accepts Letta's optional leading `memory/` and omitted `.md`; refuses absolute paths,
    home folders, `..`, NUL and control characters and, unless `reserved` is False (a
    reader naming any tracked file, as `memrepo log` does), every path that is not memory
    (`_check_reserved`).
    """
    if not isinstance(raw, str):
        raise MemrepoError(messages.PATH_EMPTY if raw is None else
                           messages.PATH_NOT_TEXT.format(kind=type(raw).__name__))
    path = raw.strip()
    if "\0" in path:
        raise MemrepoError(messages.PATH_NUL)
    if not path:
        raise MemrepoError(messages.PATH_EMPTY)
    if _CONTROL.search(path):
        raise MemrepoError(messages.PATH_BAD_CHARS.format(path=path.encode("unicode_escape").decode()))
    if len(path) > MAX_PATH:
        raise MemrepoError(messages.PATH_TOO_LONG.format(path=path[:40] + "...", limit=MAX_PATH))
    parts = [part.strip() for part in path.replace("\\", "/").split("/")]
    parts = [part for part in parts if part not in ("", ".")]
    if path.startswith(("/", "\\")):
        raise MemrepoError(messages.PATH_ABSOLUTE.format(path=raw.strip()))
    if parts and parts[0] == "memory" and len(parts) > 1:
        parts = parts[1:]
    joined = "/".join(parts)
    if joined.startswith(("~", "$HOME", "${HOME}")):
        raise MemrepoError(messages.PATH_HOME.format(path=raw.strip()))
    if re.match(r"^[A-Za-z]:([\\/]|$)", joined):
        raise MemrepoError(messages.PATH_ABSOLUTE.format(path=raw.strip()))
    if ".." in parts:
        raise MemrepoError(messages.PATH_PARENT.format(path=raw.strip()))
    if not parts:
        raise MemrepoError(messages.PATH_EMPTY)
    if reserved:
        _check_reserved(parts, raw.strip())
    result = "/".join(parts)
    if add_md and not result.endswith(".md") and "." not in parts[-1]:
        result += ".md"
    return result


def _check_reserved(parts: list[str], shown: str) -> None:
    """Refuse what git, CI or memrepo read as configuration rather than memory: git's folder
    at any depth; memrepo's and CI's own top-level folders; git's own files (`.gitattributes`,
    `.gitignore`, `.gitmodules` and every other `.git*` name but `.github`) at any depth, since git reads
    some of them in every folder (a `merge=` driver or a submodule URL is configuration);
    and any other hidden name at the top, where tools keep their settings (`.mailmap`
    rewrites who git says wrote a commit). Names are compared in any letter case, as git
    does on case-insensitive file systems. Hidden names inside memory folders are memory."""
    for index, part in enumerate(parts):
        lowered = part.lower()
        for name, area in _RESERVED:
            if lowered == name and (index == 0 or name == ".git"):
                raise MemrepoError(messages.PATH_RESERVED.format(path=shown, area=area))
        if lowered.startswith(".git") and lowered != ".github":
            raise MemrepoError(messages.PATH_GIT_CONFIG.format(path=shown, name=part))
    if parts[0].startswith("."):
        raise MemrepoError(messages.PATH_HIDDEN_TOP.format(path=shown, name=parts[0]))


def is_under(path: str, folder: str) -> bool:
    """True when `path` is `folder` itself or inside it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")
