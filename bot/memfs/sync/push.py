"""Sending this clone's main to its remote, never force-pushing: `push` after a commit, and
`sync` (fetch, fast-forward when only the remote moved, replay when both did, then push). An
unreachable remote is not an error: the commit stays local ("queued") and the next push or
sync sends it."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from bot.backoff import Backoff, pause
from bot.errors import MemrepoError
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.sync.replay import SetAside, contains, count_commits, replay, set_aside
from bot.memfs.sync.transport import (
    BRANCH,
    BRANCH_REF,
    REMOTE,
    TRACKING_REF,
    fetch,
    push_main,
    remote_url,
    shown_url,
)
from bot.texts import Text, first_few

# Sync and remotes.
SYNC_NO_REMOTE = "no remote"
SYNC_NOT_CONFIGURED = (
    "{path} is not connected to a remote; connect one with `memrepo repository set <url>`"
)
SYNC_DIRTY = (
    "tracked files have uncommitted changes ({paths}); commit or discard them before syncing"
)
SYNC_DIRTY_QUEUED = (
    "the remote's main moved, and replaying onto it would touch a working tree with "
    "uncommitted changes ({paths})"
)
SYNC_UNREACHABLE = "remote unreachable: {problem}"
SYNC_BUSY = "the remote's main kept moving ({attempts} attempts)"
SYNC_NOT_ON_MAIN = "the clone has {branch} checked out, not main; memrepo syncs main only"
SYNC_SET_ASIDE = (
    "Commit {sha} \"{message}\" was NOT saved to main: it could not be replayed onto the remote's main "
    "({reason}). It is kept at {ref}; apply it with `git cherry-pick {sha}` once resolved, or redo the edit, "
    "then delete the ref (`git update-ref -d {ref}`)."
)
SYNC_PUSHED = Text("pushed {count:|commit|commits} to {url}; main is at {sha}")
SYNC_PUSHED_REPLAYED = Text(
    "replayed {replayed:|local commit|local commits} onto the remote's newer main and pushed them to {url}; "
    "main is at {sha}"
)
SYNC_FAST_FORWARDED = Text("fast-forwarded main by {count:|commit|commits} from {url}; main is at {sha}")

LAST_SYNC_KEY = "memrepo.lastSync"  # where clones kept it before `last_sync_path`
NO_REMOTE = SYNC_NO_REMOTE
ATTEMPTS = 6
RETRY = Backoff(0.05, cap=1.0, jitter=(0.5, 1.5))  # after the remote's main moved under a push


@dataclass(frozen=True)
class SyncResult:
    """`pushed` is True when the remote's main holds every local commit afterwards."""

    pushed: bool
    reason: str | None = None
    head: str | None = None
    sent: int = 0
    pulled: int = 0
    replayed: int = 0
    attempts: int = 0
    url: str | None = None  # redacted
    set_aside: tuple[SetAside, ...] = ()  # queued commits this run could not replay, kept on refs

    @property
    def summary(self) -> str:
        """One line for a person: what happened, or why nothing could be pushed, and every
        commit set aside (a result never reads as "saved" for an edit that did not land)."""
        return " ".join(part for part in (self._outcome(), set_aside_note(self.set_aside)) if part)

    def _outcome(self) -> str:
        if not self.pushed:
            return self.reason or ""
        url, sha = self.url or "", (self.head or "")[:12]
        if self.replayed:
            return SYNC_PUSHED_REPLAYED.format(replayed=self.replayed, url=url, sha=sha)
        if self.sent:
            return SYNC_PUSHED.format(count=self.sent, url=url, sha=sha)
        if self.pulled:
            return SYNC_FAST_FORWARDED.format(count=self.pulled, url=url, sha=sha)
        return f"in sync with {url} at {sha}"


def set_aside_note(entries: tuple[SetAside, ...]) -> str:
    """What a person or the agent reads about commits set aside ("" when there are none)."""
    return " ".join(SYNC_SET_ASIDE.format(sha=e.commit[:12], message=e.message, ref=e.ref, reason=e.reason)
                    for e in entries)


def now_stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def last_sync_path(repo: MemoryRepo) -> Path:
    return Path(repo.git.path) / "memrepo" / "last-sync"


def record_sync(repo: MemoryRepo) -> None:
    """When this clone last agreed with its remote, for `repository status`. Every sync writes it,
    so it is a file of its own replaced whole, not a git setting: a write of `.git/config` takes a
    lock that a process killed meanwhile would leave, and no git command could then change a
    setting of the clone."""
    path = last_sync_path(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    written = path.with_name(f".last-sync-{os.getpid()}")
    written.write_text(now_stamp() + "\n", encoding="utf-8")
    os.replace(written, path)


def last_sync(repo: MemoryRepo) -> str | None:
    """The moment `record_sync` wrote, else the git setting a clone made before it kept the file."""
    try:
        return last_sync_path(repo).read_text(encoding="utf-8").strip() or None
    except OSError:
        return repo.get_config(LAST_SYNC_KEY)


def forget_sync(repo: MemoryRepo) -> None:
    last_sync_path(repo).unlink(missing_ok=True)
    repo.set_config(LAST_SYNC_KEY, None)


def set_upstream(repo: MemoryRepo) -> None:
    repo.set_config(f"branch.{BRANCH}.remote", REMOTE)
    repo.set_config(f"branch.{BRANCH}.merge", BRANCH_REF)


def off_main(repo: MemoryRepo) -> str | None:
    """Why this clone cannot sync main as HEAD, or None when main is checked out."""
    branch = repo.branch()
    return None if branch == BRANCH else SYNC_NOT_ON_MAIN.format(branch=branch or "a detached HEAD")


def rebase_onto(repo: MemoryRepo, local: str, remote: str, made_as: dict[str, str] | None = None
                ) -> tuple[int, list[SetAside], str | None]:
    """Move main to `local`'s commits replayed onto `remote`, one by one: (replayed, the
    commits set aside, None), or (0, [], reason it could not be done now). A commit that
    cannot be replayed is kept on a backup ref of its own with the reason; the others land.
    `made_as` maps a commit an earlier replay made to the one the agent committed (it is
    updated here): what is set aside is that commit, the one its tool result named."""
    made_as = {} if made_as is None else made_as
    dirty = repo.settle()
    if dirty:
        return 0, [], SYNC_DIRTY_QUEUED.format(paths=first_few(dirty))
    new_tip, moved, failed = replay(repo, local, remote)
    for old, new in moved.items():
        made_as[new] = made_as.get(old, old)
    kept = []
    for commit, problems in failed:
        reason = "; ".join(problems)
        original = made_as.get(str(commit.id), str(commit.id))
        ref = set_aside(repo, original, reason)
        kept.append(SetAside(original, commit.message.split("\n", 1)[0], ref, reason))
    if new_tip != local:
        repo.move_branch(new_tip, expected=local)
    return len(moved), kept, None


def publish(repo: MemoryRepo, *, pulled: int = 0, replayed: int = 0,
            kept: tuple[SetAside, ...] = ()) -> SyncResult:
    """Push main, replaying onto the remote each time it moved; bounded, never forced.
    The caller holds the lock."""
    kept = list(kept)
    made_as: dict[str, str] = {}
    for attempt in range(ATTEMPTS):
        local = repo.head_sha()
        assert local is not None
        before = repo.resolve(TRACKING_REF)
        outcome, problem = push_main(repo)
        if outcome == "ok":
            record_sync(repo)
            sent = count_commits(repo, local, before) if before else count_commits(repo, local)
            return SyncResult(True, None, local, sent, pulled, replayed, attempt + 1, set_aside=tuple(kept))
        if outcome == "unreachable":
            return SyncResult(False, SYNC_UNREACHABLE.format(problem=problem), local,
                              0, pulled, replayed, attempt + 1, set_aside=tuple(kept))
        if outcome == "refused":
            return SyncResult(False, f"the remote refused the push: {problem}", local,
                              0, pulled, replayed, attempt + 1, set_aside=tuple(kept))
        pause(RETRY, attempt)
        remote, problem = fetch(repo)
        if problem is not None:
            return SyncResult(False, SYNC_UNREACHABLE.format(problem=problem), local,
                              0, pulled, replayed, attempt + 1, set_aside=tuple(kept))
        if remote is None or contains(repo, local, remote):
            continue
        done, aside, reason = rebase_onto(repo, local, remote, made_as)
        kept += aside
        if reason is not None:
            return SyncResult(False, reason, local, 0, pulled, replayed, attempt + 1, set_aside=tuple(kept))
        replayed += done
    return SyncResult(False, SYNC_BUSY.format(attempts=ATTEMPTS), repo.head_sha(),
                      0, pulled, replayed, ATTEMPTS, set_aside=tuple(kept))


def push(repo: MemoryRepo) -> SyncResult:
    """Push main to origin after a commit; on an unreachable remote the commit stays local
    and the result says why (this never raises for network trouble)."""
    if remote_url(repo) is None:
        return SyncResult(False, NO_REMOTE, repo.head_sha())
    with repo.lock():
        elsewhere = off_main(repo)
        if elsewhere is not None:
            return SyncResult(False, elsewhere, repo.head_sha())
        return replace(publish(repo), url=shown_url(repo))


def sync(repo: MemoryRepo) -> SyncResult:
    """Fetch, fast-forward when only the remote moved, replay when both did, then push."""
    if remote_url(repo) is None:
        raise MemrepoError(SYNC_NOT_CONFIGURED.format(path=repo.root))
    with repo.lock():
        return replace(_sync_locked(repo), url=shown_url(repo))


def _sync_locked(repo: MemoryRepo) -> SyncResult:
    elsewhere = off_main(repo)
    if elsewhere is not None:
        raise MemrepoError(elsewhere)
    dirty = repo.settle()
    if dirty:
        raise MemrepoError(SYNC_DIRTY.format(paths=first_few(dirty)))
    local = repo.head_sha()
    assert local is not None
    remote, problem = fetch(repo)
    if problem is not None:
        return SyncResult(False, SYNC_UNREACHABLE.format(problem=problem), local)
    if remote is None or contains(repo, local, remote):
        if remote == local:
            record_sync(repo)
            return SyncResult(True, None, local)
        return publish(repo)
    if contains(repo, remote, local):
        pulled = count_commits(repo, remote, local)
        repo.move_branch(remote, expected=local)
        record_sync(repo)
        return SyncResult(True, None, remote, pulled=pulled)
    pulled = count_commits(repo, remote, local)
    replayed, kept, reason = rebase_onto(repo, local, remote)
    if reason is not None:
        return SyncResult(False, reason, local)
    return publish(repo, pulled=pulled, replayed=replayed, kept=tuple(kept))
