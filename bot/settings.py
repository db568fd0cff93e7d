"""Settings of the integrator's services (webhook receiver, workers), read from the environment.

Services are configured the twelve-factor way, so that the same image runs anywhere; reading
every variable once at start-up, with one clear error naming a missing or bad variable, means
a misconfigured service refuses to start instead of failing on its first delivery.
"""

from __future__ import annotations

import hmac
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from bot import messages
from bot.errors import MemrepoError

REDIS_URL = "REDIS_URL"
WEBHOOK_SECRET = "MEMREPO_WEBHOOK_SECRET"
AGENT_TOKEN = "MEMREPO_AGENT_TOKEN"
REPOS = "MEMREPO_REPOS"
BOT_LOGIN = "MEMREPO_BOT_LOGIN"
HEARTBEAT = "MEMREPO_SSE_HEARTBEAT"

ANY_REPOSITORY = "*"
REDIS_SCHEMES = ("redis", "rediss", "unix")
# GitHub's rules for the two halves of owner/name (logins: 1-39 letters, digits and hyphens,
# neither first nor last, as localhub's accounts; repository names: letters, digits, '.', '-',
# '_'), ASCII only and matched whole (with fullmatch: `$` would also match before a trailing
# newline). The receiver, the event stream and `memrepo localhub create-repo` read names by this
# one rule.
REPO_NAME = re.compile(r"(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?)/(?P<name>[A-Za-z0-9._-]{1,100})")

DEFAULT_HEARTBEAT_SECONDS = 15.0
MAX_BODY_BYTES = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB
DELIVERY_TTL_SECONDS = 7 * 24 * 3600  # how long a delivery GUID is remembered (GitHub redelivers for 3 days)


def is_repo_name(value: object) -> bool:
    """True for a well-formed `owner/name`."""
    return isinstance(value, str) and REPO_NAME.fullmatch(value) is not None


@dataclass(frozen=True)
class Settings:
    """What the receiver and the workers need. `repos` is None for "any repository that sends
    deliveries signed with the secret" (i.e. wherever the App or hook is installed); otherwise
    the lower-cased `owner/name`s accepted."""

    redis_url: str
    webhook_secret: str
    agent_token: str
    repos: frozenset[str] | None = None
    bot_login: str | None = None
    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS
    max_body_bytes: int = MAX_BODY_BYTES
    delivery_ttl_seconds: int = DELIVERY_TTL_SECONDS

    def __post_init__(self) -> None:
        check_redis_url(self.redis_url)
        if not self.webhook_secret:
            raise MemrepoError(messages.SETTING_MISSING.format(name=WEBHOOK_SECRET))
        if not self.agent_token:
            raise MemrepoError(messages.SETTING_MISSING.format(name=AGENT_TOKEN))
        if self.repos is not None:
            object.__setattr__(self, "repos", frozenset(r.lower() for r in self.repos))
        if self.heartbeat_seconds <= 0:
            raise MemrepoError(messages.SETTING_NOT_POSITIVE.format(name=HEARTBEAT, value=self.heartbeat_seconds))

    def accepts(self, repo: str) -> bool:
        """Whether deliveries for `repo` (owner/name, any case) are acted on."""
        return self.repos is None or repo.lower() in self.repos

    def is_operator(self, token: str) -> bool:
        """Whether `token` is the operator token (compared in constant time)."""
        return hmac.compare_digest(token.encode("utf-8", "replace"), self.agent_token.encode("utf-8", "replace"))

    def is_bot(self, login: object) -> bool:
        """Whether `login` is the integrator's own account (GitHub logins ignore case)."""
        return bool(self.bot_login) and isinstance(login, str) and login.lower() == str(self.bot_login).lower()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from the environment; a missing or malformed variable is a MemrepoError
        that names it."""
        env = os.environ if environ is None else environ
        return cls(
            redis_url=require(env, REDIS_URL),
            webhook_secret=require(env, WEBHOOK_SECRET),
            agent_token=require(env, AGENT_TOKEN),
            repos=parse_repos(env.get(REPOS, "")),
            bot_login=(env.get(BOT_LOGIN) or "").strip() or None,
            heartbeat_seconds=positive_setting(env, HEARTBEAT, DEFAULT_HEARTBEAT_SECONDS),
        )


def require(env: Mapping[str, str], name: str) -> str:
    """The non-blank value of `name`, or a MemrepoError saying it must be set."""
    value = (env.get(name) or "").strip()
    if not value:
        raise MemrepoError(messages.SETTING_MISSING.format(name=name))
    return value


def redis_url_from_env(environ: Mapping[str, str] | None = None) -> str:
    """REDIS_URL alone, checked (workers and commands that need nothing else)."""
    url = require(os.environ if environ is None else environ, REDIS_URL)
    check_redis_url(url)
    return url


def check_redis_url(url: str) -> None:
    if not url:
        raise MemrepoError(messages.SETTING_MISSING.format(name=REDIS_URL))
    if urlsplit(url).scheme not in REDIS_SCHEMES:
        raise MemrepoError(messages.SETTING_BAD_REDIS_URL.format(name=REDIS_URL, value=url))


def parse_repos(text: str) -> frozenset[str] | None:
    """MEMREPO_REPOS: empty or `*` for any installed repository, else a comma list of owner/name."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items or items == [ANY_REPOSITORY]:
        return None
    bad = [item for item in items if not is_repo_name(item)]
    if bad:
        raise MemrepoError(messages.SETTING_BAD_REPOS.format(name=REPOS, value=bad[0]))
    return frozenset(item.lower() for item in items)


def positive_setting(env: Mapping[str, str], name: str, default: float) -> float:
    """A positive, finite number from the environment (`default` when unset); else a start-up error."""
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        raise MemrepoError(messages.SETTING_NOT_POSITIVE.format(name=name, value=raw))
    return value
