"""Carry out one `Action` of `decide`: statuses, comments, labels, closing, merging with the
expected head sha, resolving in the workspace, publishing the head event.

A person hears from the integrator on the pull request whenever it changes or ends one: a
resolution it pushed says what conflicted, how it was merged and what a person can do
(templates/integrator/resolved.md.j2), and a dream closed for a conflict lists the files both
sides changed (templates/integrator/conflicting-files.md.j2) after decide's comment.

Each function does what its action says and reports what the job does next (`Applied`):
decide again on a state it updated itself (the forge was only written to, so re-reading
would show nothing new), re-read the pull request (something moved), wait, or stop. Writes
are made so that doing one twice is harmless (statuses and labels are idempotent; a comment
or a close is only made by an action that the state after it no longer leads to), because a
job can be retried after a crash at any point.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from enum import Enum

from redis import Redis

from bot.config import Policy
from bot.contracts import DREAM_BRANCH_PREFIX, LABEL_CONFLICT, LABEL_NEEDS_REVIEW, STATUS_CONTEXT, is_dream_id
from bot.forge.client import ForgeClient
from bot.forge.shapes import PullRequest, StatusUpdate
from bot.integrator import texts
from bot.integrator.decide import merge_mode, review_needed
from bot.integrator.state import Action, Kind, LastMerge, PullState
from bot.integrator.workspace import Workspace
from bot.memfs import Resolver
from bot.notify.events import HeadEvent
from bot.notify.publisher import publish_head
from bot.pullrequest.provenance import ProvenanceError, parse_provenance
from bot.redis_keys import pr_key, published_key, resolution_tried_key
from bot.templating import render
from bot.texts import Text, plural

INTEGRATOR_RESOLVED_TODO_REVIEW = (
    "If it is right, approve it; if not, push a fix to this branch (it is validated again) or close the "
    "pull request."
)
INTEGRATOR_RESOLVED_TODO_MERGE = (
    "It reaches `{base}` without waiting for a review: if the result is wrong, fix the file on `{base}` in a "
    "reviewed pull request, or revert the merge."
)
INTEGRATOR_NOTE_VALIDATED = Text("validated {sha}: {count:|problem|problems}")
INTEGRATOR_NOTE_RESOLVE_STALE = "resolution of {sha} not pushed: the branch moved meanwhile"
INTEGRATOR_NOTE_RESOLVE_FAILED = Text("resolution of {sha} failed: {count:|conflict or problem|conflicts or problems}")

log = logging.getLogger("memrepo.integrator")

PUBLISHED_TTL = 30 * 24 * 3600
TRIED_TTL = 7 * 24 * 3600
MAX_CONFLICTS_LISTED = 20
TIDIED_LABELS = (LABEL_NEEDS_REVIEW, LABEL_CONFLICT)  # removed once the pull request is merged


class Next(Enum):
    """What the job does after an action."""

    DECIDE = "decide"  # decide again on the updated state, without re-reading
    REREAD = "reread"  # read the pull request again, then decide
    WAIT = "wait"  # come back after `delay` seconds
    STOP = "stop"  # nothing more to do until something happens


@dataclass(frozen=True)
class Applied:
    next: Next
    state: PullState | None = None
    delay: float = 0.0
    check_merged: bool = False
    note: str = ""  # one line for the history of attempts (the give-up comment lists them)


@dataclass
class Actor:
    """What acting on one pull request needs; `pull` is the pull request as last read."""

    repo: str
    client: ForgeClient
    workspace: Workspace
    redis: Redis
    pull: PullRequest
    policy: Policy
    resolver: Resolver | None = None
    ready: Callable[[int, str], None] | None = None  # merging by push: mark it ready for the next batch
    conflicts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    problems: tuple[str, ...] = ()


# ------------------------------------------------------------------------------------ Redis marks
def is_published(redis: Redis, repo: str, number: int) -> bool:
    return bool(redis.exists(published_key(repo, number)))


def resolution_tried(redis: Redis, repo: str, number: int, head_sha: str) -> bool:
    return bool(redis.exists(resolution_tried_key(repo, number, head_sha)))


# ------------------------------------------------------------------------------------ helpers
def dream_id_of(pull: PullRequest) -> str | None:
    """The dream a pull request carries: its provenance block, else its branch name."""
    try:
        provenance = parse_provenance(pull.body)
    except ProvenanceError:
        provenance = None
    if provenance is not None and is_dream_id(provenance.dream_id):
        return provenance.dream_id
    tail = pull.head_ref.removeprefix("refs/heads/").removeprefix(DREAM_BRANCH_PREFIX)
    return tail if pull.head_ref.removeprefix("refs/heads/").startswith(DREAM_BRANCH_PREFIX) and is_dream_id(
        tail) else None


def _status(actor: Actor, sha: str, state: str, description: str | None) -> None:
    actor.client.set_status(sha, StatusUpdate(state, STATUS_CONTEXT, description))


def _conflict_details(actor: Actor) -> str:
    lines = [f"- `{path}`: {why}" for path, whys in sorted(actor.conflicts.items()) for why in whys]
    lines += [f"- {problem}" for problem in actor.problems]
    if not lines:
        return ""
    shown = lines[:MAX_CONFLICTS_LISTED]
    if len(lines) > MAX_CONFLICTS_LISTED:
        shown.append(texts.INTEGRATOR_MORE.format(count=len(lines) - MAX_CONFLICTS_LISTED))
    return "\nWhat could not be merged automatically:\n\n{details}\n".format(details="\n".join(shown))


def _both_changed(actor: Actor, base: str, head: str) -> list[str]:
    """Files the branch at `head` and the base at `base` both changed since they parted."""
    ours = set(actor.workspace.changed_paths(base, head))
    theirs = set(actor.workspace.changed_paths(head, base))
    return sorted(ours & theirs)


def _say(actor: Actor, number: int, text: str) -> None:
    """A comment that tells, after the work it tells of is done: if it cannot be posted the
    work stands (a retry would find nothing left to do, and so nothing to say), so it is logged."""
    try:
        actor.client.comment(number, text)
    except Exception as exc:
        log.warning("%s: could not comment: %s", pr_key(actor.repo, number), exc)


def resolved_comment(state: PullState, policy: Policy, base_sha: str, pushed: str, paths: list[str],
                     notes: dict[str, tuple[str, ...]], resolver: str | None) -> str:
    """What the integrator says after pushing a resolution: what conflicted, how it was merged,
    what a person can do (which depends on whether a review still stands between it and main)."""
    base = state.base_ref or "main"
    review = review_needed(state, policy)
    after = "it is merged only once a person other than its author approves this new head." if review else \
        f"it is merged next, under the repository's merge mode (`{merge_mode(policy)}`)."
    todo = INTEGRATOR_RESOLVED_TODO_REVIEW if review else \
        INTEGRATOR_RESOLVED_TODO_MERGE.format(base=base)
    text = render("integrator/resolved.md.j2", base=base, base_sha=base_sha[:12], sha=pushed[:12],
                  branch=state.head_ref.removeprefix("refs/heads/"), paths=paths[:MAX_CONFLICTS_LISTED],
                  files=plural(len(paths), "file"),
                  notes=[f"`{path}`: {note}" for path, items in sorted(notes.items()) for note in items],
                  resolver=resolver, after=after, todo=todo)
    return text.rstrip("\n") + "\n"


# ------------------------------------------------------------------------------------ actions
def apply(actor: Actor, state: PullState, action: Action) -> Applied:
    """Do `action` for the pull request `state` describes."""
    handler = _HANDLERS[action.kind]
    return handler(actor, state, action)


def _nothing(actor: Actor, state: PullState, action: Action) -> Applied:
    return Applied(Next.STOP)


def _validate(actor: Actor, state: PullState, action: Action) -> Applied:
    verdict = actor.workspace.validate(state.base_sha, action.sha or state.head_sha)
    note = INTEGRATOR_NOTE_VALIDATED.format(sha=verdict.sha[:12], count=len(verdict.problems))
    return Applied(Next.DECIDE, replace(state, validation=verdict), note=note)


def _set_status(actor: Actor, state: PullState, action: Action) -> Applied:
    sha = action.sha or state.head_sha
    _status(actor, sha, action.status or "pending", action.description)
    if action.comment:
        actor.client.comment(state.number, action.comment)
    return Applied(Next.DECIDE, replace(state, status=action.status))


def _comment_and_close(actor: Actor, state: PullState, action: Action) -> Applied:
    if action.status and action.sha:
        _status(actor, action.sha, action.status, action.description)
    if action.comment:
        comment = action.comment
        if action.reason == texts.INTEGRATOR_WHY_CONFLICT_CLOSE and state.base_sha and state.head_sha:
            paths = _both_changed(actor, state.base_sha, state.head_sha)
            if paths:
                comment += render("integrator/conflicting-files.md.j2", base=state.base_ref or "main",
                                  paths=paths[:MAX_CONFLICTS_LISTED])
        actor.client.comment(state.number, comment)
    actor.client.close_pull_request(state.number)
    return Applied(Next.STOP, replace(state, state="closed"))


def _wait(actor: Actor, state: PullState, action: Action) -> Applied:
    return Applied(Next.WAIT, delay=action.delay, note=f"waited {action.delay:.1f}s: {action.reason}")


def _needs_review(actor: Actor, state: PullState, action: Action) -> Applied:
    missing = [label for label in action.labels if label not in state.labels]
    if missing:
        actor.client.add_labels(state.number, missing)
        if action.comment:  # said once: the labels are there now, so the next decision has none
            actor.client.comment(state.number, action.comment)
    if action.status and action.sha:
        _status(actor, action.sha, action.status, action.description)
    return Applied(Next.STOP)


def _merge(actor: Actor, state: PullState, action: Action) -> Applied:
    sha = action.sha or state.head_sha
    if actor.ready is not None:  # the batch merges it with exactly this head, or leaves it out
        actor.ready(state.number, sha)
        return Applied(Next.STOP, note=f"ready to merge at {sha[:12]} in the next batch")
    result = actor.client.merge(state.number, sha, method=action.method or "merge")
    log.info("%s: merge at %s: %s", pr_key(actor.repo, state.number), sha[:12], result.outcome.value)
    note = f"merge at {sha[:12]}: {result.outcome.value}"
    return Applied(Next.DECIDE, replace(state, last_merge=LastMerge.from_result(result)), note=note)


def _resolve(actor: Actor, state: PullState, action: Action) -> Applied:
    base = action.base_sha or state.base_sha
    head = action.sha or state.head_sha
    outcome = actor.workspace.resolve(base, head, state.head_ref, actor.policy, actor.resolver)
    if outcome.pushed:
        # The push succeeded, so the pull request's head is the resolution: decide on it now
        # rather than read it back. Anything that moved meanwhile makes the merge by head sha
        # fail (409/405), and that is re-read.
        pushed = outcome.pushed
        note = f"resolved conflicts with {base[:12]}: pushed {pushed[:12]}"
        resolved = replace(state, head_sha=pushed, validation=outcome.validation, status=None, mergeable=None,
                           mergeable_state=None, merges_cleanly=True, resolution_tried=False,
                           changed_paths=actor.workspace.changed_paths(base, pushed),
                           **actor.workspace.commit_facts(base, pushed, state.head_ref))  # type: ignore[arg-type]
        _say(actor, state.number, resolved_comment(
            resolved, actor.policy, base, pushed, _both_changed(actor, base, head), outcome.notes,
            getattr(actor.resolver, "name", None)))
        return Applied(Next.DECIDE, resolved, note=note)
    if outcome.stale:
        return Applied(Next.REREAD, note=INTEGRATOR_NOTE_RESOLVE_STALE.format(sha=head[:12]))
    actor.conflicts, actor.problems = outcome.conflicts, outcome.problems
    actor.redis.set(resolution_tried_key(actor.repo, state.number, head), "1", ex=TRIED_TTL)
    count = len(outcome.conflicts) or len(outcome.problems)
    return Applied(Next.DECIDE, replace(state, resolution_tried=True),
                   note=INTEGRATOR_NOTE_RESOLVE_FAILED.format(sha=head[:12], count=count))


def _mark_conflict(actor: Actor, state: PullState, action: Action) -> Applied:
    missing = [label for label in action.labels if label not in state.labels]
    if missing:
        actor.client.add_labels(state.number, missing)
        if action.comment:
            actor.client.comment(state.number, action.comment + _conflict_details(actor))
    return Applied(Next.STOP)


def _give_up(actor: Actor, state: PullState, action: Action) -> Applied:
    # Decide answers GIVE_UP for as long as the attempts stay exhausted; the comment is made
    # once, by the run that adds the label.
    missing = [label for label in action.labels if label not in state.labels]
    if missing:
        actor.client.add_labels(state.number, missing)
        if action.comment:
            actor.client.comment(state.number, action.comment)
    return Applied(Next.STOP)


def _publish(actor: Actor, state: PullState, action: Action) -> Applied:
    pull = actor.pull
    sha = action.sha or pull.merge_commit_sha
    if not sha:
        pull = actor.client.get_pull_request(state.number)
        sha = pull.merge_commit_sha
    if not sha:  # merged, but the forge does not say into what yet: look again shortly
        return Applied(Next.WAIT, delay=1.0)
    before = None
    try:  # one REST read, cheaper than fetching the merge into the workspace
        before = next(iter(actor.client.commit_parents(sha)), None)
    except Exception as exc:  # the event matters more than its `before`
        log.warning("%s: could not read the parent of %s: %s", pr_key(actor.repo, state.number), sha[:12], exc)
    event = HeadEvent(repo=actor.repo, sha=sha, before=before, cause="merge", pr=state.number,
                      dream_id=dream_id_of(pull))
    publish_head(actor.redis, event)
    actor.redis.set(published_key(actor.repo, state.number), sha, ex=PUBLISHED_TTL)
    tidy_labels(actor.client, actor.repo, state.number, pull.labels)
    return Applied(Next.STOP, replace(state, head_published=True))


def tidy_labels(client: ForgeClient, repo: str, number: int, labels: Collection[str]) -> None:
    """Remove the TIDIED_LABELS among `labels` from a merged pull request (optional: a failure
    is logged)."""
    for label in (label for label in TIDIED_LABELS if label in labels):
        try:
            client.remove_label(number, label)
        except Exception as exc:  # tidying labels of a merged pull request is optional
            log.info("%s: could not remove %s: %s", pr_key(repo, number), label, exc)


def _reread(actor: Actor, state: PullState, action: Action) -> Applied:
    return Applied(Next.REREAD, delay=action.delay, check_merged=action.check_merged,
                   note=f"re-read: {action.reason}")


_HANDLERS: dict[Kind, Callable[[Actor, PullState, Action], Applied]] = {
    Kind.NOTHING: _nothing,
    Kind.VALIDATE: _validate,
    Kind.SET_STATUS: _set_status,
    Kind.COMMENT_AND_CLOSE: _comment_and_close,
    Kind.WAIT: _wait,
    Kind.MARK_NEEDS_REVIEW: _needs_review,
    Kind.MERGE: _merge,
    Kind.RESOLVE: _resolve,
    Kind.MARK_CONFLICT: _mark_conflict,
    Kind.PUBLISH_HEAD: _publish,
    Kind.REREAD: _reread,
    Kind.GIVE_UP: _give_up,
}
