"""Whose approval merges a protected change, and into which branch (bot/integrator/decide.py, pure):
GitHub's most-recent-push rule made stricter (nobody who pushed to the branch approves it, and
no approval counts while who pushed is unknown), and the default branch as the only base.
A table per rule, then properties over any reviews, pushers and bases."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.config import Policy
from bot.integrator.decide import (
    INTEGRATOR_REVIEW_BY_AUTHOR,
    INTEGRATOR_REVIEW_BY_COMMIT_AUTHOR,
    INTEGRATOR_REVIEW_BY_PUSHER,
    INTEGRATOR_REVIEW_NOT_WRITER,
    INTEGRATOR_REVIEW_PUSHER_UNKNOWN,
    approval_problem,
    approved,
    decide,
    on_default_branch,
)
from bot.integrator.state import Kind, PullState, Review
from tests.integrator.test_integrator_decide import EDIT_REF, HEAD, REVIEW, approve, edit

PROTECTED = Policy(merge="explicit")  # system/ is protected by default
PERSONA = ("system/persona.md",)


def protected(**changes: Any) -> PullState:
    """An agent's edit of its persona: a protected path, so it needs a person's approval."""
    return edit(**{"changed_paths": PERSONA, **changes})


@pytest.mark.parametrize(
    ("reviewer", "changes", "problem"),
    [
        ("pat", {"pushers": ("agent-1",)}, None),
        ("pat", {"pushers": ()}, None),
        ("pat", {"pushers": ("agent-1", "pat")}, INTEGRATOR_REVIEW_BY_PUSHER),
        ("Pat", {"pushers": ("pat",)}, INTEGRATOR_REVIEW_BY_PUSHER),
        ("pat", {"pushers": ("PAT",)}, INTEGRATOR_REVIEW_BY_PUSHER),
        # an earlier push counts as much as the last one: the head may be someone else's push on top
        ("pat", {"pushers": ("pat", "agent-1")}, INTEGRATOR_REVIEW_BY_PUSHER),
        ("pat", {"pushers": None}, INTEGRATOR_REVIEW_PUSHER_UNKNOWN),
        ("sam", {"pushers": None}, INTEGRATOR_REVIEW_PUSHER_UNKNOWN),
        # the rules before the pusher's still come first
        ("rita", {"pushers": ("pat",)}, INTEGRATOR_REVIEW_NOT_WRITER),
        ("pat", {"pushers": None, "commit_authors": ("pat",)}, INTEGRATOR_REVIEW_BY_COMMIT_AUTHOR),
        ("agent-1", {"pushers": ("agent-1",)}, INTEGRATOR_REVIEW_BY_AUTHOR),
    ],
    ids=["other-pushed", "nobody-pushed", "reviewer-pushed", "reviewer-pushed-case", "pusher-case",
         "reviewer-pushed-before-the-head", "pushers-unknown", "admin-pushers-unknown", "reader-pushed",
         "commit-author-first", "author-first"],
)
def test_whose_approval_counts(reviewer: str, changes: dict[str, Any], problem: str | None) -> None:
    assert approval_problem(approve(reviewer), protected(**changes)) == problem


# (id, state, expected kind): the whole decision on a protected change
ROWS: list[tuple[str, PullState, Kind]] = [
    ("approved-by-a-writer-who-did-not-push", protected(reviews=(approve("pat"),), pushers=("agent-1",)), Kind.MERGE),
    ("approved-by-the-pusher-of-an-unlinked-commit",
     protected(reviews=(approve("pat"),), pushers=("agent-1", "pat"), commit_authors=()), Kind.MARK_NEEDS_REVIEW),
    ("approved-by-an-earlier-pusher", protected(reviews=(approve("pat"),), pushers=("pat", "agent-1")),
     Kind.MARK_NEEDS_REVIEW),
    ("approved-while-pushers-unknown", protected(reviews=(approve("sam"),), pushers=None), Kind.MARK_NEEDS_REVIEW),
    ("pusher-and-a-second-writer", protected(reviews=(approve("pat", order=1), approve("sam", order=2)),
                                             pushers=("pat",)), Kind.MERGE),
    ("pusher-requests-changes-still-blocks", protected(reviews=(approve("sam", order=1),
                                                                Review("pat", "CHANGES_REQUESTED", HEAD, 2)),
                                                       pushers=("pat",)), Kind.MARK_NEEDS_REVIEW),
    ("unprotected-needs-no-approval-whoever-pushed", edit(pushers=None), Kind.MERGE),
    # the base: only the default branch
    ("retargeted-away", protected(reviews=(approve("sam"),), base_ref="weak"), Kind.NOTHING),
    ("retargeted-away-unprotected", edit(base_ref="weak"), Kind.NOTHING),
    ("retargeted-away-merged-not-published", edit(base_ref="weak", state="closed", merged=True,
                                                  merge_commit_sha="d" * 40), Kind.NOTHING),
    ("default-branch-not-main", edit(base_ref="trunk", default_branch="trunk"), Kind.MERGE),
    ("default-branch-by-full-ref", edit(base_ref="refs/heads/main"), Kind.MERGE),
    ("default-branch-unknown", edit(default_branch=""), Kind.NOTHING),
    ("base-case-differs", edit(base_ref="Main"), Kind.NOTHING),
]


@pytest.mark.parametrize(("state", "kind"), [(s, k) for _, s, k in ROWS], ids=[r[0] for r in ROWS])
def test_the_decision_on_a_protected_change(state: PullState, kind: Kind) -> None:
    assert decide(state, PROTECTED).kind is kind


LOGINS = st.sampled_from(("pat", "Pat", "sam", "mo", "agent-1", "bob", "rita", "eve"))
REVIEWS = st.lists(st.builds(Review, LOGINS, st.sampled_from(("APPROVED", "CHANGES_REQUESTED", "COMMENTED")),
                             st.sampled_from((HEAD, "b" * 40)), st.integers(0, 20)), max_size=6)
PUSHERS = st.none() | st.lists(LOGINS, max_size=4).map(tuple)


@given(reviews=REVIEWS, pushers=PUSHERS, commit_authors=st.lists(LOGINS, max_size=3).map(tuple))
def test_no_pusher_ever_approves_and_unknown_pushers_approve_nothing(
        reviews: list[Review], pushers: tuple[str, ...] | None, commit_authors: tuple[str, ...]) -> None:
    """Whatever the reviews: if approved, some approval of the head is by a writer who pushed
    nothing to the branch and authored no commit on it; with pushers unknown, never approved."""
    state = protected(reviews=tuple(reviews), pushers=pushers, commit_authors=commit_authors)
    if pushers is None:
        assert not approved(state)
        assert decide(state, PROTECTED).kind is not Kind.MERGE
        return
    if approved(state):
        folded = {p.casefold() for p in pushers} | {a.casefold() for a in commit_authors}
        assert any(r.state == "APPROVED" and r.commit_id == HEAD and r.author.casefold() not in folded
                   for r in reviews)
    if decide(state, PROTECTED).kind is Kind.MERGE:
        assert approved(state)


@given(base=st.sampled_from(("main", "weak", "Main", "refs/heads/main", "refs/heads/weak", "")),
       default=st.sampled_from(("main", "weak", "")), merged=st.booleans(), reviews=REVIEWS)
def test_nothing_is_merged_or_published_off_the_default_branch(base: str, default: str, merged: bool,
                                                               reviews: list[Review]) -> None:
    state = dataclasses.replace(protected(reviews=tuple(reviews), pushers=()), base_ref=base, default_branch=default,
                                merged=merged, state="closed" if merged else "open",
                                merge_commit_sha="d" * 40 if merged else None)
    for policy in (PROTECTED, REVIEW, Policy(merge="auto", protected=())):
        kind = decide(state, policy).kind
        if kind in (Kind.MERGE, Kind.PUBLISH_HEAD):
            assert on_default_branch(state) and base.removeprefix("refs/heads/") == default != ""


def test_an_edit_branch_is_what_these_tables_use() -> None:
    assert protected().head_ref == EDIT_REF and protected().changed_paths == PERSONA
