"""Connecting a memory to a remote (`memrepo repository set URL`) and disconnecting it: both
sides are brought together only where that is safe (push to an empty remote, adopt the
remote's history in a fresh clone, fast-forward); diverged histories are refused, and a
failure leaves the configuration as it was."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from bot import messages
from bot.errors import MemrepoError
from bot.memfs.repo import MemoryRepo
from bot.memfs.sync.push import LAST_SYNC_KEY, dirty_message, off_main, publish, record_sync, set_upstream
from bot.memfs.sync.redaction import check_url, redact
from bot.memfs.sync.replay import contains, count_commits, set_aside
from bot.memfs.sync.transport import BRANCH, REMOTE, TRACKING_REF, fetch, remote_heads, remote_url


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
    """Connect to `url` as origin and bring both sides together where that is safe: push to
    an empty remote, take the remote's history into a freshly initialised clone, fast-forward.
    Diverged histories are refused and an unreachable URL leaves nothing configured."""
    url = check_url(url)
    shown = redact(url)
    with repo.lock():
        elsewhere = off_main(repo)
        if elsewhere is not None:
            raise MemrepoError(elsewhere)
    with repo.lock(), restoring(repo):
        if remote_url(repo) is None:
            repo.git.remotes.create(REMOTE, url)
        else:
            repo.git.remotes.set_url(REMOTE, url)
        heads, problem = remote_heads(repo)
        if heads is None:
            raise MemrepoError(messages.REMOTE_SET_UNREACHABLE.format(url=shown, problem=problem))
        local = repo.head_sha()
        assert local is not None
        if not heads:
            result = publish(repo)
            if not result.pushed:
                raise MemrepoError(messages.REMOTE_SET_PUSH_FAILED.format(url=shown, reason=result.reason))
            set_upstream(repo)
            return messages.REMOTE_SET_PUSHED.format(url=shown, count=count_commits(repo, local))
        if BRANCH not in heads:
            listed = ", ".join(heads[:5]) + (" ..." if len(heads) > 5 else "")
            raise MemrepoError(messages.REMOTE_SET_NO_MAIN.format(url=shown, branches=listed))
        remote, problem = fetch(repo)
        if remote is None:
            raise MemrepoError(messages.REMOTE_SET_UNREACHABLE.format(
                url=shown, problem=problem or f"{BRANCH} vanished"))
        if remote == local:
            set_upstream(repo)
            record_sync(repo)
            return messages.REMOTE_SET_IN_SYNC.format(url=shown, sha=local[:12])
        if contains(repo, local, remote):
            count = count_commits(repo, local, remote)
            result = publish(repo)
            if not result.pushed:
                raise MemrepoError(messages.REMOTE_SET_PUSH_FAILED.format(url=shown, reason=result.reason))
            set_upstream(repo)
            return messages.REMOTE_SET_AHEAD.format(url=shown, count=count, sha=(result.head or "")[:12])
        fast_forward = contains(repo, remote, local)
        fresh = count_commits(repo, local) == 1
        if not (fast_forward or fresh):
            raise MemrepoError(messages.REMOTE_SET_DIVERGED.format(
                url=shown, path=repo.root, count=count_commits(repo, local), remote=remote[:12], local=local[:12]))
        dirty = repo.dirty_paths()
        if dirty:
            raise MemrepoError(messages.REMOTE_SET_DIRTY.format(paths=dirty_message(dirty)))
        if fast_forward:
            count = count_commits(repo, remote, local)
            repo.move_branch(remote, expected=local)
            set_upstream(repo)
            record_sync(repo)
            return messages.REMOTE_SET_FAST_FORWARDED.format(url=shown, count=count, sha=remote[:12])
        backup = set_aside(repo, local)
        repo.move_branch(remote, expected=local)
        set_upstream(repo)
        record_sync(repo)
        return messages.REMOTE_SET_ADOPTED.format(url=shown, sha=remote[:12], backup=backup)


def unset_remote(repo: MemoryRepo) -> str:
    """Disconnect from origin; local history (and any backup refs) stay."""
    with repo.lock():
        url = remote_url(repo)
        if url is None:
            return messages.REMOTE_UNSET_NONE
        head = repo.head_sha()
        tracking = repo.resolve(TRACKING_REF)
        unpushed = 0
        if head is not None:
            unpushed = count_commits(repo, head, tracking) if tracking else count_commits(repo, head)
        repo.git.remotes.delete(REMOTE)
        repo.set_config(f"branch.{BRANCH}.remote", None)
        repo.set_config(f"branch.{BRANCH}.merge", None)
        repo.set_config(LAST_SYNC_KEY, None)
    if unpushed:
        return messages.REMOTE_UNSET_UNPUSHED.format(url=redact(url), count=unpushed)
    return messages.REMOTE_UNSET.format(url=redact(url))
