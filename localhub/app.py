"""The localhub Flask application (app factory): REST under `/api/v3`, git smart HTTP at
`/<owner>/<repo>.git`, and localhub's own admin endpoints under `/_localhub/`.

Authentication follows GitHub: `Authorization: token|Bearer <token>` (or an app's JWT) for
REST, HTTP Basic with the token as password (`x-access-token:<token>@`) for git. Every REST
response carries GitHub's rate-limit and request-id headers. The operator credential
(localhub.operator) is taken the same way and signs in no account: it only lets
localhub's own endpoints do what a user's token may not. Those endpoints answer only requests
addressed to a loopback host (a DNS-rebound page carries its own name in `Host`), and only to
the operator credential, with a JSON body (localhub.access).
"""

from __future__ import annotations

import base64
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

from flask import Flask, Response, current_app, g, request

from localhub import (
    activity,
    admin,
    apps,
    faults,
    git_http,
    messages,
    pages,
    rest_git,
    rest_hooks,
    rest_issues,
    rest_pulls,
    rest_repos,
    rest_reviews,
    rest_statuses,
    webhooks,
)
from localhub.access import admin_refusal, is_admin, loopback_host
from localhub.errors import ApiError, unauthorized
from localhub.hub import EXTENSION as HUB
from localhub.hub import Hub, current_hub

API = "/api/v3"
GIT_ENDPOINT = "git_http.git_http"  # git asks again for credentials when told 401 with a challenge
RATE_LIMIT = 5000
RATE_WINDOW = 3600
DATA_HEADER = "X-Localhub-Data"  # on a 401: the data folder of the localhub that answered
RATE_LIMITS = "localhub.rate_limits"  # app.extensions key of the app's _RateLimits

# One blueprint per concern, registered in this order: webhook delivery listens to the hub
# first (a push is delivered before what it causes), faults last (faults.arm says why).
BLUEPRINTS = (
    admin.bp,            # /_localhub/: accounts and tokens
    webhooks.bp,         # delivering events to hooks; /_localhub/delivery, /_localhub/deliveries
    apps.admin,          # /_localhub/apps: GitHub Apps and their installations
    apps.api,            # GitHub App flow: JWT -> installation access token
    rest_repos.bp,       # user, repositories, collaborators
    rest_repos.admin,    # /_localhub/users/<login>/repos: a repository for an account, by the operator
    rest_git.bp,         # git data: refs, commits, trees, contents, compare
    rest_pulls.bp,       # pull requests, merge, update-branch, mergeability
    rest_pulls.admin,    # /_localhub/repos/<owner>/<repo>/protection
    rest_issues.bp,      # issue comments, labels
    rest_reviews.bp,     # pull request reviews
    rest_statuses.bp,    # commit statuses
    rest_hooks.bp,       # repository webhooks, deliveries
    activity.bp,         # repository activity: who moved which ref (records ahead of every listener)
    git_http.bp,         # git smart HTTP (upload-pack and receive-pack, protocol v2 ls-refs answered here)
    pages.bp,            # the read-only web pages html_url names (/<owner>/<repo>, .../pull/<n>)
    faults.bp,           # fault injection
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
    404: (404, messages.NOT_FOUND),
    405: (404, messages.NOT_FOUND),
    413: (413, messages.PAYLOAD_TOO_LARGE),
    400: (400, messages.BAD_JSON),
}


def _answer(status: int, message: str) -> Callable[[Exception], Response]:
    """An error handler that answers with GitHub's error body."""
    return lambda _: ApiError(status, message).response()


def _admin() -> bool:
    return is_admin(request.path, request.url_rule.rule if request.url_rule is not None else None)


def admin_on_loopback_only() -> None:
    if _admin() and not loopback_host(request.host):
        raise ApiError(403, messages.ADMIN_LOOPBACK_ONLY.format(host=request.host))


def admin_needs_operator() -> None:
    """localhub's own endpoints: the operator credential and a JSON body (localhub.access says
    why), checked here once for every route under `/_localhub/`, after `authenticate`."""
    if not _admin():
        return
    body = bool(request.content_length) or "chunked" in request.headers.get("Transfer-Encoding", "").lower()
    refused = admin_refusal(request.method, request.path, operator=g.operator,
                           credential=g.user is not None or g.app_id is not None,
                           content_type=request.mimetype if request.headers.get("Content-Type") else None,
                           has_body=body)
    if refused is not None:
        raise ApiError(refused.status, refused.message)


def authenticate() -> Response | None:
    """Who is calling: `g.user` and `g.token` for a user's or an installation's token,
    `g.app_id` for an App's JWT, `g.operator` for the operator credential."""
    g.user = None
    g.token = None
    g.app_id = None
    g.operator = False
    g.unknown_token = False
    scheme, secret = _credentials()
    if secret is None:
        return None
    hub = current_hub()
    if scheme == "bearer" and secret.count(".") == 2:
        g.app_id = apps.app_from_jwt(hub, secret)  # raises 401 for a bad JWT
        return None
    if scheme != "basic" and hub.is_operator(secret):
        g.operator = True
        return None
    found = hub.token_user(secret)
    if found is None and request.endpoint == GIT_ENDPOINT:
        g.unknown_token = True
        return None  # answered with git's challenge, as no credentials are
    if found is None:
        raise unauthorized()
    g.user, g.token = found
    return None


def github_headers(resp: Response) -> Response:
    resp.headers["X-GitHub-Request-Id"] = (
        f"{secrets.token_hex(2).upper()}:{secrets.token_hex(3).upper()}:"
        f"{secrets.token_hex(4).upper()}:{secrets.token_hex(4).upper()}:{secrets.token_hex(4).upper()}"
    )
    if request.path.startswith(API):
        key = g.token["token_hash"] if getattr(g, "token", None) is not None else request.remote_addr or "-"
        used, reset = current_app.extensions[RATE_LIMITS].count(str(key))
        resp.headers["X-RateLimit-Limit"] = str(RATE_LIMIT)
        resp.headers["X-RateLimit-Remaining"] = str(max(RATE_LIMIT - used, 0))
        resp.headers["X-RateLimit-Reset"] = str(reset)
        resp.headers["X-RateLimit-Used"] = str(used)
        resp.headers["X-RateLimit-Resource"] = "core"
        resp.headers["X-GitHub-Api-Version-Selected"] = "2022-11-28"
        resp.headers.setdefault("X-GitHub-Media-Type", "github.v3; format=json")
    return resp


def count_usage(resp: Response) -> Response:
    """Count a REST or git request against the account that made it (`-` for none)."""
    if request.path.startswith(API):
        kind = request.method.upper()
    elif request.endpoint == GIT_ENDPOINT:
        kind = "git"
    else:
        return resp
    user = getattr(g, "user", None)
    account = str(user["login"]) if user is not None else (f"app:{g.app_id}" if getattr(g, "app_id", None) else "-")
    current_app.extensions[admin.USAGE].add(account, kind)
    return resp


def name_the_data(resp: Response) -> Response:
    """Every 401 says where this localhub's data is (`X-Localhub-Data`): a token is refused
    most often because another localhub, on another data folder, made it and served on this
    port before. Only to requests addressed to a loopback host, like the admin endpoints; the
    body stays GitHub's."""
    if resp.status_code == 401 and loopback_host(request.host):
        resp.headers[DATA_HEADER] = str(current_hub().data_dir)
    return resp


def release_connection(_: BaseException | None) -> None:
    current_hub().store.release()


def api_error(exc: ApiError) -> Response:
    return exc.response()


def create_app(data_dir: str | Path, *, public_url: str | None = None, hub: Hub | None = None) -> Flask:
    """A localhub app on the data in `data_dir` (or on `hub`, whose data it is). Its state
    (the hub, rate limits, and what the blueprints add: webhook delivery, pull request
    machinery, faults) lives in `app.extensions`, so apps in one process share nothing."""
    app = Flask("localhub")
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions[HUB] = hub or Hub(Path(data_dir), public_url)
    app.extensions[RATE_LIMITS] = _RateLimits()
    app.extensions[admin.USAGE] = admin.Usage()
    app.before_request(admin_on_loopback_only)
    app.before_request(authenticate)
    app.before_request(admin_needs_operator)
    app.after_request(github_headers)
    app.after_request(count_usage)
    app.after_request(name_the_data)
    app.teardown_request(release_connection)
    app.register_error_handler(ApiError, api_error)
    for code, (status, message) in HTTP_ERRORS.items():
        app.register_error_handler(code, _answer(status, message))
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    return app
