"""Pure decisions of the forge client: what an HTTP failure is, whether to send again, how long
to wait, and what a failed merge means. No I/O and no clock here (time comes in as numbers),
so every rule is a row in a table test (tests/forge/test_forge_retry.py).

The rules follow GitHub's guidance for REST clients: on 403/429 obey `Retry-After`, else wait
until `x-ratelimit-reset` when `x-ratelimit-remaining` is 0, else (a secondary rate limit) wait
at least a minute; back off exponentially with jitter on 5xx and lost connections, but only
for requests that are safe to repeat; never repeat a merge.
"""

from __future__ import annotations

import email.utils
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

import requests
import urllib3.exceptions

from bot.backoff import Backoff


class OpKind(Enum):
    """How safe an operation is to send again."""

    READ = "read"  # GET: repeat freely
    IDEMPOTENT_WRITE = "idempotent write"  # same effect if applied twice (labels, statuses, ref to a sha)
    WRITE = "write"  # repeating could do it twice (a comment, a new pull request): never after an answer is lost
    MERGE = "merge"  # never sent twice by the client, whatever happens


class FailureKind(Enum):
    RATE_LIMITED = "rate limited"  # 403/429 with rate-limit signs: GitHub did not process the request
    SERVER_ERROR = "server error"  # 5xx: the request may or may not have been processed
    NOT_SENT = "not sent"  # no connection was made: the request certainly was not processed
    NO_ANSWER = "no answer"  # sent, then timeout or connection lost: may or may not have been processed
    CLIENT_ERROR = "client error"  # any other 4xx: repeating the same request gets the same answer


@dataclass(frozen=True)
class Failure:
    kind: FailureKind
    status: int | None = None
    message: str = ""
    wait: float | None = None  # RATE_LIMITED: seconds GitHub asks us to wait


@dataclass(frozen=True)
class RetryPolicy:
    """Knobs of the retry loop. `max_total_seconds` bounds one operation, waits included."""

    max_total_seconds: float = 120.0
    max_attempts: int = 8
    backoff_base: float = 0.5
    backoff_cap: float = 20.0
    secondary_rate_wait: float = 60.0
    reset_slack: float = 0.5  # x-ratelimit-reset has one-second resolution


class Action(Enum):
    RETRY = "retry"
    GIVE_UP = "give up"
    CHECK_MERGED = "check merged"  # a merge's answer was lost: ask GitHub whether it merged
    REFRESH_CREDENTIALS = "refresh credentials"  # 401 with an App token: get a new one, then retry


@dataclass(frozen=True)
class Decision:
    action: Action
    delay: float = 0.0
    reason: str = ""


# Reasons (stable codes, for logs and tests): the client only logs them and compares one; no
# person is shown them outside an operator's log.
RATE_LIMIT_WAIT = "rate limit: wait as GitHub asks"  # not said: a code, logged
RATE_LIMIT_TOO_LONG = "rate limit: the wait exceeds the time left"  # not said: a code, logged
BACKOFF = "transient failure: back off"  # not said: a code, logged
BUDGET_EXHAUSTED = "transient failure: no time left"  # not said: a code, logged
ATTEMPTS_EXHAUSTED = "transient failure: no attempts left"  # not said: a code, logged
WRITE_NOT_REPEATED = "write may have been applied: not sent again"  # not said: a code, logged
CLIENT_ERROR = "client error: same request, same answer"  # not said: a code, logged
MERGE_CHECK = "merge answer lost: check whether it merged"  # not said: a code, logged
MERGE_NEVER_REPEATED = "merge: never sent again"  # not said: a code, logged
CREDENTIALS_REFRESH = "401 with an App token: refresh once"  # not said: a code, logged


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    if not headers:
        return None
    name = name.lower()
    for key, value in headers.items():
        if key.lower() == name:
            return str(value).strip()
    return None


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a `Retry-After` value: delta-seconds or an HTTP date."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - now)


def is_primary_rate_limit_message(message: str) -> bool:
    return message.strip().lower().startswith("api rate limit exceeded")


def is_secondary_rate_limit_message(message: str) -> bool:
    text = message.strip().lower()
    return (
        "secondary rate limit" in text
        or "abuse detection" in text
        or text.endswith("please retry your request again later.")
        or text.endswith("please wait a few minutes before you try again.")
    )


def rate_limit_wait(status: int, headers: Mapping[str, str] | None, message: str, now: float,
                    policy: RetryPolicy) -> float | None:
    """Seconds to wait if this answer is a rate limit, else None (then a 403 is a permission
    problem). GitHub's order: Retry-After, then x-ratelimit-reset when remaining is 0, then
    a fixed wait for secondary limits that say nothing more."""
    if status not in (403, 429):
        return None
    retry_after = parse_retry_after(_header(headers, "Retry-After"), now)
    if retry_after is not None:
        return retry_after
    remaining = _header(headers, "X-RateLimit-Remaining")
    reset = _header(headers, "X-RateLimit-Reset")
    if remaining == "0" and reset is not None:
        try:
            return max(0.0, float(reset) - now) + policy.reset_slack
        except ValueError:
            pass
    if status == 429 or is_secondary_rate_limit_message(message) or is_primary_rate_limit_message(message):
        return policy.secondary_rate_wait
    return None


def classify_status(status: int, headers: Mapping[str, str] | None, message: str, now: float,
                    policy: RetryPolicy) -> Failure | None:
    """What an HTTP answer is: None for success (< 400), else the kind of failure."""
    if status < 400:
        return None
    wait = rate_limit_wait(status, headers, message, now, policy)
    if wait is not None:
        return Failure(FailureKind.RATE_LIMITED, status, message, wait)
    if status >= 500:
        return Failure(FailureKind.SERVER_ERROR, status, message)
    return Failure(FailureKind.CLIENT_ERROR, status, message)


def _not_sent(exc: BaseException) -> bool:
    """True when the connection was never made (refused, DNS, connect timeout): nothing sent."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, requests.exceptions.ConnectTimeout | urllib3.exceptions.NewConnectionError
                      | urllib3.exceptions.NameResolutionError | urllib3.exceptions.ConnectTimeoutError):
            return True
        if isinstance(item, urllib3.exceptions.MaxRetryError):
            todo.append(item.reason)
        todo.extend(arg for arg in item.args if isinstance(arg, BaseException))
        todo.append(item.__cause__)
        todo.append(item.__context__)
    return False


def classify_exception(exc: BaseException) -> Failure:
    """What a transport exception is: NOT_SENT when no connection was made, else NO_ANSWER
    (a read timeout or a connection lost after sending may hide an applied change)."""
    text = f"{type(exc).__name__}: {exc}"
    if _not_sent(exc):
        return Failure(FailureKind.NOT_SENT, None, text)
    return Failure(FailureKind.NO_ANSWER, None, text)


def backoff_delay(failures: int, policy: RetryPolicy, jitter: float) -> float:
    """Exponential backoff with equal jitter: half the step fixed, half random (jitter in [0, 1)),
    so retries spread out but never come back immediately."""
    schedule = Backoff(policy.backoff_base, cap=policy.backoff_cap, jitter=(0.5, 1.0))
    return schedule.delay(max(0, failures - 1), jitter)


def decide(kind: OpKind, failure: Failure, attempt: int, elapsed: float, policy: RetryPolicy,
           jitter: float, *, can_refresh_credentials: bool = False) -> Decision:
    """What to do after `attempt` (1-based) failed `elapsed` seconds into the operation."""
    if kind is OpKind.MERGE:
        if failure.kind in (FailureKind.SERVER_ERROR, FailureKind.NO_ANSWER):
            return Decision(Action.CHECK_MERGED, 0.0, MERGE_CHECK)
        return Decision(Action.GIVE_UP, failure.wait or 0.0, MERGE_NEVER_REPEATED)
    if failure.kind is FailureKind.CLIENT_ERROR:
        if failure.status == 401 and can_refresh_credentials:
            return Decision(Action.REFRESH_CREDENTIALS, 0.0, CREDENTIALS_REFRESH)
        return Decision(Action.GIVE_UP, 0.0, CLIENT_ERROR)
    if attempt >= policy.max_attempts:
        return Decision(Action.GIVE_UP, 0.0, ATTEMPTS_EXHAUSTED)
    left = policy.max_total_seconds - elapsed
    if failure.kind is FailureKind.RATE_LIMITED:
        wait = failure.wait if failure.wait is not None else policy.secondary_rate_wait
        if wait > left:
            return Decision(Action.GIVE_UP, wait, RATE_LIMIT_TOO_LONG)
        return Decision(Action.RETRY, wait, RATE_LIMIT_WAIT)
    if kind is OpKind.WRITE and failure.kind is not FailureKind.NOT_SENT:
        return Decision(Action.GIVE_UP, 0.0, WRITE_NOT_REPEATED)
    delay = backoff_delay(attempt, policy, jitter)
    if delay > left:
        return Decision(Action.GIVE_UP, 0.0, BUDGET_EXHAUSTED)
    return Decision(Action.RETRY, delay, BACKOFF)


def write_delay(last_write_end: float | None, interval: float, now: float) -> float:
    """Seconds to wait before the next mutating request, so writes are `interval` apart
    (GitHub asks for about a second between writes to avoid secondary rate limits)."""
    if last_write_end is None or interval <= 0:
        return 0.0
    return max(0.0, last_write_end + interval - now)


def token_needs_refresh(expires_at: float | None, now: float, margin: float) -> bool:
    """An installation token is replaced `margin` seconds before it expires, so no request
    (or long retry loop) starts with a token about to die."""
    return expires_at is None or expires_at - margin <= now


class MergeOutcome(Enum):
    """What a merge call did. Outcomes with `reread` mean: read the pull request again and
    decide again; the client never re-sends a merge."""

    MERGED = "merged"  # this call merged it (or, after a lost answer, GitHub says it is merged)
    ALREADY_MERGED = "already merged"  # it was merged before this call
    HEAD_MOVED = "head moved"  # 409: the head is no longer the expected sha
    BASE_MOVED = "base moved"  # 405 "Base branch was modified"
    NOT_MERGEABLE = "not mergeable"  # 405 otherwise: conflicts, closed, a branch rule
    NOT_MERGED = "not merged"  # the answer was lost or refused and GitHub says it is not merged
    UNKNOWN = "unknown"  # the answer was lost and whether it merged could not be checked

    @property
    def merged(self) -> bool:
        return self in (MergeOutcome.MERGED, MergeOutcome.ALREADY_MERGED)

    @property
    def reread(self) -> bool:
        return self in (MergeOutcome.HEAD_MOVED, MergeOutcome.BASE_MOVED, MergeOutcome.NOT_MERGED,
                        MergeOutcome.UNKNOWN)


def merge_refusal_outcome(status: int, message: str) -> MergeOutcome | None:
    """The outcome of a merge GitHub answered with a 4xx it uses for merge decisions; None for
    other statuses (those are errors: 401, 403, 404, 422...)."""
    if status == 409:
        return MergeOutcome.HEAD_MOVED
    if status == 405:
        if "base branch was modified" in message.lower():
            return MergeOutcome.BASE_MOVED
        return MergeOutcome.NOT_MERGEABLE
    return None


def merge_check_outcome(merged: bool | None) -> MergeOutcome:
    """After a lost merge answer: GET .../merge said 204 (True), 404 (False) or nothing usable."""
    if merged is None:
        return MergeOutcome.UNKNOWN
    return MergeOutcome.MERGED if merged else MergeOutcome.NOT_MERGED
