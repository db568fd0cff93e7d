"""The memory repository on disk: the imperative shell around git.

Object-level work (reading trees at a commit, writing a commit of a few files) runs
in-process through libgit2 (pygit2): a memory tool call must cost a few milliseconds, and
GitPython's pure-Python index rewrites the whole index on every commit. Commands that need
git's transports and credential helpers (fetch, push) go through GitPython in `sync.py`.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from bot.config import CONFIG_PATH, Policy, PolicyError, parse_policy
from bot.errors import MemrepoError
from bot.file_lock import file_lock
from bot.memfs import texts as memfs_texts
from bot.memfs.format.layout import INDEX, letta_policy
from bot.memfs.format.validate import core_size, is_core
from bot.memfs.store import refs

if TYPE_CHECKING:  # only named in annotations: `memrepo validate` (the pre-commit hook) commits nothing
    from bot.identity import Identity
from bot.memfs.texts import REPO_NOT_GIT

# memrepo's own rules.
BAD_CONFIG = ".memrepo/config.yml: {problem}"
# Opening a repository.
REPO_MISSING = "no memory repository at {path}: the folder does not exist (create one with `memrepo init {path}`)"
REPO_BARE = "{path} is a bare git repository; give the path of a memory repository's working clone"
REPO_NOT_MEMORY = (
    "{path} is a git repository but not a memory repository (it has no system/, root MEMORY.md or "
    ".memrepo/, and Letta Code did not make it); run `memrepo init` in an empty folder"
)
REPO_LOCKED = "another memrepo writer has held {path} for too long; try again in a moment"
HEAD_MOVED = "the repository's HEAD moved while this change was being made; nothing was changed, try again"

MAIN = "main"
# What marks a tree's top as a memory: memrepo's own folder, v1's core (system/) or v2's root index.
MEMORY_MARKS = frozenset({".memrepo", "system", INDEX})
AGENT_ID_KEY = "memrepo.agentId"  # the agent a clone is for, as `memrepo init` or `clone` set it
AGENT_NAME_KEY = "memrepo.agentName"
LETTA_AGENT_KEY = "letta.agentId"  # the git config where Letta Code names the agent a memory clone is for
FILE_MODE = pygit2.GIT_FILEMODE_BLOB
LINK_MODE = pygit2.GIT_FILEMODE_LINK
EXECUTABLE_MODE = pygit2.GIT_FILEMODE_BLOB_EXECUTABLE


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    time: int
    offset_minutes: int
    message: str

    @property
    def summary(self) -> str:
        return self.message.split("\n", 1)[0]


class MemoryRepo:
    """A memory repository's working clone."""

    def __init__(self, root: Path, git: pygit2.Repository) -> None:
        self.root = root
        self.git = git
        self._policies: dict[str | None, Policy] = {}
        self._chars: dict[str, int] = {}  # blob id -> characters, for the core-size limit

    # ----------------------------------------------------------------- opening
    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None) -> MemoryRepo:
        root = Path(path or ".").expanduser()
        if not root.exists():
            raise MemrepoError(REPO_MISSING.format(path=root))
        if not root.is_dir():
            raise MemrepoError(f"{root} is a file, not a memory repository folder")
        root = root.resolve()
        if refs.git_dirs(root) is None:
            if (root / "HEAD").is_file() and (root / "objects").is_dir() and (root / "refs").is_dir():
                raise MemrepoError(REPO_BARE.format(path=root))
            raise MemrepoError(REPO_NOT_GIT.format(path=root))
        try:
            git = pygit2.Repository(str(root))
        except pygit2.GitError as exc:
            raise MemrepoError(REPO_NOT_GIT.format(path=root) + f" ({exc})") from None
        if git.is_bare:
            raise MemrepoError(REPO_BARE.format(path=root))
        repo = cls(root, git)
        if repo.head_sha() is None:
            raise MemrepoError(memfs_texts.REPO_NO_COMMITS.format(path=root))
        if not repo.looks_like_memory():
            raise MemrepoError(REPO_NOT_MEMORY.format(path=root))
        return repo

    def looks_like_memory(self) -> bool:
        """Whether this clone holds a memory, memrepo's or Letta Code's (`is_memory`)."""
        tree = self._tree("HEAD")
        top = () if tree is None else tuple(entry.name for entry in tree)
        return is_memory(top, letta_made=self.letta_agent_id() is not None or letta_policy(self.git.path) is not None)

    def letta_agent_id(self) -> str | None:
        """The agent Letta Code keeps this memory for (its git config), or None."""
        return self.get_config(LETTA_AGENT_KEY) or None

    # ----------------------------------------------------------------- reading
    def head_sha(self) -> str | None:
        """HEAD's commit, read from the ref files (no process, no object access)."""
        return refs.resolve(self.root)

    def branch(self) -> str | None:
        try:
            return None if self.git.head_is_detached else self.git.head.shorthand
        except pygit2.GitError:
            return None

    def _commit(self, rev: str) -> pygit2.Commit | None:
        try:
            obj = self.git.revparse_single(rev)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        commit = obj.peel(pygit2.Commit)
        return commit

    def _tree(self, rev: str) -> pygit2.Tree | None:
        commit = self._commit(rev)
        return None if commit is None else commit.tree

    def resolve(self, rev: str) -> str | None:
        commit = self._commit(rev)
        return None if commit is None else str(commit.id)

    @property
    def git_dir(self) -> str:
        return self.git.path

    def blob(self, oid: str) -> bytes:
        """An object's bytes by its id."""
        return self.git.odb.read(oid)[1]

    def _entry(self, path: str, rev: str) -> pygit2.Object | None:
        """The tree entry at `path` in a commit, or None when the commit or the path is not there."""
        tree = self._tree(rev)
        if tree is None:
            return None
        try:
            return tree[path]
        except KeyError:
            return None

    def read(self, path: str, rev: str = "HEAD") -> bytes | None:
        """A file's bytes at a commit, or None when it is not a file there."""
        entry = self._entry(path, rev)
        if entry is None or entry.type_str != "blob":
            return None
        return self.git[entry.id].data

    def blob_id(self, path: str, rev: str = "HEAD") -> str | None:
        entry = self._entry(path, rev)
        return None if entry is None else str(entry.id)

    def is_folder(self, path: str, rev: str = "HEAD") -> bool:
        entry = self._entry(path, rev)
        return entry is not None and entry.type_str == "tree"

    def files(self, rev: str = "HEAD", prefix: str = "") -> dict[str, bytes]:
        """Every file at a commit (under `prefix`, a folder), path -> bytes."""
        out: dict[str, bytes] = {}
        tree, base = self._subtree(rev, prefix)
        if tree is not None:
            self._walk(tree, base, out, with_data=True)
        return out

    def paths(self, rev: str = "HEAD", prefix: str = "") -> dict[str, str]:
        """Every file path at a commit (under `prefix`) -> its blob id (no contents read)."""
        out: dict[str, str] = {}
        tree, base = self._subtree(rev, prefix)
        if tree is not None:
            self._walk(tree, base, out, with_data=False)
        return out

    def _subtree(self, rev: str, prefix: str) -> tuple[pygit2.Tree | None, str]:
        if not prefix:
            return self._tree(rev), ""
        entry = self._entry(prefix.rstrip("/"), rev)
        if entry is None or entry.type_str != "tree":
            return None, ""
        return self.git[entry.id], prefix.rstrip("/") + "/"

    def mode(self, path: str, rev: str = "HEAD") -> int | None:
        """The git file mode of a path at a commit (symbolic links have their own)."""
        entry = self._entry(path, rev)
        return None if entry is None else entry.filemode

    def entries(self, rev: str = "HEAD") -> dict[str, tuple[int, str]]:
        """Every file, symbolic link and submodule at a commit, path -> (git mode, object id):
        what `files` and `paths` leave out (modes, submodules) for the rules of what memory
        may hold (paths.mode_problem)."""
        out: dict[str, tuple[int, str]] = {}
        tree = self._tree(rev)
        if tree is not None:
            self._walk_entries(tree, "", out)
        return out

    def index_entries(self, index_file: str | None = None) -> dict[str, tuple[int, str]]:
        """Every entry of the index (or of `index_file`, as git's GIT_INDEX_FILE names one), path
        -> (git mode, object id). Read by git itself: libgit2 refuses a whole index that holds a
        name it would not write (`GIT~1`), and such names are what the rules must see."""
        env = {**os.environ, "GIT_INDEX_FILE": index_file} if index_file else None
        done = subprocess.run(["git", "ls-files", "--stage", "-z"], cwd=self.root, env=env,
                              capture_output=True, check=True)
        out: dict[str, tuple[int, str]] = {}
        for record in done.stdout.split(b"\0"):
            if record:
                info, _, path = record.partition(b"\t")
                mode, oid, _stage = info.split(b" ")
                out[os.fsdecode(path)] = (int(mode, 8), oid.decode("ascii"))
        return out

    def _walk_entries(self, tree: pygit2.Tree, base: str, out: dict[str, tuple[int, str]]) -> None:
        for entry in tree:
            if entry.type_str == "tree":
                self._walk_entries(self.git[entry.id], base + entry.name + "/", out)
            else:
                out[base + entry.name] = (entry.filemode, str(entry.id))

    def _walk(self, tree: pygit2.Tree, base: str, out: dict, *, with_data: bool) -> None:
        for entry in tree:
            path = base + entry.name
            if entry.type_str == "tree":
                self._walk(self.git[entry.id], path + "/", out, with_data=with_data)
            elif entry.type_str == "blob":
                out[path] = self.git[entry.id].data if with_data else str(entry.id)

    def policy(self, rev: str = "HEAD") -> Policy:
        """The policy at a commit, parsed once per version of the file."""
        blob = self.blob_id(CONFIG_PATH, rev)
        if blob not in self._policies:
            data = None if blob is None else self.git[blob].data
            try:
                self._policies[blob] = parse_policy(None if data is None else data.decode("utf-8", "replace"))
            except PolicyError as exc:
                raise MemrepoError(BAD_CONFIG.format(problem=exc)) from None
        return self._policies[blob]

    def core_sizes(self, rev: str = "HEAD") -> dict[str, int]:
        """Characters of each core memory file at a commit, counted once per blob."""
        sizes: dict[str, int] = {}
        for path, blob in self.paths(rev, "system").items():
            if is_core(path):
                if blob not in self._chars:
                    self._chars[blob] = core_size({path: self.git[blob].data})
                sizes[path] = self._chars[blob]
        return sizes

    def commit_info(self, rev: str) -> CommitInfo | None:
        commit = self._commit(rev)
        return None if commit is None else _info(commit)

    def log(self, rev: str = "HEAD", path: str | None = None, first_parent: bool = False
            ) -> Iterator[CommitInfo]:
        """Commits reachable from `rev`, newest first; with `path`, those that changed it."""
        head = self._commit(rev)
        if head is None:
            return
        sort = pygit2.enums.SortMode.TIME | pygit2.enums.SortMode.TOPOLOGICAL
        walker = self.git.walk(head.id, sort)
        if first_parent:
            walker.simplify_first_parent()
        for commit in walker:
            if path is not None and not self._touches(commit, path):
                continue
            yield _info(commit)

    def _touches(self, commit: pygit2.Commit, path: str) -> bool:
        def entry_id(tree: pygit2.Tree) -> str | None:
            try:
                return str(tree[path].id)
            except KeyError:
                return None

        mine = entry_id(commit.tree)
        if not commit.parents:
            return mine is not None
        return all(entry_id(parent.tree) != mine for parent in commit.parents)

    def dirty_paths(self) -> list[str]:
        """Tracked files whose working copy or staged copy differs from HEAD."""
        status = self.git.status(untracked_files="no")
        return sorted(path for path, flags in status.items()
                      if flags not in (pygit2.enums.FileStatus.CURRENT,
                                       pygit2.enums.FileStatus.IGNORED))

    def settle(self) -> list[str]:
        """Tracked files that hold uncommitted changes, once this clone checks out files as
        committed (`pin_checkout`) and index entries that differ from HEAD only as an artefact
        of an earlier checkout are put back (`artefacts`). The writers that need a clean tree
        (the memory tool, `sync`, `repository set`) ask here, under the lock."""
        pin_checkout(self.git)
        dirty = self.dirty_paths()
        if dirty and self.restore_entries(artefacts(self, dirty)):
            dirty = self.dirty_paths()
        return dirty

    def restore_entries(self, entries: Mapping[str, tuple[int, str]]) -> list[str]:
        """Set index entries (path -> (git mode, object id)) to the given ones: the index is
        made to say what HEAD says where the working tree already holds it."""
        if not entries:
            return []
        index = self.git.index
        index.read()
        for path, (mode, oid) in entries.items():
            index.add(pygit2.IndexEntry(path, pygit2.Oid(hex=oid), mode))
        index.write()
        return sorted(entries)

    # ----------------------------------------------------------------- writing
    @contextmanager
    def lock(self, timeout: float = 30.0) -> Iterator[None]:
        """Serialise memrepo's writers on this clone (threads and processes alike)."""
        with file_lock(Path(self.git.path) / "memrepo.lock", timeout=timeout) as held:
            if not held:
                raise MemrepoError(REPO_LOCKED.format(path=self.root))
            yield

    def commit(
        self,
        changes: Mapping[str, bytes | None],
        message: str,
        author: Identity,
        *,
        parent: str,
        committer: Identity | None = None,
        author_time: tuple[int, int] | None = None,
        update_worktree: bool = True,
    ) -> str:
        """Commit `changes` (path -> new bytes, None deletes) on top of `parent` and move
        the checked-out branch there; the working tree and index follow for those paths.

        Only the named paths change, whatever else is staged. If anything fails before the
        branch moves, the working tree and index are put back exactly as they were.
        """
        base = self.git[parent].peel(pygit2.Commit)
        tree_id = self.build_tree(base.tree, changes)
        when = author_time or (int(time.time()), _local_offset())
        a = pygit2.Signature(author.name, author.email, when[0], when[1])
        c_id = committer or author
        c = pygit2.Signature(c_id.name, c_id.email, int(time.time()), _local_offset())
        sha = self.git.create_commit(None, a, c, message, tree_id, [base.id])
        if update_worktree:
            self.move_branch(str(sha), expected=parent, changed=list(changes))
        return str(sha)

    def build_tree(self, tree: pygit2.Tree, changes: Mapping[str, bytes | None]) -> pygit2.Oid:
        index = pygit2.Index()
        index.read_tree(tree)
        for path, data in changes.items():
            if data is None:
                if path in index:
                    index.remove(path)
            else:
                blob = self.git.create_blob(data)
                index.add(pygit2.IndexEntry(path, blob, FILE_MODE))
        return index.write_tree(self.git)

    def move_branch(self, sha: str, *, expected: str, changed: list[str] | None = None) -> None:
        """Point the checked-out branch at `sha` (which must follow `expected`) and bring
        the working tree and index along. With `changed`, only those paths are touched."""
        if self.head_sha() != expected:
            raise MemrepoError(HEAD_MOVED)
        new_tree = self.git[sha].peel(pygit2.Commit).tree
        if changed is None:  # by mode too: a commit may change only a file's mode
            old, new = _blobs(self.entries(expected)), _blobs(self.entries(sha))
            changed = sorted(p for p in set(old) | set(new) if old.get(p) != new.get(p))
        saved = {path: _read_file(self.root / path) for path in changed}
        pin_checkout(self.git)
        index = self.git.index
        index.read()
        try:
            for path in changed:
                try:
                    entry = new_tree[path]
                    data = self.git[entry.id].data if entry.type_str == "blob" else None
                except KeyError:
                    data = None
                _write_file(self.root, path, data, executable=data is not None and entry.filemode == EXECUTABLE_MODE)
                if data is None:
                    if path in index:
                        index.remove(path)
                else:
                    index.add(path)
                    if (index[path].id, index[path].mode) != (entry.id, entry.filemode):
                        # the index says what the commit says, whatever git made of the file
                        index.add(pygit2.IndexEntry(path, entry.id, entry.filemode))
            index.write()
            ref = self.git.head.name if not self.git.head_is_detached else "HEAD"
            self.git.references[ref].set_target(sha, f"memrepo: {self.commit_info(sha).summary}")
        except BaseException:
            for path, data in saved.items():
                _write_file(self.root, path, data)
            index.read(force=True)
            raise

    # ------------------------------------------------------------- local config
    def get_config(self, key: str) -> str | None:
        try:
            return self.git.config[key]
        except KeyError:
            return None

    def set_config(self, key: str, value: str | None) -> None:
        """Set (None: unset) a setting of this clone, written only when it changes: a write takes
        `.git/config.lock`, which a process killed meanwhile leaves behind."""
        if self.get_config(key) == value:
            return
        config = self.git.config
        if value is None:
            if key in config:
                del config[key]
        else:
            config[key] = value


def is_memory(top: Collection[str], *, letta_made: bool) -> bool:
    """A memory is a tree with one of MEMORY_MARKS at its top, or any clone Letta Code made
    for an agent's memory (`letta_made`: its agent id or layout policy in the git folder),
    which starts as an empty commit before the agent writes anything."""
    return letta_made or not MEMORY_MARKS.isdisjoint(top)


def _info(commit: pygit2.Commit) -> CommitInfo:
    return CommitInfo(
        sha=str(commit.id),
        parents=tuple(str(p) for p in commit.parent_ids),
        author_name=commit.author.name,
        author_email=commit.author.email,
        time=commit.author.time,
        offset_minutes=commit.author.offset,
        message=commit.message,
    )


def _local_offset() -> int:
    return -(time.altzone if time.daylight and time.localtime().tm_isdst else time.timezone) // 60


def _read_file(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def artefacts(repo: MemoryRepo, paths: Collection[str]) -> dict[str, tuple[int, str]]:
    """Among `paths`, those whose index entry differs from HEAD's while the working file holds
    HEAD's bytes exactly and the index holds either HEAD's object under another mode or HEAD's
    bytes with CRLF made LF (what git's line-ending conversion stages): nothing anyone wrote,
    only what an earlier checkout or `git add` under .gitattributes or core.filemode made of
    the commit. Path -> HEAD's (mode, object id); nothing uncommitted is lost by restoring it."""
    found: dict[str, tuple[int, str]] = {}
    head = repo.entries("HEAD")
    indexed = repo.index_entries()
    for path in paths:
        want, have = head.get(path), indexed.get(path)
        if want is None or have is None or want == have or want[0] not in (FILE_MODE, EXECUTABLE_MODE):
            continue
        full = repo.root / path
        if full.is_symlink() or not full.is_file() or str(pygit2.hash(full.read_bytes())) != want[1]:
            continue
        if have[1] == want[1] or repo.blob(have[1]) == repo.blob(want[1]).replace(b"\r\n", b"\n"):
            found[path] = want
    return found


def _blobs(entries: dict[str, tuple[int, str]]) -> dict[str, tuple[int, str]]:
    """Entries that are files (regular, executable or symbolic links), not submodules."""
    return {path: entry for path, entry in entries.items() if entry[0] != pygit2.GIT_FILEMODE_COMMIT}


def _write_file(root: Path, path: str, data: bytes | None, *, executable: bool = False) -> None:
    target = root / path
    if data is None:
        try:
            target.unlink()
        except FileNotFoundError:
            return
        parent = target.parent
        while parent != root:
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.memrepo-tmp")
    tmp.write_bytes(data)
    if executable:  # as committed (memory's rules refuse the mode; a direct push may bring it)
        tmp.chmod(tmp.stat().st_mode | 0o111)
    os.replace(tmp, target)


# ------------------------------------------------------------------ checking out
# How memrepo's clones check files out: the bytes and modes as committed, whatever a writer
# pushes to `main`.
#
# Git rewrites files on their way in and out of a working tree when attributes or settings ask
# it to: line endings (`text`, `eol`, `crlf`, core.autocrlf), `filter=` drivers, `ident`, and
# `working-tree-encoding`. A commit that brings `.gitattributes` with `* text=auto` and a file
# with CRLF line endings then reads back from the working tree as other bytes than HEAD's, and
# an executable bit the file system does not keep (or core.filemode says to ignore) reads back
# as another mode: the clone shows a change nobody made, and every writer that waits for a clean
# tree (the memory tool, `sync`) stops. So every clone memrepo makes or writes in has
# `$GIT_DIR/info/attributes` unset those attributes (it takes precedence over every
# `.gitattributes`, in git and in libgit2 alike, gitattributes(5)), core.autocrlf off, and
# core.filemode off (memory holds only regular files: a mode on disk means nothing). The two
# functions below decide what those hold (pure); `pin_checkout` applies them.

# Unset (not "false"): each leaves git nothing to convert, whatever .gitattributes says.
ATTRIBUTES_LINE = "* -text -eol -crlf -filter -ident -working-tree-encoding"
# What a clone's info/attributes says of memrepo's line in it.
ATTRIBUTES_MARK = "# memrepo: files are checked out as committed (no line-ending, filter or encoding rewriting)"
CHECKOUT_SETTINGS = {"core.autocrlf": "false", "core.filemode": "false"}


def attributes_text(existing: str | None) -> str | None:
    """What info/attributes should hold given what it holds now (None: no file), or None when
    it is right already: its own lines kept, memrepo's line last (a later line wins)."""
    block = f"{ATTRIBUTES_MARK}\n{ATTRIBUTES_LINE}\n"
    text = existing or ""
    if text.endswith(block):
        return None
    kept = [line for line in text.splitlines() if line not in (ATTRIBUTES_MARK, ATTRIBUTES_LINE)]
    return "".join(f"{line}\n" for line in kept) + block


def settings_to_change(current: dict[str, str | None]) -> dict[str, str]:
    """The settings of CHECKOUT_SETTINGS whose value in `current` (None: unset) is not memrepo's."""
    return {key: value for key, value in CHECKOUT_SETTINGS.items() if (current.get(key) or "").lower() != value}


def pin_checkout(git: pygit2.Repository) -> bool:
    """Make this clone check out files as committed (`attributes_text`, CHECKOUT_SETTINGS); True when
    anything had to change. Cheap when nothing does: one small file read and two settings."""
    changed = False
    config = git.config
    for key, value in settings_to_change({key: _config_value(config, key) for key in CHECKOUT_SETTINGS}).items():
        config[key] = value
        changed = True
    path = Path(_common_dir(git)) / "info" / "attributes"
    try:
        existing: str | None = path.read_text(encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        existing = None
    text = attributes_text(existing)
    if text is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(".attributes.memrepo-tmp")
        tmp.write_text(text, encoding="utf-8", errors="surrogateescape")
        tmp.replace(path)
        changed = True
    return changed


def _config_value(config: pygit2.Config, key: str) -> str | None:
    try:
        return str(config[key])
    except KeyError:
        return None


def _common_dir(git: pygit2.Repository) -> str:
    """The git folder a linked worktree shares with its main clone (info/ lives there)."""
    common = Path(git.path) / "commondir"
    if common.is_file():
        return str((Path(git.path) / common.read_text(encoding="utf-8").strip()).resolve())
    return git.path


def configured_agent_id(repo: MemoryRepo) -> str | None:
    """The agent a clone is for: memrepo's setting, or else the agent Letta Code recorded in a
    memory it made, so that a Letta memory needs no setup of its own."""
    return repo.get_config(AGENT_ID_KEY) or repo.letta_agent_id()


def configured_agent_name(repo: MemoryRepo) -> str | None:
    """The name `memrepo init` or `clone` gave the configured agent, if any."""
    return repo.get_config(AGENT_NAME_KEY)
