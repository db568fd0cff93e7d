"""Sync a memory repository's `main` with its remote (`origin`), never force-pushing.

    push(repo)               after a commit: send main (replaying onto the remote if it moved)
    sync(repo)               fetch, fast-forward or replay, push
    status(repo, fetch)      where the clone stands against the remote
    set_remote(repo, url)    connect (`memrepo repository set`), unset_remote(repo)

The modules, one concern each: `transport` (fetch, push and list over git's or libgit2's
transports), `gitcmd` (the one runner for git commands run as processes), `replay` (queued
commits replayed onto a moved main, or set aside), `push` (the push loop and sync), `status`,
`connect` and `redaction` (no credential ever reaches a message). The rest of memrepo imports
them from here.
"""

from bot.memfs.sync.connect import set_remote, unset_remote
from bot.memfs.sync.gitcmd import git_problem, run_git
from bot.memfs.sync.push import NO_REMOTE, SyncResult, push, set_aside_note, sync
from bot.memfs.sync.redaction import check_url, redact
from bot.memfs.sync.replay import ReplayFailed, SetAside, backups, contains, dismiss, replay_commit, set_aside_commits
from bot.memfs.sync.status import RepoStatus, status, status_lines
from bot.memfs.sync.transport import (
    BRANCH,
    REMOTE,
    TRACKING_REF,
    HeaderCallbacks,
    delete_branch,
    fetch_from,
    libgit2_timeouts,
    push_branch,
    remote_url,
)

__all__ = ["BRANCH", "NO_REMOTE", "REMOTE", "TRACKING_REF", "HeaderCallbacks", "ReplayFailed", "RepoStatus", "SetAside",
           "SyncResult", "backups", "check_url", "contains", "delete_branch", "dismiss", "fetch_from", "git_problem",
           "libgit2_timeouts", "push", "push_branch", "redact", "remote_url", "replay_commit", "run_git",
           "set_aside_commits",
           "set_aside_note", "set_remote", "status", "status_lines", "sync", "unset_remote"]
