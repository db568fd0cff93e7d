"""Who may do what on a repository, as the forge says it, cached briefly in Redis.

A review counts, and a pull request is acted on, only for accounts the forge lets write
(`decide.review_problem`, `decide.authority_problem`). Every run of `integrate` reads the
pull request afresh; asking the forge for each reviewer's permission on every run would cost
one request per reviewer per webhook, so an answer is kept for `PERMISSION_TTL` seconds.
A permission taken away must stop counting at once, so the cache is only a shortcut for
deciding what to wait for: the approvals that would merge a change that needs a review are read
again from the forge (`fresh`), and GitHub's `member`, `membership`, `organization` and `team`
events drop what is cached for the repository, or for every repository of the organisation
(`forget`, called by the receiver).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from redis import Redis

from bot.redis_keys import own_login_key, permission_key, permission_pattern

PERMISSION_TTL = 60  # seconds
OWN_LOGIN_TTL = 3600  # seconds: the account a credential acts as does not change while it runs


class Forge(Protocol):
    """What this module asks the forge (`bot.forge.client.ForgeClient` answers it); named by
    shape, so the receiver can drop the cache without loading the forge client."""

    def permission(self, login: str) -> str: ...

    def own_login(self) -> str: ...


def permissions(redis: Redis, client: Forge, repo: str, logins: Iterable[str], *,
                fresh: bool = False) -> tuple[tuple[str, str], ...]:
    """(login, permission) for each distinct login, from the cache or the forge (`fresh`:
    from the forge only, and the cache updated with its answer)."""
    found: dict[str, str] = {}
    for login in logins:
        if not login or login.casefold() in found:
            continue
        key = permission_key(repo, login)
        cached = None if fresh else redis.get(key)
        if cached is not None:
            found[login.casefold()] = cached.decode() if isinstance(cached, bytes) else str(cached)
            continue
        permission = client.permission(login)
        redis.set(key, permission, ex=PERMISSION_TTL)
        found[login.casefold()] = permission
    return tuple(sorted(found.items()))


def own_logins(redis: Redis, client: Forge, repo: str, configured: str | None) -> tuple[str, ...]:
    """The forge accounts the integrator acts as for `repo`: the one its credentials name (a
    token's user, an App's `<slug>[bot]`), and MEMREPO_BOT_LOGIN where it is set."""
    key = own_login_key(repo)
    cached = redis.get(key)
    if cached is None:
        login = client.own_login()
        redis.set(key, login, ex=OWN_LOGIN_TTL)
    else:
        login = cached.decode() if isinstance(cached, bytes) else str(cached)
    return tuple(sorted({login, *([configured] if configured else [])}))


def forget(redis: Redis, owner: str, repo: str | None = None) -> int:
    """Drop the cached permissions of `owner/repo`, or of every repository of `owner` (an
    organisation's membership or a team changed); how many were dropped."""
    dropped = 0
    for key in redis.scan_iter(match=permission_pattern(owner, repo), count=500):
        dropped += int(redis.delete(key))
    return dropped
