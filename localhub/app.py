"""The localhub Flask application (app factory): REST under `/api/v3`, git smart HTTP at
`/<owner>/<repo>.git`, and localhub's own admin endpoints under `/_localhub/`.

Authentication follows GitHub: `Authorization: token|Bearer <token>` (or an app's JWT) for
REST, HTTP Basic with the token as password (`x-access-token:<token>@`) for git. Every REST
response carries GitHub's rate-limit and request-id headers. The operator credential
(localhub.operator) is taken the same way and signs in no account: it only lets
localhub's own endpoints do what a user's token may not. Those endpoints answer only requests
addressed to a loopback host (a DNS-rebound page carries its own name in `Host`).
"""

from __future__ import annotations

import base64
import importlib
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

from flask import Flask, Response, g, request

from localhub import messages
from localhub.access import loopback_host
from localhub.errors import ApiError
from localhub.faults import ADMIN
from localhub.hub import Hub

API = "/api/v3"
GIT_ENDPOINT = "git_http"  # git asks again for credentials when told 401 with a challenge
RATE_LIMIT = 5000
RATE_WINDOW = 3600

# One module per concern; each exposes register(app, hub).
MODULES = (
    "admin",        # /_localhub/: accounts, tokens, apps, faults, delivery modes
    "webhooks",     # delivering events to hooks (first listener: a push is sent before what it causes)
    "apps",         # GitHub App flow: JWT -> installation access token
    "rest_repos",   # user, repositories
    "rest_git",     # git refs, commits, compare
    "rest_pulls",   # pull requests, merge, update-branch, mergeability
    "rest_issues",  # issue comments, labels
    "rest_reviews",  # pull request reviews
    "rest_statuses",  # commit statuses
    "rest_hooks",   # repository webhooks, deliveries
    "git_http",     # git smart HTTP (upload-pack and receive-pack, protocol v2 ls-refs answered here)
    "faults",       # fault injection
)


class _RateLimits:
    """Requests per token per hour, as GitHub counts them for `x-ratelimit-*`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._used: dict[str, tuple[int, int]] = {}

    def count(self, key: str) -> tuple[int, int]:
        window = int(time.time()) // RATE_WINDOW
        with self._lock:
            start, used = self._used.get(key, (window, 0))
            if start != window:
                start, used = window, 0
            used += 1
            self._used[key] = (start, used)
        return used, (start + 1) * RATE_WINDOW


def _credentials() -> tuple[str | None, str | None]:
    """(scheme, secret) from the Authorization header."""
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.strip().partition(" ")
    scheme = scheme.lower()
    value = value.strip()
    if scheme in ("token", "bearer") and value:
        return scheme, value
    if scheme == "basic" and value:
        try:
            decoded = base64.b64decode(value).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return "basic", None
        _, _, password = decoded.partition(":")
        return "basic", password or None
    return None, None


MAX_BODY = 100 * 1024 * 1024  # git pushes of a memory repository stay far below this

# Flask's own refusals, answered as GitHub answers them: (status, message) per HTTP error.
# A method a route does not take is GitHub's 404, not 405.
HTTP_ERRORS = {
    404: (404, "Not Found"),
    405: (404, "Not Found"),
    413: (413, "Payload too large"),
    400: (400, "Problems parsing JSON"),
}


def _answer(status: int, message: str) -> Callable[[Exception], Response]:
    """An error handler that answers with GitHub's error body."""
    return lambda _: ApiError(status, message).response()


def create_app(data_dir: str | Path, *, public_url: str | None = None, hub: Hub | None = None,
               max_body: int = MAX_BODY) -> Flask:
    app = Flask("localhub")
    app.config["MAX_CONTENT_LENGTH"] = max_body
    app.json.sort_keys = False  # type: ignore[attr-defined]
    hub = hub or Hub(Path(data_dir), public_url)
    app.extensions["localhub"] = hub
    limits = _RateLimits()

    @app.before_request
    def admin_on_loopback_only() -> None:
        if request.path.startswith(ADMIN) and not loopback_host(request.host):
            raise ApiError(403, messages.ADMIN_LOOPBACK_ONLY.format(host=request.host))

    @app.before_request
    def authenticate() -> Response | None:
        g.user = None
        g.token = None
        g.app_id = None
        g.operator = False
        scheme, secret = _credentials()
        if secret is None:
            return None
        if scheme == "bearer" and secret.count(".") == 2:
            from localhub.apps import app_from_jwt

            g.app_id = app_from_jwt(hub, secret)  # raises 401 for a bad JWT
            return None
        if scheme != "basic" and hub.is_operator(secret):
            g.operator = True
            return None
        found = hub.token_user(secret)
        if found is None and request.endpoint == GIT_ENDPOINT:
            return None  # answered with git's challenge, as no credentials are
        if found is None:
            raise ApiError(401, "Bad credentials")
        g.user, g.token = found
        return None

    @app.after_request
    def github_headers(resp: Response) -> Response:
        resp.headers["X-GitHub-Request-Id"] = (
            f"{secrets.token_hex(2).upper()}:{secrets.token_hex(3).upper()}:"
            f"{secrets.token_hex(4).upper()}:{secrets.token_hex(4).upper()}:{secrets.token_hex(4).upper()}"
        )
        if request.path.startswith(API):
            key = g.token["token_hash"] if getattr(g, "token", None) is not None else request.remote_addr or "-"
            used, reset = limits.count(str(key))
            resp.headers["X-RateLimit-Limit"] = str(RATE_LIMIT)
            resp.headers["X-RateLimit-Remaining"] = str(max(RATE_LIMIT - used, 0))
            resp.headers["X-RateLimit-Reset"] = str(reset)
            resp.headers["X-RateLimit-Used"] = str(used)
            resp.headers["X-RateLimit-Resource"] = "core"
            resp.headers["X-GitHub-Api-Version-Selected"] = "2022-11-28"
            resp.headers.setdefault("X-GitHub-Media-Type", "github.v3; format=json")
        return resp

    @app.teardown_request
    def release_connection(_: BaseException | None) -> None:
        hub.store.release()

    @app.errorhandler(ApiError)
    def api_error(exc: ApiError) -> Response:
        return exc.response()

    for code, (status, message) in HTTP_ERRORS.items():
        app.register_error_handler(code, _answer(status, message))

    for name in MODULES:
        importlib.import_module(f"localhub.{name}").register(app, hub)
    return app
