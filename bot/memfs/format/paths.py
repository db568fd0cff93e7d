"""Paths memory may hold: one set of rules (`path_problem`, `mode_problem`, `collisions`) for
every way a change arrives (the memory tool, the pre-commit hook, `memrepo validate --base`
and the integrator's check), and the tool's reading of the paths an agent gives.

A memory repository is cloned onto every kind of file system, so a name is judged by the
strictest of them, as git judges names with core.protectHFS and core.protectNTFS (git's
path.c, utf8.c and read-cache.c): names git reads as its own `.git` folder in any disguise,
names that change how git merges or checks out, names Windows cannot hold or reads as
another, invisible characters that make a name look like another, and names two files share
on a case-insensitive or normalising file system.

Pure: the symbolic-link check of the working tree, which needs the file system, lives in the
repository shell.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from bot.config import fold, invisible
from bot.errors import MemrepoError

# ---------------------------------------------------------------- paths memory may hold
# paths.path_problem's phrases follow the path: the validator prints "<path> <phrase>", the
# memory tool PATH_REFUSED.
PATH_REFUSED = "path '{path}' {problem}"
PATH_RESERVED = "is inside {area}, which is not memory: memrepo refuses every change that writes there"
PATH_GIT_CONFIG = (
    "is git's own configuration ({name}), not memory: such a file can change how git merges, checks out, "
    "ignores or fetches the repository, so memrepo refuses it; a person changes it past memrepo's checks"
)
PATH_HIDDEN_TOP = (
    "is hidden ({name}) at the top of the repository, where git and other tools keep their configuration, "
    "not memory, so memrepo refuses it; keep memory in visible files and folders, such as reference/"
)
PATH_DOT_NAME = "has the name '{name}', which git does not allow in a path"
PATH_CONTROL_CHAR = "contains a control character ({code})"
PATH_INVISIBLE_CHAR = (
    "contains the invisible character {code}, which makes a name look like another (or turns the text "
    "after it around); write the name without it"
)
PATH_WINDOWS_CHAR = "contains '{char}', which Windows does not allow in a file name"
PATH_TRAILING_DOT = (
    "has a name ending in a dot or a space ('{name}'), which Windows drops, so there it names another file"
)
PATH_WINDOWS_DEVICE = "has the name '{name}', which Windows reserves for a device; choose another name"
PATH_SHORT_NAME = (
    "has the name '{name}', which Windows reads as the short name of another file or folder; choose "
    "another name"
)
PATH_NAME_TOO_LONG = (
    "has a name of {size} bytes ('{name}...'), over the {limit} bytes file systems hold in one name; "
    "shorten it"
)
PATH_TOO_LONG = "is longer than {limit} characters"
PATH_IS_LINK = "is a symbolic link; memory holds only regular files (a link can point outside the repository)"
PATH_IS_SUBMODULE = (
    "is a submodule (another repository's commit); memory holds only regular files"
)
PATH_BAD_MODE = "has git file mode {mode}; memory holds only regular files"
PATH_EXECUTABLE = (
    "is marked executable (git file mode 100755); memory holds only regular files (100644): "
    "clear the bit with `git update-index --chmod=-x` on it"
)
# Paths given to the memory tool.
PATH_EMPTY = "path is empty; give a path such as system/human.md"
PATH_ABSOLUTE = "path '{path}' is absolute; give a path inside the memory repository, such as system/human.md"
PATH_HOME = "path '{path}' refers to a home folder; give a path inside the memory repository"
PATH_PARENT = "path '{path}' contains '..'; paths must stay inside the memory repository"

MAX_PATH = 400
MAX_NAME_BYTES = 255  # one name, in UTF-8: what ext4, APFS and NTFS hold
FILE_MODE = 0o100644  # the one mode memory holds: a regular file
EXECUTABLE_MODE = 0o100755
LINK_MODE = 0o120000
SUBMODULE_MODE = 0o160000

_TOP_AREAS = {".memrepo": "memrepo's machine state (.memrepo/)",
              ".github": "the repository's CI configuration (.github/)"}
# What memrepo itself keeps at the top of memory (its policy, the dreamer's cursors, Letta's
# constraints.CONFIG_FILE): reviewed changes may write these, the tool never.
MEMREPO_FOLDER = ".memrepo"
MEMREPO_FILES = (".memfs.config.json",)

# Code points HFS+ ignores in names (git's next_hfs_char): `.g\u200cit` is `.git` there.
_HFS_IGNORED = dict.fromkeys(map(ord, "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                                      "\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"))
# NTFS trims trailing dots and spaces, and reads `name:stream` as the file `name`.
_NTFS_DOTGIT = re.compile(r"(\.git|git~1)[. ]*(:.*)?", re.IGNORECASE | re.DOTALL)
# An 8.3 short name (`GIT~1`, `PERSON~1.MD`): Windows opens the long name it stands for.
_SHORT_NAME = re.compile(r"[^~.]{1,6}~[0-9]+(\.[^.]*)?", re.IGNORECASE | re.DOTALL)
_WINDOWS_DEVICE = re.compile(r"(con|prn|aux|nul|com[1-9]|lpt[0-9]|conin\$|conout\$) *([.:].*)?",
                             re.IGNORECASE | re.DOTALL)
_WINDOWS_CHARS = '<>:"|?*\\'


def normalize(raw: object, *, add_md: bool = True, reserved: bool = True) -> str:
    """The repository path the agent means, or a MemrepoError saying what is wrong.

    Accepts Letta's optional leading `memory/` and omitted `.md`; refuses absolute paths,
    home folders, `..` and NUL and, unless `reserved` is False (a reader naming any tracked
    file, as `memrepo log` does), every path memory may not hold (`path_problem`) and every
    hidden name at the top, memrepo's own files included: those change in reviewed commits.
    """
    if not isinstance(raw, str):
        raise MemrepoError(PATH_EMPTY if raw is None else
                           f"path must be text, found {type(raw).__name__}")
    path = raw.strip()
    if "\0" in path:
        raise MemrepoError("path contains a NUL character")
    if not path:
        raise MemrepoError(PATH_EMPTY)
    parts = [part.strip() for part in path.replace("\\", "/").split("/")]
    parts = [part for part in parts if part not in ("", ".")]
    if path.startswith(("/", "\\")):
        raise MemrepoError(PATH_ABSOLUTE.format(path=path))
    if parts and parts[0] == "memory" and len(parts) > 1:
        parts = parts[1:]
    joined = "/".join(parts)
    if joined.startswith(("~", "$HOME", "${HOME}")):
        raise MemrepoError(PATH_HOME.format(path=path))
    if re.match(r"^[A-Za-z]:([\\/]|$)", joined):
        raise MemrepoError(PATH_ABSOLUTE.format(path=path))
    if ".." in parts:
        raise MemrepoError(PATH_PARENT.format(path=path))
    if not parts:
        raise MemrepoError(PATH_EMPTY)
    if add_md and not joined.endswith(".md") and "." not in parts[-1]:
        joined += ".md"
    problem = path_problem(joined, memrepo_files=False) if reserved else None
    if problem is not None:
        raise MemrepoError(PATH_REFUSED.format(path=shown(path), problem=problem))
    return joined


def path_problem(path: str, *, memrepo_files: bool = True) -> str | None:
    """Why memory may not hold a file at `path` (a repository path, `/`-separated), or None.

    `memrepo_files` lets through what memrepo keeps at the top (`.memrepo/`, Letta's
    `.memfs.config.json`), which people and memrepo change in reviewed commits; the memory
    tool passes False. The answer is a phrase that follows the path ("… is …").
    """
    if len(path) > MAX_PATH:
        return PATH_TOO_LONG.format(limit=MAX_PATH)
    parts = path.split("/")
    for part in parts:
        problem = name_problem(part)
        if problem is not None:
            return problem
    return _top_problem(parts[0], path, memrepo_files)


def name_problem(name: str) -> str | None:
    """Why no file or folder of memory may have this name (one path component), or None."""
    if name in ("", ".", ".."):
        return PATH_DOT_NAME.format(name=name)
    if any(is_dotgit(piece) for piece in name.split("\\")):
        return PATH_RESERVED.format(area="git's own data (.git/)")
    folded = name.translate(_HFS_IGNORED).lower()
    if folded.startswith(".git") and folded != ".github":
        return PATH_GIT_CONFIG.format(name=shown(name))
    for char in name:
        if unicodedata.category(char) == "Cc":
            return PATH_CONTROL_CHAR.format(code=_code(char))
        if invisible(char):  # bot.config's rule, by Unicode data: fold drops what this refuses
            return PATH_INVISIBLE_CHAR.format(code=_code(char))
    return _windows_problem(name) or _length_problem(name)


def is_dotgit(name: str) -> bool:
    """Whether git on some file system reads `name` as its own `.git`: in any letter case,
    with the code points HFS+ ignores, with NTFS's trailing dots and spaces or stream suffix
    (`.git::$INDEX_ALLOCATION`), or as its NTFS short name `git~1` (git's is_hfs_dotgit and
    is_ntfs_dotgit)."""
    return name.translate(_HFS_IGNORED).lower() == ".git" or _NTFS_DOTGIT.fullmatch(name) is not None


def _windows_problem(name: str) -> str | None:
    """Names Windows cannot hold, or reads as another file (git with core.protectNTFS refuses
    them on Windows; a clone there could not check the memory out, or would mix two files)."""
    bad = next((char for char in name if char in _WINDOWS_CHARS), None)
    if bad is not None:
        return PATH_WINDOWS_CHAR.format(char=bad)
    if name.endswith((".", " ")):
        return PATH_TRAILING_DOT.format(name=name)
    if _WINDOWS_DEVICE.fullmatch(name):
        return PATH_WINDOWS_DEVICE.format(name=name)
    if _SHORT_NAME.fullmatch(name):
        return PATH_SHORT_NAME.format(name=name)
    return None


def _length_problem(name: str) -> str | None:
    size = len(name.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        return PATH_NAME_TOO_LONG.format(name=name[:24], size=size, limit=MAX_NAME_BYTES)
    return None


def _top_problem(top: str, path: str, memrepo_files: bool) -> str | None:
    """Hidden names at the top of memory are where git, CI and other tools keep their
    configuration (`.mailmap` rewrites who git says wrote a commit, `.github/workflows/` runs
    code in CI); memrepo's own are memrepo's. Hidden names inside memory folders are memory."""
    if not top.startswith("."):
        return None
    if memrepo_files and ((top == MEMREPO_FOLDER and path != top) or path in MEMREPO_FILES):
        return None
    area = _TOP_AREAS.get(top.lower())
    if area is not None:
        return PATH_RESERVED.format(area=area)
    return PATH_HIDDEN_TOP.format(name=top)


def mode_problem(mode: int) -> str | None:
    """Why memory may not hold an entry of this git file mode, or None: memory is regular
    files (100644); a symbolic link can point outside the repository (`../.git/config`), a
    submodule fetches another repository into it, and an executable bit is a change no clone
    checks out alike (where core.filemode is off, or the file system keeps no modes, the index
    keeps the old mode and the clone stays dirty)."""
    if mode == FILE_MODE:
        return None
    if mode == EXECUTABLE_MODE:
        return PATH_EXECUTABLE
    if mode == LINK_MODE:
        return PATH_IS_LINK
    if mode == SUBMODULE_MODE:
        return PATH_IS_SUBMODULE
    return PATH_BAD_MODE.format(mode=f"{mode:o}")


def collisions(new: Iterable[str], tree: Iterable[str]) -> dict[str, str]:
    """Each path of `new` whose file or any folder above it is spelled differently elsewhere
    in `tree` (every path after the change) but folds alike (`fold`), mapped to that other
    spelling: on a case-insensitive clone the two are one, and one of them is lost."""
    spellings: dict[str, set[str]] = {}
    for path in tree:
        for prefix in _prefixes(path):
            spellings.setdefault(fold(prefix), set()).add(prefix)
    found: dict[str, str] = {}
    for path in new:
        for prefix in _prefixes(path):
            others = sorted(spellings.get(fold(prefix), set()) - {prefix})
            if others:
                found[path] = others[0]
                break
    return found


CONFUSABLES = Path(__file__).with_name("confusables.txt")  # Unicode's UTS #39 data (see confusables.LICENSE)


@cache
def _prototypes() -> dict[str, str]:
    """confusables.txt's mapping: each source character to its prototype (one or more
    characters), as UTS #39's skeleton uses it. Read on first use (about 6,000 lines)."""
    table = {}
    for line in CONFUSABLES.read_text(encoding="utf-8-sig").splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) >= 2 and fields[0].strip():
            source = "".join(chr(int(code, 16)) for code in fields[0].split())
            table[source] = "".join(chr(int(code, 16)) for code in fields[1].split())
    return table


SKELETON_ROUNDS = 4  # mapping again until nothing changes; the data settles in two


def skeleton(text: str) -> str:
    """UTS #39's skeleton of `text`: decomposed (NFD), invisible characters dropped (bot.config's
    rule, which holds Default_Ignorable_Code_Point), each character replaced by its prototype
    in confusables.txt, decomposed again. Two strings with one skeleton look alike to a reader
    (`system/personа.md` with a Cyrillic `а` and `system/persona.md`)."""
    table = _prototypes()
    found = unicodedata.normalize("NFD", text)
    for _ in range(SKELETON_ROUNDS):  # a few prototypes are themselves mapped (U+048B -> и -> ᴎ)
        mapped = unicodedata.normalize("NFD", "".join(table.get(char, char) for char in found if not invisible(char)))
        if mapped == found:
            break
        found = mapped
    return found


def look_key(path: str) -> str:
    """What a reader sees of `path`, for comparing: its skeleton, folded (`fold`: a name
    differing in letter case is one file on a case-insensitive clone as well)."""
    return fold(skeleton(path))


def lookalikes(new: Iterable[str], tree: Iterable[str], protected: Iterable[str] = ()) -> dict[str, str]:
    """Each path of `new` whose file or any folder above it looks like (`look_key`) a path the
    policy protects by name (`system/hurnan.md` for `system/human.md`), or, where the new path
    is not plain ASCII, like another path or folder of `tree` (`system/personа.md` beside
    `system/persona.md`), without being one file with it (`collisions` says those). A reader,
    a reviewer, or a model reading the core memory takes one for the other. Two ASCII names
    (`barn.md` and `bam.md`) are both what they show, so they are left alone."""
    new = list(new)
    guarded = _look_keys(protected)
    everyone = _look_keys(tree) if any(not path.isascii() for path in new) else {}
    found: dict[str, str] = {}
    for path in new:
        keys = (guarded, everyone) if not path.isascii() else (guarded,)
        for prefix in _prefixes(path):
            key = look_key(prefix)
            others = sorted(other for table in keys for other in table.get(key, ())
                            if fold(other) != fold(prefix))
            if others:
                found[path] = others[0]
                break
    return found


def _look_keys(paths: Iterable[str]) -> dict[str, set[str]]:
    keys: dict[str, set[str]] = {}
    for path in paths:
        for prefix in _prefixes(path):
            keys.setdefault(look_key(prefix), set()).add(prefix)
    return keys


def twins(path: str, tree: Iterable[str]) -> list[str]:
    """The paths of `tree` other than `path` that are one file with it on a case-insensitive
    clone (`fold`)."""
    key = fold(path)
    return sorted(other for other in tree if other != path and fold(other) == key)


def _prefixes(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def shown(path: str) -> str:
    """`path` as a message may print it: control and invisible characters written as escapes
    (a right-to-left override would turn the rest of the line around), a long path cut."""
    text = "".join(char if char.isprintable() or char == " " else _escape(char) for char in path)
    return text if len(text) <= MAX_PATH else text[:40] + "..."


def _escape(char: str) -> str:
    return char.encode("unicode_escape").decode("ascii")


def _code(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" {name}" if name else "")


def is_under(path: str, folder: str) -> bool:
    """True when `path` is `folder` itself or inside it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")
