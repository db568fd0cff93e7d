"""Git operations behind pull requests and the git REST endpoints, over a bare repository
with pygit2: resolving names to commits, what one commit has that another lacks, diffs as
GitHub lists them, three-way merges (merge, squash, rebase) done entirely in the object
database, and compare-and-swap ref updates.

Nothing here touches the database or emits events: callers decide what a result means for
a pull request. New commits are written as loose objects and only become reachable when a
caller moves a ref to them, so a merge that is refused leaves nothing behind that matters.
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass
from typing import Any

import pygit2
from pygit2.enums import DeltaStatus, SortMode

from localhub import messages

# GitHub commits merges and web edits as its own committer ("web-flow").
GITHUB_NAME = "GitHub"
GITHUB_EMAIL = "noreply@github.com"
NOREPLY_DOMAIN = "users.noreply.localhub"  # as rest_repos signs the initial commit
# The no-reply addresses that stand for an account: GitHub's, and localhub's own.
NOREPLY = re.compile(r"^(?:(?P<id>\d+)\+)?(?P<login>[^@+\s]+)@users\.noreply\.(?:github\.com|localhub)$",
                     re.IGNORECASE)
MAX_FILES = 300  # GitHub lists at most 300 files of a diff
HEX = re.compile(r"^[0-9a-fA-F]{4,40}$")

STATUS_NAMES = {
    DeltaStatus.ADDED: "added",
    DeltaStatus.DELETED: "removed",
    DeltaStatus.MODIFIED: "modified",
    DeltaStatus.RENAMED: "renamed",
    DeltaStatus.COPIED: "copied",
    DeltaStatus.TYPECHANGE: "changed",
}


class MergeConflict(Exception):
    """The two sides change the same lines (or one deletes what the other edits)."""


# ---------------------------------------------------------------------------- identities

def signature(name: str, email: str, when: float | None = None, offset: int = 0) -> pygit2.Signature:
    return pygit2.Signature(name, email, int(when if when is not None else time.time()), offset)


def user_signature(user: Any, when: float | None = None) -> pygit2.Signature:
    """A localhub account as a git identity: its name and email when it set them, else its
    login and a noreply address that maps back to the account (as GitHub's does)."""
    keys = user.keys() if hasattr(user, "keys") else []
    name = (user["name"] if "name" in keys else None) or user["login"]
    email = (user["email"] if "email" in keys else None) or f"{user['id']}+{user['login']}@{NOREPLY_DOMAIN}"
    return signature(name, email, when)


def noreply_account(email: str) -> tuple[int | None, str] | None:
    """(account id, login) of a no-reply address (`<id>+<login>@users.noreply.github.com`,
    or `<login>@...`, GitHub's older form without the id), else None."""
    match = NOREPLY.match(email.strip())
    if match is None:
        return None
    return (int(match["id"]) if match["id"] else None), match["login"]


def github_signature(when: float | None = None) -> pygit2.Signature:
    return signature(GITHUB_NAME, GITHUB_EMAIL, when)


# ---------------------------------------------------------------------------- names -> commits

def find_commit(git: pygit2.Repository, name: str) -> pygit2.Commit | None:
    """The commit a branch, tag, `heads/x`/`refs/heads/x` or (abbreviated) sha names, or None.
    Branches win over shas, as on GitHub, so a branch called `cafe` is the branch."""
    if not name or ".." in name:
        return None
    if name == "HEAD":
        try:
            return git.head.peel(pygit2.Commit)
        except (pygit2.GitError, KeyError, ValueError):
            return None
    candidates = [f"refs/heads/{name}", f"refs/tags/{name}"]
    candidates.append(name if name.startswith("refs/") else f"refs/{name}")
    for ref_name in candidates:
        try:
            ref = git.references.get(ref_name)
        except (pygit2.InvalidSpecError, ValueError):
            ref = None
        if ref is not None:
            try:
                return ref.peel(pygit2.Commit)
            except (pygit2.InvalidSpecError, ValueError, KeyError):
                return None
    if HEX.match(name):
        try:
            obj = git.revparse_single(name)
            return obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            return None
    return None


def branch_tip(git: pygit2.Repository, branch: str) -> str | None:
    ref = git.references.get(f"refs/heads/{branch}")
    return str(ref.resolve().target) if ref is not None else None


def is_empty(git: pygit2.Repository) -> bool:
    return not any(name.startswith("refs/heads/") for name in git.references)


# ---------------------------------------------------------------------------- history

def merge_base(git: pygit2.Repository, a: str, b: str) -> str | None:
    base = git.merge_base(a, b)
    return str(base) if base is not None else None


def contains(git: pygit2.Repository, head: str, commit: str) -> bool:
    """Whether `commit` is `head` or one of its ancestors."""
    return head == commit or git.descendant_of(head, commit)


def held_by(git: pygit2.Repository, tip: str, commits: set[str],
            previous: tuple[str, dict[str, bool]] | None = None) -> dict[str, bool]:
    """Which of `commits` `tip` holds (is or descends from).

    `previous` is an earlier tip of the same branch with its answers. When this tip descends
    from it, what that one held stays held, and anything else is held only if it is among the
    commits added since: one short walk instead of a history walk per commit, which is what a
    push to a base with many open pull requests needs."""
    def holds(commit: str) -> bool:
        try:
            return contains(git, tip, commit)
        except (KeyError, ValueError, pygit2.GitError):
            return False

    answers: dict[str, bool] = {}
    if previous is not None and holds(previous[0]):
        old_tip, old = previous
        known = commits & old.keys()
        added = ({str(c.id) for c in commits_between(git, old_tip, tip)}
                 if any(not old[c] for c in known) else set())
        answers = {c: old[c] or c in added for c in known}
    answers.update({c: holds(c) for c in commits - answers.keys()})
    return answers


def bringing_commits(git: pygit2.Repository, before: str | None, after: str, heads: set[str]) -> dict[str, str]:
    """For each of `heads` that `after` holds, the commit of the branch's first-parent history
    since `before` that brought it: the merge commit whose second parent leads to it, or the head
    itself when the branch was fast-forwarded to it. GitHub gives a pull request merged by a push
    that commit as its `merge_commit_sha` ("if merged as a merge commit, the SHA of the merge
    commit"), one walk for all of them."""
    line: list[str] = []
    commit = git.get(after)
    while isinstance(commit, pygit2.Commit) and str(commit.id) != before:
        line.append(str(commit.id))
        commit = git.get(commit.parent_ids[0]) if commit.parent_ids else None
    found: dict[str, str] = {}
    left = set(heads)
    for sha in reversed(line):  # oldest first: the first that holds a head brought it
        if not left:
            break
        for head in [h for h in left if contains(git, sha, h)]:
            found[head] = sha
            left.discard(head)
    return found


def tips_containing(git: pygit2.Repository, commit: str, tips: dict[str, str]) -> set[str]:
    """The names in `tips` (name -> sha) whose history holds `commit`, in one walk.

    The walk covers only what the tips add over the commit's parents; a tip holds the commit
    when a chain of children leads from the commit to it inside that set (every commit on such
    a chain descends from the commit, so none is hidden). Asking `descendant_of` once per tip
    walks down to a merge base every time, which grows with branches times history."""
    target = git.get(commit)
    if not isinstance(target, pygit2.Commit):
        return set()
    walker = git.walk(None, SortMode.NONE)
    for sha in set(tips.values()):
        walker.push(sha)
    for parent in target.parent_ids:
        walker.hide(parent)
    children: dict[str, list[str]] = {}
    for seen in walker:
        for parent in seen.parent_ids:
            children.setdefault(str(parent), []).append(str(seen.id))
    holders, frontier = {commit}, [commit]
    while frontier:
        for child in children.get(frontier.pop(), ()):
            if child not in holders:
                holders.add(child)
                frontier.append(child)
    return {name for name, sha in tips.items() if sha in holders}


def commits_between(git: pygit2.Repository, base: str | None, head: str,
                    limit: int | None = None) -> list[pygit2.Commit]:
    """Commits reachable from `head` but not from `base`, parents before children (the order
    GitHub lists a pull request's or a comparison's commits in)."""
    walker = git.walk(head, SortMode.TOPOLOGICAL | SortMode.REVERSE)
    if base is not None:
        walker.hide(base)
    commits = []
    for commit in walker:
        commits.append(commit)
        if limit is not None and len(commits) >= limit:
            break
    return commits


def ahead_behind(git: pygit2.Repository, base: str, head: str) -> tuple[int, int]:
    """(commits head has that base lacks, commits base has that head lacks)."""
    ahead, behind = git.ahead_behind(head, base)
    return ahead, behind


def history(git: pygit2.Repository, tip: str, path: str | None = None) -> list[pygit2.Commit]:
    """Commits reachable from `tip`, newest first; with `path`, only those that changed it."""
    commits = []
    for commit in git.walk(tip, SortMode.TOPOLOGICAL | SortMode.TIME):
        if path is None or _touches(commit, path):
            commits.append(commit)
    return commits


def _entry_id(tree: pygit2.Tree, path: str) -> str | None:
    try:
        return str(tree[path].id)
    except KeyError:
        return None


def _touches(commit: pygit2.Commit, path: str) -> bool:
    mine = _entry_id(commit.tree, path)
    if not commit.parents:
        return mine is not None
    return any(_entry_id(parent.tree, path) != mine for parent in commit.parents)


# ---------------------------------------------------------------------------- diffs

@dataclass(frozen=True)
class FileChange:
    """One entry of GitHub's diff-entry list."""

    filename: str
    status: str
    additions: int
    deletions: int
    sha: str | None
    patch: str | None
    previous_filename: str | None

    @property
    def changes(self) -> int:
        return self.additions + self.deletions


def tree_changes(git: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree | None) -> list[FileChange]:
    """What changed from `old` to `new` (None: the empty tree), renames detected."""
    if old is None and new is None:
        return []
    if old is None:
        assert new is not None
        diff = new.diff_to_tree(swap=True)
    elif new is None:
        diff = old.diff_to_tree()
    else:
        diff = old.diff_to_tree(new)
    diff.find_similar()
    changes = []
    for patch in diff:
        if patch is None:
            continue
        delta = patch.delta
        status = STATUS_NAMES.get(delta.status, "modified")
        _, additions, deletions = patch.line_stats
        text = None
        if not delta.is_binary:
            raw = patch.text or ""
            start = raw.find("@@")
            text = raw[start:].rstrip("\n") if start >= 0 else None
        removed = delta.status == DeltaStatus.DELETED
        sha = str(delta.old_file.id if removed else delta.new_file.id)
        previous = delta.old_file.path if status in ("renamed", "copied") else None
        changes.append(FileChange(delta.new_file.path if not removed else delta.old_file.path, status,
                                  additions, deletions, sha, text, previous))
        if len(changes) >= MAX_FILES:
            break
    return changes


def commit_changes(git: pygit2.Repository, commit: pygit2.Commit) -> list[FileChange]:
    """A commit's files, against its first parent (GitHub's choice for merges too)."""
    parent = commit.parents[0].tree if commit.parents else None
    return tree_changes(git, parent, commit.tree)


def range_changes(git: pygit2.Repository, base: str, head: str) -> list[FileChange]:
    """The three-dot diff: what `head` changed since it forked from `base`."""
    fork = merge_base(git, base, head)
    return tree_changes(git, git[fork].peel(pygit2.Tree) if fork else None, git[head].peel(pygit2.Tree))


def range_stats(git: pygit2.Repository, base: str, head: str) -> tuple[int, int, int, int]:
    """(commits, additions, deletions, changed files) of `base...head`, as a pull request
    reports them; cached, since two shas always give the same answer."""
    return _range_stats(git.path, base, head)


@functools.lru_cache(maxsize=1024)
def _range_stats(path: str, base: str, head: str) -> tuple[int, int, int, int]:
    git = pygit2.Repository(path)
    changes = range_changes(git, base, head)
    return (len(commits_between(git, base, head)), sum(c.additions for c in changes),
            sum(c.deletions for c in changes), len(changes))


# ---------------------------------------------------------------------------- merges

def merged_tree(git: pygit2.Repository, ours: str, theirs: str) -> pygit2.Oid:
    """The tree of a three-way merge of two commits (their merge base as ancestor)."""
    index = git.merge_commits(ours, theirs)
    if index.conflicts is not None:
        raise MergeConflict(messages.COMMITS_CONFLICT.format(ours=ours[:7], theirs=theirs[:7]))
    return index.write_tree(git)


def merges_cleanly(git: pygit2.Repository, ours: str, theirs: str) -> bool:
    try:
        merged_tree(git, ours, theirs)
    except MergeConflict:
        return False
    return True


def merge_commit(git: pygit2.Repository, base: str, head: str, message: str,
                 author: pygit2.Signature, committer: pygit2.Signature) -> str:
    """A merge commit of `head` into `base` (parents: base, head); not on any ref yet."""
    tree = merged_tree(git, base, head)
    return str(git.create_commit(None, author, committer, message, tree, [pygit2.Oid(hex=base),
                                                                           pygit2.Oid(hex=head)]))


def squash_commit(git: pygit2.Repository, base: str, head: str, message: str,
                  author: pygit2.Signature, committer: pygit2.Signature) -> str:
    """One commit on `base` with everything `head` brings."""
    tree = merged_tree(git, base, head)
    return str(git.create_commit(None, author, committer, message, tree, [pygit2.Oid(hex=base)]))


def rebase_commits(git: pygit2.Repository, base: str, head: str, committer: pygit2.Signature) -> str:
    """Replay each commit of `head` missing from `base` on top of `base`, keeping authors
    and messages; returns the new tip. A merge commit whose replay changes nothing (it only
    brought in base's work, as update-branch does) is dropped, like `git rebase` does."""
    current = git[base].peel(pygit2.Commit)
    for commit in commits_between(git, base, head):
        ancestor = commit.parents[0].tree if commit.parents else git[git.TreeBuilder().write()]
        index = git.merge_trees(ancestor, current.tree, commit.tree)
        if index.conflicts is not None:
            raise MergeConflict(messages.COMMIT_DOES_NOT_APPLY.format(commit=commit.id))
        tree = index.write_tree(git)
        if len(commit.parents) > 1 and tree == current.tree_id:
            continue
        oid = git.create_commit(None, commit.author, committer, commit.message, tree, [current.id])
        current = git[oid].peel(pygit2.Commit)
    return str(current.id)


def rebases_cleanly(git: pygit2.Repository, base: str, head: str) -> bool:
    try:
        rebase_commits(git, base, head, github_signature())
    except MergeConflict:
        return False
    return True


# ---------------------------------------------------------------------------- refs

class _Moved(Exception):
    pass


def compare_and_swap(git: pygit2.Repository, ref: str, expected: str | None, new: str | None,
                     message: str = "localhub") -> bool:
    """Move `ref` from `expected` to `new` (None: absent / delete) only if it still points at
    `expected`. The ref's lock file is held while it is read and written, the same lock
    `git receive-pack` takes, so a concurrent push or merge cannot slip in between."""
    try:
        with git.transaction() as tx:
            tx.lock_ref(ref)
            current = git.references.get(ref)
            now = str(current.target) if current is not None else None
            if now != expected:
                raise _Moved
            if new is None:
                tx.remove(ref)
            else:
                tx.set_target(ref, pygit2.Oid(hex=new), message=message)
    except _Moved:
        return False
    except pygit2.GitError:  # someone else holds the lock: the ref is being moved
        return False
    return True


# ---------------------------------------------------------------------------- files

def blob_at(git: pygit2.Repository, commit: pygit2.Commit | None, path: str) -> pygit2.Object | None:
    """The object at `path` in a commit's tree, or None."""
    if commit is None:
        return None
    if not path:
        return commit.tree
    try:
        return git[commit.tree[path].id]
    except KeyError:
        return None


def tree_with_file(git: pygit2.Repository, tree: pygit2.Tree | None, path: str, blob: pygit2.Oid,
                   mode: int = pygit2.GIT_FILEMODE_BLOB) -> pygit2.Oid:
    """A copy of `tree` with the file at `path` set to `blob` (directories made as needed)."""
    head, _, rest = path.partition("/")
    builder = git.TreeBuilder(tree) if tree is not None else git.TreeBuilder()
    if not rest:
        builder.insert(head, blob, mode)
        return builder.write()
    sub = None
    if tree is not None and head in tree:
        entry = git[tree[head].id]
        if isinstance(entry, pygit2.Tree):
            sub = entry
    builder.insert(head, tree_with_file(git, sub, rest, blob, mode), pygit2.GIT_FILEMODE_TREE)
    return builder.write()
