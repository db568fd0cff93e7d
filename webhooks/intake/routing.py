"""Which work a GitHub event calls for: a pure function of (event name, payload, settings),
so every row of the mapping is a table test and the HTTP shell stays thin.

The payload is only used to find *what* to look at (repository, pull request number, commit);
the integrator re-reads the actual state itself, so nothing here trusts payload state. The
numbers it reads (pull request numbers; the repository's and installation's ids when present)
must be what GitHub sends, positive and below 2**63, so a number no forge can have is a 400
here rather than a job that fails against the forge and is retried.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.contracts import is_object_name
from bot.queue import MAX_NUMBER
from bot.settings import Settings, is_repo_name

WEBHOOK_BAD_PAYLOAD = "the {event} payload has no valid {field}"
WEBHOOK_OUT_OF_RANGE = ("the {event} payload's {field} is out of range ({value}): GitHub's numbers and ids "
                        "are positive and below 2**63")
WEBHOOK_IGNORED_ACTION = "ignored: memrepo does not act on {event} events with action {action}"
WEBHOOK_IGNORED_REPO = "ignored: {repo} is not one of the repositories this receiver serves (MEMREPO_REPOS)"
WEBHOOK_IGNORED_OWN = "ignored: this {event} event was caused by the integrator itself ({login})"

ZERO_SHA = re.compile(r"0+")  # git's name for "no commit" (fullmatch: `$` also matches before "\n")

# Actions after which a pull request must be looked at again.
PULL_REQUEST_ACTIONS = frozenset(("opened", "synchronize", "reopened", "labeled", "unlabeled", "edited",
                                  "ready_for_review", "closed"))
REVIEW_ACTIONS = frozenset(("submitted", "dismissed"))
COMMENT_ACTIONS = frozenset(("created",))
CHECK_ACTIONS = frozenset(("completed",))
# (event, action) pairs the integrator causes itself (statuses, comments, labels, closing and
# merging, checks): acting on them again would loop. None stands for every action. Pushes are
# never here (a merge by the bot moves main, and agents must hear of it), nor are opened /
# synchronize / reopened / ready_for_review (a dreamer acting as the App opens pull requests,
# and the integrator's own conflict resolutions must be validated again).
SELF_CAUSED: frozenset[tuple[str, str | None]] = frozenset((
    ("status", None), ("issue_comment", None), ("pull_request_review", None), ("check_run", None),
    ("check_suite", None), ("pull_request", "labeled"), ("pull_request", "unlabeled"),
    ("pull_request", "edited"), ("pull_request", "closed"),
))


class BadPayload(ValueError):
    """A signed delivery whose payload lacks what its event must carry (answered 400)."""


@dataclass(frozen=True)
class Integrate:
    repo: str
    number: int


@dataclass(frozen=True)
class IntegrateCommit:
    """The pull requests whose head is `sha` (a status or check payload does not name them)."""

    repo: str
    sha: str


@dataclass(frozen=True)
class PublishHead:
    repo: str
    before: str | None
    after: str
    sender: str | None


@dataclass(frozen=True)
class Reconcile:
    repo: str


@dataclass(frozen=True)
class ForgetPermissions:
    """Who may write changed: drop the cached permissions on `owner/repo`, or on every
    repository of `owner` when `repo` is None (an organisation's members or teams changed)."""

    owner: str
    repo: str | None = None


Action = Integrate | IntegrateCommit | PublishHead | Reconcile | ForgetPermissions

# GitHub's events that say someone's access changed: a collaborator added, removed or given
# another permission (`member`), a team's members (`membership`), an organisation's members
# (`organization`), a team's repositories or permission (`team`).
ACCESS_EVENTS = frozenset(("member", "membership", "organization", "team"))
OWNER_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")


@dataclass(frozen=True)
class Route:
    """The actions for one delivery, or none and the reason (`ignored`, a sentence)."""

    actions: tuple[Action, ...] = ()
    ignored: str | None = None


def _ignore(message: str) -> Route:
    return Route((), message)


def _get(payload: Mapping[str, Any], *path: str) -> Any:
    value: Any = payload
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _number(value: Any, event: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadPayload(WEBHOOK_BAD_PAYLOAD.format(event=event, field=field))
    if not 1 <= value <= MAX_NUMBER:
        shown = str(value) if len(str(value)) <= 24 else f"{str(value)[:12]}... ({len(str(value))} digits)"
        raise BadPayload(WEBHOOK_OUT_OF_RANGE.format(event=event, field=field, value=shown))
    return value


def _ids(event: str, payload: Mapping[str, Any]) -> None:
    """The ids a payload names its repository and installation by, checked when present."""
    for owner in ("repository", "installation"):
        subject = payload.get(owner)
        if isinstance(subject, Mapping) and "id" in subject:
            _number(subject["id"], event, f"{owner}.id")


def _sha(value: Any, event: str, field: str) -> str:
    """A commit's full name as git writes it (lower case); GitHub may send it in upper case."""
    lowered = value.lower() if isinstance(value, str) and value.isascii() else None
    if not is_object_name(lowered):
        raise BadPayload(WEBHOOK_BAD_PAYLOAD.format(event=event, field=field))
    return lowered


def route(event: str, payload: Mapping[str, Any], settings: Settings) -> Route:
    """The work `event` calls for. Raises BadPayload for a payload that is not shaped like the
    event's."""
    _ids(event, payload)
    action = payload.get("action") if isinstance(payload.get("action"), str) else None
    if event in ACCESS_EVENTS:
        return _access(event, payload, settings)
    repo = _get(payload, "repository", "full_name")
    if not is_repo_name(repo):
        return _ignore(f"ignored: this {event} event is not about one repository")
    if not settings.accepts(repo):
        return _ignore(WEBHOOK_IGNORED_REPO.format(repo=repo))
    sender = _get(payload, "sender", "login")
    sender = sender if isinstance(sender, str) else None
    if event == "push":
        return _push(repo, payload, sender)
    if settings.is_bot(sender) and ((event, None) in SELF_CAUSED or (event, action) in SELF_CAUSED):
        return _ignore(WEBHOOK_IGNORED_OWN.format(event=event, login=sender))
    if event == "pull_request":
        if action not in PULL_REQUEST_ACTIONS:
            return _ignore(WEBHOOK_IGNORED_ACTION.format(event=event, action=action))
        number = payload.get("number", _get(payload, "pull_request", "number"))
        return Route((Integrate(repo, _number(number, event, "number")),))
    if event == "pull_request_review":
        if action not in REVIEW_ACTIONS:
            return _ignore(WEBHOOK_IGNORED_ACTION.format(event=event, action=action))
        number = _get(payload, "pull_request", "number")
        return Route((Integrate(repo, _number(number, event, "pull_request.number")),))
    if event == "issue_comment":
        if action not in COMMENT_ACTIONS:
            return _ignore(WEBHOOK_IGNORED_ACTION.format(event=event, action=action))
        if not _get(payload, "issue", "pull_request"):
            return _ignore("ignored: a comment on an issue, not on a pull request")
        return Route((Integrate(repo, _number(_get(payload, "issue", "number"), event, "issue.number")),))
    if event == "status":
        return Route((IntegrateCommit(repo, _sha(payload.get("sha"), event, "sha")),))
    if event in ("check_suite", "check_run"):
        if action not in CHECK_ACTIONS:
            return _ignore(WEBHOOK_IGNORED_ACTION.format(event=event, action=action))
        return _check(repo, event, payload)
    return _ignore(f"ignored: memrepo does not act on {event} events")


def _access(event: str, payload: Mapping[str, Any], settings: Settings) -> Route:
    """Someone's access changed: forget what is cached for the repository the event names, or
    else for every repository of its organisation, so the next approval is weighed on the
    forge's answer of now (the integrator also reads a merging approval's permission afresh)."""
    repo = _get(payload, "repository", "full_name")
    if is_repo_name(repo):
        if not settings.accepts(repo):
            return _ignore(WEBHOOK_IGNORED_REPO.format(repo=repo))
        owner, _, name = repo.partition("/")
        return Route((ForgetPermissions(owner, name),))
    org = _get(payload, "organization", "login")
    if isinstance(org, str) and OWNER_NAME.fullmatch(org):
        return Route((ForgetPermissions(org),))
    raise BadPayload(WEBHOOK_BAD_PAYLOAD.format(event=event, field="organization.login"))


def _push(repo: str, payload: Mapping[str, Any], sender: str | None) -> Route:
    """A push to the default branch moves memory's HEAD: publish it (whoever pushed, the
    integrator's merges included) and look at the open pull requests again, whose
    mergeability may have changed with no event of their own. Other branches are covered by
    `pull_request synchronize`."""
    branch = _get(payload, "repository", "default_branch") or _get(payload, "repository", "master_branch") or "main"
    ref = payload.get("ref")
    if not isinstance(ref, str):
        raise BadPayload(WEBHOOK_BAD_PAYLOAD.format(event="push", field="ref"))
    if ref != f"refs/heads/{branch}":
        return _ignore(f"ignored: a push to {ref}, not to the default branch {branch}")
    after = payload.get("after")
    if payload.get("deleted") is True or (isinstance(after, str) and ZERO_SHA.fullmatch(after)):
        return _ignore(f"ignored: the default branch {branch} was deleted")
    after = _sha(after, "push", "after")
    before = payload.get("before")
    before = None if before is None or (isinstance(before, str) and ZERO_SHA.fullmatch(before)) else _sha(
        before, "push", "before")
    return Route((PublishHead(repo, before, after, sender), Reconcile(repo)))


def _check(repo: str, event: str, payload: Mapping[str, Any]) -> Route:
    """A check finished: its pull requests if the payload lists them, else whichever open
    pull requests have its head commit."""
    subject = _get(payload, event)
    pulls = _get(subject, "pull_requests") if isinstance(subject, Mapping) else None
    numbers = []
    for pull in pulls if isinstance(pulls, list) else []:
        number = _number(_get(pull, "number"), event, f"{event}.pull_requests.number")
        if number not in numbers:
            numbers.append(number)
    if numbers:
        return Route(tuple(Integrate(repo, n) for n in numbers))
    return Route((IntegrateCommit(repo, _sha(_get(subject, "head_sha"), event, f"{event}.head_sha")),))
