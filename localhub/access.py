"""Who may do what on a repository, as GitHub decides it: the pure rules, no database.

GitHub gives each account one role on a repository, from least to most: `none`, `read`,
`triage`, `write`, `maintain`, `admin`. The owner is `admin`; a collaborator has the role
their permission names (`pull` is `read`, `push` is `write`); a GitHub App's installation on
the owner's account acts as a writer; anyone signed in reads a public repository. Every check
(git transport, labels, the collaborator permission endpoint, `permissions` in a repository)
compares a role with the least one the action needs, so they cannot disagree.

localhub's own endpoints (`/_localhub/`) follow rules of their own, decided here once
(`admin_refusal`) so an endpoint added later cannot forget them. They make tokens, register and
install Apps, make repositories, protect branches, arm faults (an answer GitHub never gave) and
switch webhook delivery off. A web page open in the user's browser reaches a loopback port too,
and a "simple" cross-origin request (a form or `text/plain` POST) is sent without asking first;
so is any request from another local process. Hence every request under `/_localhub/` but the
health check carries the operator credential (localhub.operator), which no page can attach by
itself, and a body is JSON by its Content-Type (a form or `text/plain` body is what a page can
send without a preflight). GitHub's own routes (`/api/v3`, git) need a user's token in
`Authorization` to change anything, which a cross-origin page cannot send either, so they keep
GitHub's rules (GitHub refuses no Content-Type).
"""

from __future__ import annotations

import ipaddress
import posixpath
from dataclasses import dataclass

from localhub import messages

ROLES = ("none", "read", "triage", "write", "maintain", "admin")  # least to most
# A collaborator's stored permission (GitHub's REST names) -> the role it grants.
COLLABORATOR_ROLES = {"pull": "read", "triage": "triage", "push": "write", "maintain": "maintain", "admin": "admin"}
# GitHub's legacy `permission` of the collaborator permission endpoint: maintain counts as
# write, triage as read.
LEGACY = {"none": "none", "read": "read", "triage": "read", "write": "write", "maintain": "write", "admin": "admin"}
# A role -> the `permissions` object GitHub puts in a repository and a collaborator.
FLAGS = {"pull": "read", "triage": "triage", "push": "write", "maintain": "maintain", "admin": "admin"}
APP_ROLE = "write"  # what an installation of an App on the owner's account may do
PUBLIC_ROLE = "read"  # what anyone signed in may do on a public repository


def at_least(role: str, needed: str) -> bool:
    """Whether `role` allows what `needed` allows."""
    return ROLES.index(role) >= ROLES.index(needed)


def highest(*roles: str) -> str:
    return max(roles, key=ROLES.index)


def legacy_permission(role: str) -> str:
    return LEGACY[role]


def permission_flags(role: str) -> dict[str, bool]:
    """GitHub's `{"admin", "maintain", "push", "triage", "pull"}` booleans for a role."""
    return {flag: at_least(role, needed) for flag, needed in FLAGS.items()}


def loopback_host(host: str) -> bool:
    """Whether a Host header (with or without its port) names this machine's loopback:
    `localhost`, `127.x.x.x` or `[::1]`. A page on another site that a browser sends to
    localhub by rebinding its name to 127.0.0.1 still carries that site's name here."""
    name = host.strip().lower()
    if name.startswith("["):
        name = name[1:].partition("]")[0]
    elif name.count(":") == 1:
        name = name.partition(":")[0]
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


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


def admin_refusal(method: str, path: str, *, operator: bool, credential: bool, content_type: str | None,
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
