"""What a memory pull request is and what it waits for: pure functions over what the forge
answered, so the list, `show` and `merge` say the same thing, and tables test it.

The kind comes from the branch and labels memrepo writes (bot/contracts.py) and the provenance
block (bot/pullrequest/provenance.py): a dream's branch or label is a dream; an edit's is an
agent edit when its block says the memory tool made it, else a commit a harness made in the
folder. These are claims (anyone who may open a pull request can write them), which is why the
integrator checks the commits (bot/integrator/claims.py); here they only sort a person's queue.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.contracts import LABEL_CONFLICT, LABEL_NEEDS_REVIEW
from bot.integrator.decide import latest_reviews, writer_claims
from bot.integrator.state import Review as Reviewed  # one review as the forge lists it, in its order
from bot.pullrequest.provenance import EDIT_STRATEGY, Provenance

# What a memory pull request is (the `kind` column).
KIND_DREAM = "dream"
KIND_AGENT_EDIT = "agent edit"
KIND_HARNESS = "harness commit"
KIND_OTHER = "memory change"
# What it waits for (the `waits for` column).
WAITS_REVIEW = "review"
WAITS_CHECKS = "checks"
WAITS_CONFLICT = "conflict"
WAITS_DRAFT = "draft"


@dataclass(frozen=True)
class Waiting:
    """What `waits_for` reads of an open pull request."""

    draft: bool = False
    mergeable: bool | None = None
    labels: tuple[str, ...] = ()
    status: str | None = None  # the memrepo/validate status of the head (None: none set)
    approved: bool = False  # approved for the head by someone other than its author
    changes_requested: bool = False


def kind_of(head_ref: str, labels: Sequence[str], provenance: Provenance | None) -> str:
    """dream, agent edit, harness commit, or memory change (memrepo's label, neither writer's)."""
    dream, edit = writer_claims(head_ref, labels)
    if provenance is not None and provenance.is_dream and not edit:
        return KIND_DREAM
    if dream and not edit:
        return KIND_DREAM
    if edit and not dream:
        if provenance is not None and provenance.strategy != EDIT_STRATEGY:
            return KIND_HARNESS
        return KIND_AGENT_EDIT
    return KIND_OTHER


def proposed_by(author: str, provenance: Provenance | None) -> str:
    """Who proposed it: the agent its block names (the dreamer for an agent, for a dream),
    else the forge account that opened it."""
    if provenance is None:
        return author or "?"
    if provenance.is_dream:
        return f"dreamer for {provenance.agent_id}"
    return provenance.agent_id


def review_outcome(reviews: Iterable[Reviewed], author: str, head_sha: str) -> tuple[bool, bool]:
    """(approved for `head_sha`, changes requested) by reviewers other than the author, each
    counted by their latest review as the integrator counts them."""
    latest = latest_reviews(reviews, author).values()
    requested = any(r.state.upper() == "CHANGES_REQUESTED" for r in latest)
    approved = not requested and bool(head_sha) and any(
        r.state.upper() == "APPROVED" and r.commit_id == head_sha for r in latest)
    return approved, requested


def waits_for(w: Waiting) -> tuple[str, ...]:
    """What stands between the pull request and main, in the order a person deals with it:
    a draft, a conflict with main, checks not passed (the integrator's memrepo/validate status
    is pending only while it waits for a review), a person's review. Empty: nothing, it merges."""
    out: list[str] = []
    if w.draft:
        out.append(WAITS_DRAFT)
    if w.mergeable is False or LABEL_CONFLICT in w.labels:
        out.append(WAITS_CONFLICT)
    needs_review = (LABEL_NEEDS_REVIEW in w.labels and not w.approved) or w.changes_requested
    if w.status in (None, "failure", "error") or (w.status == "pending" and not needs_review):
        out.append(WAITS_CHECKS)
    if needs_review:
        out.append(WAITS_REVIEW)
    return tuple(out)


def merge_refusal(waits: Sequence[str], *, own_pull: bool, allow_author_merge: bool) -> tuple[str, ...]:
    """What still keeps a person from merging it through `memrepo review merge` (empty: they may).
    A wait for a review is lifted only where the policy lets the author merge what they opened
    as the agent's account (`review.allow_author_merge`, off by default) and the person is that
    author; a draft, a conflict and checks are never lifted."""
    return tuple(w for w in waits if not (w == WAITS_REVIEW and own_pull and allow_author_merge))


def waits_text(waits: Sequence[str]) -> str:
    return ", ".join(waits) if waits else "merge"
