"""Sending this clone's main to its remote, never force-pushing: `push` after a commit, and
`sync` (fetch, fast-forward when only the remote moved, replay when both did, then push). An
unreachable remote is not an error: the commit stays local ("queued") and the next push or
sync sends it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime

from bot import messages
from bot.backoff import Backoff, pause
from bot.errors import MemrepoError
from bot.memfs.repo import MemoryRepo
from bot.memfs.sync.replay import ReplayFailed, contains, count_commits, replay, set_aside
from bot.memfs.sync.transport import BRANCH, BRANCH_REF, REMOTE, TRACKING_REF, fetch, push_main, remote_url, shown_url

LAST_SYNC_KEY = "memrepo.lastSync"
NO_REMOTE = messages.SYNC_NO_REMOTE
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

    @property
    def summary(self) -> str:
        """One line for a person: what happened, or why nothing could be pushed."""
        if not self.pushed:
            return self.reason or ""
        url, sha = self.url or "", (self.head or "")[:12]
        if self.replayed:
            return messages.SYNC_PUSHED_REPLAYED.format(replayed=self.replayed, url=url, sha=sha)
        if self.sent:
            return messages.SYNC_PUSHED.format(count=self.sent, url=url, sha=sha)
        if self.pulled:
            return messages.SYNC_FAST_FORWARDED.format(count=self.pulled, url=url, sha=sha)
        return messages.SYNC_UP_TO_DATE.format(url=url, sha=sha)


def now_stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def record_sync(repo: MemoryRepo) -> None:
    repo.set_config(LAST_SYNC_KEY, now_stamp())


def set_upstream(repo: MemoryRepo) -> None:
    repo.set_config(f"branch.{BRANCH}.remote", REMOTE)
    repo.set_config(f"branch.{BRANCH}.merge", BRANCH_REF)


def dirty_message(paths: list[str]) -> str:
    return ", ".join(paths[:5]) + (" ..." if len(paths) > 5 else "")


def off_main(repo: MemoryRepo) -> str | None:
    """Why this clone cannot sync main as HEAD, or None when main is checked out."""
    branch = repo.branch()
    return None if branch == BRANCH else messages.SYNC_NOT_ON_MAIN.format(branch=branch or "a detached HEAD")


def rebase_onto(repo: MemoryRepo, local: str, remote: str) -> tuple[int, str | None]:
    """Move main to `local`'s commits replayed onto `remote`: (replayed, None) or
    (0, reason it could not be done now). Raises MemrepoError on a conflict, after setting
    the local commits aside and resetting main to `remote`."""
    dirty = repo.dirty_paths()
    if dirty:
        return 0, messages.SYNC_DIRTY_QUEUED.format(paths=dirty_message(dirty))
    try:
        new_tip, replayed = replay(repo, local, remote)
    except ReplayFailed as exc:
        count = count_commits(repo, local, remote)
        backup = set_aside(repo, local)
        repo.move_branch(remote, expected=local)
        raise MemrepoError(
            messages.SYNC_CONFLICT.format(
                count=count, problems="; ".join(exc.problems), remote=remote[:12], backup=backup),
            backup=backup, set_aside=count, problems=exc.problems,
        ) from None
    if new_tip != local:
        repo.move_branch(new_tip, expected=local)
    return replayed, None


def publish(repo: MemoryRepo, *, pulled: int = 0, replayed: int = 0) -> SyncResult:
    """Push main, replaying onto the remote each time it moved; bounded, never forced.
    The caller holds the lock."""
    for attempt in range(ATTEMPTS):
        local = repo.head_sha()
        assert local is not None
        before = repo.resolve(TRACKING_REF)
        outcome, problem = push_main(repo)
        if outcome == "ok":
            record_sync(repo)
            sent = count_commits(repo, local, before) if before else count_commits(repo, local)
            return SyncResult(True, None, local, sent, pulled, replayed, attempt + 1)
        if outcome == "unreachable":
            return SyncResult(False, messages.SYNC_UNREACHABLE.format(problem=problem), local,
                              0, pulled, replayed, attempt + 1)
        if outcome == "refused":
            return SyncResult(False, messages.SYNC_REFUSED.format(problem=problem), local,
                              0, pulled, replayed, attempt + 1)
        pause(RETRY, attempt)
        remote, problem = fetch(repo)
        if problem is not None:
            return SyncResult(False, messages.SYNC_UNREACHABLE.format(problem=problem), local,
                              0, pulled, replayed, attempt + 1)
        if remote is None or contains(repo, local, remote):
            continue
        done, reason = rebase_onto(repo, local, remote)
        if reason is not None:
            return SyncResult(False, reason, local, 0, pulled, replayed, attempt + 1)
        replayed += done
    return SyncResult(False, messages.SYNC_BUSY.format(attempts=ATTEMPTS), repo.head_sha(),
                      0, pulled, replayed, ATTEMPTS)


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
        raise MemrepoError(messages.SYNC_NOT_CONFIGURED.format(path=repo.root))
    with repo.lock():
        return replace(_sync_locked(repo), url=shown_url(repo))


def _sync_locked(repo: MemoryRepo) -> SyncResult:
    elsewhere = off_main(repo)
    if elsewhere is not None:
        raise MemrepoError(elsewhere)
    dirty = repo.dirty_paths()
    if dirty:
        raise MemrepoError(messages.SYNC_DIRTY.format(paths=dirty_message(dirty)))
    local = repo.head_sha()
    assert local is not None
    remote, problem = fetch(repo)
    if problem is not None:
        return SyncResult(False, messages.SYNC_UNREACHABLE.format(problem=problem), local)
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
    replayed, reason = rebase_onto(repo, local, remote)
    if reason is not None:
        return SyncResult(False, reason, local)
    return publish(repo, pulled=pulled, replayed=replayed)
