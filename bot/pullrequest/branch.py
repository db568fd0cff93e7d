"""A pull request's branch, from base to push: origin's `main` fetched now (the base every
proposal rests on), a linked worktree at that base commit, where a proposal (a dream's, or
an agent edit that must become a pull request) is applied without touching the clone's own
`main`, working tree or index, and the push of the proposal's branch. Linked worktrees are
git's own feature (libgit2 does not prune them as git does), so this is one of the few
places memrepo runs git as a process."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bot.errors import MemrepoError
from bot.memfs import MemoryRepo, sync
from bot.memfs.sync import git_problem, run_git
from bot.pullrequest import git_token

DREAM_FETCH_FAILED = "cannot fetch main from {url}: {problem}; nothing was done"
DREAM_REMOTE_NO_MAIN = "{url} has no main branch yet; push memory there first (`memrepo repository sync`)"
DREAM_WORKTREE_FAILED = "cannot make a worktree for the dream: {problem}"


def fetch_base(repo: MemoryRepo) -> str:
    """origin's main, fetched now (as the recorded App, when the identity is one)."""
    git_token.ensure(repo)
    state = sync.status(repo, fetch=True)
    if state.fetch_error is not None:
        raise MemrepoError(DREAM_FETCH_FAILED.format(url=state.url, problem=state.fetch_error))
    if state.remote_head is None:
        raise MemrepoError(DREAM_REMOTE_NO_MAIN.format(url=state.url))
    return state.remote_head


@contextlib.contextmanager
def worktree(repo: MemoryRepo, base: str) -> Iterator[Path]:
    """A linked worktree detached at `base`, removed afterwards whatever happens."""
    holder = Path(tempfile.mkdtemp(prefix="memrepo-dream-"))
    path = holder / "worktree"
    run_git(repo.root, "worktree", "prune")  # forget worktrees of runs that were killed
    added = run_git(repo.root, "worktree", "add", "--detach", str(path), base)
    if not added.ok:
        shutil.rmtree(holder, ignore_errors=True)
        raise MemrepoError(DREAM_WORKTREE_FAILED.format(problem=git_problem(added.err or added.out)))
    try:
        yield path
    finally:
        run_git(repo.root, "worktree", "remove", "--force", str(path))
        shutil.rmtree(holder, ignore_errors=True)
        run_git(repo.root, "worktree", "prune")


def push_branch(repo: MemoryRepo, branch: str) -> None:
    """Push the proposal's branch (never forced), as the recorded App when the identity is one;
    raises with the forge's reason if refused."""
    git_token.ensure(repo)
    problem = sync.push_branch(repo, branch)
    if problem is not None:
        raise MemrepoError(f"pushing {branch} was refused: {problem}")
