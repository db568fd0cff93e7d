"""Which forge API and repository a memory clone's `origin` belongs to, with what token, and a
client for it (the one every writer opens its pull requests with).

Pure: the remote URL and the environment come in as values; `make_client` builds a client
without calling the forge (with a Redis configured, its request budget is the one the
integrator's workers share, `bot.forge.shared`). github.com's API is
https://api.github.com; any other host follows GitHub Enterprise's (and localhub's)
convention `<scheme>://<host>[:port]/api/v3`; MEMREPO_FORGE_API_URL overrides both. The
credential is the agent's, in bot.agent_credential's one order: the identity `memrepo identity
set` recorded for the clone (an account's token or a GitHub App installation), else
MEMREPO_FORGE_TOKEN, else GITHUB_TOKEN, else the password of the remote URL
(`https://x-access-token:<token>@host/...`, as localhub clones and GitHub Apps write it).
Tokens are never part of an error message or a repr.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot import agent_credential, settings
from bot.agent_credential import Recorded
from bot.errors import MemrepoError
from bot.forge.client import ForgeClient
from bot.forge.credentials import AppCredentials, Credentials, TokenCredentials, acting_as
from bot.forge.retry import RetryPolicy
from bot.forge.shared import env_budget
from bot.memfs import MemoryRepo
from bot.memfs.sync import redact, remote_url
from bot.settings import DEFAULT_FORGE_URL, is_repo_name

NO_REMOTE = (
    "the memory repository has no remote, so there is no forge for its pull requests; "
    "connect one with `memrepo repository set URL`"
)
REMOTE_NOT_FORGE = (
    "origin ({url}) is not a GitHub-style repository URL (https://host/owner/name or git@host:owner/name), "
    "where the memory's pull requests are opened and reviewed"
)
NO_TOKEN = (
    "no token for {repository}: set MEMREPO_FORGE_TOKEN (or GITHUB_TOKEN), or use a remote URL with "
    "x-access-token"
)

GITHUB_HOSTS = ("github.com", "www.github.com")
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
_SCP = re.compile(r"(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>[^/].*)")  # fullmatch
FORGE_RETRY = RetryPolicy(max_total_seconds=30.0, max_attempts=5, backoff_base=0.5, backoff_cap=5.0)


@dataclass(frozen=True)
class ForgeTarget:
    api_url: str
    repository: str  # owner/name
    host: str
    token: str | None = field(default=None, repr=False)
    app: Recorded | None = field(default=None, repr=False)  # a recorded GitHub App installation

    @property
    def loopback(self) -> bool:
        """localhub and other local forges need no spacing between writes."""
        return self.host in LOOPBACK


def _repository(path: str, shown: str) -> str:
    parts = [p for p in path.strip("/").split("/") if p]
    if len(parts) != 2:
        raise MemrepoError(REMOTE_NOT_FORGE.format(url=shown))
    owner, name = parts[0], parts[1].removesuffix(".git")
    if not is_repo_name(f"{owner}/{name}"):
        raise MemrepoError(REMOTE_NOT_FORGE.format(url=shown))
    return f"{owner}/{name}"


def forge_target(remote_url: str | None, env: Mapping[str, str], recorded: Recorded | None = None) -> ForgeTarget:
    """The forge of `remote_url` (origin's URL) and the agent's credential for it (`recorded`
    first), or a MemrepoError saying why there is none."""
    if not remote_url:
        raise MemrepoError(NO_REMOTE)
    shown = redact(remote_url)
    parsed = urllib.parse.urlsplit(remote_url)
    if parsed.scheme in ("http", "https"):
        host = (parsed.hostname or "").lower()
        port = parsed.port if parsed.port else None
        scheme = parsed.scheme
        repository = _repository(parsed.path, shown)
    elif parsed.scheme in ("ssh", "git+ssh"):
        host, port, scheme = (parsed.hostname or "").lower(), None, "https"
        repository = _repository(parsed.path, shown)
    elif not parsed.scheme or len(parsed.scheme) == 1:  # scp-like git@host:owner/name.git (C: is a drive)
        match = _SCP.fullmatch(remote_url)
        if match is None or "/" in match.group("host") or len(match.group("host")) == 1:
            raise MemrepoError(REMOTE_NOT_FORGE.format(url=shown))
        host, port, scheme = match.group("host").lower(), None, "https"
        repository = _repository(match.group("path"), shown)
    else:
        raise MemrepoError(REMOTE_NOT_FORGE.format(url=shown))
    if not host:
        raise MemrepoError(REMOTE_NOT_FORGE.format(url=shown))
    override = settings.value(settings.FORGE_API_URL, env)
    if override:
        api_url = override.rstrip("/")
    elif host in GITHUB_HOSTS:
        api_url = DEFAULT_FORGE_URL
    else:
        netloc = f"[{host}]" if ":" in host else host
        api_url = f"{scheme}://{netloc}{f':{port}' if port else ''}/api/v3"
    token = agent_credential.resolve(recorded, env, remote_url)
    return ForgeTarget(api_url, repository, host, token, recorded if recorded is not None and recorded.app_id else None)


def clone_target(repo: MemoryRepo, env: Mapping[str, str]) -> ForgeTarget:
    """`forge_target` for a memory clone: its origin, and the identity recorded for it first."""
    return forge_target(remote_url(repo), env, agent_credential.read(repo.root))


def credentials(target: ForgeTarget) -> Credentials:
    """What the agent's client authenticates with: the recorded App installation, else the token."""
    if target.app is not None and target.app.app_id and target.app.private_key:
        return AppCredentials(target.app.app_id, target.app.private_key, target.app.installation_id)
    if not target.token:
        raise MemrepoError(NO_TOKEN.format(repository=target.repository))
    return TokenCredentials(target.token)


def make_client(target: ForgeTarget, retry: RetryPolicy | None = None,
                shared: Mapping[str, str] | None = None) -> ForgeClient:
    """A client for `target`'s repository (spaced writes unless the forge is local), or a
    MemrepoError when there is no credential. With `shared` (an environment) naming a Redis,
    the client draws on the request budget the integrator's workers keep for its identity
    (`bot.forge.shared.env_budget`); without one it keeps only its own spacing."""
    credential = credentials(target)
    budget = None if shared is None else env_budget(shared, target.api_url, acting_as(credential))
    return ForgeClient(target.repository, credential, base_url=target.api_url, policy=retry or FORGE_RETRY,
                       timeout=30, min_write_interval=0.0 if target.loopback else 1.0, budget=budget)
