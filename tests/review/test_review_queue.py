"""The review queue's decisions, as tables: what kind a memory pull request is, who proposed it,
what it waits for, and what still keeps a person from merging it."""

from __future__ import annotations

import pytest

from bot.integrator.decide import is_memrepo_pull
from bot.pullrequest.provenance import EDIT_STRATEGY, Provenance
from bot.review import queue
from bot.review.queue import (
    KIND_AGENT_EDIT,
    KIND_DREAM,
    KIND_HARNESS,
    KIND_OTHER,
    WAITS_CHECKS,
    WAITS_CONFLICT,
    WAITS_DRAFT,
    WAITS_REVIEW,
)

SHA = "a" * 40


def block(dream_id: str | None, strategy: str = EDIT_STRATEGY, agent: str = "a1") -> Provenance:
    return Provenance(dream_id=dream_id, agent_id=agent, conversation_id="c1", base_commit=SHA,
                      trigger="agent-edit" if dream_id is None else "manual", strategy=strategy, model=None,
                      transcript=None, changes=())


DREAM = "20260314T090000Z-0123abcd"


@pytest.mark.parametrize(("head_ref", "labels", "provenance", "kind"), [
    (f"memrepo/dream/{DREAM}", ("memrepo:dream",), block(DREAM, "verbatim"), KIND_DREAM),
    (f"memrepo/dream/{DREAM}", (), None, KIND_DREAM),
    ("memrepo/edit/a1/1234abcd", ("memrepo:agent-edit",), block(None), KIND_AGENT_EDIT),
    ("memrepo/edit/a1/1234abcd", (), None, KIND_AGENT_EDIT),
    ("memrepo/edit/a1/1234abcd", ("memrepo:agent-edit",), block(None, "letta-commit"), KIND_HARNESS),
    ("feature", ("memrepo:needs-review",), None, KIND_OTHER),
    # both claims at once: neither writer's
    (f"memrepo/dream/{DREAM}", ("memrepo:agent-edit",), None, KIND_OTHER),
])
def test_kind(head_ref: str, labels: tuple[str, ...], provenance: Provenance | None, kind: str) -> None:
    assert queue.kind_of(head_ref, labels, provenance) == kind


@pytest.mark.parametrize(("head_ref", "labels", "memory"), [
    ("memrepo/edit/a1/x", (), True), ("refs/heads/memrepo/dream/x", (), True), ("feature", ("memrepo:dream",), True),
    ("feature", ("bug",), False), ("memrepo-edit", (), False), ("feature/memrepo/edit/a1/x", (), False),
])
def test_is_memory_pull(head_ref: str, labels: tuple[str, ...], memory: bool) -> None:
    assert is_memrepo_pull(head_ref, labels) is memory


def test_proposed_by() -> None:
    assert queue.proposed_by("alice", block(None, agent="ada")) == "ada"
    assert queue.proposed_by("alice", block(DREAM, "verbatim", agent="ada")) == "dreamer for ada"
    assert queue.proposed_by("alice", None) == "alice"


R, C, K, D = WAITS_REVIEW, WAITS_CHECKS, WAITS_CONFLICT, WAITS_DRAFT


@pytest.mark.parametrize(("waiting", "waits"), [
    (queue.Waiting(status="success"), ()),
    (queue.Waiting(status=None), (C,)),
    (queue.Waiting(status="failure"), (C,)),
    (queue.Waiting(status="pending"), (C,)),
    # the integrator's pending status while a person is asked is the review, not checks
    (queue.Waiting(status="pending", labels=("memrepo:needs-review",)), (R,)),
    (queue.Waiting(status="success", labels=("memrepo:needs-review",)), (R,)),
    (queue.Waiting(status="pending", labels=("memrepo:needs-review",), approved=True), (C,)),
    (queue.Waiting(status="success", changes_requested=True), (R,)),
    (queue.Waiting(status="success", mergeable=False), (K,)),
    (queue.Waiting(status="success", labels=("memrepo:conflict",)), (K,)),
    (queue.Waiting(draft=True, mergeable=False, status="failure", labels=("memrepo:needs-review",)), (D, K, C, R)),
])
def test_waits_for(waiting: queue.Waiting, waits: tuple[str, ...]) -> None:
    assert queue.waits_for(waiting) == waits


@pytest.mark.parametrize(("reviews", "approved", "requested"), [
    ([], False, False),
    ([queue.Reviewed("bob", "APPROVED", SHA)], True, False),
    ([queue.Reviewed("bob", "APPROVED", "b" * 40)], False, False),  # an older head
    ([queue.Reviewed("alice", "APPROVED", SHA)], False, False),  # the author's own
    ([queue.Reviewed("bob", "CHANGES_REQUESTED", SHA), queue.Reviewed("carol", "APPROVED", SHA)], False, True),
    ([queue.Reviewed("bob", "CHANGES_REQUESTED", SHA), queue.Reviewed("bob", "APPROVED", SHA)], True, False),
    ([queue.Reviewed("bob", "APPROVED", SHA), queue.Reviewed("bob", "DISMISSED", SHA)], False, False),
    ([queue.Reviewed("Bob", "APPROVED", SHA), queue.Reviewed("bob", "COMMENTED", SHA)], True, False),
])
def test_review_outcome(reviews: list[queue.Reviewed], approved: bool, requested: bool) -> None:
    assert queue.review_outcome(reviews, "alice", SHA) == (approved, requested)


@pytest.mark.parametrize(("waits", "own", "allow", "left"), [
    ((), False, False, ()),
    ((R,), False, False, (R,)),
    ((R,), True, False, (R,)),  # off by default: the author's merge is no review
    ((R,), False, True, (R,)),  # the option is for the author's own pull request only
    ((R,), True, True, ()),
    ((C, R), True, True, (C,)),  # checks and conflicts are never lifted
    ((K, R), True, True, (K,)),
    ((D,), True, True, (D,)),
])
def test_merge_refusal(waits: tuple[str, ...], own: bool, allow: bool, left: tuple[str, ...]) -> None:
    assert queue.merge_refusal(waits, own_pull=own, allow_author_merge=allow) == left
