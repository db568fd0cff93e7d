"""The forge client: the one narrow interface memrepo uses to talk to GitHub, GitHub
Enterprise or localhub (only the base URL differs), one method per endpoint memrepo calls.

What each method sends and reads back are the dataclasses of `bot.forge.shapes`; how a request
is sent, retried and its answer read is `bot.forge.transport` (whose rules are the pure
functions of `bot.forge.retry`); who the client acts as is `bot.forge.credentials`; errors are
the types of `bot.forge.errors`.

Each call is exactly the requests it says (PyGithub's lazy objects can add hidden requests, so
requests are made through its requester and answers parsed into the shapes). A merge is sent
once: when its answer is lost the client asks GitHub whether it merged.
"""

from __future__ import annotations

import base64
import logging
import math
import random
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import github

from bot.backoff import Backoff, poll
from bot.forge import texts
from bot.forge.credentials import Credentials, authenticate
from bot.forge.errors import Conflict, ForgeConfigError, ForgeError, Invalid, NotFound, UncertainWrite, client_error
from bot.forge.retry import (
    Action,
    FailureKind,
    MergeOutcome,
    OpKind,
    RetryPolicy,
    decide,
    merge_check_outcome,
    merge_refusal_outcome,
)
from bot.forge.shapes import (
    ChangedFile,
    CombinedStatus,
    Comment,
    CommitStatus,
    Comparison,
    FileContent,
    MergeResult,
    NewPullRequest,
    PullRequest,
    Ref,
    Review,
    StatusUpdate,
    login_of,
    parse_pull,
    parse_review,
    parse_status,
)
from bot.forge.transport import PER_PAGE, ErrorAnswer, Transport, answer_errors, answer_message, checked, error_json
from bot.settings import DEFAULT_FORGE_URL

if TYPE_CHECKING:
    from bot.forge.shared import SharedBudget, SharedTokens

FORGE_BAD_REPOSITORY = "'{repository}' is not a repository name of the form owner/name"
FORGE_NOT_A_FILE = "{operation}: '{path}' is a {kind}, not a file"
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

MERGE_METHODS = ("merge", "squash", "rebase")

log = logging.getLogger("memrepo.forge")


def _full_ref(ref: str) -> str:
    """`main`, `heads/main` and `refs/heads/main` all name refs/heads/main."""
    ref = ref.removeprefix("refs/")
    if not ref.startswith(("heads/", "tags/", "pull/", "notes/")):
        ref = f"heads/{ref}"
    return ref


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

    def __init__(self, repository: str, credentials: Credentials, *, base_url: str = DEFAULT_FORGE_URL,
                 policy: RetryPolicy | None = None, timeout: float = 30, min_write_interval: float = 1.0,
                 token_refresh_margin: float = 300.0, user_agent: str = "memrepo",
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time,
                 sleep: Callable[[float], None] = time.sleep, jitter: Callable[[], float] = random.random,
                 budget: SharedBudget | None = None, tokens: SharedTokens | None = None) -> None:
        owner, _, name = repository.partition("/")
        if not owner or not name or "/" in name:
            raise ForgeConfigError(FORGE_BAD_REPOSITORY.format(repository=repository))
        self.repository = repository
        self._owner = owner
        self._repo_path = f"/repos/{urllib.parse.quote(owner)}/{urllib.parse.quote(name)}"
        self._clock, self._sleep = clock, sleep
        settings: dict[str, Any] = {"base_url": base_url.rstrip("/"), "timeout": max(1, math.ceil(timeout)),
                                    "user_agent": user_agent, "retry": None, "seconds_between_requests": None,
                                    "seconds_between_writes": None}
        auth, secret, self._app_token = authenticate(credentials, repository, settings, tokens=tokens,
                                                     margin=token_refresh_margin, wall=wall)
        self._gh = github.Github(auth=auth, lazy=True, **settings)
        self._requester = self._gh.requester
        self._http = Transport(self._requester, policy=policy or RetryPolicy(), min_write_interval=min_write_interval,
                               clock=clock, wall=wall, sleep=sleep, jitter=jitter, budget=budget, secret=secret,
                               app_token=self._app_token)

    def close(self) -> None:
        self._gh.close()
        if self._app_token is not None:
            self._app_token.integration.close()

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
            _, data = self._http.run(op, OpKind.WRITE, self._http.call("POST", f"{self._repo_path}/pulls", body=body))
            pr = self._http.parse(op, parse_pull, data)
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
        for item in self._http.paginate(op, f"{self._repo_path}/pulls", params):
            pr = self._http.parse(op, parse_pull, item)
            if pr.head_ref == branch and pr.base_ref == base:
                return pr
        return None

    def get_pull_request(self, number: int) -> PullRequest:
        op = f"read pull request #{number} of {self.repository}"
        _, data = self._http.run(op, OpKind.READ, self._http.call("GET", f"{self._repo_path}/pulls/{int(number)}"))
        return self._http.parse(op, parse_pull, data)

    def edit_pull_request_body(self, number: int, body: str) -> None:
        """Replace a pull request's description (writing the same one twice is harmless, so a
        lost answer may be retried); nothing else of it changes."""
        op = f"edit the description of pull request #{number} of {self.repository}"
        self._http.run(op, OpKind.IDEMPOTENT_WRITE, self._http.call(
            "PATCH", f"{self._repo_path}/pulls/{int(number)}", body={"body": body}))

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
        items = self._http.paginate(op, f"{self._repo_path}/pulls", params)
        pulls = [self._http.parse(op, parse_pull, item) for item in items]
        return [pr for pr in pulls if label is None or label in pr.labels]

    def pull_requests_for_commit(self, sha: str) -> list[PullRequest]:
        op = f"list the pull requests of commit {sha} in {self.repository}"
        items = self._http.paginate(op, f"{self._repo_path}/commits/{urllib.parse.quote(sha)}/pulls", {})
        return [self._http.parse(op, parse_pull, item) for item in items]

    def is_merged(self, number: int) -> bool:
        """GitHub's own answer (`GET .../merge`: 204 merged, 404 not)."""
        op = f"check whether pull request #{number} of {self.repository} is merged"
        path = f"{self._repo_path}/pulls/{int(number)}/merge"

        def call() -> bool:
            status, headers, body = self._requester.requestJson("GET", path)
            if status == 204:
                return True
            data = error_json(body)
            if status == 404 and isinstance(data, dict | type(None)):
                return False
            raise ErrorAnswer(status, headers, data)

        return self._http.run(op, OpKind.READ, call)

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
        self._http.ensure_credentials()
        attempt = self._http.attempt(self._http.call("PUT", f"{self._repo_path}/pulls/{int(number)}/merge", body=body),
                                write=True)
        failure = attempt.failure
        if failure is None:
            _, data = attempt.value
            if isinstance(data, dict) and data.get("merged"):
                sha = data.get("sha")
                return MergeResult(MergeOutcome.MERGED, number, sha, MERGE_DONE.format(number=number, sha=sha),
                                   200)
            answer = answer_message(data) or "merged: false"
            return MergeResult(MergeOutcome.NOT_MERGEABLE, number, None,
                               MERGE_NOT_MERGEABLE.format(number=number, answer=answer), 200)
        decision = decide(OpKind.MERGE, failure, 1, 0.0, self._http.policy, 0.0)
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
        if status == 401 and self._app_token is not None:
            self._app_token.expire()  # the next call gets an installation token again
        raise client_error(op, status, attempt.answer, errors=answer_errors(attempt.data))

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
            self._http.run(op, OpKind.WRITE, self._http.call(
                "PUT", f"{self._repo_path}/pulls/{int(number)}/update-branch", body=body))
        except Invalid as exc:
            if "expected head sha" in exc.answer.lower().replace("_", " "):
                raise Conflict(texts.FORGE_CONFLICT.format(operation=op, answer=exc.answer), operation=op,
                               status=exc.status, answer=exc.answer) from None
            raise
        return True

    def close_pull_request(self, number: int) -> None:
        """Close without merging (closing twice is harmless, so a lost answer may be retried)."""
        op = f"close pull request #{number} of {self.repository}"
        self._http.run(op, OpKind.IDEMPOTENT_WRITE, self._http.call(
            "PATCH", f"{self._repo_path}/pulls/{int(number)}", body={"state": "closed"}))

    # ------------------------------------------------------------------------------------ issues side
    def comment(self, number: int, body: str) -> Comment:
        op = f"comment on #{number} of {self.repository}"
        _, data = self._http.run(op, OpKind.WRITE, self._http.call(
            "POST", f"{self._repo_path}/issues/{int(number)}/comments", body={"body": body}))
        return self._http.parse(op, lambda d: Comment(int(d["id"]), str(d.get("html_url") or d.get("url") or ""),
                                                      str(d.get("body") or ""), login_of(d.get("user"))), data)

    def add_labels(self, number: int, labels: Sequence[str]) -> tuple[str, ...]:
        """Add labels; returns every label the pull request now has."""
        op = FORGE_OP_ADD_LABELS.format(labels=", ".join(labels), number=number, repo=self.repository)
        _, data = self._http.run(op, OpKind.IDEMPOTENT_WRITE, self._http.call(
            "POST", f"{self._repo_path}/issues/{int(number)}/labels", body={"labels": list(labels)}))
        return self._http.parse(op, lambda d: tuple(str(item["name"]) for item in d), data)

    def remove_label(self, number: int, label: str) -> bool:
        """Remove a label; False when the pull request did not have it."""
        op = f"remove label {label} from #{number} of {self.repository}"
        path = f"{self._repo_path}/issues/{int(number)}/labels/{urllib.parse.quote(label, safe='')}"

        def call() -> bool:
            try:
                checked(*self._requester.requestJson("DELETE", path))
            except github.GithubException as exc:
                if exc.status == 404 and "label does not exist" in answer_message(exc.data).lower():
                    return False
                raise
            return True

        return self._http.run(op, OpKind.IDEMPOTENT_WRITE, call)

    # ------------------------------------------------------------------------------------ statuses, reviews
    def set_status(self, sha: str, update: StatusUpdate) -> CommitStatus:
        op = FORGE_OP_SET_STATUS.format(context=update.context, state=update.state, sha=sha[:12],
                                              repo=self.repository)
        body = {"state": update.state, "context": update.context}
        if update.description is not None:
            body["description"] = update.description
        if update.target_url is not None:
            body["target_url"] = update.target_url
        _, data = self._http.run(op, OpKind.IDEMPOTENT_WRITE,
                            self._http.call("POST", f"{self._repo_path}/statuses/{urllib.parse.quote(sha)}", body=body))
        return self._http.parse(op, parse_status, data)

    def combined_status(self, ref: str) -> CombinedStatus:
        op = f"read the combined status of {ref} in {self.repository}"
        _, data = self._http.run(op, OpKind.READ, self._http.call(
            "GET", f"{self._repo_path}/commits/{urllib.parse.quote(ref, safe='/')}/status",
            params={"per_page": PER_PAGE}))
        return self._http.parse(op, lambda d: CombinedStatus(
            str(d["state"]), str(d["sha"]), tuple(parse_status(s) for s in d.get("statuses") or ())), data)

    def list_reviews(self, number: int) -> list[Review]:
        op = f"list the reviews of pull request #{number} of {self.repository}"
        items = self._http.paginate(op, f"{self._repo_path}/pulls/{int(number)}/reviews", {})
        return [self._http.parse(op, parse_review, item) for item in items]

    def submit_review(self, number: int, event: str, body: str = "", commit_id: str | None = None) -> Review:
        """Submit a review (APPROVE, REQUEST_CHANGES or COMMENT) on `commit_id` (the head when
        None). Sent once: a second approval would be a second review."""
        op = FORGE_OP_REVIEW.format(event=event, number=number, repo=self.repository)
        payload: dict[str, Any] = {"event": event, "body": body}
        if commit_id:
            payload["commit_id"] = commit_id
        _, data = self._http.run(op, OpKind.WRITE, self._http.call(
            "POST", f"{self._repo_path}/pulls/{int(number)}/reviews", body=payload))
        return self._http.parse(op, parse_review, data)

    def pull_files(self, number: int) -> list[ChangedFile]:
        op = f"list the files of pull request #{number} in {self.repository}"
        items = self._http.paginate(op, f"{self._repo_path}/pulls/{int(number)}/files", {})
        return [self._http.parse(op, lambda d: ChangedFile(str(d["filename"]), str(d.get("status") or ""),
                                                           int(d.get("additions") or 0), int(d.get("deletions") or 0),
                                                           d.get("patch")), item) for item in items]

    def pull_commit_accounts(self, number: int) -> tuple[str, ...]:
        """The forge accounts GitHub matched to the authors and committers of the pull
        request's commits (commits it could not match to an account name none)."""
        op = f"list the commits of pull request #{number} of {self.repository}"
        items = self._http.paginate(op, f"{self._repo_path}/pulls/{int(number)}/commits", {})
        logins = {login_of(item.get(side)) for item in items if isinstance(item, dict)
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
            items = self._http.paginate(op, f"{self._repo_path}/activity", {"ref": f"refs/heads/{branch}"})
        except NotFound:
            return None

        def parse(entries: list[Any]) -> tuple[str, ...] | None:
            if not entries or str(entries[0]["after"]).lower() != head_sha.lower():
                return None
            logins = [login_of(entry.get("actor")) for entry in entries]
            if not all(logins):  # an entry names no actor: someone pushed whom the forge does not name
                return None
            return tuple(sorted(set(logins), key=str.casefold))

        return self._http.parse(op, parse, items)

    # ------------------------------------------------------------------------------------ who
    def permission(self, login: str) -> str:
        """`login`'s permission on the repository as the forge's collaborator permission
        endpoint says it (`admin`, `write`, `read` or `none`; GitHub's `role_name` where it is
        finer: `maintain`, `triage`); `none` for an account the forge does not know."""
        op = f"read the permission of {login} on {self.repository}"
        path = f"{self._repo_path}/collaborators/{urllib.parse.quote(login, safe='')}/permission"
        try:
            _, data = self._http.run(op, OpKind.READ, self._http.call("GET", path))
        except NotFound:
            return "none"

        def parse(d: Any) -> str:
            role = str(d.get("role_name") or "").lower()
            return role if role in ("maintain", "triage") else str(d["permission"]).lower()

        return self._http.parse(op, parse, data)

    def own_login(self) -> str:
        """The account this client acts as: the token's user, or a GitHub App's `<slug>[bot]`."""
        op = f"ask the forge which account acts for {self.repository}"
        if self._app_token is not None:
            integration = self._app_token.integration
            slug = self._app_token.as_app(
                lambda: self._http.run(op, OpKind.READ, lambda: integration.get_app().slug, credentials=False))
            return f"{slug}[bot]"
        _, data = self._http.run(op, OpKind.READ, self._http.call("GET", "/user"))
        return self._http.parse(op, lambda d: str(d["login"]), data)

    def installation_token(self) -> tuple[str, float] | None:
        """A GitHub App's installation token that outlives the refresh margin, and when it expires
        (seconds since the epoch): what git pushes and fetches as the App, since git cannot mint
        one. None for a client with a plain token."""
        if self._app_token is None:
            return None
        self._http.ensure_credentials()
        expires = self._app_token.expires_at
        assert expires is not None  # ensure minted one or raised
        return self._app_token.live.value, expires

    # ------------------------------------------------------------------------------------ git
    def compare(self, base: str, head: str) -> Comparison:
        op = f"compare {base}...{head} in {self.repository}"
        path = (f"{self._repo_path}/compare/{urllib.parse.quote(base, safe='/')}"
                f"...{urllib.parse.quote(head, safe='/')}")
        _, data = self._http.run(op, OpKind.READ, self._http.call("GET", path))

        def parse(d: Any) -> Comparison:
            merge_base = d.get("merge_base_commit") or {}
            return Comparison(str(d["status"]), int(d["ahead_by"]), int(d["behind_by"]),
                              int(d.get("total_commits") or 0), merge_base.get("sha"),
                              tuple(str(c["sha"]) for c in d.get("commits") or ()))

        return self._http.parse(op, parse, data)

    def commit_parents(self, sha: str) -> tuple[str, ...]:
        """The parents of commit `sha`, first parent first (a merge commit's first parent is
        where its base branch was)."""
        op = f"read commit {sha[:12]} of {self.repository}"
        _, data = self._http.run(op, OpKind.READ, self._http.call("GET", f"{self._repo_path}/git/commits/{sha}"))
        return self._http.parse(op, lambda d: tuple(str(p["sha"]) for p in d["parents"]), data)

    def get_ref(self, ref: str) -> Ref:
        name = _full_ref(ref)
        op = "read ref {ref} of {repo}".format(ref=f"refs/{name}", repo=self.repository)
        _, data = self._http.run(op, OpKind.READ, self._http.call(
            "GET", f"{self._repo_path}/git/ref/{urllib.parse.quote(name, safe='/')}"))
        return self._http.parse(op, lambda d: Ref(str(d["ref"]), str(d["object"]["sha"])), data)

    def update_ref(self, ref: str, sha: str, *, force: bool = False) -> Ref:
        """Move a ref to `sha` (fast-forward only unless `force`); a refused fast-forward is a
        Conflict (re-read and decide again)."""
        name = _full_ref(ref)
        op = "move ref {ref} of {repo} to {sha}".format(ref=f"refs/{name}", sha=sha[:12], repo=self.repository)
        try:
            _, data = self._http.run(op, OpKind.IDEMPOTENT_WRITE, self._http.call(
                "PATCH", f"{self._repo_path}/git/refs/{urllib.parse.quote(name, safe='/')}",
                body={"sha": sha, "force": force}))
        except Invalid as exc:
            if "fast forward" in exc.answer.lower() or "fast-forward" in exc.answer.lower():
                raise Conflict(texts.FORGE_CONFLICT.format(operation=op, answer=exc.answer), operation=op,
                               status=exc.status, answer=exc.answer) from None
            raise
        return self._http.parse(op, lambda d: Ref(str(d["ref"]), str(d["object"]["sha"])), data)

    def read_file(self, path: str, ref: str) -> FileContent:
        """A file's bytes at a ref (files over 1 MB come through the git blob API)."""
        op = f"read {path} at {ref} in {self.repository}"
        _, data = self._http.run(op, OpKind.READ, self._http.call(
            "GET", f"{self._repo_path}/contents/{urllib.parse.quote(path.strip('/'))}", params={"ref": ref}))
        if isinstance(data, list) or (isinstance(data, dict) and data.get("type") not in (None, "file")):
            kind = "directory" if isinstance(data, list) else str(data.get("type"))
            raise NotFound(FORGE_NOT_A_FILE.format(operation=op, path=path, kind=kind), operation=op,
                           status=200, answer=kind)
        if isinstance(data, dict) and data.get("encoding") == "none" and data.get("sha"):
            blob = f"{self._repo_path}/git/blobs/{data['sha']}"
            _, data = self._http.run(op, OpKind.READ, self._http.call("GET", blob))
            data = {**data, "path": path}

        def parse(d: Any) -> FileContent:
            raw = d.get("content") or ""
            if d.get("encoding", "base64") != "base64":
                raise ValueError(f"encoding {d.get('encoding')}")
            return FileContent(str(d.get("path") or path), ref, str(d["sha"]), base64.b64decode(raw))

        return self._http.parse(op, parse, data)
