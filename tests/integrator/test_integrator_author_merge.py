"""`review.allow_author_merge` (off by default) in the integrator's decision: a pull request that
waits for a person gets a success status instead of a pending one, so the person who opened it
as the agents' account may merge it themselves; the integrator still merges nothing without a
review that counts."""

from __future__ import annotations

import pytest

from bot.config import Policy, PolicyError, ReviewRules, parse_policy
from bot.contracts import LABEL_NEEDS_REVIEW
from bot.integrator.decide import decide
from bot.integrator.state import Kind
from tests.integrator.test_integrator_decide import approve, edit

SOLO = Policy(merge="review", review=ReviewRules(allow_author_merge=True))
REVIEW = Policy(merge="review")


def test_off_by_default_the_wait_is_a_pending_status() -> None:
    assert parse_policy("merge: review").review.allow_author_merge is False
    action = decide(edit(status=None), REVIEW)
    assert (action.kind, action.status) == (Kind.MARK_NEEDS_REVIEW, "pending")


def test_allowed_the_wait_is_a_success_status_and_the_label_stays() -> None:
    action = decide(edit(status=None), SOLO)
    assert (action.kind, action.status, action.labels) == (Kind.MARK_NEEDS_REVIEW, "success", (LABEL_NEEDS_REVIEW,))
    settled = decide(edit(status="success", labels=(*edit().labels, LABEL_NEEDS_REVIEW)), SOLO)
    assert settled.kind is Kind.NOTHING


def test_allowed_the_integrator_still_merges_only_with_a_review_that_counts() -> None:
    assert decide(edit(status="success", labels=(*edit().labels, LABEL_NEEDS_REVIEW)), SOLO).kind is not Kind.MERGE
    assert decide(edit(reviews=(approve(),)), SOLO).kind is Kind.MERGE


@pytest.mark.parametrize("text", ["review: {allow_author_merge: yes please}", "review: {allow_author_merge: 1}",
                                  "review: {author_merge: true}", "review: true"])
def test_the_option_is_strict(text: str) -> None:
    with pytest.raises(PolicyError):
        parse_policy(text)
