"""What memrepo sends to GitHub and reads back, as frozen dataclasses, and the parsing of GitHub's
JSON into them.

Callers (the integrator, the writers, the review queue) work with these shapes, never with
PyGithub's lazy objects, so each call of `bot.forge.client.ForgeClient` is exactly the requests it
says. The parsers take the decoded JSON of one answer and raise (KeyError, TypeError, ValueError,
AttributeError) on a shape GitHub does not document; the client turns that into a BadAnswer
naming the operation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.forge.retry import MergeOutcome


@dataclass(frozen=True)
class NewPullRequest:
    head: str
    base: str
    title: str
    body: str = ""
    labels: tuple[str, ...] = ()
    draft: bool = False


@dataclass(frozen=True)
class PullRequest:
    """A pull request as GitHub reports it. `mergeable` is None while GitHub computes it (and
    always in lists, which do not carry it)."""

    number: int
    url: str
    title: str
    body: str
    state: str
    merged: bool
    draft: bool
    head_ref: str
    head_sha: str
    base_ref: str
    base_sha: str
    mergeable: bool | None
    mergeable_state: str | None
    labels: tuple[str, ...]
    author: str
    merge_commit_sha: str | None
    head_repo: str = ""  # `owner/name` the head branch lives in ("" when the fork is gone)
    base_repo: str = ""
    default_branch: str = ""  # the base repository's default branch ("" when the forge did not say)


@dataclass(frozen=True)
class MergeResult:
    """What a merge call did; `status` is the HTTP status of the merge answer (None if lost),
    `retry_after` is set when a rate limit refused it."""

    outcome: MergeOutcome
    number: int
    sha: str | None
    detail: str
    status: int | None = None
    retry_after: float | None = None

    @property
    def merged(self) -> bool:
        return self.outcome.merged


@dataclass(frozen=True)
class Comment:
    id: int
    url: str
    body: str
    author: str


@dataclass(frozen=True)
class StatusUpdate:
    state: str  # error, failure, pending, success
    context: str
    description: str | None = None
    target_url: str | None = None


@dataclass(frozen=True)
class CommitStatus:
    context: str
    state: str
    description: str | None
    target_url: str | None


@dataclass(frozen=True)
class CombinedStatus:
    state: str
    sha: str
    statuses: tuple[CommitStatus, ...]


@dataclass(frozen=True)
class Review:
    id: int
    author: str
    state: str
    commit_id: str | None
    body: str
    submitted_at: str | None


@dataclass(frozen=True)
class ChangedFile:
    """One file of a pull request, as GitHub's `pulls/{n}/files` lists it (`patch` is None for a
    binary file or a diff too large to show)."""

    path: str
    status: str
    additions: int
    deletions: int
    patch: str | None


@dataclass(frozen=True)
class Comparison:
    status: str  # ahead, behind, diverged, identical
    ahead_by: int
    behind_by: int
    total_commits: int
    merge_base_sha: str | None
    commits: tuple[str, ...]


@dataclass(frozen=True)
class Ref:
    ref: str  # refs/heads/main
    sha: str


@dataclass(frozen=True)
class FileContent:
    path: str
    ref: str
    sha: str
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8")


# ---------------------------------------------------------------------------------------- parsing
def login_of(user: Any) -> str:
    """The login of a GitHub user object (`user`, `actor`, a commit's `author`); "" when there is none."""
    return str(user.get("login") or "") if isinstance(user, dict) else ""


def _repo_name(side: Any) -> str:
    repo = side.get("repo") if isinstance(side, dict) else None
    return str(repo.get("full_name") or "") if isinstance(repo, dict) else ""


def _default_branch(side: Any) -> str:
    repo = side.get("repo") if isinstance(side, dict) else None
    return str(repo.get("default_branch") or "") if isinstance(repo, dict) else ""


def parse_pull(data: Any) -> PullRequest:
    """A pull request object (`GET /pulls/{n}`, or one item of a list)."""
    head = data.get("head") or {}
    base = data.get("base") or {}
    mergeable = data.get("mergeable")
    return PullRequest(
        number=int(data["number"]),
        url=str(data.get("html_url") or data.get("url") or ""),
        title=str(data.get("title") or ""),
        body=str(data.get("body") or ""),
        state=str(data.get("state") or ""),
        merged=bool(data.get("merged") or data.get("merged_at")),
        draft=bool(data.get("draft")),
        head_ref=str(head.get("ref") or ""),
        head_sha=str(head.get("sha") or ""),
        base_ref=str(base.get("ref") or ""),
        base_sha=str(base.get("sha") or ""),
        mergeable=mergeable if isinstance(mergeable, bool) else None,
        mergeable_state=data.get("mergeable_state"),
        labels=tuple(str(label["name"]) for label in data.get("labels") or ()),
        author=login_of(data.get("user")),
        merge_commit_sha=data.get("merge_commit_sha"),
        head_repo=_repo_name(head),
        base_repo=_repo_name(base),
        default_branch=_default_branch(base),
    )


def parse_status(data: Any) -> CommitStatus:
    """One commit status (as set, or one of a combined status's `statuses`)."""
    return CommitStatus(str(data.get("context") or "default"), str(data["state"]), data.get("description"),
                        data.get("target_url"))


def parse_review(data: Any) -> Review:
    """One review of a pull request."""
    return Review(int(data["id"]), login_of(data.get("user")), str(data.get("state") or ""), data.get("commit_id"),
                  str(data.get("body") or ""), data.get("submitted_at"))
