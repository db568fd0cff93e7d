"""What opening a writer's pull request says when it cannot: no remote, no forge behind it, no
token, a base that cannot be fetched, a branch that cannot be pushed, a provenance block that
does not read. The names are the dreams', the first writer to open pull requests."""

from __future__ import annotations

DREAM_NO_REMOTE = (
    "the memory repository has no remote, so a dream has nowhere to open its pull request; "
    "connect one with `memrepo repository set URL`"
)
DREAM_REMOTE_NOT_FORGE = (
    "origin ({url}) is not a GitHub-style repository URL (https://host/owner/name or git@host:owner/name); "
    "dreams open pull requests there"
)
DREAM_NO_TOKEN = (
    "no token for {repository}: set MEMREPO_FORGE_TOKEN (or GITHUB_TOKEN), or use a remote URL with "
    "x-access-token"
)
DREAM_FETCH_FAILED = "cannot fetch main from {url}: {problem}; nothing was done"
DREAM_REMOTE_NO_MAIN = "{url} has no main branch yet; push memory there first (`memrepo repository sync`)"
DREAM_PROVENANCE_BAD = "the provenance block is not valid: {problem}"
DREAM_WORKTREE_FAILED = "cannot make a worktree for the dream: {problem}"
DREAM_PUSH_FAILED = "pushing {branch} was refused: {problem}"
