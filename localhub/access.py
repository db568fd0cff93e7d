"""Who may do what on a repository, as GitHub decides it: the pure rules, no database.

GitHub gives each account one role on a repository, from least to most: `none`, `read`,
`triage`, `write`, `maintain`, `admin`. The owner is `admin`; a collaborator has the role
their permission names (`pull` is `read`, `push` is `write`); a GitHub App's installation on
the owner's account acts as a writer; anyone signed in reads a public repository. Every check
(git transport, labels, the collaborator permission endpoint, `permissions` in a repository)
compares a role with the least one the action needs, so they cannot disagree.
"""

from __future__ import annotations

import ipaddress

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
