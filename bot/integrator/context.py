"""How an integrator job gets what it works with: Redis, a forge client per repository, git
credentials for the workspace, a work folder, tuning and the conflict resolver.

rq runs job functions by dotted path with plain arguments (`integrate("owner/name", 12)`), so
a job cannot be handed its collaborators; it asks `get_context()`, which is built once per
process from the environment (`Context.from_env`) unless a test or the `memrepo worker`
command installed one with `set_context`. A forked rq work horse inherits the installed one.
"""

from __future__ import annotations

import base64
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from redis import Redis

from bot import settings
from bot.errors import MemrepoError
from bot.forge.budget import GITHUB, Limits
from bot.forge.client import ForgeClient
from bot.forge.credentials import AppCredentials, TokenCredentials, acting_as
from bot.forge.retry import RetryPolicy
from bot.forge.shared import SharedBudget, SharedTokens, identity
from bot.integrator.resolve import LLMResolver
from bot.integrator.state import DEFAULT_TUNING, Tuning
from bot.memfs import Resolver
from bot.queue import connect
from bot.repo_lock import LOCK_TTL as DEFAULT_LOCK_TTL
from bot.settings import DEFAULT_FORGE_URL, redis_url_from_env

# Jobs, and a resolution's commit and its history notes.
INTEGRATOR_NO_CREDENTIALS = (
    "the integrator needs forge credentials: set one of {tokens} to a token, or {app} with "
    "MEMREPO_APP_PRIVATE_KEY (or MEMREPO_APP_PRIVATE_KEY_FILE) for a GitHub App"
)

LOCK_WAIT_SECONDS = 130.0  # seconds a job waits for a repository another job is working on

TOKEN_MARGIN = 300.0  # an installation token is replaced this many seconds before it expires


def git_base_url(api_url: str) -> str:
    """Where `owner/name.git` lives for a REST API base: github.com for api.github.com, and the
    host itself for GitHub Enterprise's and localhub's `<host>/api/v3`."""
    api = api_url.rstrip("/")
    if api == DEFAULT_FORGE_URL:
        return "https://github.com"
    return api.removesuffix("/api/v3")


@dataclass(frozen=True)
class Remote:
    """A repository's git URL (never with credentials in it) and how to get a token for it;
    the token travels in an HTTP header per command, so it is never written to git config."""

    url: str
    token: Callable[[], str | None] = field(default=lambda: None, repr=False)

    def auth_header(self) -> str | None:
        token = self.token()
        if not token:
            return None
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        return f"Authorization: Basic {basic}"


class _AppTokens:
    """Installation tokens of a GitHub App for git over HTTPS (the forge client keeps its own
    for the REST API); one per repository's installation, renewed before it expires."""

    def __init__(self, credentials: AppCredentials, api_url: str, shared: SharedTokens | None = None) -> None:
        self._credentials = credentials
        self._api_url = api_url
        self._lock = threading.Lock()
        self._tokens: dict[str, tuple[str, float]] = {}
        self._shared = shared

    def token(self, repo: str) -> str:
        import github

        with self._lock:
            held = self._tokens.get(repo)
            if held and held[1] - TOKEN_MARGIN > time.time():
                return held[0]
            held = self._shared.get(repo) if self._shared is not None else None
            if held is not None:  # the one every job of this App uses until shortly before it expires
                self._tokens[repo] = held
                return held[0]
            auth = github.Auth.AppAuth(self._credentials.app_id, self._credentials.private_key)
            with github.GithubIntegration(auth=auth, base_url=self._api_url) as integration:
                owner, _, name = repo.partition("/")
                installation = self._credentials.installation_id or integration.get_repo_installation(owner, name).id
                grant = integration.get_access_token(int(installation))
            expires = grant.expires_at.timestamp() if grant.expires_at else time.time() + 3600
            self._tokens[repo] = (grant.token, expires)
            if self._shared is not None:
                self._shared.put(repo, grant.token, expires)
            return grant.token


@dataclass
class Context:
    """Everything a job needs. `forge(repo)` makes a forge client for one repository;
    `remote(repo)` says where its git lives. `lock_ttl` is how long a crashed worker's lock on
    a repository outlives it (a live job renews it); `inline_wait` is the longest wait slept
    inside a job (longer ones are scheduled with rq's scheduler)."""

    redis: Redis
    forge: Callable[[str], ForgeClient]
    remote: Callable[[str], Remote]
    work_dir: Path
    tuning: Tuning = DEFAULT_TUNING
    lock_ttl: float = DEFAULT_LOCK_TTL
    lock_wait: float | None = None
    inline_wait: float = 5.0
    resolver: Resolver | None = None
    bot_login: str | None = None

    @property
    def lock_wait_seconds(self) -> float:
        """How long a job waits for a repository's lock: a dead holder's lapses within
        `lock_ttl`, a live one's is renewed for as long as its job runs, so this covers a long
        run (an LLM resolution), and is never shorter than a dead holder's lock."""
        return self.lock_wait if self.lock_wait is not None else max(LOCK_WAIT_SECONDS, self.lock_ttl + 10.0)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, redis: Redis | None = None) -> Context:
        """The production context; a missing or malformed setting is a MemrepoError naming it."""
        env = os.environ if environ is None else environ
        problems = settings.Problems()  # every bad setting named in one run
        redis_url = problems.read(lambda: redis_url_from_env(env), "") if redis is None else ""
        credentials = problems.read(lambda: credentials_from_env(env), None)
        lock_ttl = problems.read(lambda: settings.lock_ttl(DEFAULT_LOCK_TTL, env), DEFAULT_LOCK_TTL)
        limits = problems.read(lambda: Limits(*settings.budget_limits(GITHUB.as_tuple(), env)), GITHUB)
        concurrent = problems.read(lambda: settings.concurrent_requests(GITHUB.concurrent, env), GITHUB.concurrent)
        merge_by_push = problems.read(lambda: settings.merge_by_push(env), True)
        problems.check()
        assert credentials is not None  # check() raised otherwise
        redis = redis if redis is not None else connect(redis_url)
        api_url = settings.forge_url(env)
        git_url = git_url_from_env(env, api_url)
        tuning = replace(DEFAULT_TUNING, merge_by_push=merge_by_push)
        loopback = any(host in api_url for host in ("://127.0.0.1", "://localhost", "://[::1]"))
        budget, tokens = shared_from(redis, credentials, api_url, replace(limits, concurrent=concurrent))

        def forge(repo: str) -> ForgeClient:
            return ForgeClient(repo, credentials, base_url=api_url, policy=RetryPolicy(),
                               min_write_interval=0.0 if loopback else 1.0, budget=budget, tokens=tokens)

        return cls(redis=redis, forge=forge, remote=remotes(credentials, api_url, git_url, tokens),
                   work_dir=settings.work_dir(env), tuning=tuning, lock_ttl=lock_ttl,
                   resolver=resolver_from_env(env), bot_login=settings.bot_login(env))


def shared_from(redis: Redis, credentials: TokenCredentials | AppCredentials, api_url: str,
                limits: Limits) -> tuple[SharedBudget, SharedTokens | None]:
    """The budget every worker of this identity shares (an App by its id, a token by a digest
    of it) and, for an App, its installation tokens shared between jobs."""
    name = identity(api_url, acting_as(credentials))
    tokens = SharedTokens(redis, name, margin=TOKEN_MARGIN) if isinstance(credentials, AppCredentials) else None
    return SharedBudget(redis, name, limits), tokens


def git_url_from_env(env: Mapping[str, str], api_url: str) -> str:
    """MEMREPO_GIT_URL, else the git host of the forge's API."""
    return (settings.git_url(env) or git_base_url(api_url)).rstrip("/")


def remotes(credentials: TokenCredentials | AppCredentials, api_url: str, git_url: str,
            shared: SharedTokens | None = None) -> Callable[[str], Remote]:
    """`remote(repo)`: where a repository's git lives and the token to fetch it with (a GitHub
    App's installation token, renewed before it expires, or the one token)."""
    if isinstance(credentials, TokenCredentials):
        token = credentials.token
        return lambda repo: Remote(f"{git_url}/{repo}.git", lambda: token)
    tokens = _AppTokens(credentials, api_url, shared)
    return lambda repo: Remote(f"{git_url}/{repo}.git", lambda: tokens.token(repo))


def credentials_from_env(env: Mapping[str, str]) -> TokenCredentials | AppCredentials:
    """A token (MEMREPO_GITHUB_TOKEN, MEMREPO_FORGE_TOKEN or GITHUB_TOKEN), or a GitHub App's id
    and private key (MEMREPO_APP_ID with MEMREPO_APP_PRIVATE_KEY or ..._FILE)."""
    app = settings.github_app(env)
    if app is not None:
        return AppCredentials(*app)
    token = settings.forge_token(env)
    if token:
        return TokenCredentials(token)
    raise MemrepoError(INTEGRATOR_NO_CREDENTIALS.format(tokens=", ".join(settings.FORGE_TOKENS),
                                                              app=settings.APP_ID))


def resolver_from_env(env: Mapping[str, str]) -> Resolver | None:
    """The LLM resolver when MEMREPO_LLM_URL and MEMREPO_LLM_MODEL are set; else None (the
    rules alone, overlaps left for a person)."""
    model = settings.llm(env)
    return LLMResolver(*model) if model is not None else None


_lock = threading.Lock()
_current: Context | None = None


def set_context(context: Context | None) -> None:
    """Install the context jobs in this process use (None: build it from the environment on
    next use)."""
    global _current
    with _lock:
        _current = context


def get_context() -> Context:
    global _current
    with _lock:
        if _current is None:
            _current = Context.from_env()
        return _current


@contextmanager
def using(context: Context) -> Iterator[Context]:
    """`with using(ctx):` jobs run in this block use `ctx`; the previous one is restored."""
    global _current
    with _lock:
        previous, _current = _current, context
    try:
        yield context
    finally:
        with _lock:
            _current = previous

