"""decide(): one table row per situation of docs/architecture.md §6.2 and per merge mode, then properties
that must hold for any input (never MERGE unsafely, never act on a closed pull request, never
raise), and a small simulation that a healthy pull request reaches MERGE under each mode."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.config import Policy
from bot.contracts import LABEL_AGENT_EDIT, LABEL_CONFLICT, LABEL_DREAM, LABEL_NEEDS_REVIEW, LABEL_UNTRUSTED
from bot.forge.retry import MergeOutcome
from bot.integrator.decide import (
    INTEGRATOR_REVIEW_BY_AUTHOR,
    INTEGRATOR_REVIEW_BY_COMMIT_AUTHOR,
    INTEGRATOR_REVIEW_BY_INTEGRATOR,
    INTEGRATOR_REVIEW_NO_AUTHOR,
    INTEGRATOR_REVIEW_NOT_WRITER,
    approved,
    backoff,
    decide,
    is_memrepo,
    latest_reviews,
    protected_paths,
    review_needed,
    review_problem,
)
from bot.integrator.state import (
    DEFAULT_TUNING,
    MERGE_METHOD,
    Action,
    Kind,
    LastMerge,
    MergeAnswer,
    PullState,
    Review,
    Tuning,
    Validation,
)

HEAD = "a" * 40
OLD = "b" * 40
BASE = "c" * 40
MERGE_SHA = "d" * 40
AUTHOR = "memrepo-dreamer[bot]"
DREAM_REF = "memrepo/dream/20260101T000000Z-0123abcd"
EDIT_REF = "memrepo/edit/agent-1/abc123"

REPO = "sam/memory"
WRITERS = (("pat", "write"), ("sam", "admin"), ("mo", "maintain"), ("agent-1", "write"), (AUTHOR.casefold(), "write"),
           ("tess", "triage"), ("rita", "read"), ("nobody", "none"), ("bob", "write"))
INTEGRATOR_LOGIN = "memrepo-bot"

AUTO = Policy(merge="auto")
EXPLICIT = Policy(merge="explicit")
REVIEW = Policy(merge="review")
NONE_PROTECTED = Policy(merge="explicit", protected=())


def pr(**changes: Any) -> PullState:
    """A healthy open dream pull request: validated, mergeable, status success."""
    base = PullState(
        number=7, state="open", head_sha=HEAD, head_ref=DREAM_REF, base_sha=BASE, base_ref="main",
        mergeable=True, mergeable_state="clean", labels=(LABEL_DREAM,), author=AUTHOR,
        changed_paths=("reference/notes.md", ".memrepo/cursors/agent-1/conv-1.json"),
        validation=Validation(HEAD, True), status="success", head_repo=REPO, base_repo=REPO,
        author_permission="write", permissions=WRITERS, integrator=(INTEGRATOR_LOGIN,), claim_shown=True,
    )
    return dataclasses.replace(base, **changes)


def edit(**changes: Any) -> PullState:
    return pr(**{"head_ref": EDIT_REF, "labels": (LABEL_AGENT_EDIT,), "author": "agent-1", **changes})


def approve(who: str = "pat", sha: str = HEAD, order: int = 1) -> Review:
    return Review(who, "APPROVED", sha, order)


def review(who: str, state: str, order: int, sha: str = HEAD) -> Review:
    return Review(who, state, sha, order)


INVALID = Validation(HEAD, False, ("reference/notes.md: missing required field 'description'",))
MAIL = "external:mailto:pat.person@example.net"
PAGE = "external:https://example.com/page"
BOTH_LABELS = (LABEL_NEEDS_REVIEW, LABEL_UNTRUSTED)

# (id, state, policy, expected kind, expected fields)
ROWS: list[tuple[str, PullState, Policy, Kind, dict[str, Any]]] = [
    # not ours
    ("not-memrepo", pr(labels=(), head_ref="feature/x"), EXPLICIT, Kind.NOTHING, {}),
    ("not-memrepo-other-label", pr(labels=("bug",), head_ref="feature/x"), AUTO, Kind.NOTHING, {}),
    ("memrepo-by-dream-branch-only", pr(labels=()), EXPLICIT, Kind.MERGE, {"sha": HEAD}),
    ("memrepo-by-full-ref", pr(labels=(), head_ref="refs/heads/" + DREAM_REF), EXPLICIT, Kind.MERGE, {}),
    ("memrepo-by-edit-branch-only", edit(labels=()), EXPLICIT, Kind.MERGE, {}),
    ("memrepo-by-label-only", pr(head_ref="feature/x", claim_shown=False), EXPLICIT, Kind.MARK_NEEDS_REVIEW, {}),
    ("memrepo-by-label-only-approved", pr(head_ref="feature/x", claim_shown=False, reviews=(approve(),)), EXPLICIT,
     Kind.MERGE, {}),
    # who may ask: a branch of this repository, opened by someone the forge lets write
    ("fork-head", pr(head_repo="stranger/memory"), EXPLICIT, Kind.NOTHING, {}),
    ("fork-head-case", pr(head_repo="Sam/Memory"), EXPLICIT, Kind.MERGE, {}),
    ("fork-gone", pr(head_repo=""), EXPLICIT, Kind.NOTHING, {}),
    ("fork-approved", pr(head_repo="stranger/memory", reviews=(approve(),)), REVIEW, Kind.NOTHING, {}),
    ("author-reads-only", pr(author_permission="read"), EXPLICIT, Kind.NOTHING, {}),
    ("author-triage", pr(author_permission="triage"), EXPLICIT, Kind.NOTHING, {}),
    ("author-none", pr(author_permission="none", reviews=(approve(),)), AUTO, Kind.NOTHING, {}),
    ("author-maintain", pr(author_permission="maintain"), EXPLICIT, Kind.MERGE, {}),
    ("author-admin", pr(author_permission="admin"), EXPLICIT, Kind.MERGE, {}),
    ("author-is-integrator", pr(author=INTEGRATOR_LOGIN, author_permission="none"), EXPLICIT, Kind.MERGE, {}),
    ("outsider-merged-by-a-person", pr(author_permission="none", merged=True, state="closed",
                                       merge_commit_sha=MERGE_SHA), EXPLICIT, Kind.PUBLISH_HEAD, {}),
    # a claim to be a dream or an agent's edit that the commits do not show is a person's
    ("dream-claim-not-shown", pr(claim_shown=False), EXPLICIT, Kind.MARK_NEEDS_REVIEW, {}),
    ("dream-claim-not-shown-auto", pr(claim_shown=False), AUTO, Kind.MARK_NEEDS_REVIEW, {}),
    ("dream-claim-not-shown-approved", pr(claim_shown=False, reviews=(approve(),)), AUTO, Kind.MERGE, {}),
    ("dream-claim-not-shown-invalid-stays-open", pr(claim_shown=False, validation=INVALID, status=None), AUTO,
     Kind.SET_STATUS, {"status": "failure"}),
    ("dream-claim-not-shown-conflict-not-closed", pr(claim_shown=False, mergeable=False), AUTO, Kind.RESOLVE, {}),
    ("edit-claim-not-shown", edit(claim_shown=False), AUTO, Kind.MARK_NEEDS_REVIEW, {}),
    # the rules that judge it: always a person's decision
    ("rule-file-memrepo", edit(changed_paths=(".memrepo/config.yml",)), NONE_PROTECTED, Kind.MARK_NEEDS_REVIEW, {}),
    ("rule-file-memrepo-auto", pr(changed_paths=(".memrepo/config.yml",)), Policy(merge="auto", protected=()),
     Kind.MARK_NEEDS_REVIEW, {}),
    ("rule-file-case", pr(changed_paths=(".MEMREPO/Config.yml",)), NONE_PROTECTED, Kind.MARK_NEEDS_REVIEW, {}),
    ("rule-file-letta", pr(changed_paths=(".memfs.config.json",)), NONE_PROTECTED, Kind.MARK_NEEDS_REVIEW, {}),
    ("rule-file-approved", pr(changed_paths=(".memrepo/config.yml",), reviews=(approve(),)), NONE_PROTECTED,
     Kind.MERGE, {}),
    # closed or merged
    ("merged-unpublished", pr(merged=True, state="closed", merge_commit_sha=MERGE_SHA), EXPLICIT,
     Kind.PUBLISH_HEAD, {"sha": MERGE_SHA}),
    ("merged-published", pr(merged=True, state="closed", head_published=True), EXPLICIT, Kind.NOTHING, {}),
    ("closed", pr(state="closed"), EXPLICIT, Kind.NOTHING, {}),
    ("closed-invalid", pr(state="closed", validation=INVALID), AUTO, Kind.NOTHING, {}),
    ("closed-not-mergeable", pr(state="closed", mergeable=False), EXPLICIT, Kind.NOTHING, {}),
    # draft
    ("draft", pr(draft=True), AUTO, Kind.NOTHING, {}),
    ("draft-unvalidated", pr(draft=True, validation=None), EXPLICIT, Kind.NOTHING, {}),
    # validation
    ("no-validation", pr(validation=None, status=None), EXPLICIT, Kind.VALIDATE, {"sha": HEAD}),
    ("validation-of-old-head", pr(validation=Validation(OLD, True)), AUTO, Kind.VALIDATE, {"sha": HEAD}),
    ("validation-of-old-head-invalid", pr(validation=Validation(OLD, False)), AUTO, Kind.VALIDATE, {}),
    ("head-unknown", pr(head_sha="", validation=Validation("", True)), AUTO, Kind.WAIT, {}),
    ("invalid-dream-closed", pr(validation=INVALID, status=None), AUTO, Kind.COMMENT_AND_CLOSE,
     {"status": "failure", "sha": HEAD}),
    ("invalid-dream-closed-explicit", pr(validation=INVALID), EXPLICIT, Kind.COMMENT_AND_CLOSE, {}),
    ("invalid-dream-closed-review", pr(validation=INVALID), REVIEW, Kind.COMMENT_AND_CLOSE, {}),
    ("invalid-agent-edit-open", edit(validation=INVALID, status=None), AUTO, Kind.SET_STATUS,
     {"status": "failure", "sha": HEAD}),
    ("invalid-agent-edit-said", edit(validation=INVALID, status="failure"), AUTO, Kind.NOTHING, {}),
    ("invalid-dream-also-agent-edit", pr(validation=INVALID, labels=(LABEL_DREAM, LABEL_AGENT_EDIT)), AUTO,
     Kind.SET_STATUS, {"status": "failure"}),
    ("invalid-untrusted-open", pr(validation=INVALID, labels=(LABEL_UNTRUSTED,), head_ref="feature/x"), AUTO,
     Kind.SET_STATUS, {"status": "failure"}),
    # mergeability unknown
    ("mergeable-unknown", pr(mergeable=None), AUTO, Kind.WAIT, {"delay": 0.2}),
    ("mergeable-unknown-backoff", pr(mergeable=None, attempts=3), EXPLICIT, Kind.WAIT, {"delay": 1.6}),
    ("mergeable-unknown-capped", pr(mergeable=None, attempts=9), REVIEW, Kind.WAIT, {"delay": 60.0}),
    # GitHub still computing: git's trial merge stands in, so no wait
    ("mergeable-unknown-merges-cleanly", pr(mergeable=None, merges_cleanly=True), EXPLICIT, Kind.MERGE,
     {"sha": HEAD}),
    ("mergeable-unknown-merges-cleanly-review", pr(mergeable=None, merges_cleanly=True), REVIEW,
     Kind.MARK_NEEDS_REVIEW, {}),
    ("mergeable-unknown-conflicts-locally", pr(mergeable=None, merges_cleanly=False), EXPLICIT, Kind.RESOLVE,
     {"sha": HEAD}),
    ("mergeable-unknown-conflicts-locally-auto-dream", pr(mergeable=None, merges_cleanly=False), AUTO,
     Kind.COMMENT_AND_CLOSE, {}),
    # GitHub's answer wins over git's
    ("not-mergeable-believed", pr(mergeable=False, merges_cleanly=True), EXPLICIT, Kind.RESOLVE, {}),
    ("mergeable-believed", pr(mergeable=True, merges_cleanly=False), EXPLICIT, Kind.MERGE, {}),
    # not mergeable
    ("conflict-auto-dream-closed", pr(mergeable=False, mergeable_state="dirty"), AUTO, Kind.COMMENT_AND_CLOSE,
     {"status": None}),
    ("conflict-auto-agent-edit-resolved", edit(mergeable=False), AUTO, Kind.RESOLVE, {"sha": HEAD}),
    ("conflict-explicit-resolve", pr(mergeable=False), EXPLICIT, Kind.RESOLVE, {"sha": HEAD, "base_sha": BASE}),
    ("conflict-review-resolve", pr(mergeable=False), REVIEW, Kind.RESOLVE, {"sha": HEAD}),
    ("conflict-review-before-approval", pr(mergeable=False, status="pending"), REVIEW, Kind.RESOLVE, {}),
    ("conflict-resolution-failed", pr(mergeable=False, resolution_tried=True), EXPLICIT, Kind.MARK_CONFLICT,
     {"labels": (LABEL_CONFLICT,)}),
    ("conflict-resolution-failed-review", pr(mergeable=False, resolution_tried=True), REVIEW, Kind.MARK_CONFLICT,
     {}),
    ("conflict-marked-waiting", pr(mergeable=False, resolution_tried=True, labels=(LABEL_DREAM, LABEL_CONFLICT)),
     EXPLICIT, Kind.NOTHING, {}),
    ("conflict-label-stale-new-head", pr(labels=(LABEL_DREAM, LABEL_CONFLICT)), EXPLICIT, Kind.MERGE, {}),
    # reviews
    ("review-none", pr(), REVIEW, Kind.MARK_NEEDS_REVIEW,
     {"labels": (LABEL_NEEDS_REVIEW,), "status": "pending", "description": "waiting for review"}),
    ("review-marked-waiting", pr(labels=(LABEL_DREAM, LABEL_NEEDS_REVIEW), status="pending"), REVIEW, Kind.NOTHING,
     {}),
    ("review-label-but-status-success", pr(labels=(LABEL_DREAM, LABEL_NEEDS_REVIEW)), REVIEW,
     Kind.MARK_NEEDS_REVIEW, {}),
    ("review-by-author-only", pr(reviews=(approve(AUTHOR),)), REVIEW, Kind.MARK_NEEDS_REVIEW, {}),
    ("review-by-author-other-case", pr(reviews=(approve(AUTHOR.upper()),)), REVIEW, Kind.MARK_NEEDS_REVIEW, {}),
    ("review-of-old-head", pr(reviews=(approve(sha=OLD),)), REVIEW, Kind.MARK_NEEDS_REVIEW, {}),
    ("review-approved-status-pending", pr(reviews=(approve(),), status="pending"), REVIEW, Kind.SET_STATUS,
     {"status": "success"}),
    ("review-approved", pr(reviews=(approve(),)), REVIEW, Kind.MERGE, {"sha": HEAD, "method": MERGE_METHOD}),
    ("review-approved-then-commented", pr(reviews=(approve(order=1), review("pat", "COMMENTED", 2))), REVIEW,
     Kind.MERGE, {}),
    ("review-changes-then-approved", pr(reviews=(review("pat", "CHANGES_REQUESTED", 1), approve(order=2))),
     REVIEW, Kind.MERGE, {}),
    ("review-approved-then-changes", pr(reviews=(approve(order=1), review("pat", "CHANGES_REQUESTED", 2))),
     REVIEW, Kind.MARK_NEEDS_REVIEW, {}),
    ("review-order-not-list-order", pr(reviews=(review("pat", "CHANGES_REQUESTED", 5), approve(order=2))),
     REVIEW, Kind.MARK_NEEDS_REVIEW, {}),
    ("review-one-approves-other-blocks", pr(reviews=(approve("pat", order=1),
                                                     review("sam", "CHANGES_REQUESTED", 2, sha=OLD))),
     REVIEW, Kind.MARK_NEEDS_REVIEW, {}),
    ("review-changes-dismissed", pr(reviews=(review("sam", "CHANGES_REQUESTED", 1), review("sam", "DISMISSED", 2),
                                             approve("pat", order=3))), REVIEW, Kind.MERGE, {}),
    ("review-approval-dismissed", pr(reviews=(approve(order=1), review("pat", "DISMISSED", 2))), REVIEW,
     Kind.MARK_NEEDS_REVIEW, {}),
    ("explicit-changes-requested-blocks", pr(reviews=(review("pat", "CHANGES_REQUESTED", 1),)), EXPLICIT,
     Kind.MARK_NEEDS_REVIEW, {}),
    ("auto-changes-requested-blocks", pr(reviews=(review("pat", "CHANGES_REQUESTED", 1),)), AUTO,
     Kind.MARK_NEEDS_REVIEW, {}),
    ("explicit-protected-path", pr(changed_paths=("system/persona.md",)), EXPLICIT, Kind.MARK_NEEDS_REVIEW, {}),
    ("auto-protected-path", pr(changed_paths=("system/persona.md",)), AUTO, Kind.MARK_NEEDS_REVIEW, {}),
    ("auto-protected-glob", pr(changed_paths=("system/a/b.md",)), Policy(merge="auto", protected=("system/*",)),
     Kind.MARK_NEEDS_REVIEW, {}),
    ("auto-protected-folder", pr(changed_paths=("skills/x/SKILL.md",)), Policy(merge="auto", protected=("skills/",)),
     Kind.MARK_NEEDS_REVIEW, {}),
    ("auto-protected-approved", pr(changed_paths=("system/persona.md",), reviews=(approve(),)), AUTO, Kind.MERGE,
     {}),
    ("auto-unprotected-path", pr(changed_paths=("system/human.md",)), AUTO, Kind.MERGE, {}),
    ("explicit-untrusted", pr(labels=(LABEL_DREAM, LABEL_UNTRUSTED)), EXPLICIT, Kind.MARK_NEEDS_REVIEW, {}),
    ("auto-untrusted", pr(labels=(LABEL_DREAM, LABEL_UNTRUSTED)), AUTO, Kind.MARK_NEEDS_REVIEW, {}),
    ("auto-untrusted-approved", pr(labels=(LABEL_DREAM, LABEL_UNTRUSTED), reviews=(approve(),)), AUTO, Kind.MERGE,
     {}),
    ("unknown-mode-is-review", pr(), Policy(merge="whatever"), Kind.MARK_NEEDS_REVIEW, {}),
    # whose approval counts: a writer, not the author, not a commit's author, not the integrator
    ("approval-by-stranger", pr(reviews=(approve("nobody"),)), REVIEW, Kind.MARK_NEEDS_REVIEW, {}),
    ("approval-by-unknown-account", pr(reviews=(approve("eve"),)), REVIEW, Kind.MARK_NEEDS_REVIEW, {}),
    ("approval-by-reader", pr(reviews=(approve("rita"),)), REVIEW, Kind.MARK_NEEDS_REVIEW, {}),
    ("approval-by-triager", pr(reviews=(approve("tess"),)), REVIEW, Kind.MARK_NEEDS_REVIEW, {}),
    ("approval-by-maintainer", pr(reviews=(approve("mo"),)), REVIEW, Kind.MERGE, {}),
    ("approval-by-admin", pr(reviews=(approve("sam"),)), REVIEW, Kind.MERGE, {}),
    ("approval-by-commit-author", pr(reviews=(approve("pat"),), commit_authors=("pat",)), REVIEW,
     Kind.MARK_NEEDS_REVIEW, {}),
    ("approval-by-commit-author-case", pr(reviews=(approve("pat"),), commit_authors=("PAT",)), REVIEW,
     Kind.MARK_NEEDS_REVIEW, {}),
    ("approval-by-integrator", pr(reviews=(approve(INTEGRATOR_LOGIN),),
                                  permissions=(*WRITERS, (INTEGRATOR_LOGIN, "write"))), REVIEW,
     Kind.MARK_NEEDS_REVIEW, {}),
    ("approval-protected-by-stranger", pr(changed_paths=("system/persona.md",), reviews=(approve("nobody"),)), AUTO,
     Kind.MARK_NEEDS_REVIEW, {}),
    ("approval-stranger-and-writer", pr(reviews=(approve("nobody", order=1), approve("pat", order=2))), REVIEW,
     Kind.MERGE, {}),
    ("changes-requested-by-stranger-ignored", pr(reviews=(review("nobody", "CHANGES_REQUESTED", 1),)), EXPLICIT,
     Kind.MERGE, {}),
    ("changes-requested-by-writer-blocks", pr(reviews=(review("bob", "CHANGES_REQUESTED", 1),)), EXPLICIT,
     Kind.MARK_NEEDS_REVIEW, {}),
    # untrusted content named by the commits' Source trailers, whatever the labels say
    ("sources-no-labels-explicit", edit(labels=(), untrusted_sources=(MAIL,)), EXPLICIT, Kind.MARK_NEEDS_REVIEW,
     {"labels": BOTH_LABELS, "status": "pending", "sha": HEAD}),
    ("sources-no-labels-auto", edit(labels=(), untrusted_sources=(MAIL,)), AUTO, Kind.MARK_NEEDS_REVIEW,
     {"labels": BOTH_LABELS}),
    ("sources-untrusted-label-removed", edit(untrusted_sources=(MAIL,)), AUTO, Kind.MARK_NEEDS_REVIEW,
     {"labels": BOTH_LABELS}),
    ("sources-labelled", edit(labels=(LABEL_AGENT_EDIT, LABEL_UNTRUSTED), untrusted_sources=(MAIL,)), AUTO,
     Kind.MARK_NEEDS_REVIEW, {"labels": BOTH_LABELS, "comment": None}),
    ("sources-marked-waiting", edit(labels=(LABEL_AGENT_EDIT, LABEL_NEEDS_REVIEW, LABEL_UNTRUSTED), status="pending",
                                    untrusted_sources=(MAIL,)), AUTO, Kind.NOTHING, {}),
    ("sources-waiting-untrusted-removed", edit(labels=(LABEL_AGENT_EDIT, LABEL_NEEDS_REVIEW), status="pending",
                                               untrusted_sources=(MAIL,)), AUTO, Kind.MARK_NEEDS_REVIEW,
     {"labels": BOTH_LABELS}),
    ("sources-approved", edit(labels=(), untrusted_sources=(MAIL, PAGE), reviews=(approve(),)), AUTO, Kind.MERGE,
     {"sha": HEAD}),
    ("sources-approved-by-author", edit(labels=(), untrusted_sources=(MAIL,), reviews=(approve("agent-1"),)), AUTO,
     Kind.MARK_NEEDS_REVIEW, {}),
    ("sources-approved-old-head", edit(labels=(), untrusted_sources=(MAIL,), reviews=(approve(sha=OLD),)), AUTO,
     Kind.MARK_NEEDS_REVIEW, {}),
    ("sources-dream", pr(untrusted_sources=(MAIL,)), AUTO, Kind.MARK_NEEDS_REVIEW, {"labels": BOTH_LABELS}),
    ("sources-conflict-resolved-first", edit(labels=(), untrusted_sources=(MAIL,), mergeable=False), AUTO,
     Kind.RESOLVE, {}),
    ("sources-invalid", edit(labels=(), untrusted_sources=(MAIL,), validation=INVALID, status=None), AUTO,
     Kind.SET_STATUS, {"status": "failure"}),
    ("sources-not-memrepo", pr(labels=(), head_ref="feature/x", untrusted_sources=(MAIL,)), AUTO, Kind.NOTHING, {}),
    ("no-sources-no-label", edit(labels=(), untrusted_sources=()), AUTO, Kind.MERGE, {}),
    # status, then merge
    ("valid-status-missing", pr(status=None), AUTO, Kind.SET_STATUS, {"status": "success", "sha": HEAD}),
    ("valid-status-pending", pr(status="pending"), EXPLICIT, Kind.SET_STATUS, {"status": "success"}),
    ("merge-auto", pr(), AUTO, Kind.MERGE, {"sha": HEAD, "method": MERGE_METHOD}),
    ("merge-explicit", pr(), EXPLICIT, Kind.MERGE, {"sha": HEAD}),
    ("merge-review-approved", pr(reviews=(approve(),)), REVIEW, Kind.MERGE, {"sha": HEAD}),
    ("merge-agent-edit", edit(), AUTO, Kind.MERGE, {"sha": HEAD}),
    ("merge-blocked-state-still-tried", pr(mergeable_state="blocked"), EXPLICIT, Kind.MERGE, {}),
    # after a merge call (the state in hand was read before it)
    ("answer-merged", pr(last_merge=LastMerge(MergeAnswer.MERGED, MERGE_SHA, 200)), EXPLICIT, Kind.PUBLISH_HEAD,
     {"sha": MERGE_SHA}),
    ("answer-merged-published", pr(last_merge=LastMerge(MergeAnswer.MERGED, MERGE_SHA, 200), head_published=True),
     EXPLICIT, Kind.NOTHING, {}),
    ("answer-already-merged", pr(last_merge=LastMerge(MergeAnswer.ALREADY_MERGED), merge_commit_sha=MERGE_SHA),
     AUTO, Kind.PUBLISH_HEAD, {"sha": MERGE_SHA}),
    ("answer-5xx-merged", pr(last_merge=LastMerge(MergeAnswer.MERGED, MERGE_SHA, 502)), AUTO, Kind.PUBLISH_HEAD,
     {"sha": MERGE_SHA}),
    ("answer-merged-on-closed-state", pr(state="closed", last_merge=LastMerge(MergeAnswer.MERGED, MERGE_SHA)), AUTO,
     Kind.PUBLISH_HEAD, {}),
    ("answer-409-head-moved", pr(last_merge=LastMerge(MergeAnswer.HEAD_MOVED, status=409)), EXPLICIT, Kind.REREAD,
     {"check_merged": False}),
    ("answer-405-base-moved", pr(last_merge=LastMerge(MergeAnswer.BASE_MOVED, status=405)), EXPLICIT, Kind.REREAD,
     {}),
    ("answer-405-not-mergeable", pr(last_merge=LastMerge(MergeAnswer.NOT_MERGEABLE, status=405)), AUTO,
     Kind.REREAD, {}),
    ("answer-5xx-not-merged", pr(last_merge=LastMerge(MergeAnswer.NOT_MERGED, status=500)), EXPLICIT, Kind.REREAD,
     {"check_merged": False, "delay": 0.0}),
    ("answer-rate-limited", pr(last_merge=LastMerge(MergeAnswer.NOT_MERGED, status=403, retry_after=30.0)),
     EXPLICIT, Kind.REREAD, {"delay": 30.0}),
    ("answer-timeout-unknown", pr(last_merge=LastMerge(MergeAnswer.UNKNOWN)), EXPLICIT, Kind.REREAD,
     {"check_merged": True}),
    ("answer-409-attempts-exhausted", pr(last_merge=LastMerge(MergeAnswer.HEAD_MOVED, status=409), attempts=10),
     EXPLICIT, Kind.GIVE_UP, {"labels": (LABEL_CONFLICT,)}),
    ("answer-409-on-closed-state", pr(state="closed", last_merge=LastMerge(MergeAnswer.HEAD_MOVED, status=409)),
     EXPLICIT, Kind.NOTHING, {}),
    # attempts
    ("attempts-exhausted", pr(attempts=10, history=("merge at aaaa: head moved", "merge at bbbb: base moved")),
     EXPLICIT, Kind.GIVE_UP, {"labels": (LABEL_CONFLICT,)}),
    ("attempts-exhausted-waiting", pr(mergeable=None, attempts=12), AUTO, Kind.GIVE_UP, {}),
    ("attempts-below-limit", pr(attempts=9), EXPLICIT, Kind.MERGE, {}),
    ("attempts-exhausted-but-merged", pr(attempts=99, merged=True, state="closed"), EXPLICIT, Kind.PUBLISH_HEAD,
     {}),
]


@pytest.mark.parametrize(("state", "policy", "kind", "fields"), [row[1:] for row in ROWS],
                         ids=[row[0] for row in ROWS])
def test_decision_table(state: PullState, policy: Policy, kind: Kind, fields: dict[str, Any]) -> None:
    action = decide(state, policy)
    assert action.kind is kind, action.reason
    for name, value in fields.items():
        assert getattr(action, name) == value, name
    assert action.reason


def test_table_covers_every_kind_and_mode() -> None:
    kinds = {row[3] for row in ROWS}
    assert kinds == set(Kind)
    for mode in ("auto", "explicit", "review"):
        assert {row[3] for row in ROWS if row[2].merge == mode} >= {Kind.MERGE, Kind.COMMENT_AND_CLOSE
                                                                    if mode == "auto" else Kind.RESOLVE}


def test_invalid_comment_lists_problems_and_what_happens() -> None:
    closed = decide(pr(validation=INVALID), AUTO)
    assert "missing required field 'description'" in (closed.comment or "")
    assert "closed" in (closed.comment or "") and "cursor" in (closed.comment or "")
    assert closed.description and closed.description.startswith("1 problem:")
    kept = decide(edit(validation=INVALID), AUTO)
    assert "stays open" in (kept.comment or "")


def test_status_description_fits_github() -> None:
    many = Validation(HEAD, False, tuple(f"reference/{i}.md: " + "x" * 300 for i in range(40)))
    action = decide(edit(validation=many), EXPLICIT)
    assert action.description is not None and len(action.description) <= 140
    assert "20 more" in (action.comment or "")


def test_untrusted_sources_are_named_once_when_the_label_is_added() -> None:
    action = decide(edit(labels=(), untrusted_sources=(MAIL, "external:https://x.example/`<!--`")), AUTO)
    assert action.kind is Kind.MARK_NEEDS_REVIEW and MAIL in action.reason
    comment = action.comment or ""
    assert f"- `{MAIL}`" in comment and LABEL_UNTRUSTED in comment and "approv" in comment
    assert "<!--" not in comment and "&lt;!--" in comment  # a source is inert in the comment
    labelled = decide(edit(labels=(LABEL_AGENT_EDIT, LABEL_UNTRUSTED), untrusted_sources=(MAIL,)), AUTO)
    assert labelled.kind is Kind.MARK_NEEDS_REVIEW and labelled.comment is None
    assert review_needed(edit(labels=(), untrusted_sources=(MAIL,)), NONE_PROTECTED)
    assert not review_needed(edit(labels=()), NONE_PROTECTED)


def test_an_untrusted_edit_without_labels_waits_for_an_approval_then_merges() -> None:
    """The pull request as the integrator first sees it when the labels come after the
    opening (or never): the commits alone hold it for a person."""
    state = edit(labels=(), untrusted_sources=(MAIL,), validation=None, status=None)
    seen = []
    for _ in range(12):
        action = decide(state, AUTO)
        seen.append(action.kind)
        if action.kind is Kind.MERGE:
            assert approved(state) and LABEL_UNTRUSTED in state.labels
        if action.kind is Kind.NOTHING:
            break
        state = _act(state, action)
    assert seen.index(Kind.MARK_NEEDS_REVIEW) < seen.index(Kind.MERGE), seen
    assert state.merged


def test_give_up_comment_says_what_was_tried() -> None:
    action = decide(pr(attempts=10, history=("merge at aaaa: head moved (409)", "resolve: conflicts")), EXPLICIT)
    assert action.comment and "head moved (409)" in action.comment and "10 attempts" in action.comment
    assert LABEL_CONFLICT in action.comment


def test_conflict_comments() -> None:
    closed = decide(pr(mergeable=False), AUTO)
    assert "auto" in (closed.comment or "") and "cursor" in (closed.comment or "")
    marked = decide(pr(mergeable=False, resolution_tried=True), EXPLICIT)
    assert LABEL_CONFLICT in (marked.comment or "") and HEAD[:12] in (marked.comment or "")


def test_tuning_bounds_attempts_and_waits() -> None:
    tuning = Tuning(max_attempts=2, wait_base=0.5, wait_cap=3.0, mergeable_wait_base=0.5)
    assert decide(pr(mergeable=None, attempts=1), AUTO, tuning).delay == 1.0
    assert decide(pr(mergeable=None, attempts=2), AUTO, tuning).kind is Kind.GIVE_UP
    assert backoff(50, tuning) == 3.0
    assert backoff(-3, DEFAULT_TUNING) == 1.0


@pytest.mark.parametrize(
    ("paths", "globs", "expected"),
    [
        (("system/persona.md",), ("system/persona.md",), ["system/persona.md"]),
        (("system/human.md",), ("system/persona.md",), []),
        (("system/a/b.md", "reference/x.md"), ("system/*",), ["system/a/b.md"]),
        (("skills/x/SKILL.md",), ("skills/",), ["skills/x/SKILL.md"]),
        (("System/persona.md",), ("system/persona.md",), ["System/persona.md"]),
        (("a[b.md",), ("a[b.md", ""), ["a[b.md"]),
        ((), ("**",), []),
    ],
    ids=["exact", "other-file", "star-crosses-folders", "folder", "any-letter-case", "odd-glob", "no-paths"],
)
def test_protected_paths(paths: tuple[str, ...], globs: tuple[str, ...], expected: list[str]) -> None:
    assert protected_paths(paths, globs) == expected


def test_latest_review_per_reviewer() -> None:
    reviews = (review("Pat", "APPROVED", 1), review("pat", "COMMENTED", 2), review("sam", "PENDING", 3),
               review(AUTHOR, "CHANGES_REQUESTED", 4), review("", "APPROVED", 5))
    latest = latest_reviews(reviews, AUTHOR)
    assert list(latest) == ["pat"] and latest["pat"].state == "APPROVED"
    assert approved(pr(reviews=reviews))
    assert not approved(pr(reviews=reviews, head_sha=OLD))
    assert review_needed(pr(), REVIEW) and not review_needed(pr(), NONE_PROTECTED)


def test_merge_answer_names_match_the_forge_client() -> None:
    assert {m.name for m in MergeAnswer} == {m.name for m in MergeOutcome}

    @dataclasses.dataclass
    class Result:
        outcome: MergeOutcome
        sha: str | None
        status: int | None
        retry_after: float | None

    last = LastMerge.from_result(Result(MergeOutcome.MERGED, MERGE_SHA, None, None))
    assert last.answer is MergeAnswer.MERGED and last.lost and last.sha == MERGE_SHA
    assert not LastMerge.from_result(Result(MergeOutcome.HEAD_MOVED, None, 409, None)).lost


def test_state_from_the_forge_pull_request() -> None:
    from bot.forge.shapes import PullRequest

    pull = PullRequest(3, "u", "t", "b", "open", False, False, DREAM_REF, HEAD, "main", BASE, True, "clean",
                       (LABEL_DREAM,), AUTHOR, None, REPO, REPO, default_branch="main")
    state = PullState.from_pull(pull, validation=Validation(HEAD, True), status="success")
    assert state.number == 3 and state.head_sha == HEAD and is_memrepo(state)
    assert state.head_repo == state.base_repo == REPO
    assert decide(state, EXPLICIT).kind is Kind.NOTHING  # nobody asked the forge who the author is
    known = PullState.from_pull(pull, validation=Validation(HEAD, True), status="success", author_permission="write",
                                claim_shown=True)
    assert decide(known, EXPLICIT).kind is Kind.MERGE


def test_core_does_not_import_pygithub() -> None:
    code = ("import sys, bot.integrator.decide, bot.integrator.resolve, bot.integrator.state; "
            "sys.exit(1 if 'github' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# ----------------------------------------------------------------------------------------- properties
SHAS = st.sampled_from(["", HEAD, OLD, "e" * 40])
LABELS = st.lists(st.sampled_from([LABEL_DREAM, LABEL_AGENT_EDIT, LABEL_UNTRUSTED, LABEL_CONFLICT, LABEL_NEEDS_REVIEW,
                                   "memrepo:other", "bug"]) | st.text(max_size=12), max_size=5).map(tuple)
REFS = st.sampled_from(["", DREAM_REF, EDIT_REF, "refs/heads/" + DREAM_REF, "feature/x", "memrepo/dream"]) | st.text(
    max_size=20)
WHO = st.sampled_from(["pat", "Pat", "sam", AUTHOR, ""])
REVIEW_STATES = st.sampled_from(["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING", "approved",
                                 ""]) | st.text(max_size=8)
REVIEWS = st.lists(st.builds(Review, WHO, REVIEW_STATES, st.none() | SHAS, st.integers(-5, 5)), max_size=5).map(tuple)
VALIDATIONS = st.none() | st.builds(Validation, SHAS, st.booleans(),
                                    st.lists(st.text(max_size=30), max_size=3).map(tuple))
LAST = st.none() | st.builds(LastMerge, st.sampled_from(list(MergeAnswer)), st.none() | SHAS,
                             st.none() | st.sampled_from([200, 403, 405, 409, 500, 502]),
                             st.none() | st.floats(allow_nan=True, allow_infinity=True))
PATHS = st.lists(st.sampled_from(["system/persona.md", "system/human.md", "reference/a.md", "skills/x/SKILL.md",
                                  ".memrepo/config.yml", ".MEMFS.config.json"])
                 | st.text(max_size=15), max_size=4).map(tuple)
SOURCES = st.lists(st.sampled_from([MAIL, PAGE]) | st.text(max_size=12), max_size=3).map(tuple)
STATES = st.builds(
    PullState,
    number=st.integers(-1, 10**6),
    state=st.sampled_from(["open", "closed", "", "OPEN"]),
    merged=st.booleans(),
    draft=st.booleans(),
    head_sha=SHAS,
    head_ref=REFS,
    base_sha=SHAS,
    base_ref=st.sampled_from(["main", ""]),
    mergeable=st.none() | st.booleans(),
    mergeable_state=st.none() | st.sampled_from(["clean", "dirty", "blocked", "unknown", "behind"]),
    merges_cleanly=st.none() | st.booleans(),
    labels=LABELS,
    author=WHO,
    changed_paths=PATHS,
    untrusted_sources=SOURCES,
    merge_commit_sha=st.none() | SHAS,
    validation=VALIDATIONS,
    status=st.none() | st.sampled_from(["success", "failure", "pending", "error"]),
    reviews=REVIEWS,
    attempts=st.integers(-3, 40),
    last_merge=LAST,
    resolution_tried=st.booleans(),
    head_published=st.booleans(),
    history=st.lists(st.text(max_size=40), max_size=30).map(tuple),
)
# Healthy pull requests (valid, mergeable, status set) with anything in what decides about
# reviews: most of them reach the review check, so MERGE is common and the property bites.
PERMISSION = st.sampled_from(["admin", "maintain", "write", "triage", "read", "none", ""])
WHO_IS_WHO = st.fixed_dictionaries({
    "head_repo": st.sampled_from([REPO, "Sam/Memory", "stranger/memory", ""]),
    "author_permission": PERMISSION,
    "permissions": st.lists(st.tuples(WHO, PERMISSION), max_size=4).map(tuple),
    "commit_authors": st.lists(WHO, max_size=2).map(tuple),
    "integrator": st.lists(WHO, max_size=2).map(tuple),
    "claim_shown": st.booleans(),
})
NEAR_MERGE = st.builds(
    lambda labels, ref, author, reviews, sources, paths, who: pr(labels=labels, head_ref=ref, author=author,
                                                                 reviews=reviews, untrusted_sources=sources,
                                                                 changed_paths=paths, **who),
    LABELS, REFS, WHO, REVIEWS, SOURCES, PATHS, st.just({}) | WHO_IS_WHO)
POLICIES = st.builds(
    Policy,
    merge=st.sampled_from(["auto", "explicit", "review"]) | st.text(max_size=8),
    protected=st.lists(st.sampled_from(["system/persona.md", "system/*", "skills/", "[", "*", "a[!b]"])
                       | st.text(max_size=10), max_size=3).map(tuple),
)
TUNINGS = st.builds(Tuning, st.integers(-1, 20), st.floats(0, 100), st.floats(0, 1000), st.floats(0, 100))


@settings(max_examples=600)
@given(STATES | NEAR_MERGE, POLICIES, TUNINGS)
def test_decide_is_total_and_never_merges_unsafely(state: PullState, policy: Policy, tuning: Tuning) -> None:
    action = decide(state, policy, tuning)
    assert isinstance(action, Action) and isinstance(action.kind, Kind) and action.reason
    if action.kind is Kind.MERGE:
        assert state.validation is not None and state.validation.valid
        assert state.validation.sha == state.head_sha == action.sha and action.sha
        assert state.mergeable is True or (state.mergeable is None and state.merges_cleanly is True)
        assert state.state == "open" and not state.merged and not state.draft and state.last_merge is None
        assert state.head_repo and state.head_repo.casefold() == state.base_repo.casefold()
        writers = {login for login, permission in state.permissions if permission in ("write", "maintain", "admin")}
        bots = {login.casefold() for login in state.integrator}  # GitHub logins ignore case
        assert state.author_permission in ("write", "maintain", "admin") or state.author.casefold() in bots
        if review_needed(state, policy):
            others = [r for r in state.reviews if r.author and r.author.casefold() != state.author.casefold()
                      and r.author.casefold() in writers
                      and r.author.casefold() not in {a.casefold() for a in state.commit_authors}
                      and r.author.casefold() not in bots]
            assert any(r.state.upper() == "APPROVED" and r.commit_id == state.head_sha for r in others)
            assert approved(state)
        if state.untrusted_sources or any(p.casefold() == ".memrepo/config.yml" for p in state.changed_paths):
            assert review_needed(state, policy)
    if state.state != "open" or state.merged:
        assert action.kind not in (Kind.MERGE, Kind.RESOLVE, Kind.VALIDATE, Kind.WAIT, Kind.REREAD)
    if not is_memrepo(state):
        assert action.kind is Kind.NOTHING
    if action.kind in (Kind.WAIT, Kind.REREAD):
        assert 0 <= action.delay <= 3600
    if action.kind in (Kind.SET_STATUS, Kind.MARK_NEEDS_REVIEW) and action.description is not None:
        assert len(action.description) <= 140


@given(STATES, POLICIES)
def test_decide_is_deterministic(state: PullState, policy: Policy) -> None:
    assert decide(state, policy) == decide(state, policy)


# ---------------------------------------------------------------------------------------- simulation
def _act(state: PullState, action: Action) -> PullState:
    """A tiny well-behaved shell: each action does what it promises on a friendly forge."""
    changes: dict[str, Any] = {"attempts": state.attempts + 1}
    if action.kind is Kind.VALIDATE:
        changes.update(validation=Validation(state.head_sha, True), status="success")
    elif action.kind is Kind.SET_STATUS:
        changes.update(status=action.status)
    elif action.kind is Kind.WAIT:
        changes.update(mergeable=True)
    elif action.kind is Kind.RESOLVE:
        changes.update(head_sha=OLD, mergeable=None, merges_cleanly=True, validation=None, status=None)
    elif action.kind is Kind.MARK_NEEDS_REVIEW:
        changes.update(labels=(*state.labels, *action.labels), status=action.status,
                       reviews=(approve(sha=state.head_sha),))
    elif action.kind is Kind.MERGE:
        changes.update(last_merge=LastMerge(MergeAnswer.MERGED, MERGE_SHA, 200))
    elif action.kind is Kind.PUBLISH_HEAD:
        changes.update(merged=True, state="closed", head_published=True, last_merge=None)
    return dataclasses.replace(state, **changes)


@pytest.mark.parametrize("policy", [AUTO, EXPLICIT, REVIEW], ids=["auto", "explicit", "review"])
@pytest.mark.parametrize("mergeable", [True, None, False], ids=["mergeable", "computing", "conflict"])
def test_a_healthy_pull_request_gets_merged(policy: Policy, mergeable: bool | None) -> None:
    state = pr(validation=None, status=None, mergeable=mergeable)
    if policy.merge == "auto" and mergeable is False:
        state = edit(validation=None, status=None, mergeable=False)  # dreams are closed instead
    seen = []
    for _ in range(12):
        action = decide(state, policy)
        seen.append(action.kind)
        if action.kind is Kind.NOTHING:
            break
        state = _act(state, action)
    assert Kind.MERGE in seen and Kind.PUBLISH_HEAD in seen and seen[-1] is Kind.NOTHING, seen
    assert state.merged and state.head_published


def test_a_resolution_is_merged_without_waiting_for_mergeability() -> None:
    """Right after a resolution the head contains the base and git's trial merge is clean:
    waiting for the forge to compute mergeability would only let another merge move main and
    spoil the resolution."""
    state = pr(mergeable=False)
    seen = []
    for _ in range(8):
        action = decide(state, EXPLICIT)
        seen.append(action.kind)
        if action.kind in (Kind.MERGE, Kind.NOTHING):
            break
        state = _act(state, action)
    assert seen == [Kind.RESOLVE, Kind.VALIDATE, Kind.MERGE], seen


# ------------------------------------------------------------------------------ whose review counts
@pytest.mark.parametrize(
    ("reviewer", "changes", "problem"),
    [
        ("pat", {}, None),
        ("Pat", {}, None),
        ("sam", {}, None),
        ("mo", {}, None),
        ("", {}, INTEGRATOR_REVIEW_NO_AUTHOR),
        (AUTHOR, {}, INTEGRATOR_REVIEW_BY_AUTHOR),
        (AUTHOR.upper(), {}, INTEGRATOR_REVIEW_BY_AUTHOR),
        (INTEGRATOR_LOGIN, {"permissions": ((INTEGRATOR_LOGIN, "admin"),)},
         INTEGRATOR_REVIEW_BY_INTEGRATOR),
        ("pat", {"commit_authors": ("bob", "pat")}, INTEGRATOR_REVIEW_BY_COMMIT_AUTHOR),
        ("tess", {}, INTEGRATOR_REVIEW_NOT_WRITER),
        ("rita", {}, INTEGRATOR_REVIEW_NOT_WRITER),
        ("nobody", {}, INTEGRATOR_REVIEW_NOT_WRITER),
        ("eve", {}, INTEGRATOR_REVIEW_NOT_WRITER),
        ("pat", {"permissions": ()}, INTEGRATOR_REVIEW_NOT_WRITER),
    ],
    ids=["writer", "writer-other-case", "admin", "maintainer", "no-author", "pr-author", "pr-author-case",
         "integrator", "commit-author", "triage", "read", "none", "unknown", "nothing-known"],
)
def test_whose_review_counts(reviewer: str, changes: dict[str, Any], problem: str | None) -> None:
    assert review_problem(approve(reviewer), pr(**changes)) == problem


def test_an_approval_counts_only_on_the_current_head() -> None:
    assert approved(pr(reviews=(approve("pat"),)))
    assert not approved(pr(reviews=(approve("pat", sha=OLD),)))
    assert not approved(pr(reviews=(approve("pat"),), head_sha=""))
