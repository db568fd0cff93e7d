"""Connecting a memory to a remote (`memrepo repository set URL`) and disconnecting it: both
sides are brought together without forcing and without losing a commit (push to an empty
remote, fast-forward, adopt the remote's history in a fresh clone, or replay local commits
onto the remote's main as sync does); an unrelated history is refused, and a failure before
anything moved leaves the configuration as it was."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from bot.errors import MemrepoError
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.sync.push import (
    forget_sync,
    off_main,
    publish,
    rebase_onto,
    record_sync,
    set_aside_note,
    set_upstream,
)
from bot.memfs.sync.redaction import check_url, redact
from bot.memfs.sync.replay import contains, count_commits, set_aside
from bot.memfs.sync.transport import BRANCH, REMOTE, TRACKING_REF, fetch, remote_heads, remote_url
from bot.texts import Text, first_few

REMOTE_SET_UNREACHABLE = "cannot reach {url} ({problem}); nothing was changed"
REMOTE_SET_NO_MAIN = (
    "{url} has branches ({branches}) but no main; memrepo syncs main only, so nothing was changed"
)
REMOTE_SET_UNRELATED = Text(
    "{url} and {path} have no commit in common ({count:|local commit|local commits}; the remote's main is at "
    "{remote}, local main at {local}), so neither can be replayed onto the other; nothing was changed. Connect "
    "an empty repository, or clone the remote and redo the local edits there"
)
REMOTE_SET_JOINED = Text(
    "connected to {url}: replayed {replayed:|local commit|local commits} onto the remote's main (which had "
    "{pulled:|commit|commits} this folder lacked) and pushed; main is at {sha}"
)
REMOTE_SET_JOINED_NOT_PUSHED = (
    "connected to {url} and replayed the local commits onto the remote's main, but could not push them "
    "({reason}); `memrepo repository sync --repo {path}` sends them"
)
REMOTE_SET_DIRTY = (
    "tracked files have uncommitted changes ({paths}); commit or discard them before taking the "
    "remote's history"
)
REMOTE_SET_PUSH_FAILED = "connected to {url} but could not push main ({reason}); nothing was changed"
REMOTE_SET_PUSHED = Text("connected to {url}: pushed main ({count:|commit|commits}) to the empty remote")
REMOTE_SET_ADOPTED = (
    "connected to {url}: took the remote's main ({sha}); the local initial commit is kept at {backup}"
)
REMOTE_SET_FAST_FORWARDED = Text("connected to {url}: fast-forwarded main by {count:|commit|commits} to {sha}")
REMOTE_SET_AHEAD = Text("connected to {url}: pushed {count:|local commit|local commits}; main is at {sha}")
REMOTE_UNSET_UNPUSHED = Text(
    "disconnected from {url}; the local history keeps its {count:|unpushed commit|unpushed commits}"
)


@contextmanager
def restoring(repo: MemoryRepo) -> Iterator[None]:
    """Put the remote configuration (URL and tracking ref) back if connecting fails."""
    previous = remote_url(repo)
    tracking = repo.resolve(TRACKING_REF)
    upstream = (repo.get_config(f"branch.{BRANCH}.remote"), repo.get_config(f"branch.{BRANCH}.merge"))
    try:
        yield
    except BaseException:
        remotes = repo.git.remotes
        if previous is None:
            if remote_url(repo) is not None:
                remotes.delete(REMOTE)
        else:
            remotes.set_url(REMOTE, previous)
        if previous is not None and tracking is not None:
            repo.git.references.create(TRACKING_REF, tracking, force=True)
        elif TRACKING_REF in repo.git.references:
            repo.git.references.delete(TRACKING_REF)
        repo.set_config(f"branch.{BRANCH}.remote", upstream[0])
        repo.set_config(f"branch.{BRANCH}.merge", upstream[1])
        raise


def set_remote(repo: MemoryRepo, url: str) -> str:
    """Connect to `url` as origin and bring both sides together, never forcing: push to an
    empty remote, fast-forward, take the remote's history into a freshly initialised clone, or
    replay the local commits onto the remote's main when both moved. An unrelated history and
    an unreachable URL leave nothing configured. Raises once connected when a local commit was
    set aside or could not be pushed, so the caller never reads that as a clean success."""
    url = check_url(url)
    shown = redact(url)
    with repo.lock():
        elsewhere = off_main(repo)
        if elsewhere is not None:
            raise MemrepoError(elsewhere)
    with repo.lock():
        with restoring(repo):
            if remote_url(repo) is None:
                repo.git.remotes.create(REMOTE, url)
            else:
                repo.git.remotes.set_url(REMOTE, url)
            said, complete = bring_together(repo, shown)
        if not complete:
            raise MemrepoError(said)
    return said


def bring_together(repo: MemoryRepo, shown: str) -> tuple[str, bool]:
    """What connecting did, and whether every local commit is now on the remote's main."""
    heads, problem = remote_heads(repo)
    if heads is None:
        raise MemrepoError(REMOTE_SET_UNREACHABLE.format(url=shown, problem=problem))
    local = repo.head_sha()
    assert local is not None
    if not heads:
        result = publish(repo)
        if not result.pushed:
            raise MemrepoError(REMOTE_SET_PUSH_FAILED.format(url=shown, reason=result.reason))
        set_upstream(repo)
        return REMOTE_SET_PUSHED.format(url=shown, count=count_commits(repo, local)), True
    if BRANCH not in heads:
        raise MemrepoError(REMOTE_SET_NO_MAIN.format(url=shown, branches=first_few(heads)))
    remote, problem = fetch(repo)
    if remote is None:
        raise MemrepoError(REMOTE_SET_UNREACHABLE.format(url=shown, problem=problem or f"{BRANCH} vanished"))
    if remote == local:
        set_upstream(repo)
        record_sync(repo)
        return f"connected to {shown}: already in sync at {local[:12]}", True
    if contains(repo, local, remote):
        count = count_commits(repo, local, remote)
        result = publish(repo)
        if not result.pushed:
            raise MemrepoError(REMOTE_SET_PUSH_FAILED.format(url=shown, reason=result.reason))
        set_upstream(repo)
        return REMOTE_SET_AHEAD.format(url=shown, count=count, sha=(result.head or "")[:12]), True
    return take_remote(repo, shown, local, remote)


Taking = Literal["fast-forward", "join", "adopt", "unrelated"]


def how_to_take(fast_forward: bool, related: bool, local_commits: int) -> Taking:
    """How a clone takes a remote main that has commits it lacks. A fresh clone's one initial
    commit (`memrepo init` before connecting) gives way to the remote's history; any other
    unrelated history is refused, since no replay can join two histories without a common
    commit and a person must choose."""
    if fast_forward:
        return "fast-forward"
    if related:
        return "join"
    return "adopt" if local_commits == 1 else "unrelated"


def take_remote(repo: MemoryRepo, shown: str, local: str, remote: str) -> tuple[str, bool]:
    """The remote's main has commits this clone lacks: fast-forward, join the two histories,
    or adopt the remote's in a fresh clone (its initial commit kept on a backup ref)."""
    fast_forward = contains(repo, remote, local)
    related = fast_forward or repo.git.merge_base(local, remote) is not None
    how = how_to_take(fast_forward, related, count_commits(repo, local))
    if how == "unrelated":
        raise MemrepoError(REMOTE_SET_UNRELATED.format(
            url=shown, path=repo.root, count=count_commits(repo, local), remote=remote[:12], local=local[:12]))
    dirty = repo.settle()
    if dirty:
        raise MemrepoError(REMOTE_SET_DIRTY.format(paths=first_few(dirty)))
    if how == "join":
        return join(repo, shown, local, remote)
    if how == "fast-forward":
        count = count_commits(repo, remote, local)
        repo.move_branch(remote, expected=local)
        set_upstream(repo)
        record_sync(repo)
        return REMOTE_SET_FAST_FORWARDED.format(url=shown, count=count, sha=remote[:12]), True
    backup = set_aside(repo, local)
    repo.move_branch(remote, expected=local)
    set_upstream(repo)
    record_sync(repo)
    return REMOTE_SET_ADOPTED.format(url=shown, sha=remote[:12], backup=backup), True


def join(repo: MemoryRepo, shown: str, local: str, remote: str) -> tuple[str, bool]:
    """Both sides moved on from a common commit (a harness pushed, then a dream was merged on
    the forge): replay the local commits onto the remote's main as sync does, set aside what
    still conflicts, push without forcing. The replay is kept even when the push fails: the
    clone is connected, and the next sync sends it."""
    pulled = count_commits(repo, remote, local)
    replayed, kept, reason = rebase_onto(repo, local, remote)
    if reason is not None:  # the tree was clean a moment ago; nothing moved
        raise MemrepoError(reason)
    result = publish(repo, pulled=pulled, replayed=replayed, kept=tuple(kept))
    set_upstream(repo)
    if result.pushed:
        said = REMOTE_SET_JOINED.format(url=shown, replayed=result.replayed, pulled=pulled,
                                              sha=(result.head or "")[:12])
    else:
        said = REMOTE_SET_JOINED_NOT_PUSHED.format(url=shown, reason=result.reason, path=repo.root)
    note = set_aside_note(result.set_aside)
    return " ".join(part for part in (said, note) if part), result.pushed and not result.set_aside


def unset_remote(repo: MemoryRepo) -> str:
    """Disconnect from origin; local history (and any backup refs) stay."""
    with repo.lock():
        url = remote_url(repo)
        if url is None:
            return "no remote was connected; nothing to do"
        head = repo.head_sha()
        tracking = repo.resolve(TRACKING_REF)
        unpushed = 0
        if head is not None:
            unpushed = count_commits(repo, head, tracking) if tracking else count_commits(repo, head)
        repo.git.remotes.delete(REMOTE)
        repo.set_config(f"branch.{BRANCH}.remote", None)
        repo.set_config(f"branch.{BRANCH}.merge", None)
        forget_sync(repo)
    if unpushed:
        return REMOTE_UNSET_UNPUSHED.format(url=redact(url), count=unpushed)
    return f"disconnected from {redact(url)}"
