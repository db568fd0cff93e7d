"""The integrator's decision: one pure function from the pull request as re-read now (and the
policy at its base) to the one action to take. docs/architecture.md §6.2 is the table it implements.

Order of the checks, and why:
1. not a memrepo pull request -> nothing (the bot only touches what memrepo opened);
2. a merge answer that came after the state was read: merged -> publish; refused or lost ->
   re-read (the state in hand is stale, so nothing else is decided from it);
3. a base other than the repository's default branch -> nothing (a retarget away from it is
   left to people, and its merge is never published as the memory's head);
   merged -> publish the head event once; closed -> nothing; a head from another repository
   (a fork) or an author the forge does not let write -> nothing (`authority_problem`: a
   label or a branch name is never authority); draft -> nothing;
4. attempts exhausted -> give up (comment, `memrepo:conflict`), so no job loops forever;
5. no validation for exactly this head -> validate; invalid -> failure status and comment
   (dreams are closed, anything else stays open for a person);
6. mergeability: GitHub's answer, or while it is still computing, git's own trial merge of
   the fetched commits (so a resolution is merged before anything else moves main, and a
   burst does not wait on GitHub); neither known -> wait with a short backoff; not mergeable
   -> close (`auto` dreams) or resolve once per head, then `memrepo:conflict` for a person.
   Conflicts come before reviews, so a person reviews the resolved version and an approval is
   not spent on a head about to move;
7. review needed and no approval of this head that counts (`review_problem`: by a writer who
   is not the author, a commit's author or the integrator; `approval_problem`: nor anyone who
   pushed to the branch, and only while who pushed is known), or changes requested by one ->
   `memrepo:needs-review` and a pending status (and `memrepo:untrusted`, with a comment naming
   the sources, when the commits name external sources but the label is missing);
8. status not yet success -> set it (branch protection may require it); then merge with the
   head sha, which GitHub refuses if the head moved since.

Decisions beyond the table (documented in the report and tests):
- `auto` closes only dreams on conflict: a dream's transcript is covered again by a later
  dream, an agent edit's change would be lost, so agent edits are resolved as in `explicit`.
- a CHANGES_REQUESTED review (latest per reviewer, any commit) blocks the merge in every mode:
  a person asked to stop, and `auto` does not overrule them.
- an unknown merge mode is treated as `review`, the strictest.
- untrusted content is known from the commits (`PullState.untrusted_sources`, their `Source:
  external:...` trailers) as well as from the `memrepo:untrusted` label: either one needs a
  person's approval, so neither a pull request opened before its labels were set nor one whose
  label was removed can be merged without it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import replace

from bot.config import Policy, protected_paths, rule_files
from bot.contracts import (
    DREAM_BRANCH_PREFIX,
    EDIT_BRANCH_PREFIX,
    LABEL_AGENT_EDIT,
    LABEL_CONFLICT,
    LABEL_DREAM,
    LABEL_NEEDS_REVIEW,
    LABEL_PREFIX,
    LABEL_UNTRUSTED,
)
from bot.integrator import texts
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
)
from bot.texts import Text

# Why decide chose its action (logs and the CLI).
INTEGRATOR_WHY_NOT_MEMREPO = "not a memrepo pull request (no memrepo: label, no memrepo/dream/ or memrepo/edit/ branch)"
INTEGRATOR_WHY_GIVE_UP = Text(
    "{attempts:|attempt|attempts} made, the limit is {limit}: giving up and leaving it for a person"
)
INTEGRATOR_WHY_UNKNOWN = "the merge's answer was lost and whether it merged is unknown: ask again before anything else"
INTEGRATOR_WHY_NOT_MERGED_LOST = "the merge's answer was lost and GitHub says it did not merge: re-read, decide again"
INTEGRATOR_WHY_NOT_MERGED = "the merge was not made (refused or rate limited): re-read and decide again"
INTEGRATOR_WHY_REFUSED = "the merge was refused ({answer}): re-read and decide again"
INTEGRATOR_WHY_INVALID_CLOSE = "the dream does not validate: failure status, comment, close (its cursor stays)"
INTEGRATOR_WHY_INVALID_OPEN = "does not validate: failure status and comment; left open for a person"
INTEGRATOR_WHY_RESOLVE = "conflicts with its base under merge: {mode}: bring the base into the branch and resolve"
INTEGRATOR_WHY_CONFLICT_MARK = "conflicts with its base and resolving them failed for this head"
INTEGRATOR_WHY_REVIEW = (
    "needs an approving review of this head by someone who may write to the repository, other than its author, "
    "the authors of its commits and whoever pushed to its branch"
)
INTEGRATOR_WHY_FORK = (
    "its head is a branch of {head}, not of {base}: the integrator acts only on branches of the repository itself "
    "(a person may merge it)"
)
INTEGRATOR_WHY_NOT_WRITER = (
    "opened by {author}, whose permission on the repository is '{permission}': the integrator acts only for "
    "those who may write (a person may merge it)"
)
# Why a review does not count towards an approval.
INTEGRATOR_REVIEW_NO_AUTHOR = "it has no author"
INTEGRATOR_REVIEW_BY_AUTHOR = "it is by the pull request's author"
INTEGRATOR_REVIEW_BY_INTEGRATOR = "it is by the integrator"
INTEGRATOR_REVIEW_BY_COMMIT_AUTHOR = "it is by the author of a commit on the pull request"
INTEGRATOR_REVIEW_NOT_WRITER = "its author may not write to the repository"
INTEGRATOR_REVIEW_BY_PUSHER = "it is by someone who pushed to the pull request's branch"
INTEGRATOR_REVIEW_PUSHER_UNKNOWN = (
    "who pushed the pull request's head is not known (the forge's repository activity does not say), so no "
    "approval counts"
)
INTEGRATOR_WHY_NOT_DEFAULT_BRANCH = (
    "its base is {base}, not the repository's default branch {default}: the integrator merges only into the "
    "default branch (a person may merge it)"
)
INTEGRATOR_WHY_UNTRUSTED = (
    "its commits name content from outside the conversation ({sources}): needs an approving review of this "
    "head by someone who may write, other than its author"
)
INTEGRATOR_WHY_STATUS_SUCCESS = "valid: the memrepo/validate status says so before the merge"
INTEGRATOR_WHY_MERGE = "valid, mergeable and approved where needed: merge with the head sha"
# Commit status descriptions (at most 140 characters).
INTEGRATOR_STATUS_VALID = "memory is valid"
INTEGRATOR_STATUS_INVALID = Text("{count:|problem|problems}: {first}")
INTEGRATOR_STATUS_AUTHOR_MERGE = "valid; waits for a review, or for its author to merge it (review.allow_author_merge)"
INTEGRATOR_NOTHING_LISTED = "(none given)"
INTEGRATOR_INVALID_COMMENT = """\
**memrepo could not merge this: the memory at {sha} does not validate.**

{problems}

{outcome}
"""
INTEGRATOR_INVALID_CLOSED = (
    "This dream is closed. Its transcript cursor did not move, so a later dream covers the same messages again. "
    "Nothing needs doing; if a rule above is what should change, change it in `.memrepo/config.yml` in a "
    "reviewed commit, and the next dream is checked against it."
)
INTEGRATOR_INVALID_OPEN = "It stays open: push a fix to this branch and it is validated again."
INTEGRATOR_CONFLICT_CLOSED_COMMENT = """\
**memrepo closed this dream: it conflicts with `{base}`**, and the repository's merge mode is `auto`,
which closes a conflicting dream rather than resolve it. Its transcript cursor did not move, so a later
dream covers the same messages again, starting from the current `{base}`.

What you can do: nothing, and the next dream redoes this on top of `{base}`; or, to have memrepo resolve
conflicts instead, set `merge: explicit` (or `review`) in `.memrepo/config.yml` in a reviewed commit.
"""
INTEGRATOR_CONFLICT_COMMENT = """\
**memrepo could not resolve the conflicts between this branch (at {sha}) and `{base}`.**

Labelled `{label}` and left open for a person: merge `{base}` into this branch, fix the conflicts and
push; the result is validated again and merged under the repository's merge policy.
"""
INTEGRATOR_UNTRUSTED_COMMENT = """\
**memrepo will not merge this without a person's approval.** Its commits say, in their `Source`
trailers, that they were made from content from outside the conversation:

{sources}

Such content can carry instructions aimed at the agent rather than at you. Labelled `{label}`; the
approval is needed whatever the labels say. Approve only if the change is what the user wants; close
the pull request otherwise.
"""
INTEGRATOR_GIVE_UP_COMMENT = Text("""\
**memrepo gave up on this pull request after {attempts:|attempt|attempts}.** What was tried:

{history}

Labelled `{label}` and left open for a person. Any new push or review starts over.
""")
INTEGRATOR_WHY_MERGE_BATCH = "valid, mergeable and approved where needed: merge in the next batch with head sha"

STATUS_DESCRIPTION_CHARS = 140  # GitHub refuses longer commit status descriptions
MAX_LISTED = 20  # problems or history lines listed in one comment
SOURCE_CHARS = 200  # of one external source named in a comment or a reason
WRITE_PERMISSIONS = frozenset({"write", "maintain", "admin"})


# ------------------------------------------------------------------------------- what a pull request is
def _branch(ref: str) -> str:
    return ref.removeprefix("refs/heads/")


def is_memrepo_pull(head_ref: str, labels: Iterable[str]) -> bool:
    """Opened by memrepo: any `memrepo:` label, or a dream or agent-edit branch (over plain
    data: the review queue sorts with the integrator's own test)."""
    return any(label.startswith(LABEL_PREFIX) for label in labels) or _branch(head_ref).startswith(
        (DREAM_BRANCH_PREFIX, EDIT_BRANCH_PREFIX))


def writer_claims(head_ref: str, labels: Collection[str]) -> tuple[bool, bool]:
    """(says it is a dream, says it is an agent's edit), each by a label or a branch. Claims
    only: anyone who may open a pull request can make them."""
    branch = _branch(head_ref)
    return (LABEL_DREAM in labels or branch.startswith(DREAM_BRANCH_PREFIX),
            LABEL_AGENT_EDIT in labels or branch.startswith(EDIT_BRANCH_PREFIX))


def is_memrepo(state: PullState) -> bool:
    return is_memrepo_pull(state.head_ref, state.labels)


def claims_dream(state: PullState) -> bool:
    """Says it is a dream and not also an agent's edit (which nothing would redo)."""
    dream, edit = writer_claims(state.head_ref, state.labels)
    return dream and not edit


def claims_writer(state: PullState) -> bool:
    """Says it is a dream's or an agent edit's (a label or a branch)."""
    return any(writer_claims(state.head_ref, state.labels))


def is_dream(state: PullState) -> bool:
    """A dream that can be closed and dreamt again: it claims to be one and its commits show
    it. A claim its commits do not bear out is a person's pull request."""
    return claims_dream(state) and state.claim_shown


def may_write(permission: str | None) -> bool:
    """GitHub's permissions that can push: `write`, `maintain` and `admin`."""
    return (permission or "").lower() in WRITE_PERMISSIONS


def _same(login: str, logins: Iterable[str]) -> bool:
    who = login.casefold()
    return bool(who) and any(who == other.casefold() for other in logins if other)


def authority_problem(state: PullState) -> str | None:
    """Why the integrator may not act for this pull request, or None. It acts only for a
    branch of this very repository (a fork's head is the fork owner's) opened by someone
    the forge lets write, or by the integrator itself."""
    head, base = state.head_repo.casefold(), state.base_repo.casefold()
    if not head or head != base:
        return INTEGRATOR_WHY_FORK.format(head=state.head_repo or "?", base=state.base_repo or "?")
    if not (may_write(state.author_permission) or _same(state.author, state.integrator)):
        return INTEGRATOR_WHY_NOT_WRITER.format(author=state.author or "?",
                                                      permission=state.author_permission or "none")
    return None


def merge_mode(policy: Policy) -> str:
    mode = policy.merge
    return mode if mode in ("auto", "explicit", "review") else "review"


def review_needed(state: PullState, policy: Policy) -> bool:
    """Policy `review`, a protected path or a rule file touched, content from an untrusted
    source (named by the commits' `Source` trailers, or marked by the label), or a claim to be
    a dream or an agent's edit that its commits do not show."""
    return (merge_mode(policy) == "review" or bool(state.untrusted_sources) or LABEL_UNTRUSTED in state.labels
            or bool(protected_paths(state.changed_paths, policy.protected)) or bool(rule_files(state.changed_paths))
            or (claims_writer(state) and not state.claim_shown))


def review_problem(review: Review, state: PullState) -> str | None:
    """Why a review does not count, or None (the table GitHub's own required reviews keep):
    its author must be someone the forge lets write, neither the pull request's author nor
    the author of any commit on it, and not the integrator itself. Whether an approval was
    given on the current head is asked apart (`approved`): a request for changes on an older
    head still stands until it is dismissed or replaced."""
    who = review.author
    if not who:
        return INTEGRATOR_REVIEW_NO_AUTHOR
    if _same(who, (state.author,)):
        return INTEGRATOR_REVIEW_BY_AUTHOR
    if _same(who, state.integrator):
        return INTEGRATOR_REVIEW_BY_INTEGRATOR
    if _same(who, state.commit_authors):
        return INTEGRATOR_REVIEW_BY_COMMIT_AUTHOR
    if not may_write(dict((k.casefold(), v) for k, v in state.permissions).get(who.casefold())):
        return INTEGRATOR_REVIEW_NOT_WRITER
    return None


def approval_problem(review: Review, state: PullState) -> str | None:
    """Why an approval does not count beyond `review_problem`, or None: GitHub's "require
    approval of the most recent reviewable push" says the last pusher may not approve. A
    commit's author is whoever its committer typed (an address linked to no account names
    nobody), so the pusher is the only sure name of who brought a commit: here nobody who
    pushed to the head branch approves it, and when who pushed is not known (`pushers` is
    None) no approval counts. A change request is not subject to this: it blocks whoever
    pushed."""
    problem = review_problem(review, state)
    if problem is not None:
        return problem
    if state.pushers is None:
        return INTEGRATOR_REVIEW_PUSHER_UNKNOWN
    if _same(review.author, state.pushers):
        return INTEGRATOR_REVIEW_BY_PUSHER
    return None


def on_default_branch(state: PullState) -> bool:
    """Its base is the repository's default branch, the memory agents follow."""
    return bool(state.default_branch) and _branch(state.base_ref) == state.default_branch


def latest_reviews(reviews: Iterable[Review], author: str) -> dict[str, Review]:
    """The review that counts for each reviewer other than the author: their latest approval
    or change request (comments do not change it; a dismissal clears it), as GitHub does.
    Logins compare case-insensitively, as GitHub's do."""
    by_reviewer: dict[str, Review] = {}
    me = author.casefold()
    for review in sorted(reviews, key=lambda r: r.order):
        who = review.author.casefold()
        if not who or who == me:
            continue
        state = review.state.upper()
        if state in ("APPROVED", "CHANGES_REQUESTED"):
            by_reviewer[who] = review
        elif state == "DISMISSED":
            by_reviewer.pop(who, None)
    return by_reviewer


def counted_reviews(state: PullState) -> list[Review]:
    """Each reviewer's latest review, of the reviewers whose reviews count."""
    return [r for r in latest_reviews(state.reviews, state.author).values() if review_problem(r, state) is None]


def changes_requested(state: PullState) -> bool:
    return any(r.state.upper() == "CHANGES_REQUESTED" for r in counted_reviews(state))


def approved(state: PullState) -> bool:
    """Approved for exactly the current head by someone whose approval counts (neither the
    author, a commit's author, the integrator nor a pusher of the branch), and no counting
    reviewer's latest review requests changes."""
    latest = counted_reviews(state)
    if any(r.state.upper() == "CHANGES_REQUESTED" for r in latest):
        return False
    return bool(state.head_sha) and any(
        r.state.upper() == "APPROVED" and r.commit_id == state.head_sha and approval_problem(r, state) is None
        for r in latest)


def backoff(attempts: int, tuning: Tuning) -> float:
    """Seconds before the next look: doubling from `wait_base`, capped at `wait_cap`."""
    step = max(0, min(attempts, 32))
    return float(max(0.0, min(tuning.wait_cap, tuning.wait_base * (2 ** step))))


# ------------------------------------------------------------------------------------------- text
def _listed(lines: Iterable[str]) -> str:
    items = [" ".join(str(line).split()) for line in lines]
    shown = [f"- {item}" for item in items[:MAX_LISTED] if item]
    if len(items) > MAX_LISTED:
        shown.append(texts.INTEGRATOR_MORE.format(count=len(items) - MAX_LISTED))
    return "\n".join(shown) or f"- {INTEGRATOR_NOTHING_LISTED}"


def _description(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= STATUS_DESCRIPTION_CHARS:
        return text
    return text[: STATUS_DESCRIPTION_CHARS - 1] + "…"


def _source(text: str) -> str:
    """A source named by a commit, inert inside a markdown code span on one line (the commit
    may have been written by anyone), and of a length a comment can show."""
    flat = " ".join(text.split()).replace("`", "'").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return flat if len(flat) <= SOURCE_CHARS else flat[: SOURCE_CHARS - 1] + "…"


def _invalid_texts(state: PullState, closing: bool) -> tuple[str, str]:
    problems = state.validation.problems if state.validation else ()
    first = " ".join(str(problems[0]).split()) if problems else INTEGRATOR_NOTHING_LISTED
    description = _description(INTEGRATOR_STATUS_INVALID.format(count=len(problems), first=first))
    outcome = INTEGRATOR_INVALID_CLOSED if closing else INTEGRATOR_INVALID_OPEN
    comment = INTEGRATOR_INVALID_COMMENT.format(
        sha=state.head_sha[:12], problems=_listed(problems), outcome=outcome)
    return description, comment


# ------------------------------------------------------------------------------------------ rows
def _publish(state: PullState, sha: str | None) -> Action:
    if state.head_published:
        return Action(Kind.NOTHING, "merged, and its head event was published")
    return Action(Kind.PUBLISH_HEAD, "merged; the head event is not published yet", sha=sha or state.merge_commit_sha)


def _give_up(state: PullState, tuning: Tuning) -> Action:
    comment = INTEGRATOR_GIVE_UP_COMMENT.format(
        attempts=state.attempts, history=_listed(state.history), label=LABEL_CONFLICT)
    return Action(Kind.GIVE_UP, INTEGRATOR_WHY_GIVE_UP.format(attempts=state.attempts,
                                                                      limit=tuning.max_attempts),
                  sha=state.head_sha or None, comment=comment, labels=(LABEL_CONFLICT,))


def _after_merge(state: PullState, last: LastMerge, tuning: Tuning) -> Action:
    """The merge answered after this state was read: only a merge is believed; anything else
    means the state is stale, so read it again (asking first whether it merged if unsure)."""
    if last.answer.merged:
        return _publish(state, last.sha)
    if state.attempts >= tuning.max_attempts:
        return _give_up(state, tuning)
    if last.answer is MergeAnswer.UNKNOWN:
        return Action(Kind.REREAD, INTEGRATOR_WHY_UNKNOWN, delay=backoff(state.attempts, tuning),
                      check_merged=True)
    if last.answer is MergeAnswer.NOT_MERGED:
        wait = last.retry_after if last.retry_after is not None and last.retry_after > 0 else 0.0
        reason = INTEGRATOR_WHY_NOT_MERGED_LOST if last.lost else INTEGRATOR_WHY_NOT_MERGED
        return Action(Kind.REREAD, reason, delay=float(min(wait, 3600.0)))
    return Action(Kind.REREAD, INTEGRATOR_WHY_REFUSED.format(answer=last.answer.value))


def _invalid(state: PullState) -> Action:
    if is_dream(state):
        description, comment = _invalid_texts(state, closing=True)
        return Action(Kind.COMMENT_AND_CLOSE, INTEGRATOR_WHY_INVALID_CLOSE, sha=state.head_sha,
                      status="failure", description=description, comment=comment)
    if state.status == "failure":
        return Action(Kind.NOTHING, "does not validate and says so; waiting for a person to push a fix")
    description, comment = _invalid_texts(state, closing=False)
    return Action(Kind.SET_STATUS, INTEGRATOR_WHY_INVALID_OPEN, sha=state.head_sha,
                  status="failure", description=description, comment=comment)


def _not_mergeable(state: PullState, policy: Policy) -> Action:
    mode = merge_mode(policy)
    if mode == "auto" and is_dream(state):
        return Action(Kind.COMMENT_AND_CLOSE, texts.INTEGRATOR_WHY_CONFLICT_CLOSE, sha=state.head_sha,
                      comment=INTEGRATOR_CONFLICT_CLOSED_COMMENT.format(base=state.base_ref or "main"))
    if not state.resolution_tried:
        return Action(Kind.RESOLVE, INTEGRATOR_WHY_RESOLVE.format(mode=mode), sha=state.head_sha,
                      base_sha=state.base_sha or None)
    if LABEL_CONFLICT not in state.labels:
        return Action(Kind.MARK_CONFLICT, INTEGRATOR_WHY_CONFLICT_MARK, sha=state.head_sha,
                      labels=(LABEL_CONFLICT,),
                      comment=INTEGRATOR_CONFLICT_COMMENT.format(
                          base=state.base_ref or "main", sha=state.head_sha[:12], label=LABEL_CONFLICT))
    return Action(Kind.NOTHING, "conflicts marked for a person; waiting for a push")


def _resolved_in_batch(state: PullState, policy: Policy, tuning: Tuning) -> bool:
    """A conflict with the base that the batch resolves in the merge commit itself rather than
    on the pull request's branch: merging by push, no person to review the resolution first,
    not an `auto` dream (closed and dreamt again instead), and not already tried at this head."""
    return (tuning.merge_by_push and not state.resolution_tried and not review_needed(state, policy)
            and not changes_requested(state) and not (merge_mode(policy) == "auto" and is_dream(state)))


def _needs_review(state: PullState, policy: Policy) -> Action:
    """Mark it as waiting for a person: `memrepo:needs-review`, a pending status, and when its
    commits name external sources, `memrepo:untrusted` too (with a comment the first time the
    label has to be added: the pull request was opened without it, or it was removed). Where
    the policy lets the author merge (`review.allow_author_merge`: one account for the person
    and their agents, which the forge lets approve nothing it opened), the status is success
    instead, so a branch protection that requires it does not stop that person's own merge;
    the integrator itself still merges only what a review counts for."""
    labels = (LABEL_NEEDS_REVIEW, LABEL_UNTRUSTED) if state.untrusted_sources else (LABEL_NEEDS_REVIEW,)
    status = "success" if policy.review.allow_author_merge else "pending"
    if all(label in state.labels for label in labels) and state.status == status:
        return Action(Kind.NOTHING, "marked as waiting for review")
    comment = None
    if state.untrusted_sources and LABEL_UNTRUSTED not in state.labels:
        comment = INTEGRATOR_UNTRUSTED_COMMENT.format(
            sources=_listed(f"`{_source(s)}`" for s in state.untrusted_sources), label=LABEL_UNTRUSTED)
    if changes_requested(state):
        why = "a reviewer requested changes"
    elif state.untrusted_sources:
        why = INTEGRATOR_WHY_UNTRUSTED.format(
            sources=", ".join(_source(s) for s in state.untrusted_sources[:MAX_LISTED]))
    else:
        why = INTEGRATOR_WHY_REVIEW
    description = INTEGRATOR_STATUS_AUTHOR_MERGE if policy.review.allow_author_merge \
        else "waiting for review"
    return Action(Kind.MARK_NEEDS_REVIEW, why, sha=state.head_sha, labels=labels, status=status,
                  description=description, comment=comment)


def decide(state: PullState, policy: Policy, tuning: Tuning = DEFAULT_TUNING) -> Action:
    """The one action for this pull request now. Total: any state gives an action.

    MERGE is returned only for an open, non-draft pull request whose validation is valid for
    exactly the current head sha, that GitHub reports mergeable (or, while GitHub has no
    answer yet, that merges cleanly in git's trial merge), whose base is the repository's
    default branch, and that is approved by someone other than its author, its commits' authors
    and its branch's pushers where a review is needed; it carries that head sha.
    """
    if not is_memrepo(state):
        return Action(Kind.NOTHING, INTEGRATOR_WHY_NOT_MEMREPO)
    if not on_default_branch(state):
        return Action(Kind.NOTHING, INTEGRATOR_WHY_NOT_DEFAULT_BRANCH.format(
            base=_branch(state.base_ref) or "?", default=state.default_branch or "?"))
    if state.last_merge is not None and state.last_merge.answer.merged:
        return _publish(state, state.last_merge.sha)
    if state.merged:
        return _publish(state, state.merge_commit_sha)
    if state.state != "open":
        return Action(Kind.NOTHING, "closed without merging")
    if state.last_merge is not None:
        return _after_merge(state, state.last_merge, tuning)
    refused = authority_problem(state)
    if refused is not None:
        return Action(Kind.NOTHING, refused)
    if state.draft:
        return Action(Kind.NOTHING, "a draft; nothing is done until it is ready for review")
    if state.attempts >= tuning.max_attempts:
        return _give_up(state, tuning)
    if not state.head_sha:
        return Action(Kind.WAIT, "the head sha is not known yet", delay=backoff(state.attempts, tuning))
    validation = state.validation
    if validation is None or validation.sha != state.head_sha:
        return Action(Kind.VALIDATE, "no validation result for the current head", sha=state.head_sha)
    if not validation.valid:
        return _invalid(state)
    mergeable = state.mergeable if state.mergeable is not None else state.merges_cleanly
    if mergeable is None:
        return Action(Kind.WAIT, "GitHub is still computing whether it can be merged",
                      delay=backoff(state.attempts, replace(tuning, wait_base=tuning.mergeable_wait_base)))
    if mergeable is False and not _resolved_in_batch(state, policy, tuning):
        return _not_mergeable(state, policy)
    if (review_needed(state, policy) and not approved(state)) or changes_requested(state):
        return _needs_review(state, policy)
    if tuning.merge_by_push:  # nobody reads a status on a pull request merged at once
        return Action(Kind.MERGE, INTEGRATOR_WHY_MERGE_BATCH, sha=state.head_sha, method=MERGE_METHOD,
                      base_sha=state.base_sha or None)
    if state.status != "success":
        return Action(Kind.SET_STATUS, INTEGRATOR_WHY_STATUS_SUCCESS, sha=state.head_sha,
                      status="success", description=INTEGRATOR_STATUS_VALID)
    return Action(Kind.MERGE, INTEGRATOR_WHY_MERGE, sha=state.head_sha, method=MERGE_METHOD)
