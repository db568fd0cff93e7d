"""What a REST route under `/repos/{owner}/{repo}` acts on, looked up in GitHub's order.

GitHub answers a request without a signed-in caller with 401 before it says whether the
repository exists, and a repository (or a pull request in it) that is not there with 404
before it reads the body. Every route starts with this one call, so no route can check them
in another order.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from bot.forge.localhub.hub import Hub


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
