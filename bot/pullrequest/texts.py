"""What opening a writer's pull request says when it cannot: no remote, no forge behind it, no
token, a base that cannot be fetched, a branch that cannot be pushed, a provenance block that
does not read. The names are the dreams', the first writer to open pull requests."""

from __future__ import annotations

DREAM_NO_REMOTE = (
    "the memory repository has no remote, so a dream has nowhere to open its pull request; "
    "connect one with `memrepo repository set URL`"
)
