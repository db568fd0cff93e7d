"""How the forge client sends a request and reads its answer: one attempt at a time, each
classified, sent again only as `bot.forge.retry` decides, within the shared budget; pages
followed through Link headers; answers read through a length and depth bound; credentials
redacted from every answer quoted in an error.

Each attempt is exactly one HTTP request through PyGithub's `Requester` (authentication, base
URL, its exception types), with PyGithub's own retries and request spacing turned off: this
module alone decides what is sent again, because PyGithub's default retry re-sends a merge
that failed with a 5xx. The endpoints themselves are in `bot.forge.client`.
"""

from __future__ import annotations

import binascii
import contextlib
import logging
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import github
import requests

from bot.bounded_json import TooDeepError, loads_bounded
from bot.forge.errors import BadAnswer, ForgeError, RateLimited, Unavailable, UncertainWrite, client_error
from bot.forge.retry import (
    WRITE_NOT_REPEATED,
    Action,
    Failure,
    FailureKind,
    OpKind,
    RetryPolicy,
    classify_exception,
    classify_status,
    decide,
    write_delay,
)
from bot.texts import Text

if TYPE_CHECKING:
    from bot.forge.credentials import InstallationToken
    from bot.forge.shared import SharedBudget

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

MAX_PAGES = 50
PER_PAGE = 100
ANSWER_CHARS = 300
# Characters of one answer that are parsed at most. The largest answers memrepo reads (a page of
# 100 pull requests, a comparison, a memory file's contents) are a few MB; a forge that answers
# more is refused, not parsed (requests has read the body by then: the bound is on parsing).
MAX_ANSWER_CHARS = 32 * 1024 * 1024

log = logging.getLogger("memrepo.forge")
T = TypeVar("T")


# ---------------------------------------------------------------------------------------- reading answers
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
    did what it did, so it is not sent again; `Transport.run` turns this into a BadAnswer naming
    the operation."""

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


def error_json(body: str | bytes | None) -> Any:
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


def checked(status: int, headers: dict[str, Any], body: str) -> tuple[dict[str, Any], Any]:
    """PyGithub's requestJsonAndCheck with the answer read through `_answer_json`: the headers
    and JSON of a 2xx answer (_Unreadable when it is no JSON memrepo reads), PyGithub's own
    exception for any other status."""
    if status >= 400:
        raise github.Requester.Requester.createException(status, headers, error_json(body))
    try:
        return headers, _answer_json(body)
    except ValueError as exc:
        raise _Unreadable(status, str(exc)) from None


def answer_message(data: Any) -> str:
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


def answer_errors(data: Any) -> list[Any]:
    """The `errors` list of an error answer (a 422's validation errors), or none."""
    if isinstance(data, dict) and isinstance(data.get("errors"), list):
        return list(data["errors"])
    return []


class ErrorAnswer(Exception):
    """A non-2xx answer to a request made without PyGithub's check (status-sensitive calls)."""

    def __init__(self, status: int, headers: Mapping[str, str], data: Any) -> None:
        super().__init__(status)
        self.status = status
        self.headers = headers
        self.data = data


@dataclass
class Attempt:
    """One request's outcome: its value, or what failed, GitHub's answer as text and its JSON."""

    value: Any = None
    failure: Failure | None = None
    answer: str = ""
    data: Any = None


# ---------------------------------------------------------------------------------------- sending
class Transport:
    """Sends one client's requests: spaces writes by `min_write_interval`, waits for the shared
    `budget`, keeps an App's installation token fresh before each request, and retries by
    `policy`. The clock, sleep and jitter are injectable for tests."""

    def __init__(self, requester: github.Requester.Requester, *, policy: RetryPolicy, min_write_interval: float,
                 clock: Callable[[], float], wall: Callable[[], float], sleep: Callable[[float], None],
                 jitter: Callable[[], float], budget: SharedBudget | None, secret: str | None,
                 app_token: InstallationToken | None) -> None:
        self.requester = requester
        self.policy = policy
        self.app_token = app_token
        self._min_write_interval = min_write_interval
        self._clock, self._wall, self._sleep, self._jitter = clock, wall, sleep, jitter
        self._budget = budget
        self._secret = secret
        self._write_lock = threading.Lock()
        self._last_write_end: float | None = None

    def call(self, verb: str, path: str, *, params: Mapping[str, Any] | None = None,
             body: Any = None) -> Callable[[], tuple[dict[str, Any], Any]]:
        """One request through PyGithub's requester (raises GithubException for >= 400). Its
        answer is read here, not by PyGithub, to bound it (`_answer_json`); an absolute URL (a
        next page) is sent to the forge's own host, whatever host it names."""
        return lambda: checked(*self.requester.requestJson(verb, path, parameters=dict(params) if params else None,
                                                           input=body))

    def paginate(self, op: str, path: str, params: Mapping[str, Any]) -> list[Any]:
        """Every page (each page one retried read), following GitHub's Link headers."""
        items: list[Any] = []
        url: str | None = path
        query: dict[str, Any] | None = {**params, "per_page": PER_PAGE}
        for _ in range(MAX_PAGES):
            if url is None:
                break
            headers, data = self.run(op, OpKind.READ, self.call("GET", url, params=query))
            if not isinstance(data, list):
                raise BadAnswer(FORGE_BAD_ANSWER.format(operation=op, problem="expected a list"),
                                operation=op, status=200)
            items.extend(data)
            url, query = _next_link(headers.get("link") or headers.get("Link")), None
        return items

    def parse(self, op: str, parse: Callable[[Any], T], data: Any) -> T:
        """`parse(data)`, or a BadAnswer naming `op` when the answer is not the documented shape."""
        try:
            return parse(data)
        except (KeyError, TypeError, ValueError, AttributeError, binascii.Error) as exc:
            raise BadAnswer(FORGE_BAD_ANSWER.format(operation=op, problem=f"{type(exc).__name__}: {exc}"),
                            operation=op, status=200) from None

    def ensure_credentials(self) -> None:
        """With App credentials: a token that outlives the refresh margin before a request goes."""
        if self.app_token is not None:
            self.app_token.ensure(partial(self.run, credentials=False))

    def attempt(self, call: Callable[[], T], *, write: bool) -> Attempt:
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

    def run(self, op: str, kind: OpKind, call: Callable[[], T], *, credentials: bool = True) -> T:
        """Send until it succeeds or the policy gives up; `kind` says what may be repeated."""
        start = self._clock()
        attempt = 0
        refreshed = False
        while True:
            attempt += 1
            if credentials:
                self.ensure_credentials()
            try:
                result = self.attempt(call, write=kind is not OpKind.READ)
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
                self._budget.back_off(failure.wait if failure.wait is not None else self.policy.secondary_rate_wait)
            elapsed = self._clock() - start
            decision = decide(kind, failure, attempt, elapsed, self.policy, self._jitter(),
                              can_refresh_credentials=credentials and self.app_token is not None and not refreshed)
            log.info("%s: attempt %d: %s -> %s %.2fs (%s)", op, attempt, result.answer, decision.action.value,
                     decision.delay, decision.reason)
            if decision.action is Action.RETRY:
                self._sleep(decision.delay)
                continue
            if decision.action is Action.REFRESH_CREDENTIALS:
                refreshed = True
                assert self.app_token is not None  # decide refreshes only when told it can
                self.app_token.refuse()
                continue
            raise self._final_error(op, failure, decision.reason, result, attempt, elapsed)

    def _redact(self, text: str) -> str:
        live = self.app_token.live.value if self.app_token is not None else ""
        for secret in (self._secret, live):
            if secret:
                text = text.replace(secret, "***")
        return text

    def _classified(self, call: Callable[[], T]) -> Attempt:
        try:
            return Attempt(value=call())
        except github.GithubException as exc:
            status, headers, data = exc.status, exc.headers or {}, exc.data
        except ErrorAnswer as exc:
            status, headers, data = exc.status, exc.headers, exc.data
        except requests.exceptions.RequestException as exc:
            failure = classify_exception(exc)
            template = "could not connect ({error})" if failure.kind is FailureKind.NOT_SENT \
                else "no answer ({error})"
            answer = self._redact(template.format(error=failure.message[:ANSWER_CHARS]))
            return Attempt(failure=replace(failure, message=answer), answer=answer)
        message = self._redact(answer_message(data))
        failure = classify_status(int(status), headers, message, self._wall(), self.policy)
        if failure is None:  # PyGithub raised for a status below 400: treat it as GitHub's refusal
            failure = Failure(FailureKind.CLIENT_ERROR, int(status), message)
        template = "HTTP {status}: {message}" if message else "HTTP {status}"
        return Attempt(failure=failure, answer=template.format(status=status, message=message), data=data)

    def _final_error(self, op: str, failure: Failure, reason: str, result: Attempt, attempts: int,
                     elapsed: float) -> ForgeError:
        answer = result.answer
        if failure.kind is FailureKind.CLIENT_ERROR:
            return client_error(op, failure.status or 0, answer, errors=answer_errors(result.data))
        if failure.kind is FailureKind.RATE_LIMITED:
            wait = failure.wait or 0.0
            retry_at = datetime.fromtimestamp(self._wall() + wait, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            left = max(0.0, self.policy.max_total_seconds - elapsed)
            return RateLimited(FORGE_RATE_LIMITED.format(operation=op, answer=answer, wait=wait, left=left,
                                                         retry_at=retry_at),
                               operation=op, status=failure.status, answer=answer, retry_after=wait)
        if reason == WRITE_NOT_REPEATED:
            return UncertainWrite(FORGE_UNCERTAIN_WRITE.format(operation=op, answer=answer), operation=op,
                                  status=failure.status, answer=answer)
        return Unavailable(FORGE_GAVE_UP.format(operation=op, attempts=attempts, elapsed=elapsed, answer=answer),
                           operation=op, status=failure.status, answer=answer, attempts=attempts)
