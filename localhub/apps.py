"""The GitHub App flow: an app signs a JWT (RS256) with its private key, exchanges it for an
installation access token, and acts as `<slug>[bot]`. localhub generates the key pair when
an app is registered (`POST /_localhub/apps`) and keeps only the public half. Registering and
installing are localhub's own endpoints: the operator's, as every one under `/_localhub/`
(localhub.access)."""

from __future__ import annotations

import re
import time
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from flask import Blueprint, g, jsonify
from flask.typing import ResponseReturnValue

from localhub import messages, shapes
from localhub.admin import check_login
from localhub.errors import ApiError, json_body, not_found
from localhub.hub import Hub, current_hub
from localhub.store import now

TOKEN_TTL = 3600
MAX_JWT_LIFETIME = 600
PERMISSIONS = {"contents": "write", "pull_requests": "write", "issues": "write", "statuses": "write",
               "metadata": "read", "administration": "write"}


def app_from_jwt(hub: Hub, token: str) -> int:
    """The app id a JWT proves, or GitHub's 401."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
        app_id = int(claims["iss"])
    except (jwt.PyJWTError, KeyError, TypeError, ValueError):
        raise ApiError(401, messages.JWT_UNREADABLE) from None
    row = hub.store.one("SELECT * FROM apps WHERE id = ?", app_id)
    if row is None:
        raise ApiError(401, messages.INTEGRATION_NOT_FOUND.format(app_id=app_id)) from None
    try:
        claims = jwt.decode(token, row["public_key"], algorithms=["RS256"], leeway=60,
                            options={"require": ["iat", "exp", "iss"]})
    except jwt.ExpiredSignatureError:
        raise ApiError(401, messages.JWT_EXPIRED) from None
    except jwt.PyJWTError:
        raise ApiError(401, messages.JWT_UNREADABLE) from None
    if claims["exp"] - time.time() > MAX_JWT_LIFETIME + 60:
        raise ApiError(401, messages.JWT_TOO_LONG)
    return app_id


def _require_app() -> int:
    if getattr(g, "app_id", None) is None:
        raise ApiError(401, messages.JWT_UNREADABLE)
    return int(g.app_id)


def _app_json(hub: Hub, row: Any) -> dict[str, Any]:
    return {
        "id": row["id"],
        "slug": row["slug"],
        "node_id": shapes.node_id("App", row["id"]),
        "client_id": f"Iv1.{row['id']:016x}",
        "owner": shapes.user_by_id(hub, row["owner_id"]),
        "name": row["name"],
        "description": None,
        "external_url": hub.web_url(),
        "html_url": f"{hub.web_url()}/apps/{row['slug']}",
        "created_at": shapes.timestamp(row["created_at"]),
        "updated_at": shapes.timestamp(row["created_at"]),
        "permissions": PERMISSIONS,
        "events": ["pull_request", "pull_request_review", "push", "issue_comment", "status"],
        "installations_count": hub.store.one(
            "SELECT COUNT(*) AS n FROM installations WHERE app_id = ?", row["id"])["n"],
    }


def _installation_json(hub: Hub, row: Any) -> dict[str, Any]:
    app_row = hub.store.one("SELECT * FROM apps WHERE id = ?", row["app_id"])
    api = hub.api_url()
    return {
        "id": row["id"],
        "account": shapes.user_by_id(hub, row["account_id"]),
        "repository_selection": "all",
        "access_tokens_url": f"{api}/app/installations/{row['id']}/access_tokens",
        "repositories_url": f"{api}/installation/repositories",
        "html_url": f"{hub.web_url()}/settings/installations/{row['id']}",
        "app_id": row["app_id"],
        "app_slug": app_row["slug"],
        "target_id": row["account_id"],
        "target_type": "User",
        "permissions": PERMISSIONS,
        "events": ["pull_request", "pull_request_review", "push", "issue_comment", "status"],
        "created_at": shapes.timestamp(row["created_at"]),
        "updated_at": shapes.timestamp(row["created_at"]),
        "single_file_name": None,
        "has_multiple_single_files": False,
        "single_file_paths": [],
        "suspended_by": None,
        "suspended_at": None,
    }


admin = Blueprint("localhub_apps", __name__, url_prefix="/_localhub/apps")
api = Blueprint("github_apps", __name__, url_prefix="/api/v3")


@admin.post("")
def create_app() -> ResponseReturnValue:
    hub = current_hub()
    body = json_body()
    name = body.get("name")
    owner = body.get("owner")
    if not isinstance(name, str) or not name.strip() or not isinstance(owner, str):
        raise ApiError(422, "Validation Failed", errors=[{
            "resource": "Integration", "code": "missing_field", "field": "name"}])
    slug = re.sub(r"[^a-z0-9-]+", "-", name.strip().lower()).strip("-") or "app"
    if hub.store.one("SELECT id FROM apps WHERE slug = ?", slug) is not None:
        raise ApiError(422, "Validation Failed", errors=[{
            "resource": "Integration", "code": "already_exists", "field": "name"}])
    owner_row = hub.ensure_user(owner)
    bot = hub.ensure_user(f"{slug}[bot]", "Bot")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()).decode()
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    with hub.store.tx() as db:
        app_id = hub.store.next_id(db, "app", 901)
        db.execute("INSERT INTO apps (id, slug, name, owner_id, bot_user_id, public_key, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (app_id, slug, name.strip(), owner_row["id"], bot["id"], public_pem, now()))
    return jsonify({"id": app_id, "slug": slug, "bot_login": bot["login"], "private_key": private_pem}), 201


@admin.post("/<int:app_id>/installations")
def install(app_id: int) -> ResponseReturnValue:
    hub = current_hub()
    if hub.store.one("SELECT id FROM apps WHERE id = ?", app_id) is None:
        raise not_found()
    account = json_body().get("account")
    if not isinstance(account, str):
        raise ApiError(422, "Validation Failed", errors=[{
            "resource": "Installation", "code": "missing_field", "field": "account"}])
    account_row, _ = hub.account(check_login(account))
    with hub.store.tx() as db:
        row = db.execute("SELECT * FROM installations WHERE app_id = ? AND account_id = ?",
                         (app_id, account_row["id"])).fetchone()
        if row is None:
            inst_id = hub.store.next_id(db, "installation", 70001)
            db.execute("INSERT INTO installations (id, app_id, account_id, created_at) VALUES (?, ?, ?, ?)",
                       (inst_id, app_id, account_row["id"], now()))
        else:
            inst_id = row["id"]
    return jsonify({"id": inst_id}), 201


@api.get("/app")
def get_app() -> ResponseReturnValue:
    hub = current_hub()
    app_id = _require_app()
    return jsonify(_app_json(hub, hub.store.one("SELECT * FROM apps WHERE id = ?", app_id)))


def installation(app_id: int, inst_id: int) -> Any:
    hub = current_hub()
    row = hub.store.one("SELECT * FROM installations WHERE id = ? AND app_id = ?", inst_id, app_id)
    if row is None:
        raise not_found()
    return row


@api.get("/app/installations/<int:inst_id>")
def get_installation(inst_id: int) -> ResponseReturnValue:
    hub = current_hub()
    return jsonify(_installation_json(hub, installation(_require_app(), inst_id)))


@api.get("/repos/<owner>/<repo>/installation")
def repo_installation(owner: str, repo: str) -> ResponseReturnValue:
    hub = current_hub()
    app_id = _require_app()
    repo_row = hub.repo(owner, repo)
    row = hub.store.one("SELECT * FROM installations WHERE app_id = ? AND account_id = ?",
                        app_id, repo_row["owner_id"])
    if row is None:
        raise not_found()
    return jsonify(_installation_json(hub, row))


@api.post("/app/installations/<int:inst_id>/access_tokens")
def access_token(inst_id: int) -> ResponseReturnValue:
    hub = current_hub()
    app_id = _require_app()
    row = installation(app_id, inst_id)
    app_row = hub.store.one("SELECT * FROM apps WHERE id = ?", app_id)
    token, expires = hub.issue_token(app_row["bot_user_id"], installation_id=row["id"],
                                     ttl=TOKEN_TTL, prefix="ghs_")
    return jsonify({"token": token, "expires_at": shapes.timestamp(expires), "permissions": PERMISSIONS,
                    "repository_selection": "all"}), 201
