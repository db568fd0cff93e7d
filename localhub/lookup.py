"""What a REST route under `/repos/{owner}/{repo}` acts on, looked up in GitHub's order.

GitHub answers a request without a signed-in caller with 401 before it says whether the
repository exists, and a repository (or a pull request in it) that is not there with 404
before it reads the body. Every route starts with this one call, so no route can check them
in another order: `requested` for a route that reads, `writable` for one that changes the
repository (GitHub's 403 without write access), `administered` for one only admins see
(GitHub's 404 for everyone else, as for its hooks).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from localhub import messages
from localhub.errors import ApiError, not_found
from localhub.hub import Hub


class Target(NamedTuple):
    user: Any  # the caller's account row
    repo: Any  # the repository row
    pull: Any  # the pull request row, None when the route names none


def requested(hub: Hub, owner: str, repo: str, number: int | None = None) -> Target:
    """The caller, the repository `owner/repo` and its pull request `number` (when given),
    or GitHub's 401 or 404 (also for a private repository the caller cannot read)."""
    user = hub.current_user()
    row = hub.visible_repo(owner, repo)
    return Target(user, row, hub.pull(row, number) if number is not None else None)


def writable(hub: Hub, owner: str, repo: str, number: int | None = None) -> Target:
    """requested(), for a route that changes the repository: GitHub's 403 without write access."""
    target = requested(hub, owner, repo, number)
    if not hub.caller_may("write", target.repo):
        raise ApiError(403, messages.PUSH_NEEDED)
    return target


def authored(hub: Hub, target: Target, author_id: int) -> Target:
    """`target` when its caller wrote the thing (`author_id`) or may write to the repository,
    else GitHub's 403: people edit what they wrote, writers edit anything."""
    if target.user["id"] != author_id and not hub.caller_may("write", target.repo):
        raise ApiError(403, messages.PUSH_NEEDED)
    return target


def administered(hub: Hub, owner: str, repo: str) -> Target:
    """requested(), for a route only the repository's admins see: GitHub's 404 for anyone else."""
    target = requested(hub, owner, repo)
    if not hub.caller_may("admin", target.repo):
        raise not_found()
    return target
