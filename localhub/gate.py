"""What localhub's own endpoints (`/_localhub/`) demand of every request, decided in one place
so an endpoint added later cannot forget it: the pure rules, no Flask.

Those endpoints make tokens, register and install Apps, make repositories, protect branches,
arm faults (an answer GitHub never gave) and switch webhook delivery off. A web page open in the
user's browser reaches a loopback port too, and a "simple" cross-origin request (a form or
`text/plain` POST) is sent without asking first; so is any request from another local process.
Hence every request under `/_localhub/` but the health check carries the operator credential
(localhub.operator), which no page can attach by itself, and a body is JSON by its Content-Type
(a form or `text/plain` body is what a page can send without a preflight). GitHub's own routes
(`/api/v3`, git) need a user's token in `Authorization` to change anything, which a cross-origin
page cannot send either, so they keep GitHub's rules (GitHub refuses no Content-Type).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from localhub import messages

PREFIX = "/_localhub/"
# Requests anyone on loopback may make: they change nothing and reveal nothing.
OPEN = frozenset({("GET", "/_localhub/health"), ("HEAD", "/_localhub/health")})
JSON = "application/json"


@dataclass(frozen=True)
class Refusal:
    """A request refused: GitHub's status and the one-line message of its error body."""

    status: int
    message: str


def is_admin(path: str, rule: str | None = None) -> bool:
    """Whether a request is for localhub's own endpoints: by its path with repeated slashes,
    `.` and `..` resolved as a client or a redirect would, or by the route it matched."""
    if rule is not None and rule.startswith(PREFIX):
        return True
    normal = posixpath.normpath("/" + path.lstrip("/")) if path else "/"
    return (normal + "/").startswith(PREFIX)


def refusal(method: str, path: str, *, operator: bool, credential: bool, content_type: str | None,
            has_body: bool) -> Refusal | None:
    """Why a request to `/_localhub/...` is refused, or None to let it through. `operator`:
    it carries the operator credential; `credential`: it carries some other one (a user's token,
    an App's JWT); `content_type`: its media type without parameters (None: no header)."""
    method = method.upper()
    if (method, path.rstrip("/") or "/") in OPEN:
        return None
    if not operator:
        if credential:
            return Refusal(403, messages.ADMIN_NEEDS_OPERATOR)
        return Refusal(401, messages.ADMIN_NEEDS_OPERATOR)
    if method in ("GET", "HEAD", "OPTIONS"):
        return None
    given = (content_type or "").strip().lower()
    if (has_body or given) and given != JSON:
        return Refusal(415, messages.ADMIN_NEEDS_JSON.format(given=given or messages.NO_CONTENT_TYPE))
    return None
