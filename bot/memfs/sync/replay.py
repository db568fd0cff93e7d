"""Replaying this clone's queued commits onto a main that moved on the remote, in-process,
one commit at a time and per file, as `git pull --rebase` would but with the markdown-aware
merge the integrator uses (two agents adding to one list both keep their items; frontmatter
is merged key by key). What cannot be replayed is set aside on a
backup ref, never dropped and never forced over the remote."""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pygit2

from bot.memfs.store import checks
from bot.memfs.store.repo import MemoryRepo

SYNC_CONFLICT_LINES = "{path} was changed differently on both sides ({where})"
SYNC_CONFLICT_NOT_TEXT = "{path} was changed on both sides and is not UTF-8 text, so it cannot be merged"

BACKUP_PREFIX = "refs/memrepo/backup/"


class ReplayFailed(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def count_commits(repo: MemoryRepo, tip: str, hide: str | None = None) -> int:
    if hide is None:
        return sum(1 for _ in repo.git.walk(tip))
    ahead, _ = repo.git.ahead_behind(tip, hide)
    return ahead


def contains(repo: MemoryRepo, descendant: str, ancestor: str) -> bool:
    """Whether `ancestor` is `descendant` or in its history (False when this clone lacks it)."""
    if descendant == ancestor:
        return True
    try:
        return repo.git.descendant_of(descendant, ancestor)
    except (KeyError, ValueError, pygit2.GitError):
        return False


@dataclass(frozen=True)
class SetAside:
    """A queued commit that could not be replayed onto the remote's main: it is kept at `ref`
    (the commit itself, on its own parent, so `git cherry-pick` or a pull request can take it)
    until a person or the agent deals with it, and `reason` says what stood in the way."""

    commit: str
    message: str
    ref: str
    reason: str

    def as_data(self) -> dict[str, str]:
        return {"commit": self.commit, "message": self.message, "ref": self.ref, "reason": self.reason}


def _records(repo: MemoryRepo) -> Path:
    return Path(repo.git.path) / "memrepo" / "set-aside"


def set_aside(repo: MemoryRepo, sha: str, reason: str = "") -> str:
    """Keep `sha` on a backup ref of its own, with why (the caller holds the repository lock)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    name = f"{BACKUP_PREFIX}{stamp}-{sha[:8]}"
    repo.git.references.create(name, sha, force=True)
    if reason:
        folder = _records(repo)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name.rsplit('/', 1)[-1]}.json").write_text(json.dumps({"reason": reason}), encoding="utf-8")
    return name


def backups(repo: MemoryRepo) -> list[str]:
    """Backup refs of local commits that sync set aside, oldest first."""
    return sorted(r for r in repo.git.listall_references() if r.startswith(BACKUP_PREFIX))


def dismiss(repo: MemoryRepo, ref: str) -> None:
    """Forget a set-aside commit (its ref and its reason): it was dealt with."""
    with contextlib.suppress(KeyError, pygit2.GitError):
        repo.git.references.delete(ref)
    with contextlib.suppress(OSError):
        (_records(repo) / f"{ref.rsplit('/', 1)[-1]}.json").unlink()


def set_aside_commits(repo: MemoryRepo) -> list[SetAside]:
    """Every commit sync has set aside and nobody has dealt with yet (its ref still exists)."""
    found = []
    for ref in backups(repo):
        sha = repo.resolve(ref) or ""
        try:
            message = repo.git[sha].peel(pygit2.Commit).message.split("\n", 1)[0]
        except (KeyError, ValueError, pygit2.GitError):
            message = ""
        record = _records(repo) / f"{ref.rsplit('/', 1)[-1]}.json"
        try:
            reason = str(json.loads(record.read_text(encoding="utf-8")).get("reason", ""))
        except (OSError, ValueError, AttributeError):
            reason = ""
        found.append(SetAside(sha, message, ref, reason or "no reason was recorded"))
    return found


def blob_at(repo: MemoryRepo, tree: pygit2.Tree, path: str) -> bytes | None:
    try:
        entry = tree[path]
    except KeyError:
        return None
    return repo.git[entry.id].data if entry.type_str == "blob" else None


def merge_file(path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None) -> bytes | None:
    """The replayed content of one path; raises ReplayFailed on a conflict. The three-way
    resolution is imported here: most syncs, and every commit with nothing to push, need none."""
    from bot.memfs.merge.markdown import resolve_markdown

    if theirs == base:
        return ours
    if ours in (base, theirs):
        return theirs
    if base is None:
        raise ReplayFailed([f"{path} was added on both sides with different content"])
    if ours is None or theirs is None:
        raise ReplayFailed([f"{path} was deleted on one side and changed on the other"])
    try:
        texts = [data.decode("utf-8") for data in (base, ours, theirs)]
    except UnicodeDecodeError:
        raise ReplayFailed([SYNC_CONFLICT_NOT_TEXT.format(path=path)]) from None
    result = resolve_markdown(path, *texts)
    if result.text is None:
        raise ReplayFailed([SYNC_CONFLICT_LINES.format(path=path, where="; ".join(result.conflicts[:3]))])
    return result.text.encode("utf-8")


def replay_commit(repo: MemoryRepo, commit: pygit2.Commit, tip: pygit2.Commit) -> pygit2.Commit:
    """`commit`'s change re-applied on `tip`; `tip` itself when it changes nothing there."""
    g = repo.git
    parent_tree = commit.parents[0].tree if commit.parents else g[g.TreeBuilder().write()]
    changes: dict[str, bytes | None] = {}
    problems: list[str] = []
    for delta in parent_tree.diff_to_tree(commit.tree).deltas:
        path = delta.new_file.path or delta.old_file.path
        base = blob_at(repo, parent_tree, path)
        ours = blob_at(repo, commit.tree, path)
        theirs = blob_at(repo, tip.tree, path)
        try:
            merged = merge_file(path, base, ours, theirs)
        except ReplayFailed as exc:
            problems += exc.problems
            continue
        if merged != theirs:
            changes[path] = merged
    if problems:
        raise ReplayFailed(problems)
    if not changes:
        return tip
    found = checks.check(repo, {p: (d, blob_at(repo, tip.tree, p)) for p, d in changes.items()}, str(tip.id))
    if found:
        raise ReplayFailed([
            f"{p.path} does not validate once merged ({p.message})" for p in found
        ])
    tree_id = repo.build_tree(tip.tree, changes)
    committer = pygit2.Signature(commit.committer.name, commit.committer.email,
                                 int(time.time()), commit.committer.offset)
    new_id = g.create_commit(None, commit.author, committer, commit.message, tree_id, [tip.id])
    return g[new_id].peel(pygit2.Commit)


def replay(repo: MemoryRepo, local: str, onto: str
           ) -> tuple[str, dict[str, str], list[tuple[pygit2.Commit, list[str]]]]:
    """Replay the commits of `local` that `onto` lacks one by one, oldest first: (new tip,
    {commit: its replayed commit} of those replayed, [(commit, problems)] of those that could
    not be). A commit that conflicts does not stop the others: each that applies on the tip so
    far lands. Merge commits are dropped (like `git rebase`): their sides are replayed one by
    one."""
    g = repo.git
    walker = g.walk(local, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.hide(onto)
    tip = g[onto].peel(pygit2.Commit)
    moved: dict[str, str] = {}
    failed: list[tuple[pygit2.Commit, list[str]]] = []
    for commit in list(walker):
        if len(commit.parents) > 1:
            continue
        try:
            new = replay_commit(repo, commit, tip)
        except ReplayFailed as exc:
            failed.append((commit, exc.problems))
            continue
        if new.id != tip.id:
            moved[str(commit.id)] = str(new.id)
        tip = new
    return str(tip.id), moved, failed
