"""Gather what `memrepo validate` checks from the repository (the staged index, the working
tree, or a range of commits) and hand it to the pure validator, with what the rules depend
on: the layout (v1 or v2, `layout.py`), memrepo's policy and Letta's constraints in force."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

import pygit2

from bot.config import CONFIG_PATH, PolicyError, parse_policy
from bot.errors import MemrepoError
from bot.memfs.format import constraints, layout, paths, validate
from bot.memfs.format.constraints import Constraints
from bot.memfs.format.layout import V2
from bot.memfs.store.repo import MemoryRepo

# Validating one.
VALIDATE_NO_SUCH_PATH = "{path} does not exist in the working tree or at HEAD"
VALIDATE_NO_BASE = "{base} is not a commit or branch of this repository (fetch it first?)"

ChangeMap = Mapping[str, tuple[bytes | None, bytes | None]]  # path -> (bytes after, bytes before)
Entries = dict[str, tuple[int, str]]  # path -> (git mode, object id), as MemoryRepo.entries
FILE = paths.FILE_MODE


class Changes(dict[str, tuple[bytes | None, bytes | None]]):
    """What a change does: path -> (its bytes after, its bytes before; None: absent), and in
    `modes` the git mode of each changed path the change leaves as something other than a
    regular file (an executable, a symbolic link, a submodule), which memory may not hold.
    The memory tool, sync's replay and the dreamer pass plain mappings: they write regular
    files only. `whole` marks every file of a tree, checked as memory must be, not as a step
    (`validate.validate_changes`)."""

    def __init__(self, items: ChangeMap | None = None, modes: Mapping[str, int] | None = None,
                 whole: bool = False) -> None:
        super().__init__(items or {})
        self.modes: dict[str, int] = dict(modes or {})
        self.whole = whole


class Staged(Changes):
    """The changes of the index, which the pre-commit hook checks: there, as in Letta's hook,
    a change of `.memfs.config.json` needs a person's say-so (`constraints.UPDATE_ENV`)."""


def staged(repo: MemoryRepo) -> Changes:
    """Files whose staged copy differs from HEAD: what the next commit would change. In
    git's pre-commit hook that is the index git names in GIT_INDEX_FILE (`git commit -a` and
    `git commit PATH` stage into another index file than .git/index)."""
    index_file = os.environ.get("GIT_INDEX_FILE")
    after = repo.index_entries(os.path.abspath(index_file) if index_file else None)
    return _diff(repo, repo.entries("HEAD"), after, Staged())


def worktree(repo: MemoryRepo, only: Iterable[str] = ()) -> Changes:
    """Every file of the working tree (or just those at or under `only`), against its content
    at HEAD, as a whole memory (`Changes.whole`): each one's mode is judged, and every limit,
    changed or not."""
    on_disk, data = _on_disk(repo)
    at_head = repo.entries("HEAD")
    links = {path for path, (mode, _) in on_disk.items() if mode == paths.LINK_MODE}
    # A path at or under a symbolic link is that link: it is reported, never read through.
    wanted = [next((link for link in links if _within(p, [link])), p) for p in (p.strip("/") for p in only)]
    for path in wanted:
        folder = repo.root / path
        if not (folder.is_dir() and not folder.is_symlink()) and \
                not any(_within(p, [path]) for p in (*on_disk, *at_head)):
            raise MemrepoError(VALIDATE_NO_SUCH_PATH.format(path=path))
    changes = Changes(whole=True)
    for path in sorted(p for p in on_disk.keys() | at_head.keys() if not wanted or _within(p, wanted)):
        after = on_disk.get(path)
        changes[path] = (data.get(path), _data(repo, at_head.get(path)))
        if after is not None and after[0] != FILE:
            changes.modes[path] = after[0]
    return changes


def between(repo: MemoryRepo, base: str, target: str | None = None) -> Changes:
    """Files changed from `base` to `target` (the working tree when None)."""
    before = repo.entries(_commit(repo, base))
    if target is None:
        after, data = _on_disk(repo)
        return _diff(repo, before, after, Changes(), data)
    return _diff(repo, before, repo.entries(_commit(repo, target)), Changes())


def _diff(repo: MemoryRepo, before: Entries, after: Entries, out: Changes,
          data: Mapping[str, bytes] | None = None) -> Changes:
    """`out` filled with every path whose entry differs from `before` to `after` (`data`: the
    bytes of `after`'s entries, when they are not objects of the repository yet)."""
    for path in sorted(before.keys() | after.keys()):
        if before.get(path) != after.get(path):
            new = after.get(path)
            out[path] = (data[path] if data is not None and path in data else _data(repo, new),
                         _data(repo, before.get(path)))
            if new is not None and new[0] != FILE:
                out.modes[path] = new[0]
    return out


def _data(repo: MemoryRepo, entry: tuple[int, str] | None) -> bytes | None:
    """An entry's bytes: a blob's content (a symbolic link's is its target), or a submodule's
    commit id, which is all the repository holds of it."""
    if entry is None:
        return None
    mode, oid = entry
    return oid.encode("ascii") if mode == paths.SUBMODULE_MODE else repo.git[oid].data


def _on_disk(repo: MemoryRepo) -> tuple[Entries, dict[str, bytes]]:
    """The working tree as entries and bytes: regular files (with the mode `git add` would
    record: `_file_mode`), symbolic links (not followed; their bytes are their target, as git
    stores them) and submodules (the index's commit for them, or none for a repository nested
    in the tree)."""
    root = repo.root
    entries: Entries = {}
    data: dict[str, bytes] = {}
    indexed = repo.index_entries()
    trust_bit = repo.git.config.get_bool("core.filemode") if "core.filemode" in repo.git.config else True
    for folder, folders, files in os.walk(root):
        here = Path(folder)
        if here == root:  # git's own, a folder or (in a linked worktree) a file
            folders[:] = [name for name in folders if name != ".git"]
            files[:] = [name for name in files if name != ".git"]
        for name in list(folders):
            full = here / name
            if full.is_symlink() or (full / ".git").exists():
                folders.remove(name)
                files.append(name)
        for name in files:
            full = here / name
            path = full.relative_to(root).as_posix()
            if full.is_symlink():
                data[path] = os.fsencode(os.readlink(full))
                entries[path] = (paths.LINK_MODE, str(pygit2.hash(data[path])))
            elif full.is_dir():
                entries[path] = (paths.SUBMODULE_MODE, "")
                data[path] = b""
            else:
                data[path] = full.read_bytes()
                mode = _file_mode(full.stat().st_mode, indexed.get(path, (None, ""))[0], trust_bit)
                entries[path] = (mode, str(pygit2.hash(data[path])))
    for path, (mode, oid) in indexed.items():
        if mode == paths.SUBMODULE_MODE:
            entries[path] = (mode, oid)
            data[path] = oid.encode("ascii")
    return entries, data


def _file_mode(stat_mode: int, indexed: int | None, trust_bit: bool) -> int:
    """The git mode `git add` records for a regular file: its executable bit where git trusts
    the file system's (core.filemode), else the index's mode for a file it holds."""
    if not trust_bit:
        return paths.EXECUTABLE_MODE if indexed == paths.EXECUTABLE_MODE else FILE
    return paths.EXECUTABLE_MODE if stat_mode & stat.S_IXUSR else FILE


def _within(path: str, folders: Iterable[str]) -> bool:
    return any(path == folder or path.startswith(folder + "/") for folder in folders)


def _commit(repo: MemoryRepo, rev: str) -> str:
    sha = repo.resolve(rev)
    if sha is None:
        raise MemrepoError(VALIDATE_NO_BASE.format(base=rev))
    return sha


def memory_layout(repo: MemoryRepo, rev: str = "HEAD", changes: ChangeMap | None = None) -> str:
    """The layout of memory at `rev`, or after `changes` on it: v2 where a root MEMORY.md is
    there before or after (Letta's hook looks at both), unless Letta's harness keeps this
    clone on v1 rules."""
    after = changes.get(layout.INDEX, (None, None))[0] if changes else None
    has_index = after is not None or repo.read(layout.INDEX, rev) is not None
    return layout.detect(has_index, layout.letta_policy(repo.git.path) if has_index else None)


def letta_constraints(repo: MemoryRepo, rev: str, changes: ChangeMap | None = None) -> Constraints | None:
    """`.memfs.config.json` at `rev`, or as `changes` leave it, parsed (None: absent or
    invalid; validation reports an invalid one)."""
    data = repo.read(constraints.CONFIG_FILE, rev)
    if changes and constraints.CONFIG_FILE in changes:
        data = changes[constraints.CONFIG_FILE][0]
    if data is None:
        return None
    try:
        return constraints.parse(data.decode("utf-8"))
    except (constraints.ConstraintsError, UnicodeDecodeError):
        try:  # an invalid new file is reported; the old one's limits still hold
            old = repo.read(constraints.CONFIG_FILE, rev)
            return constraints.parse(old.decode("utf-8")) if old is not None and old != data else None
        except (constraints.ConstraintsError, UnicodeDecodeError):
            return None


def _root_sizes(repo: MemoryRepo, rev: str) -> dict[str, int]:
    """Characters of each root Markdown file at a commit: v2's core memory, as Letta counts it."""
    return {path: _chars(repo.git[blob].data)
            for path, blob in repo.paths(rev).items() if layout.is_core(path, V2)}


def _chars(data: bytes) -> int:
    text, _ = validate.decode(data)
    return len(text) if text is not None else len(data)


def check(repo: MemoryRepo, changes: ChangeMap, base: str = "HEAD") -> list[validate.Problem]:
    """Validate `changes` made on top of `base`, under the policy they bring (or the base's),
    in the layout they leave, including what memory may hold (the paths and modes written,
    names that collide with another on a case-insensitive clone), the limit on all core
    memory together and, in v2, the indexes. The memory tool, sync's replay, the dreamer,
    the integrator and `memrepo validate` all decide through here."""
    modes = changes.modes if isinstance(changes, Changes) else {}
    whole = isinstance(changes, Changes) and changes.whole
    policy = repo.policy(base)
    new_config = changes.get(CONFIG_PATH, (None, None))[0]
    if new_config is not None:
        # A broken new config is reported as a problem of the file itself.
        with contextlib.suppress(PolicyError, UnicodeDecodeError):
            policy = parse_policy(new_config.decode("utf-8"))
    kind = memory_layout(repo, base, changes)
    letta = constraints.in_force(letta_constraints(repo, base, changes), kind)
    core = None
    tree = None
    had_root_index = False
    added = any(data is not None and before is None for data, before in changes.values())
    if kind == V2 or added:
        before_paths = repo.paths(base)
        had_root_index = layout.INDEX in before_paths
        tree = set(before_paths)
        for path, (data, _) in changes.items():
            (tree.discard if data is None else tree.add)(path)
    if kind == V2:
        changes = _with_newly_indexed(repo, changes, base, before_paths)
        if any(layout.is_core(path, V2) for path in changes):
            before = _root_sizes(repo, base)
            core = (0 if whole else sum(before.values()), _after(before, changes, V2))
    elif any(validate.is_core(path) for path in changes):
        before = repo.core_sizes(base)
        core = (0 if whole else sum(before.values()), _after(before, changes, "v1"))
    found = validate.validate_changes(changes, policy, core, layout=kind, letta=letta, tree=tree,
                                      had_root_index=had_root_index, modes=modes, whole=whole)
    found = sorted([*found, *_config_in_force_problems(repo, changes, base)], key=lambda p: p.path)
    approved = os.environ.get(constraints.UPDATE_ENV) == "1"
    if isinstance(changes, Staged) and constraints.CONFIG_FILE in changes and not approved:
        found = sorted([*found, validate.config_change_problem()], key=lambda p: p.path)
    return found


def _config_in_force_problems(repo: MemoryRepo, changes: ChangeMap, base: str) -> list[validate.Problem]:
    """Letta's `.memfs.config.json` at `base`, when it is invalid and the change leaves it as it
    is: every change is refused until it is repaired, as `memrepo validate` refuses the tree
    (a broken file would otherwise switch its limits off for the memory tool and the
    integrator). A change that writes the file is judged on what it writes."""
    if constraints.CONFIG_FILE in changes:
        return []
    data = repo.read(constraints.CONFIG_FILE, base)
    return [] if data is None else validate.validate_file(constraints.CONFIG_FILE, data, data, repo.policy(base))


def _after(before: dict[str, int], changes: ChangeMap, kind: str) -> int:
    after = dict(before)
    for path, (data, _) in changes.items():
        if layout.is_core(path, kind):
            if data is None:
                after.pop(path, None)
            else:
                after[path] = _chars(data)
    return sum(after.values())


def _with_newly_indexed(repo: MemoryRepo, changes: ChangeMap, base: str, before: dict[str, str]) -> ChangeMap:
    """In v2, a change that adds a MEMORY.md brings the files it indexes into memory (Letta's
    hook then checks their frontmatter): they are checked as unchanged files of the change."""
    added = [p for p, (data, head) in changes.items() if layout.is_index(p) and data is not None and head is None]
    if not added:
        return changes
    out = type(changes)(changes)
    for index in added:
        folder = index[: -len(layout.INDEX)]
        for path in before:
            if path not in out and path.startswith(folder) and layout.is_memory_file(path, V2):
                data = repo.read(path, base)
                out[path] = (data, data)
    return out
