"""Who the forge client acts as: a token, or a GitHub App whose installation tokens the client
mints and keeps fresh itself.

PyGithub's AppInstallationAuth refreshes an installation token inside a request, outside the
client's retry rules; here the token is minted (or taken from the cache every worker of the
identity shares, `bot.forge.shared.SharedTokens`) before a request is sent, whenever there is
none or it expires within the refresh margin, so a long operation never starts with a dying
token. Minting goes through the client's own transport (`bot.forge.transport`), handed in as a
function, so it is retried by the same rules as any other request.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import github
import jwt

from bot.forge.errors import ForgeConfigError
from bot.forge.retry import OpKind, token_needs_refresh

if TYPE_CHECKING:
    from bot.forge.shared import SharedTokens

FORGE_NEEDS_CREDENTIALS = (
    "the forge client needs a token, or a GitHub App id and private key (with an installation id, or the "
    "repository whose installation to find)"
)
FORGE_BAD_APP_KEY = "GitHub App {app_id}: its private key cannot sign a token ({problem})"
FORGE_OP_INSTALLATION_TOKEN = "get an installation token for GitHub App {app_id} (installation {installation})"

log = logging.getLogger("memrepo.forge")
T = TypeVar("T")


@dataclass(frozen=True)
class TokenCredentials:
    """A personal access token, or any token GitHub accepts as `Authorization: token`."""

    token: str = field(repr=False)


@dataclass(frozen=True)
class AppCredentials:
    """A GitHub App: its id and private key (PEM); the installation is found from the client's
    repository when `installation_id` is None."""

    app_id: int | str
    private_key: str = field(repr=False)
    installation_id: int | None = None


Credentials = TokenCredentials | AppCredentials


def acting_as(credentials: Credentials) -> str:
    """Who GitHub counts a request against: an App by its id, a token by itself (the shared
    budget's name digests it, so it is never written down as it is)."""
    if isinstance(credentials, AppCredentials):
        return f"app:{credentials.app_id}"
    return f"token:{credentials.token}"


class Send(Protocol):
    """The transport's retried send, without credentials (minting a token needs none)."""

    def __call__(self, op: str, kind: OpKind, call: Callable[[], T]) -> T: ...


class LiveToken(github.Auth.Auth):
    """The installation token the client holds, as PyGithub's auth; its value is replaced by
    `InstallationToken`, never inside a request as PyGithub's AppInstallationAuth would."""

    def __init__(self, value: str = "") -> None:
        self.value = value

    @property
    def token_type(self) -> str:
        return "token"

    @property
    def token(self) -> str:
        return self.value

    @property
    def _masked_token(self) -> str:
        return "token (removed)"


class InstallationToken:
    """A GitHub App's installation token for one repository's client: minted when there is none
    or it is about to expire, taken from `tokens` (shared by every worker) when another job
    minted one, and minted anew (not taken from the cache) after GitHub refused the one held."""

    def __init__(self, app: AppCredentials, integration: github.GithubIntegration, repository: str, *,
                 tokens: SharedTokens | None, margin: float, wall: Callable[[], float]) -> None:
        self.app = app
        self.integration = integration
        self.live = LiveToken()
        self._repository = repository
        self._owner, _, self._name = repository.partition("/")
        self._installation_id = app.installation_id
        self._tokens = tokens
        self._margin = margin
        self._wall = wall
        self._lock = threading.RLock()
        self._expires: float | None = None
        self._refused = False

    def ensure(self, send: Send) -> None:
        """Have a token that outlives the refresh margin: the shared one, or a new one minted
        through `send`. A private key that cannot sign is a ForgeConfigError."""
        with self._lock:
            if not token_needs_refresh(self._expires, self._wall(), self._margin):
                return
            if self._tokens is not None and not self._refused:
                shared = self._tokens.get(self._repository)
                if shared is not None:  # another job's token, still good
                    self.live.value, self._expires = shared
                    return
            self.as_app(lambda: self._mint(send))

    def as_app(self, call: Callable[[], T]) -> T:
        """`call`, which sends a request as the App itself (signed with its private key: finding
        its installation, minting a token, its own name); a key that cannot sign a JWT is a
        ForgeConfigError in one line rather than the signer's own exception."""
        try:
            return call()
        except (ValueError, TypeError, jwt.PyJWTError) as exc:
            raise ForgeConfigError(FORGE_BAD_APP_KEY.format(app_id=self.app.app_id,
                                                            problem=type(exc).__name__)) from None

    @property
    def expires_at(self) -> float | None:
        """When the token held expires (seconds since the epoch), None before one is minted."""
        return self._expires

    def expire(self) -> None:
        """The next request gets a token again (the shared one if another job has one)."""
        with self._lock:
            self._expires = None

    def refuse(self) -> None:
        """GitHub refused the token held: the next request mints a new one, passing over the
        shared cache, which may hold the same refused token."""
        with self._lock:
            self._expires = None
            self._refused = True

    def _mint(self, send: Send) -> None:
        integration = self.integration
        if self._installation_id is None:
            op = f"find the GitHub App installation of {self._repository}"
            self._installation_id = send(
                op, OpKind.READ, lambda: int(integration.get_repo_installation(self._owner, self._name).id))
        installation = self._installation_id
        op = FORGE_OP_INSTALLATION_TOKEN.format(app_id=self.app.app_id, installation=installation)
        grant = send(op, OpKind.IDEMPOTENT_WRITE, lambda: integration.get_access_token(installation))
        self.live.value = grant.token
        expires = grant.expires_at
        self._expires = expires.timestamp() if expires is not None else self._wall() + 3600
        self._refused = False
        if self._tokens is not None:
            self._tokens.put(self._repository, grant.token, self._expires)
        log.info("installation token for %s refreshed; expires in %.0fs", self._repository,
                 self._expires - self._wall())


def authenticate(credentials: Credentials, repository: str, settings: dict[str, Any], *,
                 tokens: SharedTokens | None, margin: float,
                 wall: Callable[[], float]) -> tuple[github.Auth.Auth, str | None, InstallationToken | None]:
    """PyGithub's auth for `credentials`, the fixed secret to redact from answers (a token; an
    App's live token is redacted through its InstallationToken), and the InstallationToken of an
    App. ForgeConfigError when neither a token nor an App id and key are given."""
    if isinstance(credentials, TokenCredentials) and credentials.token:
        return github.Auth.Token(credentials.token), credentials.token, None
    if isinstance(credentials, AppCredentials) and credentials.app_id and credentials.private_key:
        integration = github.GithubIntegration(
            auth=github.Auth.AppAuth(credentials.app_id, credentials.private_key), **settings)
        token = InstallationToken(credentials, integration, repository, tokens=tokens, margin=margin, wall=wall)
        return token.live, None, token
    raise ForgeConfigError(FORGE_NEEDS_CREDENTIALS)
