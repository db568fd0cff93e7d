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
# What is wrong with a provenance block (the {problem} of DREAM_PROVENANCE_BAD); {where} names the field.
PROVENANCE_NOT_CLOSED = "the block is not closed with -->"
PROVENANCE_NOT_YAML = "not valid YAML ({problem})"
PROVENANCE_NOT_MAPPING = "{where} must be a mapping, found {found}"
PROVENANCE_UNKNOWN_KEYS = "{where}: not a key of the block: {keys}"
PROVENANCE_MISSING_KEYS = "{where}: required but missing: {keys}"
PROVENANCE_NOT_TEXT = "{where} must be text, found {value!r}"
PROVENANCE_EMPTY_TEXT = "{where} must be non-empty text, found {value!r}"
PROVENANCE_NOT_TIME = "{where} {value!r} is not an ISO 8601 time"
PROVENANCE_TOO_SMALL = "{where} must be a whole number of at least {minimum}, found {value!r}"
PROVENANCE_BAD_VERSION = "version must be {version}, found {value!r}"
PROVENANCE_BAD_DREAM_ID = "dream_id {value!r} is not a dream id (YYYYMMDDTHHMMSSZ-<8 hex>) or null"
PROVENANCE_BAD_BASE = "base_commit {value!r} is not a full commit id"
PROVENANCE_EDIT_TRIGGER = "trigger must be {trigger} when dream_id is null, found {value!r}"
PROVENANCE_BAD_TRIGGER = "trigger must be one of {triggers}, found {value!r}"
PROVENANCE_CHANGES_NOT_LIST = "changes must be a list, found {found}"
PROVENANCE_IDS_NOT_LIST = "{where}.message_ids must be a list, found {found}"
DREAM_WORKTREE_FAILED = "cannot make a worktree for the dream: {problem}"
DREAM_PUSH_FAILED = "pushing {branch} was refused: {problem}"
