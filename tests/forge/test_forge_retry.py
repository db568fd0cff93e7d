"""The forge client's pure decisions, as tables: what a failure is, whether to send again and
after how long, what a refused or lost merge means, when to space writes and refresh tokens."""

from __future__ import annotations

import email.utils

import pytest
import requests
import urllib3.exceptions

from bot.forge import errors
from bot.forge.retry import (
    ATTEMPTS_EXHAUSTED,
    BACKOFF,
    BUDGET_EXHAUSTED,
    CLIENT_ERROR,
    CREDENTIALS_REFRESH,
    MERGE_CHECK,
    MERGE_NEVER_REPEATED,
    RATE_LIMIT_TOO_LONG,
    RATE_LIMIT_WAIT,
    WRITE_NOT_REPEATED,
    Action,
    Failure,
    FailureKind,
    MergeOutcome,
    OpKind,
    RetryPolicy,
    backoff_delay,
    classify_exception,
    classify_status,
    decide,
    merge_check_outcome,
    merge_refusal_outcome,
    parse_retry_after,
    rate_limit_wait,
    token_needs_refresh,
    write_delay,
)

NOW = 1_700_000_000.0
POLICY = RetryPolicy(max_total_seconds=60.0, max_attempts=5, backoff_base=1.0, backoff_cap=8.0,
                     secondary_rate_wait=60.0, reset_slack=0.5)
SECONDARY = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
ABUSE = "You have triggered an abuse detection mechanism. Please wait a few minutes before you try again."
PRIMARY = "API rate limit exceeded for installation ID 1234."


@pytest.mark.parametrize(("value", "expected"), [
    (None, None),
    ("", None),
    ("0", 0.0),
    ("1", 1.0),
    ("120", 120.0),
    ("2.5", 2.5),
    ("-3", 0.0),
    (email.utils.formatdate(NOW + 30, usegmt=True), 30.0),
    (email.utils.formatdate(NOW - 30, usegmt=True), 0.0),
    ("soon", None),
])
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value, NOW) == (pytest.approx(expected) if expected is not None else None)


@pytest.mark.parametrize(("status", "headers", "message", "expected"), [
    # Retry-After wins, on 403 and 429 alike.
    (403, {"Retry-After": "7"}, SECONDARY, 7.0),
    (429, {"retry-after": "1"}, "", 1.0),
    (429, {"Retry-After": "3", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(NOW) + 100)}, "", 3.0),
    # Primary limit: wait until the reset (plus slack for the one-second resolution).
    (403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(NOW) + 1)}, PRIMARY, 1.5),
    (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 42)}, "", 42.5),
    (403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(NOW) - 5)}, PRIMARY, 0.5),
    # Secondary limits without headers: GitHub says wait at least a minute.
    (403, {"X-RateLimit-Remaining": "4999"}, SECONDARY, 60.0),
    (403, {}, ABUSE, 60.0),
    (403, {}, PRIMARY, 60.0),
    (429, {}, "", 60.0),
    # A 403 with remaining quota and no rate-limit words is a permission problem.
    (403, {"X-RateLimit-Remaining": "4999", "X-RateLimit-Reset": str(int(NOW) + 5)}, "Resource not accessible", None),
    (403, {"X-RateLimit-Remaining": "0"}, "Must have admin rights", None),  # no reset: not a rate limit answer
    # Other statuses never are rate limits.
    (500, {"Retry-After": "5"}, "", None),
    (404, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(NOW) + 5)}, "Not Found", None),
])
def test_rate_limit_wait(status: int, headers: dict[str, str], message: str, expected: float | None) -> None:
    wait = rate_limit_wait(status, headers, message, NOW, POLICY)
    assert wait == (pytest.approx(expected) if expected is not None else None)


@pytest.mark.parametrize(("status", "headers", "message", "kind"), [
    (200, {}, "", None),
    (204, {}, "", None),
    (304, {}, "", None),
    (400, {}, "Problems parsing JSON", FailureKind.CLIENT_ERROR),
    (401, {}, "Bad credentials", FailureKind.CLIENT_ERROR),
    (403, {}, "Resource not accessible by integration", FailureKind.CLIENT_ERROR),
    (403, {"Retry-After": "1"}, SECONDARY, FailureKind.RATE_LIMITED),
    (404, {}, "Not Found", FailureKind.CLIENT_ERROR),
    (405, {}, "Pull Request is not mergeable", FailureKind.CLIENT_ERROR),
    (409, {}, "Head branch was modified. Review and try the merge again.", FailureKind.CLIENT_ERROR),
    (422, {}, "Validation Failed", FailureKind.CLIENT_ERROR),
    (429, {}, "", FailureKind.RATE_LIMITED),
    (500, {}, "Internal Server Error", FailureKind.SERVER_ERROR),
    (502, {}, "Server Error", FailureKind.SERVER_ERROR),
    (503, {"Retry-After": "2"}, "", FailureKind.SERVER_ERROR),
    (504, {}, "", FailureKind.SERVER_ERROR),
])
def test_classify_status(status: int, headers: dict[str, str], message: str, kind: FailureKind | None) -> None:
    failure = classify_status(status, headers, message, NOW, POLICY)
    assert (failure.kind if failure else None) is kind
    if failure is not None:
        assert failure.status == status


def _wrapped(reason: BaseException) -> requests.exceptions.ConnectionError:
    """How requests reports a urllib3 failure with retries off."""
    return requests.exceptions.ConnectionError(urllib3.exceptions.MaxRetryError(None, "/x", reason))  # type: ignore[arg-type]


@pytest.mark.parametrize(("exc", "kind"), [
    (requests.exceptions.ConnectTimeout("connect timed out"), FailureKind.NOT_SENT),
    (_wrapped(urllib3.exceptions.NewConnectionError(None, "Connection refused")), FailureKind.NOT_SENT),  # type: ignore[arg-type]
    (_wrapped(urllib3.exceptions.NameResolutionError("nohost", None, OSError("dns"))), FailureKind.NOT_SENT),  # type: ignore[arg-type]
    (requests.exceptions.ReadTimeout("read timed out"), FailureKind.NO_ANSWER),
    (requests.exceptions.ConnectionError(urllib3.exceptions.ProtocolError("Connection aborted.",
                                                                          ConnectionResetError())),
     FailureKind.NO_ANSWER),
    (requests.exceptions.ChunkedEncodingError("broken"), FailureKind.NO_ANSWER),
])
def test_classify_exception(exc: BaseException, kind: FailureKind) -> None:
    failure = classify_exception(exc)
    assert failure.kind is kind
    assert failure.status is None
    assert type(exc).__name__ in failure.message


@pytest.mark.parametrize(("failures", "jitter", "expected"), [
    (1, 0.0, 0.5),
    (1, 1.0, 1.0),
    (2, 0.0, 1.0),
    (3, 0.5, 3.0),
    (4, 1.0, 8.0),
    (5, 0.0, 4.0),  # capped at 8: half fixed
    (9, 1.0, 8.0),
    (0, 0.0, 0.5),
    (2, 7.0, 2.0),  # jitter is clamped to [0, 1]
])
def test_backoff_delay(failures: int, jitter: float, expected: float) -> None:
    assert backoff_delay(failures, POLICY, jitter) == pytest.approx(expected)


RL = Failure(FailureKind.RATE_LIMITED, 403, SECONDARY, wait=2.0)
RL_LONG = Failure(FailureKind.RATE_LIMITED, 429, "", wait=3600.0)
S5 = Failure(FailureKind.SERVER_ERROR, 502)
LOST = Failure(FailureKind.NO_ANSWER, None, "ReadTimeout")
UNSENT = Failure(FailureKind.NOT_SENT, None, "ConnectTimeout")
E401 = Failure(FailureKind.CLIENT_ERROR, 401, "Bad credentials")
E404 = Failure(FailureKind.CLIENT_ERROR, 404, "Not Found")
E409 = Failure(FailureKind.CLIENT_ERROR, 409, "Head branch was modified.")
E422 = Failure(FailureKind.CLIENT_ERROR, 422, "Validation Failed")

READ, IDEM, WRITE, MERGE = OpKind.READ, OpKind.IDEMPOTENT_WRITE, OpKind.WRITE, OpKind.MERGE
RETRY, GIVE_UP, CHECK, REFRESH = Action.RETRY, Action.GIVE_UP, Action.CHECK_MERGED, Action.REFRESH_CREDENTIALS


@pytest.mark.parametrize(("kind", "failure", "attempt", "elapsed", "refresh", "action", "delay", "reason"), [
    # Reads: back off on 5xx, lost answers and refused connections; wait out rate limits.
    (READ, S5, 1, 0.0, False, RETRY, 0.75, BACKOFF),
    (READ, S5, 2, 0.0, False, RETRY, 1.5, BACKOFF),
    (READ, LOST, 1, 0.0, False, RETRY, 0.75, BACKOFF),
    (READ, UNSENT, 3, 0.0, False, RETRY, 3.0, BACKOFF),
    (READ, RL, 1, 0.0, False, RETRY, 2.0, RATE_LIMIT_WAIT),
    # ...within the bounds: attempts and total time.
    (READ, S5, 5, 0.0, False, GIVE_UP, 0.0, ATTEMPTS_EXHAUSTED),
    (READ, S5, 3, 58.0, False, GIVE_UP, 0.0, BUDGET_EXHAUSTED),
    (READ, RL, 1, 59.0, False, GIVE_UP, 2.0, RATE_LIMIT_TOO_LONG),
    (READ, RL_LONG, 1, 0.0, False, GIVE_UP, 3600.0, RATE_LIMIT_TOO_LONG),
    # 4xx: the same request gets the same answer.
    (READ, E404, 1, 0.0, False, GIVE_UP, 0.0, CLIENT_ERROR),
    (READ, E401, 1, 0.0, False, GIVE_UP, 0.0, CLIENT_ERROR),
    (READ, E401, 1, 0.0, True, REFRESH, 0.0, CREDENTIALS_REFRESH),
    (IDEM, E422, 1, 0.0, True, GIVE_UP, 0.0, CLIENT_ERROR),
    # Idempotent writes repeat like reads.
    (IDEM, S5, 1, 0.0, False, RETRY, 0.75, BACKOFF),
    (IDEM, LOST, 1, 0.0, False, RETRY, 0.75, BACKOFF),
    (IDEM, RL, 1, 0.0, False, RETRY, 2.0, RATE_LIMIT_WAIT),
    # Other writes: never after a lost answer; a refused connection or a rate limit is safe.
    (WRITE, S5, 1, 0.0, False, GIVE_UP, 0.0, WRITE_NOT_REPEATED),
    (WRITE, LOST, 1, 0.0, False, GIVE_UP, 0.0, WRITE_NOT_REPEATED),
    (WRITE, UNSENT, 1, 0.0, False, RETRY, 0.75, BACKOFF),
    (WRITE, RL, 1, 0.0, False, RETRY, 2.0, RATE_LIMIT_WAIT),
    (WRITE, E409, 1, 0.0, False, GIVE_UP, 0.0, CLIENT_ERROR),
    # Merges: never sent twice; a lost answer means asking whether it merged.
    (MERGE, S5, 1, 0.0, False, CHECK, 0.0, MERGE_CHECK),
    (MERGE, LOST, 1, 0.0, False, CHECK, 0.0, MERGE_CHECK),
    (MERGE, UNSENT, 1, 0.0, False, GIVE_UP, 0.0, MERGE_NEVER_REPEATED),
    (MERGE, RL, 1, 0.0, False, GIVE_UP, 2.0, MERGE_NEVER_REPEATED),
    (MERGE, E409, 1, 0.0, False, GIVE_UP, 0.0, MERGE_NEVER_REPEATED),
    (MERGE, E401, 1, 0.0, True, GIVE_UP, 0.0, MERGE_NEVER_REPEATED),
])
def test_decide(kind: OpKind, failure: Failure, attempt: int, elapsed: float, refresh: bool, action: Action,
                delay: float, reason: str) -> None:
    decision = decide(kind, failure, attempt, elapsed, POLICY, 0.5, can_refresh_credentials=refresh)
    assert (decision.action, decision.delay, decision.reason) == (action, pytest.approx(delay), reason)


def test_decide_never_retries_a_merge_whatever_the_failure() -> None:
    for kind in FailureKind:
        for status in (None, 403, 404, 405, 409, 422, 429, 500, 502, 503):
            decision = decide(MERGE, Failure(kind, status, "", wait=1.0), 1, 0.0, POLICY, 0.0,
                              can_refresh_credentials=True)
            assert decision.action in (Action.GIVE_UP, Action.CHECK_MERGED)


@pytest.mark.parametrize(("last", "interval", "now", "expected"), [
    (None, 1.0, 100.0, 0.0),
    (99.5, 1.0, 100.0, 0.5),
    (98.0, 1.0, 100.0, 0.0),
    (100.0, 0.0, 100.0, 0.0),
    (100.0, 2.0, 100.0, 2.0),
])
def test_write_delay(last: float | None, interval: float, now: float, expected: float) -> None:
    assert write_delay(last, interval, now) == pytest.approx(expected)


@pytest.mark.parametrize(("expires", "now", "margin", "expected"), [
    (None, 0.0, 300.0, True),
    (1000.0, 0.0, 300.0, False),
    (1000.0, 699.0, 300.0, False),
    (1000.0, 700.0, 300.0, True),
    (1000.0, 2000.0, 300.0, True),
])
def test_token_needs_refresh(expires: float | None, now: float, margin: float, expected: bool) -> None:
    assert token_needs_refresh(expires, now, margin) is expected


@pytest.mark.parametrize(("status", "message", "outcome"), [
    (409, "Head branch was modified. Review and try the merge again.", MergeOutcome.HEAD_MOVED),
    (405, "Base branch was modified. Review and try the merge again.", MergeOutcome.BASE_MOVED),
    (405, "Pull Request is not mergeable", MergeOutcome.NOT_MERGEABLE),
    (405, "Required status check \"ci\" is expected.", MergeOutcome.NOT_MERGEABLE),
    (405, "At least 1 approving review is required by reviewers with write access.", MergeOutcome.NOT_MERGEABLE),
    (404, "Not Found", None),
    (422, "Validation Failed", None),
    (403, "Resource not accessible by integration", None),
])
def test_merge_refusal_outcome(status: int, message: str, outcome: MergeOutcome | None) -> None:
    assert merge_refusal_outcome(status, message) is outcome


@pytest.mark.parametrize(("merged", "outcome"), [
    (True, MergeOutcome.MERGED), (False, MergeOutcome.NOT_MERGED), (None, MergeOutcome.UNKNOWN)])
def test_merge_check_outcome(merged: bool | None, outcome: MergeOutcome) -> None:
    assert merge_check_outcome(merged) is outcome


@pytest.mark.parametrize(("outcome", "merged", "reread"), [
    (MergeOutcome.MERGED, True, False),
    (MergeOutcome.ALREADY_MERGED, True, False),
    (MergeOutcome.HEAD_MOVED, False, True),
    (MergeOutcome.BASE_MOVED, False, True),
    (MergeOutcome.NOT_MERGEABLE, False, False),
    (MergeOutcome.NOT_MERGED, False, True),
    (MergeOutcome.UNKNOWN, False, True),
])
def test_merge_outcome_properties(outcome: MergeOutcome, merged: bool, reread: bool) -> None:
    assert (outcome.merged, outcome.reread) == (merged, reread)


@pytest.mark.parametrize(("status", "cls"), [
    (400, errors.Rejected),
    (401, errors.Unauthorized),
    (403, errors.Forbidden),
    (404, errors.NotFound),
    (405, errors.NotAllowed),
    (409, errors.Conflict),
    (410, errors.NotFound),
    (418, errors.Rejected),
    (422, errors.Invalid),
    (429, errors.RateLimited),
    (500, errors.Unavailable),
    (None, errors.Unavailable),
])
def test_error_class_for_status(status: int | None, cls: type[errors.ForgeError]) -> None:
    assert errors.error_class_for_status(status) is cls


@pytest.mark.parametrize("status", [400, 401, 403, 404, 405, 409, 410, 418, 422])
def test_client_error_names_operation_and_answer(status: int) -> None:
    exc = errors.client_error("read pull request #3 of acme/memory", status, f"HTTP {status}: nope")
    assert isinstance(exc, errors.ForgeError)
    assert "read pull request #3 of acme/memory" in str(exc)
    assert f"HTTP {status}: nope" in str(exc)
    assert exc.status == status
