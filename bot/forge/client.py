"""The forge client: the one narrow interface memrepo uses to talk to GitHub, GitHub
Enterprise or localhub (only the base URL differs).

Built on PyGithub's `Requester` (authentication, base URL, JSON, its exception types), with
PyGithub's own retries and request spacing turned off: this client alone decides what is sent
again, because PyGithub's default retry re-sends a merge that failed with a 5xx. The rules are
pure functions in `bot.forge.retry`; errors are the types in `bot.forge.errors`.

Each attempt is exactly one HTTP request (PyGithub's lazy objects can add hidden requests, so
requests are made through the requester and answers parsed into the dataclasses below).
A merge is sent once: when its answer is lost the client asks GitHub whether it merged.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import logging
import math
import random
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

import github
import jwt
import requests

from bot.backoff import Backoff, poll
from bot.bounded_json import TooDeepError, loads_bounded
from bot.forge import texts
from bot.forge.errors import (
    BadAnswer,
    Conflict,
    ForgeConfigError,
    ForgeError,
    Invalid,
    NotFound,
    RateLimited,
    Unavailable,
    UncertainWrite,
    client_error,
)
from bot.forge.retry import (
    WRITE_NOT_REPEATED,
    Action,
    Failure,
    FailureKind,
    MergeOutcome,
    OpKind,
    RetryPolicy,
    classify_exception,
    classify_status,
    decide,
    merge_check_outcome,
    merge_refusal_outcome,
    token_needs_refresh,
    write_delay,
)
from bot.settings import DEFAULT_FORGE_URL as GITHUB_API_URL
from bot.texts import Text

if TYPE_CHECKING:
    from bot.forge.shared import SharedBudget, SharedTokens

__all__ = [
    "GITHUB_API_URL",
    "AppCredentials",
    "ChangedFile",
    "CombinedStatus",
    "Comment",
    "CommitStatus",
    "Comparison",
    "FileContent",
    "ForgeClient",
    "MergeOutcome",
    "MergeResult",
    "NewPullRequest",
    "PullRequest",
    "Ref",
    "RetryPolicy",
    "Review",
    "StatusUpdate",
    "TokenCredentials",
]

FORGE_NEEDS_CREDENTIALS = (
    "the forge client needs a token, or a GitHub App id and private key (with an installation id, or the "
    "repository whose installation to find)"
)
FORGE_BAD_REPOSITORY = "'{repository}' is not a repository name of the form owner/name"
FORGE_RATE_LIMITED = (
    "{operation}: rate limited by GitHub (answered {answer}); it asks to wait {wait:.0f}s, more than the "
    "{left:.0f}s left for this call; try again after {retry_at}"
)
FORGE_GAVE_UP = Text(
    "{operation}: gave up after {attempts:|attempt|attempts} in {elapsed:.1f}s; GitHub's last answer: {answer}"
)
FORGE_UNCERTAIN_WRITE = (
    "{operation}: {answer}; the change may or may not have been made, so it was not sent again; re-read before "
    "trying again"
)
FORGE_BAD_ANSWER = "{operation}: GitHub's answer is not what its API documents ({problem})"
FORGE_ANSWER_TOO_LONG = "the answer is {size} characters long, longer than the {limit} memrepo reads"
FORGE_ANSWER_TOO_DEEP = "the answer nests arrays and objects deeper than a JSON parser can descend"
FORGE_NOT_A_FILE = "{operation}: '{path}' is a {kind}, not a file"
FORGE_OP_INSTALLATION_TOKEN = "get an installation token for GitHub App {app_id} (installation {installation})"
FORGE_OP_OPEN_PULL = "open a pull request from {head} into {base} in {repo}"
FORGE_OP_FIND_PULL = "look for the pull request from {head} into {base} in {repo}"
FORGE_OP_MERGE = "merge pull request #{number} of {repo} at {sha}"
FORGE_OP_ADD_LABELS = "add labels {labels} to #{number} of {repo}"
FORGE_OP_SET_STATUS = "set status '{context}' to {state} on {sha} in {repo}"
FORGE_OP_REVIEW = "submit a {event} review on pull request #{number} in {repo}"
MERGE_DONE = "merged pull request #{number} as {sha}"
MERGE_DONE_AFTER_LOST_ANSWER = (
    "the merge of #{number} got {answer}; GitHub then reported it merged (as {sha}); it was not sent again"
)
MERGE_ALREADY = "pull request #{number} was already merged (as {sha})"
MERGE_HEAD_MOVED = "pull request #{number} was not merged: its head is no longer {sha} ({answer}); re-read it"
MERGE_BASE_MOVED = "pull request #{number} was not merged: its base branch moved ({answer}); re-read it"
MERGE_NOT_MERGEABLE = "pull request #{number} cannot be merged ({answer})"
MERGE_NOT_MERGED_AFTER_LOST_ANSWER = (
    "the merge of #{number} got {answer}; GitHub then reported it not merged; it was not sent again, re-read it "
    "and decide again"
)
MERGE_NOT_SENT = "the merge of #{number} never reached GitHub ({answer}); nothing was merged"
MERGE_RATE_LIMITED = "the merge of #{number} was refused by a rate limit ({answer}); not merged, retry in {wait:.0f}s"
MERGE_UNKNOWN = (
    "the merge of #{number} got {answer} and whether it merged could not be checked ({check}); re-read it before "
    "deciding"
)
FORGE_BAD_APP_KEY = "GitHub App {app_id}: its private key cannot sign a token ({problem})"

MERGE_METHODS = ("merge", "squash", "rebase")
MAX_PAGES = 50
PER_PAGE = 100
ANSWER_CHARS = 300
# Characters of one answer that are parsed at most. The largest answers memrepo reads (a page of
# 100 pull requests, a comparison, a memory file's contents) are a few MB; a forge that answers
# more is refused, not parsed (requests has read the body by then: the bound is on parsing).
MAX_ANSWER_CHARS = 32 * 1024 * 1024

log = logging.getLogger("memrepo.forge")
T = TypeVar("T")


# ---------------------------------------------------------------------------------------- credentials
@dataclass(frozen=True)
class TokenCredentials:
    """A personal access token, or any token GitHub accepts as `Authorization: token`."""

    token: str = field(repr=False)


@dataclass(frozen=True)
class AppCredentials:
    """A GitHub App: its id and private key (PEM); the installation is found from the client's
    repository when `installation_id` is None."""

    app_id: int | str
    private_key: str = field(repr=False)
    installation_id: int | None = None


Credentials = TokenCredentials | AppCredentials


class _LiveToken(github.Auth.Auth):
    """The installation token the client holds; refreshed by the client (before expiry, under
    its retry rules), never inside a request as PyGithub's AppInstallationAuth would."""

    def __init__(self, value: str = "") -> None:
        self.value = value

    @property
    def token_type(self) -> str:
        return "token"

    @property
    def token(self) -> str:
        return self.value

    @property
    def _masked_token(self) -> str:
        return "token (removed)"


# ---------------------------------------------------------------------------------------- data in and out
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
def _login(user: Any) -> str:
    return str(user.get("login") or "") if isinstance(user, dict) else ""


def _repo_name(side: Any) -> str:
    repo = side.get("repo") if isinstance(side, dict) else None
    return str(repo.get("full_name") or "") if isinstance(repo, dict) else ""


def _default_branch(side: Any) -> str:
    repo = side.get("repo") if isinstance(side, dict) else None
    return str(repo.get("default_branch") or "") if isinstance(repo, dict) else ""


def _pull(data: Any) -> PullRequest:
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
        author=_login(data.get("user")),
        merge_commit_sha=data.get("merge_commit_sha"),
        head_repo=_repo_name(head),
        base_repo=_repo_name(base),
        default_branch=_default_branch(base),
    )


def _status(data: Any) -> CommitStatus:
    return CommitStatus(str(data.get("context") or "default"), str(data["state"]), data.get("description"),
                        data.get("target_url"))


def _review(data: Any) -> Review:
    return Review(int(data["id"]), _login(data.get("user")), str(data.get("state") or ""), data.get("commit_id"),
                  str(data.get("body") or ""), data.get("submitted_at"))


def _full_ref(ref: str) -> str:
    """`main`, `heads/main` and `refs/heads/main` all name refs/heads/main."""
    ref = ref.removeprefix("refs/")
    if not ref.startswith(("heads/", "tags/", "pull/", "notes/")):
        ref = f"heads/{ref}"
    return ref


def _next_link(link: str | None) -> str | None:
    """The rel="next" URL of a Link header (GitHub's pagination)."""
    if not link:
        return None
    for part in link.split(","):
        match = re.match(r'\s*<([^>]+)>\s*;.*\brel="?next"?', part)
        if match:
            return match.group(1)
    return None


class _Unreadable(Exception):
    """A 2xx answer that is not JSON memrepo reads (too long, too deep, malformed): the request
    did what it did, so it is not sent again; `_run` turns this into a BadAnswer naming the operation."""

    def __init__(self, status: int, problem: str) -> None:
        super().__init__(problem)
        self.status, self.problem = status, problem


def _answer_json(body: str | bytes | None) -> Any:
    """An answer's JSON (None for an empty body), read through bot/bounded_json.py after the
    length bound: PyGithub's own json.loads meets 100,000 nested brackets with RecursionError.
    ValueError saying why for text that is too long, too deep or no JSON."""
    if not body:
        return None
    if len(body) > MAX_ANSWER_CHARS:
        raise ValueError(FORGE_ANSWER_TOO_LONG.format(size=len(body), limit=MAX_ANSWER_CHARS))
    try:
        return loads_bounded(body, what="the answer")
    except TooDeepError:
        raise
    except ValueError as exc:  # also UnicodeDecodeError
        raise ValueError(f"{type(exc).__name__}: {exc}") from None


def _decode(body: str | bytes | None) -> Any:
    """An error answer's JSON; text that is none (or past the bounds) becomes GitHub's shape,
    `{"message": ...}`, with what it says or why it was not read."""
    try:
        return _answer_json(body)
    except TooDeepError as exc:
        return {"message": str(exc)}
    except ValueError as exc:
        if body and len(body) <= MAX_ANSWER_CHARS:
            text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
            return {"message": text.strip()[:ANSWER_CHARS]}
        return {"message": str(exc)}


def _checked(status: int, headers: dict[str, Any], body: str) -> tuple[dict[str, Any], Any]:
    """PyGithub's requestJsonAndCheck with the answer read through `_answer_json`: the headers
    and JSON of a 2xx answer (_Unreadable when it is no JSON memrepo reads), PyGithub's own
    exception for any other status."""
    if status >= 400:
        raise github.Requester.Requester.createException(status, headers, _decode(body))
    try:
        return headers, _answer_json(body)
    except ValueError as exc:
        raise _Unreadable(status, str(exc)) from None


def _message(data: Any) -> str:
    """GitHub's `message`, with the validation errors of a 422 appended."""
    if not isinstance(data, dict):
        return "" if data is None else str(data)[:ANSWER_CHARS]
    message = str(data.get("message") or data.get("data") or "")
    details = []
    for error in data.get("errors") or ():
        if isinstance(error, dict):
            details.append(str(error.get("message") or error.get("code") or ""))
        elif isinstance(error, str):
            details.append(error)
    details = [d for d in details if d]
    if details:
        message = f"{message} ({'; '.join(details)})" if message else "; ".join(details)
    return message[:ANSWER_CHARS]


class _Answer(Exception):
    """A non-2xx answer to a request made without PyGithub's check (status-sensitive calls)."""

    def __init__(self, status: int, headers: Mapping[str, str], data: Any) -> None:
        super().__init__(status)
        self.status = status
        self.headers = headers
        self.data = data


@dataclass
class _Attempt:
    value: Any = None
    failure: Failure | None = None
    answer: str = ""
    data: Any = None


# ---------------------------------------------------------------------------------------- the client
class ForgeClient:
    """Operations on one repository (`owner/name`) of one forge.

    `min_write_interval` spaces mutating requests (GitHub asks for about one second; 0 for
    localhub tests); `policy` bounds retries and total time per operation; `timeout` is the
    per-request timeout, rounded up to whole seconds (PyGithub's unit). The clock, sleep and jitter are
    injectable for tests. `budget`, when given, is the request budget every worker of this
    identity shares (`bot.forge.shared`): each request waits for it, and a secondary limit
    GitHub still answers makes every worker wait; `tokens` shares a GitHub App's installation
    tokens between jobs.
    """

    def __init__(self, repository: str, credentials: Credentials, *, base_url: str = GITHUB_API_URL,
                 policy: RetryPolicy | None = None, timeout: float = 30, min_write_interval: float = 1.0,
                 token_refresh_margin: float = 300.0, user_agent: str = "memrepo",
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time,
                 sleep: Callable[[float], None] = time.sleep, jitter: Callable[[], float] = random.random,
                 budget: SharedBudget | None = None, tokens: SharedTokens | None = None) -> None:
        owner, _, name = repository.partition("/")
        if not owner or not name or "/" in name:
            raise ForgeConfigError(FORGE_BAD_REPOSITORY.format(repository=repository))
        self.repository = repository
        self._owner, self._name = owner, name
        self._repo_path = f"/repos/{urllib.parse.quote(owner)}/{urllib.parse.quote(name)}"
        self._policy = policy or RetryPolicy()
        self._min_write_interval = min_write_interval
        self._budget, self._tokens = budget, tokens
        self._cached_token_refused = False
        self._refresh_margin = token_refresh_margin
        self._clock, self._wall, self._sleep, self._jitter = clock, wall, sleep, jitter
        self._write_lock = threading.Lock()
        self._last_write_end: float | None = None
        self._token_lock = threading.RLock()
        self._secrets: list[str] = []
        self._app: AppCredentials | None = None
        self._integration: github.GithubIntegration | None = None
        self._live = _LiveToken()
        self._token_expires: float | None = None
        self._installation_id: int | None = None
        settings: dict[str, Any] = {"base_url": base_url.rstrip("/"), "timeout": max(1, math.ceil(timeout)),
                                    "user_agent": user_agent, "retry": None, "seconds_between_requests": None,
                                    "seconds_between_writes": None}
        auth: github.Auth.Auth
        if isinstance(credentials, TokenCredentials) and credentials.token:
            auth = github.Auth.Token(credentials.token)
            self._secrets.append(credentials.token)
        elif isinstance(credentials, AppCredentials) and credentials.app_id and credentials.private_key:
            self._app = credentials
            self._installation_id = credentials.installation_id
            self._integration = github.GithubIntegration(
                auth=github.Auth.AppAuth(credentials.app_id, credentials.private_key), **settings)
            auth = self._live
        else:
            raise ForgeConfigError(FORGE_NEEDS_CREDENTIALS)
        self._gh = github.Github(auth=auth, lazy=True, **settings)
        self._requester = self._gh.requester

    def close(self) -> None:
        self._gh.close()
        if self._integration is not None:
            self._integration.close()

    def __enter__(self) -> ForgeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------ pull requests
    def open_pull_request(self, new: NewPullRequest) -> PullRequest:
        """Open a pull request (and label it). When GitHub's answer is lost, the open pull
        request from `head` into `base` is looked up instead of sending the request again.
        If labelling fails, the pull request exists: the error is the labelling's."""
        op = FORGE_OP_OPEN_PULL.format(head=new.head, base=new.base, repo=self.repository)
        body = {"title": new.title, "head": new.head, "base": new.base, "body": new.body, "draft": new.draft}
        try:
            _, data = self._run(op, OpKind.WRITE, self._call("POST", f"{self._repo_path}/pulls", body=body))
            pr = self._parse(op, _pull, data)
        except UncertainWrite as lost:
            try:
                found = self._find_open_pull(new.head, new.base)
            except ForgeError:
                found = None
            if found is None:
                raise lost from None
            pr = found
        if new.labels:
            pr = replace(pr, labels=self.add_labels(pr.number, new.labels))
        return pr

    def _find_open_pull(self, head: str, base: str) -> PullRequest | None:
        op = FORGE_OP_FIND_PULL.format(head=head, base=base, repo=self.repository)
        owner, _, branch = head.rpartition(":")
        params = {"state": "open", "head": f"{owner or self._owner}:{branch}", "base": base}
        for item in self._paginate(op, f"{self._repo_path}/pulls", params):
            pr = self._parse(op, _pull, item)
            if pr.head_ref == branch and pr.base_ref == base:
                return pr
        return None

    def get_pull_request(self, number: int) -> PullRequest:
        op = f"read pull request #{number} of {self.repository}"
        _, data = self._run(op, OpKind.READ, self._call("GET", f"{self._repo_path}/pulls/{int(number)}"))
        return self._parse(op, _pull, data)

    def wait_for_mergeability(self, number: int, *, timeout: float = 60.0, interval: float = 0.25) -> PullRequest:
        """Read the pull request until GitHub has computed `mergeable` (it does so in the
        background after a push), or `timeout` passes; the last read is returned either way."""
        return poll(lambda: self.get_pull_request(number), Backoff(interval, 1.5, cap=5.0),
                    until=lambda pr: pr.mergeable is not None or pr.state != "open",
                    timeout=timeout, clock=self._clock, sleep=self._sleep)

    def list_open_pull_requests(self, label: str | None = None, *, base: str | None = None) -> list[PullRequest]:
        """Open pull requests, with `label` if given (lists carry no `mergeable`)."""
        op = f"list the open pull requests of {self.repository}"
        params: dict[str, Any] = {"state": "open"}
        if base:
            params["base"] = base
        pulls = [self._parse(op, _pull, item) for item in self._paginate(op, f"{self._repo_path}/pulls", params)]
        return [pr for pr in pulls if label is None or label in pr.labels]

    def pull_requests_for_commit(self, sha: str) -> list[PullRequest]:
        op = f"list the pull requests of commit {sha} in {self.repository}"
        items = self._paginate(op, f"{self._repo_path}/commits/{urllib.parse.quote(sha)}/pulls", {})
        return [self._parse(op, _pull, item) for item in items]

    def is_merged(self, number: int) -> bool:
        """GitHub's own answer (`GET .../merge`: 204 merged, 404 not)."""
        op = f"check whether pull request #{number} of {self.repository} is merged"
        path = f"{self._repo_path}/pulls/{int(number)}/merge"

        def call() -> bool:
            status, headers, body = self._requester.requestJson("GET", path)
            if status == 204:
                return True
            data = _decode(body)
            if status == 404 and isinstance(data, dict | type(None)):
                return False
            raise _Answer(status, headers, data)

        return self._run(op, OpKind.READ, call)

    def merge(self, number: int, expected_head_sha: str, *, method: str = "merge", title: str | None = None,
              message: str | None = None) -> MergeResult:
        """Merge if the head is still `expected_head_sha`. Sent exactly once: a lost answer
        (5xx, timeout) is resolved by asking GitHub whether it merged; a moved head or base,
        or a refusal, comes back as an outcome to re-read and decide on."""
        if method not in MERGE_METHODS:
            raise ForgeConfigError(f"merge method '{method}' is not one of merge, squash, rebase")
        op = FORGE_OP_MERGE.format(number=number, repo=self.repository, sha=expected_head_sha[:12])
        body: dict[str, Any] = {"sha": expected_head_sha, "merge_method": method}
        if title is not None:
            body["commit_title"] = title
        if message is not None:
            body["commit_message"] = message
        self._ensure_credentials()
        attempt = self._attempt(self._call("PUT", f"{self._repo_path}/pulls/{int(number)}/merge", body=body),
                                write=True)
        failure = attempt.failure
        if failure is None:
            _, data = attempt.value
            if isinstance(data, dict) and data.get("merged"):
                sha = data.get("sha")
                return MergeResult(MergeOutcome.MERGED, number, sha, MERGE_DONE.format(number=number, sha=sha),
                                   200)
            answer = _message(data) or "merged: false"
            return MergeResult(MergeOutcome.NOT_MERGEABLE, number, None,
                               MERGE_NOT_MERGEABLE.format(number=number, answer=answer), 200)
        decision = decide(OpKind.MERGE, failure, 1, 0.0, self._policy, 0.0)
        log.info("merge #%s: %s (%s)", number, decision.reason, attempt.answer)
        if decision.action is Action.CHECK_MERGED:
            return self._after_lost_merge(number, attempt.answer, failure.status)
        if failure.kind is FailureKind.RATE_LIMITED:
            return MergeResult(MergeOutcome.NOT_MERGED, number, None,
                               MERGE_RATE_LIMITED.format(number=number, answer=attempt.answer,
                                                               wait=failure.wait or 0.0),
                               failure.status, failure.wait)
        if failure.kind is FailureKind.NOT_SENT:
            return MergeResult(MergeOutcome.NOT_MERGED, number, None,
                               MERGE_NOT_SENT.format(number=number, answer=attempt.answer))
        status = failure.status or 0
        outcome = merge_refusal_outcome(status, failure.message)
        if outcome is MergeOutcome.HEAD_MOVED:
            text = MERGE_HEAD_MOVED.format(number=number, sha=expected_head_sha, answer=attempt.answer)
            return MergeResult(outcome, number, None, text, status)
        if outcome is MergeOutcome.BASE_MOVED:
            return MergeResult(outcome, number, None,
                               MERGE_BASE_MOVED.format(number=number, answer=attempt.answer), status)
        if outcome is MergeOutcome.NOT_MERGEABLE:
            return self._refused_merge(number, attempt.answer, status)
        if status == 401 and self._app is not None:
            with self._token_lock:
                self._token_expires = None  # the next call gets a new installation token
        raise client_error(op, status, attempt.answer, errors=_errors(attempt.data))

    def _after_lost_merge(self, number: int, answer: str, status: int | None) -> MergeResult:
        try:
            merged: bool | None = self.is_merged(number)
        except ForgeError as exc:
            return MergeResult(MergeOutcome.UNKNOWN, number, None,
                               MERGE_UNKNOWN.format(number=number, answer=answer, check=exc.answer or exc),
                               status)
        outcome = merge_check_outcome(merged)
        if outcome is MergeOutcome.NOT_MERGED:
            return MergeResult(outcome, number, None,
                               MERGE_NOT_MERGED_AFTER_LOST_ANSWER.format(number=number, answer=answer), status)
        sha: str | None = None
        try:
            sha = self.get_pull_request(number).merge_commit_sha
        except ForgeError as exc:
            log.warning("merge #%s: merged, but re-reading it failed: %s", number, exc)
        return MergeResult(outcome, number, sha,
                           MERGE_DONE_AFTER_LOST_ANSWER.format(number=number, answer=answer, sha=sha), status)

    def _refused_merge(self, number: int, answer: str, status: int) -> MergeResult:
        """405 "not mergeable" is also GitHub's answer for a pull request merged earlier."""
        try:
            pr = self.get_pull_request(number)
        except ForgeError:
            pr = None
        if pr is not None and pr.merged:
            return MergeResult(MergeOutcome.ALREADY_MERGED, number, pr.merge_commit_sha,
                               MERGE_ALREADY.format(number=number, sha=pr.merge_commit_sha), status)
        return MergeResult(MergeOutcome.NOT_MERGEABLE, number, None,
                           MERGE_NOT_MERGEABLE.format(number=number, answer=answer), status)

    def update_branch(self, number: int, expected_head_sha: str | None = None) -> bool:
        """Ask GitHub to merge the base into the pull request's head (202: accepted)."""
        op = f"update the branch of pull request #{number} of {self.repository}"
        body = {"expected_head_sha": expected_head_sha} if expected_head_sha else {}
        try:
            self._run(op, OpKind.WRITE, self._call("PUT", f"{self._repo_path}/pulls/{int(number)}/update-branch",
                                                   body=body))
        except Invalid as exc:
            if "expected head sha" in exc.answer.lower().replace("_", " "):
                raise Conflict(texts.FORGE_CONFLICT.format(operation=op, answer=exc.answer), operation=op,
                               status=exc.status, answer=exc.answer) from None
            raise
        return True

    def close_pull_request(self, number: int) -> None:
        """Close without merging (closing twice is harmless, so a lost answer may be retried)."""
        op = f"close pull request #{number} of {self.repository}"
        self._run(op, OpKind.IDEMPOTENT_WRITE, self._call("PATCH", f"{self._repo_path}/pulls/{int(number)}",
                                                          body={"state": "closed"}))

    # ------------------------------------------------------------------------------------ issues side
    def comment(self, number: int, body: str) -> Comment:
        op = f"comment on #{number} of {self.repository}"
        _, data = self._run(op, OpKind.WRITE, self._call("POST", f"{self._repo_path}/issues/{int(number)}/comments",
                                                         body={"body": body}))
        return self._parse(op, lambda d: Comment(int(d["id"]), str(d.get("html_url") or d.get("url") or ""),
                                                 str(d.get("body") or ""), _login(d.get("user"))), data)

    def add_labels(self, number: int, labels: Sequence[str]) -> tuple[str, ...]:
        """Add labels; returns every label the pull request now has."""
        op = FORGE_OP_ADD_LABELS.format(labels=", ".join(labels), number=number, repo=self.repository)
        _, data = self._run(op, OpKind.IDEMPOTENT_WRITE, self._call(
            "POST", f"{self._repo_path}/issues/{int(number)}/labels", body={"labels": list(labels)}))
        return self._parse(op, lambda d: tuple(str(item["name"]) for item in d), data)

    def remove_label(self, number: int, label: str) -> bool:
        """Remove a label; False when the pull request did not have it."""
        op = f"remove label {label} from #{number} of {self.repository}"
        path = f"{self._repo_path}/issues/{int(number)}/labels/{urllib.parse.quote(label, safe='')}"

        def call() -> bool:
            try:
                _checked(*self._requester.requestJson("DELETE", path))
            except github.GithubException as exc:
                if exc.status == 404 and "label does not exist" in _message(exc.data).lower():
                    return False
                raise
            return True

        return self._run(op, OpKind.IDEMPOTENT_WRITE, call)

    # ------------------------------------------------------------------------------------ statuses, reviews
    def set_status(self, sha: str, update: StatusUpdate) -> CommitStatus:
        op = FORGE_OP_SET_STATUS.format(context=update.context, state=update.state, sha=sha[:12],
                                              repo=self.repository)
        body = {"state": update.state, "context": update.context}
        if update.description is not None:
            body["description"] = update.description
        if update.target_url is not None:
            body["target_url"] = update.target_url
        _, data = self._run(op, OpKind.IDEMPOTENT_WRITE,
                            self._call("POST", f"{self._repo_path}/statuses/{urllib.parse.quote(sha)}", body=body))
        return self._parse(op, _status, data)

    def combined_status(self, ref: str) -> CombinedStatus:
        op = f"read the combined status of {ref} in {self.repository}"
        _, data = self._run(op, OpKind.READ, self._call(
            "GET", f"{self._repo_path}/commits/{urllib.parse.quote(ref, safe='/')}/status",
            params={"per_page": PER_PAGE}))
        return self._parse(op, lambda d: CombinedStatus(str(d["state"]), str(d["sha"]),
                                                        tuple(_status(s) for s in d.get("statuses") or ())), data)

    def list_reviews(self, number: int) -> list[Review]:
        op = f"list the reviews of pull request #{number} of {self.repository}"
        items = self._paginate(op, f"{self._repo_path}/pulls/{int(number)}/reviews", {})
        return [self._parse(op, _review, item) for item in items]

    def submit_review(self, number: int, event: str, body: str = "", commit_id: str | None = None) -> Review:
        """Submit a review (APPROVE, REQUEST_CHANGES or COMMENT) on `commit_id` (the head when
        None). Sent once: a second approval would be a second review."""
        op = FORGE_OP_REVIEW.format(event=event, number=number, repo=self.repository)
        payload: dict[str, Any] = {"event": event, "body": body}
        if commit_id:
            payload["commit_id"] = commit_id
        _, data = self._run(op, OpKind.WRITE, self._call("POST", f"{self._repo_path}/pulls/{int(number)}/reviews",
                                                         body=payload))
        return self._parse(op, _review, data)

    def pull_files(self, number: int) -> list[ChangedFile]:
        op = f"list the files of pull request #{number} in {self.repository}"
        items = self._paginate(op, f"{self._repo_path}/pulls/{int(number)}/files", {})
        return [self._parse(op, lambda d: ChangedFile(str(d["filename"]), str(d.get("status") or ""),
                                                      int(d.get("additions") or 0), int(d.get("deletions") or 0),
                                                      d.get("patch")), item) for item in items]

    def pull_commit_accounts(self, number: int) -> tuple[str, ...]:
        """The forge accounts GitHub matched to the authors and committers of the pull
        request's commits (commits it could not match to an account name none)."""
        op = f"list the commits of pull request #{number} of {self.repository}"
        items = self._paginate(op, f"{self._repo_path}/pulls/{int(number)}/commits", {})
        logins = {_login(item.get(side)) for item in items if isinstance(item, dict)
                  for side in ("author", "committer")}
        return tuple(sorted(login for login in logins if login))

    def branch_pushers(self, branch: str, head_sha: str) -> tuple[str, ...] | None:
        """The accounts that pushed to `branch`, as the repository activity API records them
        (`GET /repos/{owner}/{repo}/activity?ref=refs/heads/<branch>`: git pushes, force
        pushes, branch creation, merges into it), or None when that cannot be known: the forge
        has no activity for this repository, or its newest entry for the branch is not the
        push that made `head_sha` its tip (so who pushed the head is not known)."""
        op = f"read who pushed to {branch} of {self.repository}"
        try:
            items = self._paginate(op, f"{self._repo_path}/activity", {"ref": f"refs/heads/{branch}"})
        except NotFound:
            return None

        def parse(entries: list[Any]) -> tuple[str, ...] | None:
            if not entries or str(entries[0]["after"]).lower() != head_sha.lower():
                return None
            logins = [_login(entry.get("actor")) for entry in entries]
            if not all(logins):  # an entry names no actor: someone pushed whom the forge does not name
                return None
            return tuple(sorted(set(logins), key=str.casefold))

        return self._parse(op, parse, items)

    # ------------------------------------------------------------------------------------ who
    def permission(self, login: str) -> str:
        """`login`'s permission on the repository as the forge's collaborator permission
        endpoint says it (`admin`, `write`, `read` or `none`; GitHub's `role_name` where it is
        finer: `maintain`, `triage`); `none` for an account the forge does not know."""
        op = f"read the permission of {login} on {self.repository}"
        path = f"{self._repo_path}/collaborators/{urllib.parse.quote(login, safe='')}/permission"
        try:
            _, data = self._run(op, OpKind.READ, self._call("GET", path))
        except NotFound:
            return "none"

        def parse(d: Any) -> str:
            role = str(d.get("role_name") or "").lower()
            return role if role in ("maintain", "triage") else str(d["permission"]).lower()

        return self._parse(op, parse, data)

    def own_login(self) -> str:
        """The account this client acts as: the token's user, or a GitHub App's `<slug>[bot]`."""
        op = f"ask the forge which account acts for {self.repository}"
        if self._integration is not None:
            integration = self._integration
            slug = self._run(op, OpKind.READ, lambda: integration.get_app().slug, credentials=False)
            return f"{slug}[bot]"
        _, data = self._run(op, OpKind.READ, self._call("GET", "/user"))
        return self._parse(op, lambda d: str(d["login"]), data)

    # ------------------------------------------------------------------------------------ git
    def compare(self, base: str, head: str) -> Comparison:
        op = f"compare {base}...{head} in {self.repository}"
        path = (f"{self._repo_path}/compare/{urllib.parse.quote(base, safe='/')}"
                f"...{urllib.parse.quote(head, safe='/')}")
        _, data = self._run(op, OpKind.READ, self._call("GET", path))

        def parse(d: Any) -> Comparison:
            merge_base = d.get("merge_base_commit") or {}
            return Comparison(str(d["status"]), int(d["ahead_by"]), int(d["behind_by"]),
                              int(d.get("total_commits") or 0), merge_base.get("sha"),
                              tuple(str(c["sha"]) for c in d.get("commits") or ()))

        return self._parse(op, parse, data)

    def commit_parents(self, sha: str) -> tuple[str, ...]:
        """The parents of commit `sha`, first parent first (a merge commit's first parent is
        where its base branch was)."""
        op = f"read commit {sha[:12]} of {self.repository}"
        _, data = self._run(op, OpKind.READ, self._call("GET", f"{self._repo_path}/git/commits/{sha}"))
        return self._parse(op, lambda d: tuple(str(p["sha"]) for p in d["parents"]), data)

    def get_ref(self, ref: str) -> Ref:
        name = _full_ref(ref)
        op = "read ref {ref} of {repo}".format(ref=f"refs/{name}", repo=self.repository)
        _, data = self._run(op, OpKind.READ, self._call(
            "GET", f"{self._repo_path}/git/ref/{urllib.parse.quote(name, safe='/')}"))
        return self._parse(op, lambda d: Ref(str(d["ref"]), str(d["object"]["sha"])), data)

    def update_ref(self, ref: str, sha: str, *, force: bool = False) -> Ref:
        """Move a ref to `sha` (fast-forward only unless `force`); a refused fast-forward is a
        Conflict (re-read and decide again)."""
        name = _full_ref(ref)
        op = "move ref {ref} of {repo} to {sha}".format(ref=f"refs/{name}", sha=sha[:12], repo=self.repository)
        try:
            _, data = self._run(op, OpKind.IDEMPOTENT_WRITE, self._call(
                "PATCH", f"{self._repo_path}/git/refs/{urllib.parse.quote(name, safe='/')}",
                body={"sha": sha, "force": force}))
        except Invalid as exc:
            if "fast forward" in exc.answer.lower() or "fast-forward" in exc.answer.lower():
                raise Conflict(texts.FORGE_CONFLICT.format(operation=op, answer=exc.answer), operation=op,
                               status=exc.status, answer=exc.answer) from None
            raise
        return self._parse(op, lambda d: Ref(str(d["ref"]), str(d["object"]["sha"])), data)

    def read_file(self, path: str, ref: str) -> FileContent:
        """A file's bytes at a ref (files over 1 MB come through the git blob API)."""
        op = f"read {path} at {ref} in {self.repository}"
        _, data = self._run(op, OpKind.READ, self._call(
            "GET", f"{self._repo_path}/contents/{urllib.parse.quote(path.strip('/'))}", params={"ref": ref}))
        if isinstance(data, list) or (isinstance(data, dict) and data.get("type") not in (None, "file")):
            kind = "directory" if isinstance(data, list) else str(data.get("type"))
            raise NotFound(FORGE_NOT_A_FILE.format(operation=op, path=path, kind=kind), operation=op,
                           status=200, answer=kind)
        if isinstance(data, dict) and data.get("encoding") == "none" and data.get("sha"):
            _, data = self._run(op, OpKind.READ, self._call("GET", f"{self._repo_path}/git/blobs/{data['sha']}"))
            data = {**data, "path": path}

        def parse(d: Any) -> FileContent:
            raw = d.get("content") or ""
            if d.get("encoding", "base64") != "base64":
                raise ValueError(f"encoding {d.get('encoding')}")
            return FileContent(str(d.get("path") or path), ref, str(d["sha"]), base64.b64decode(raw))

        return self._parse(op, parse, data)

    # ------------------------------------------------------------------------------------ machinery
    def _call(self, verb: str, path: str, *, params: Mapping[str, Any] | None = None,
              body: Any = None) -> Callable[[], tuple[dict[str, Any], Any]]:
        """One request through PyGithub's requester (raises GithubException for >= 400). Its
        answer is read here, not by PyGithub, to bound it (`_answer_json`); an absolute URL (a
        next page) is sent to the forge's own host, whatever host it names."""
        return lambda: _checked(*self._requester.requestJson(verb, path, parameters=dict(params) if params else None,
                                                             input=body))

    def _paginate(self, op: str, path: str, params: Mapping[str, Any]) -> list[Any]:
        """Every page (each page one retried read), following GitHub's Link headers."""
        items: list[Any] = []
        url: str | None = path
        query: dict[str, Any] | None = {**params, "per_page": PER_PAGE}
        for _ in range(MAX_PAGES):
            if url is None:
                break
            headers, data = self._run(op, OpKind.READ, self._call("GET", url, params=query))
            if not isinstance(data, list):
                raise BadAnswer(FORGE_BAD_ANSWER.format(operation=op, problem="expected a list"),
                                operation=op, status=200)
            items.extend(data)
            url, query = _next_link(headers.get("link") or headers.get("Link")), None
        return items

    def _parse(self, op: str, parse: Callable[[Any], T], data: Any) -> T:
        try:
            return parse(data)
        except (KeyError, TypeError, ValueError, AttributeError, binascii.Error) as exc:
            raise BadAnswer(FORGE_BAD_ANSWER.format(operation=op, problem=f"{type(exc).__name__}: {exc}"),
                            operation=op, status=200) from None

    def _redact(self, text: str) -> str:
        for secret in (*self._secrets, self._live.value):
            if secret:
                text = text.replace(secret, "***")
        return text

    def _attempt(self, call: Callable[[], T], *, write: bool) -> _Attempt:
        """Make one request (spacing writes, within the shared budget and holding one of the
        identity's slots in flight while it is sent), and say what failed if it did."""
        # RateLimited, nothing sent, when the wait for the budget or a slot is too long for a job
        with self._budget.sending(write) if self._budget is not None else contextlib.nullcontext():
            if not write:
                return self._classified(call)
            with self._write_lock:
                delay = write_delay(self._last_write_end, self._min_write_interval, self._clock())
                if delay > 0:
                    self._sleep(delay)
                try:
                    return self._classified(call)
                finally:
                    self._last_write_end = self._clock()

    def _classified(self, call: Callable[[], T]) -> _Attempt:
        try:
            return _Attempt(value=call())
        except github.GithubException as exc:
            status, headers, data = exc.status, exc.headers or {}, exc.data
        except _Answer as exc:
            status, headers, data = exc.status, exc.headers, exc.data
        except requests.exceptions.RequestException as exc:
            failure = classify_exception(exc)
            template = "could not connect ({error})" if failure.kind is FailureKind.NOT_SENT \
                else "no answer ({error})"
            answer = self._redact(template.format(error=failure.message[:ANSWER_CHARS]))
            return _Attempt(failure=replace(failure, message=answer), answer=answer)
        message = self._redact(_message(data))
        failure = classify_status(int(status), headers, message, self._wall(), self._policy)
        if failure is None:  # PyGithub raised for a status below 400: treat it as GitHub's refusal
            failure = Failure(FailureKind.CLIENT_ERROR, int(status), message)
        template = "HTTP {status}: {message}" if message else "HTTP {status}"
        return _Attempt(failure=failure, answer=template.format(status=status, message=message), data=data)

    def _run(self, op: str, kind: OpKind, call: Callable[[], T], *, credentials: bool = True) -> T:
        """Send until it succeeds or the policy gives up; `kind` says what may be repeated."""
        start = self._clock()
        attempt = 0
        refreshed = False
        while True:
            attempt += 1
            if credentials:
                self._ensure_credentials()
            try:
                result = self._attempt(call, write=kind is not OpKind.READ)
            except _Unreadable as exc:
                raise BadAnswer(FORGE_BAD_ANSWER.format(operation=op, problem=exc.problem), operation=op,
                                status=exc.status) from None
            except RecursionError:  # PyGithub's own json.loads, left only in the App's three calls
                raise BadAnswer(FORGE_BAD_ANSWER.format(operation=op, problem=FORGE_ANSWER_TOO_DEEP),
                                operation=op) from None
            if result.failure is None:
                return result.value
            failure = result.failure
            if failure.kind is FailureKind.RATE_LIMITED and self._budget is not None:
                self._budget.back_off(failure.wait if failure.wait is not None else self._policy.secondary_rate_wait)
            elapsed = self._clock() - start
            decision = decide(kind, failure, attempt, elapsed, self._policy, self._jitter(),
                              can_refresh_credentials=credentials and self._app is not None and not refreshed)
            log.info("%s: attempt %d: %s -> %s %.2fs (%s)", op, attempt, result.answer, decision.action.value,
                     decision.delay, decision.reason)
            if decision.action is Action.RETRY:
                self._sleep(decision.delay)
                continue
            if decision.action is Action.REFRESH_CREDENTIALS:
                refreshed = True
                with self._token_lock:
                    self._token_expires = None
                    self._cached_token_refused = True
                continue
            raise self._final_error(op, failure, decision.reason, result, attempt, elapsed)

    def _final_error(self, op: str, failure: Failure, reason: str, result: _Attempt, attempts: int,
                     elapsed: float) -> ForgeError:
        answer = result.answer
        if failure.kind is FailureKind.CLIENT_ERROR:
            return client_error(op, failure.status or 0, answer, errors=_errors(result.data))
        if failure.kind is FailureKind.RATE_LIMITED:
            wait = failure.wait or 0.0
            retry_at = datetime.fromtimestamp(self._wall() + wait, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            left = max(0.0, self._policy.max_total_seconds - elapsed)
            return RateLimited(FORGE_RATE_LIMITED.format(operation=op, answer=answer, wait=wait, left=left,
                                                               retry_at=retry_at),
                               operation=op, status=failure.status, answer=answer, retry_after=wait)
        if reason == WRITE_NOT_REPEATED:
            return UncertainWrite(FORGE_UNCERTAIN_WRITE.format(operation=op, answer=answer), operation=op,
                                  status=failure.status, answer=answer)
        return Unavailable(FORGE_GAVE_UP.format(operation=op, attempts=attempts, elapsed=elapsed,
                                                      answer=answer),
                           operation=op, status=failure.status, answer=answer, attempts=attempts)

    # ------------------------------------------------------------------------------------ App tokens
    def _ensure_credentials(self) -> None:
        """With App credentials: get an installation token if there is none or it expires
        within the refresh margin (so a long operation never starts with a dying token)."""
        if self._app is None:
            return
        with self._token_lock:
            if not token_needs_refresh(self._token_expires, self._wall(), self._refresh_margin):
                return
            if self._tokens is not None and not self._cached_token_refused:
                shared = self._tokens.get(self.repository)
                if shared is not None:  # another job's token, still good
                    self._live.value, self._token_expires = shared
                    return
            integration = self._integration
            assert integration is not None
            try:
                self._refresh_installation_token(integration)
            except (ValueError, TypeError, jwt.PyJWTError) as exc:  # the key cannot sign a JWT
                raise ForgeConfigError(FORGE_BAD_APP_KEY.format(app_id=self._app.app_id,
                                                                      problem=type(exc).__name__)) from None

    def _refresh_installation_token(self, integration: github.GithubIntegration) -> None:
        assert self._app is not None
        if self._installation_id is None:
            op = f"find the GitHub App installation of {self.repository}"
            self._installation_id = self._run(
                op, OpKind.READ, lambda: int(integration.get_repo_installation(self._owner, self._name).id),
                credentials=False)
        installation = self._installation_id
        op = FORGE_OP_INSTALLATION_TOKEN.format(app_id=self._app.app_id, installation=installation)
        grant = self._run(op, OpKind.IDEMPOTENT_WRITE, lambda: integration.get_access_token(installation),
                          credentials=False)
        self._live.value = grant.token
        expires = grant.expires_at
        self._token_expires = expires.timestamp() if expires is not None else self._wall() + 3600
        self._cached_token_refused = False
        if self._tokens is not None:
            self._tokens.put(self.repository, grant.token, self._token_expires)
        log.info("installation token for %s refreshed; expires in %.0fs", self.repository,
                 self._token_expires - self._wall())


def _errors(data: Any) -> list[Any]:
    if isinstance(data, dict) and isinstance(data.get("errors"), list):
        return list(data["errors"])
    return []

