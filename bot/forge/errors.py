"""Errors of the forge client, one type per thing a caller (the integrator) does differently:
NotFound (gone: stop), Unauthorized (credentials: alert), Forbidden (permissions: alert),
Conflict / NotAllowed (state changed: re-read and decide again), Invalid (a bug or a rule),
RateLimited (come back later), Unavailable (GitHub down: come back later), UncertainWrite
(a write may have happened: re-read before repeating it).

Every message names the operation and what GitHub answered, and never a credential.
"""

from __future__ import annotations

from bot.errors import MemrepoError
from bot.forge import texts

FORGE_UNAUTHORIZED = (
    "{operation}: GitHub refused the credentials (answered {answer}); check the token, or the App's private key "
    "and installation"
)
FORGE_FORBIDDEN = (
    "{operation}: not permitted (GitHub answered {answer}); the token or App installation lacks a permission"
)


class ForgeError(MemrepoError):
    """A forge call failed. `operation` is what was attempted, `status` the HTTP status (None
    when there was no answer) and `answer` GitHub's answer as text."""

    def __init__(self, message: str, *, operation: str, status: int | None = None, answer: str = "",
                 **details: object) -> None:
        super().__init__(message, operation=operation, status=status, answer=answer, **details)
        self.operation = operation
        self.status = status
        self.answer = answer


class ForgeConfigError(MemrepoError):
    """The client was set up wrongly (no credentials, a bad repository name)."""


class NotFound(ForgeError):
    """404: the repository, pull request, ref or file does not exist (or is hidden from us)."""


class Unauthorized(ForgeError):
    """401: the token or the App's key is wrong, expired or revoked."""


class Forbidden(ForgeError):
    """403 that is not a rate limit: the credentials lack a permission."""


class Conflict(ForgeError):
    """409: the state changed under us (a ref or a head moved); re-read and decide again."""


class NotAllowed(ForgeError):
    """405: GitHub refuses the action in the current state."""


class Invalid(ForgeError):
    """422: GitHub refuses the request's content (a validation failed)."""


class Rejected(ForgeError):
    """Any other 4xx."""


class RateLimited(ForgeError):
    """Rate limited for longer than the time left; `retry_after` seconds from when it was raised."""

    def __init__(self, message: str, *, operation: str, status: int | None = None, answer: str = "",
                 retry_after: float = 0.0, **details: object) -> None:
        super().__init__(message, operation=operation, status=status, answer=answer, retry_after=retry_after,
                         **details)
        self.retry_after = retry_after


class Unavailable(ForgeError):
    """5xx or no connection, after the retries the operation allowed."""


class UncertainWrite(Unavailable):
    """A write's answer was lost (5xx, timeout); it may have been applied, so it was not sent again."""


def unreachable(exc: BaseException) -> bool:
    """Whether `exc` says the forge never answered (no connection, or no answer in time) rather
    than answering with an error: the person then needs to start or reach the forge, and the
    transport's own error text says nothing more useful to them."""
    return isinstance(exc, Unavailable) and not isinstance(exc, UncertainWrite) and exc.status is None


class BadAnswer(ForgeError):
    """GitHub answered success with a body that is not the documented shape."""


_BY_STATUS: dict[int, type[ForgeError]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: NotAllowed,
    409: Conflict,
    410: NotFound,
    422: Invalid,
}

_MESSAGE: dict[type[ForgeError], str] = {
    Unauthorized: FORGE_UNAUTHORIZED,
    Forbidden: FORGE_FORBIDDEN,
    NotFound: "{operation}: not found (GitHub answered {answer})",
    NotAllowed: "{operation}: GitHub does not allow this now (answered {answer})",
    Conflict: texts.FORGE_CONFLICT,
    Invalid: "{operation}: GitHub refused the request as invalid (answered {answer})",
    Rejected: "{operation}: GitHub answered {answer}",
}


def error_class_for_status(status: int | None) -> type[ForgeError]:
    """The exception type for a final (not retried) HTTP failure."""
    if status is None or status >= 500:
        return Unavailable
    if status in (429,):
        return RateLimited
    return _BY_STATUS.get(status, Rejected)


def client_error(operation: str, status: int, answer: str, **details: object) -> ForgeError:
    """The exception for a 4xx that is not a rate limit, with its message from bot/forge/texts.py."""
    cls = error_class_for_status(status)
    if cls not in _MESSAGE:
        cls = Rejected
    return cls(_MESSAGE[cls].format(operation=operation, answer=answer), operation=operation, status=status,
               answer=answer, **details)
