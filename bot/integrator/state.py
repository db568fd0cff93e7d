"""Plain data the integrator's decision works on: the pull request as re-read now, what is
known about it (validation, reviews, the last merge answer), and the one action to take.

Nothing here talks to GitHub, git or Redis: the shell fills these from the forge client and
acts on the `Action` that `bot.integrator.decide.decide` returns, so every situation is a row
in a table test. Shapes follow `bot.forge.shapes` (PullRequest, Review, MergeResult) without
importing it, so the core never pulls in PyGithub.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

# A merge commit keeps each commit of a dream (with its trailers and author) in main's history,
# which is the audit log; squash or rebase would rewrite them.
MERGE_METHOD = "merge"


class Kind(Enum):
    """What the shell does next; exactly one per decision."""

    NOTHING = "nothing"
    VALIDATE = "validate"
    SET_STATUS = "set status"
    COMMENT_AND_CLOSE = "comment and close"  # not said: an Enum value, an identifier (only logged)
    WAIT = "wait"
    MARK_NEEDS_REVIEW = "mark needs review"  # not said: an Enum value, an identifier (only logged)
    MERGE = "merge"
    RESOLVE = "resolve"
    MARK_CONFLICT = "mark conflict"
    PUBLISH_HEAD = "publish head"
    REREAD = "reread"
    GIVE_UP = "give up"


class MergeAnswer(Enum):
    """What the last merge call said. Member names are `bot.forge.retry.MergeOutcome`'s, so the
    shell converts with `MergeAnswer[result.outcome.name]` (see `LastMerge.from_result`)."""

    MERGED = "merged"
    ALREADY_MERGED = "already merged"
    HEAD_MOVED = "head moved"  # 409
    BASE_MOVED = "base moved"  # 405 "Base branch was modified"
    NOT_MERGEABLE = "not mergeable"  # other 405, or 200 with merged: false
    NOT_MERGED = "not merged"  # lost answer (5xx, timeout) and GitHub says not merged; or rate limited
    UNKNOWN = "unknown"  # lost answer and asking whether it merged failed too

    @property
    def merged(self) -> bool:
        return self in (MergeAnswer.MERGED, MergeAnswer.ALREADY_MERGED)


@dataclass(frozen=True)
class LastMerge:
    """The answer to a merge sent *after* the PullState it travels with was read: the state is
    then stale, which is why decide answers REREAD (or PUBLISH_HEAD) rather than trusting it.
    The shell clears it once it has re-read the pull request."""

    answer: MergeAnswer
    sha: str | None = None  # the merge commit, when merged
    status: int | None = None  # HTTP status of the merge answer (None: no answer)
    retry_after: float | None = None  # seconds, when a rate limit refused the merge

    @property
    def lost(self) -> bool:
        """The answer never came back whole (5xx or timeout): whether it merged was asked after."""
        return self.status is None or self.status >= 500

    @classmethod
    def from_result(cls, result: Any) -> LastMerge:
        """From a `bot.forge.shapes.MergeResult` (read by attribute, not imported)."""
        return cls(MergeAnswer[result.outcome.name], result.sha, result.status, result.retry_after)


@dataclass(frozen=True)
class Review:
    """One submitted review. `order` is its place in submission order (GitHub lists reviews
    oldest first), so "the latest review per reviewer" needs no clock."""

    author: str
    state: str  # APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING
    commit_id: str | None
    order: int = 0


@dataclass(frozen=True)
class Validation:
    """The validator's verdict on one head sha; it says nothing about any other sha."""

    sha: str
    valid: bool
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class PullState:
    """Everything decide looks at, as re-read now (never from a webhook payload).

    `status` is the state of the `memrepo/validate` commit status on the head (None: none set).
    `attempts` counts merge sends, re-reads, waits and resolutions since the job began (the
    shell keeps it across re-enqueues); at `Tuning.max_attempts` the integrator gives up.
    `resolution_tried`: a resolution of conflicts with the base was already tried for this
    head and did not produce a new head. `head_published`: the head event for this pull
    request's merge was published. `history`: one line per thing the job tried, for the
    give-up comment. `merges_cleanly`: git's own answer, from the fetched commits, to whether
    head and base merge without conflicts (None: not known); it stands in for `mergeable`
    while GitHub is still computing that, so a burst of pull requests does not wait on it.
    `untrusted_sources`: the `external:` sources named by `Source` trailers of the commits the
    pull request brings (those reachable from its head and not from its base), read from the
    fetched commits (`bot.integrator.trailers`); any of them means a person must approve it,
    whatever its labels say.

    Who may do what comes from the forge, never from a label or a branch name:
    `head_repo`/`base_repo` are the full names of the repositories the head and base branches
    live in (a fork's head is not the integrator's to act on); `author_permission` is the
    forge's permission of the pull request's author (`admin`, `maintain`, `write`, `triage`,
    `read` or `none`, as GitHub's collaborator permission endpoint answers) and `permissions`
    the same for each reviewer (login -> permission); `commit_authors` are the forge accounts
    GitHub matched to the authors and committers of the commits on it; `integrator` the forge
    logins the integrator itself acts as. `claim_shown`: the commits it brings prove what its
    branch claims (`bot.integrator.claims`): a dream's commits are that dream's, an agent
    edit's that agent's.

    `pushers`: the accounts the forge's repository activity shows pushing to the head branch
    (git pushes, ref updates, update-branch merges), or None when that cannot be known: the
    activity could not be read, or it does not show who pushed the current head. GitHub's rule
    is that the last pusher may not approve; here nobody who pushed to the branch approves it,
    and when the pushers are not known no approval counts (`decide.approval_problem`).
    `default_branch`: the base repository's default branch, the only one the integrator merges
    into (a pull request retargeted elsewhere is left to people).
    """

    number: int
    state: str = "open"
    merged: bool = False
    draft: bool = False
    head_sha: str = ""
    head_ref: str = ""
    base_sha: str = ""
    base_ref: str = "main"
    default_branch: str = "main"
    mergeable: bool | None = None
    mergeable_state: str | None = None
    merges_cleanly: bool | None = None
    labels: tuple[str, ...] = ()
    author: str = ""
    changed_paths: tuple[str, ...] = ()
    untrusted_sources: tuple[str, ...] = ()
    head_repo: str = ""
    base_repo: str = ""
    author_permission: str = "none"
    permissions: tuple[tuple[str, str], ...] = ()
    commit_authors: tuple[str, ...] = ()
    integrator: tuple[str, ...] = ()
    claim_shown: bool = False
    pushers: tuple[str, ...] | None = ()
    merge_commit_sha: str | None = None
    validation: Validation | None = None
    status: str | None = None
    reviews: tuple[Review, ...] = ()
    attempts: int = 0
    last_merge: LastMerge | None = None
    resolution_tried: bool = False
    head_published: bool = False
    history: tuple[str, ...] = ()

    @classmethod
    def from_pull(cls, pull: Any, **known: Any) -> PullState:
        """From a `bot.forge.shapes.PullRequest` (read by attribute) plus what the shell knows."""
        return cls(
            number=pull.number, state=pull.state, merged=pull.merged, draft=pull.draft,
            head_sha=pull.head_sha, head_ref=pull.head_ref, base_sha=pull.base_sha, base_ref=pull.base_ref,
            mergeable=pull.mergeable, mergeable_state=pull.mergeable_state, labels=tuple(pull.labels),
            author=pull.author, merge_commit_sha=pull.merge_commit_sha,
            head_repo=getattr(pull, "head_repo", ""), base_repo=getattr(pull, "base_repo", ""),
            default_branch=getattr(pull, "default_branch", ""), **known,
        )


@dataclass(frozen=True)
class Tuning:
    """Bounds of the job, not policy of the repository: how often to try, how long to wait."""

    max_attempts: int = 10
    wait_base: float = 1.0
    # GitHub computes `mergeable` in the background, usually within a second: look again soon
    mergeable_wait_base: float = 0.2
    wait_cap: float = 60.0
    # Merge by pushing the default branch in batches (`bot.integrator.batch`): no commit status
    # for a pull request merged at once, and conflicts of one that needs no person resolved in
    # its merge commit. False: each pull request through the forge's merge API.
    merge_by_push: bool = False


DEFAULT_TUNING = Tuning()


@dataclass(frozen=True)
class Action:
    """One thing to do. Which fields matter depends on `kind`:

    - VALIDATE: `sha` (validate it, set the status, re-enqueue).
    - SET_STATUS: `sha`, `status`, `description`, and `comment` when there is one to post.
    - COMMENT_AND_CLOSE: `comment`, and `status`/`description` to set on `sha` first.
    - WAIT: `delay` seconds, then re-enqueue.
    - MARK_NEEDS_REVIEW: `labels` to add, pending `status` with `description` on `sha`, and
      `comment` to post when the labels it adds call for one.
    - MERGE: `sha` (the expected head; the merge is refused if the head moved) and `method`.
    - RESOLVE: bring `base_sha` into the branch at `sha`, push, re-enqueue.
    - MARK_CONFLICT / GIVE_UP: `labels` to add and `comment`.
    - PUBLISH_HEAD: `sha` is the merge commit when known.
    - REREAD: after `delay`, read the pull request again (asking whether it merged first when
      `check_merged`) and decide again.
    `reason` says why, for logs and the CLI.
    """

    kind: Kind
    reason: str = ""
    sha: str | None = None
    base_sha: str | None = None
    method: str | None = None
    status: str | None = None
    description: str | None = None
    comment: str | None = None
    labels: tuple[str, ...] = ()
    delay: float = 0.0
    check_merged: bool = False
