"""Repository webhooks: `POST/GET /repos/{o}/{r}/hooks`, `GET/PATCH/DELETE .../hooks/{id}`,
`POST .../hooks/{id}/pings` and `.../tests`, and the deliveries API (`GET .../deliveries`,
`GET .../deliveries/{id}`, `POST .../deliveries/{id}/attempts` to redeliver).

The sending itself is webhooks.py's. As on GitHub, a new active hook is pinged at once, the
secret is never shown again (`********`), and a config PATCH replaces the whole config, so
a secret left out is removed. Hooks are the repository admins' alone: anyone else is told
404, as if there were none.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Response, jsonify
from flask.typing import ResponseReturnValue

from localhub import messages, shapes
from localhub.errors import ApiError, json_body, or_404
from localhub.hub import current_hub
from localhub.lookup import administered
from localhub.paging import paginate
from localhub.store import dumps, now
from localhub.webhooks import deliverer

DEFAULT_EVENTS = ["push"]
HOOK_NAME = "web"  # the only name a repository webhook may have
CONTENT_TYPES = ("json", "form")
# The events a repository webhook may subscribe to (GitHub's list; "*" means all of them).
EVENTS = frozenset((
    "branch_protection_rule", "check_run", "check_suite", "code_scanning_alert", "commit_comment", "create",
    "delete", "deployment", "deployment_status", "deploy_key", "discussion", "discussion_comment", "fork",
    "gollum", "issues", "issue_comment", "label", "member", "membership", "meta", "milestone", "organization",
    "org_block", "package", "page_build", "project", "projects_v2_item", "project_card", "project_column",
    "public", "pull_request", "pull_request_review", "pull_request_review_comment",
    "pull_request_review_thread", "push", "registry_package", "release", "repository", "repository_import",
    "repository_vulnerability_alert", "secret_scanning_alert", "secret_scanning_alert_location",
    "security_and_analysis", "star", "status", "team", "team_add", "watch", "workflow_job", "workflow_run",
))


def _invalid(field: str) -> ApiError:
    return ApiError(422, messages.VALIDATION_FAILED, errors=[{"resource": "Hook", "code": "invalid", "field": field}])


def _custom(message: str) -> ApiError:
    return ApiError(422, messages.VALIDATION_FAILED,
                    errors=[{"resource": "Hook", "code": "custom", "message": message}])


def _config(value: Any) -> dict[str, Any]:
    """A checked hook config: url (required), content_type (GitHub's default: form), secret,
    insecure_ssl ("0"/"1")."""
    if not isinstance(value, dict):
        raise _custom(messages.NEEDS_URL)
    url = value.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise _custom(messages.NEEDS_URL)
    content_type = value.get("content_type", "form")
    if content_type not in CONTENT_TYPES:
        raise _invalid("content_type")
    secret = value.get("secret")
    if secret is not None and not isinstance(secret, str):
        raise _invalid("secret")
    insecure = str(value.get("insecure_ssl", "0"))
    if insecure not in ("0", "1"):
        raise _invalid("insecure_ssl")
    config: dict[str, Any] = {"url": url, "content_type": content_type, "insecure_ssl": insecure}
    if secret:
        config["secret"] = secret
    return config


def _events(value: Any) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(e, str) for e in value):
        raise _invalid("events")
    events = list(dict.fromkeys(value))
    if "*" in events:
        return ["*"]
    if not set(events) <= EVENTS:
        raise _invalid("events")
    return events


bp = Blueprint("github_hooks", __name__, url_prefix="/api/v3/repos/<owner>/<repo>/hooks")


def hook_or_404(repo: Any, hook_id: int) -> Any:
    hub = current_hub()
    return or_404(hub.store.one("SELECT * FROM hooks WHERE id = ? AND repo_id = ?", hook_id, repo["id"]))


def same_url_exists(repo: Any, url: str, other_than: int | None = None) -> bool:
    hub = current_hub()
    return any(json.loads(h["config"]).get("url") == url and h["id"] != other_than
               for h in hub.store.all("SELECT * FROM hooks WHERE repo_id = ?", repo["id"]))


@bp.post("")
def create_hook(owner: str, repo: str) -> ResponseReturnValue:
    hub = current_hub()
    user, row, _ = administered(hub, owner, repo)
    body = json_body()
    if body.get("name", HOOK_NAME) != HOOK_NAME:
        raise _invalid("name")
    config = _config(body.get("config"))
    events = _events(body.get("events", DEFAULT_EVENTS))
    active = body.get("active", True)
    if not isinstance(active, bool):
        raise _invalid("active")
    if same_url_exists(row, config["url"]):
        raise _custom(messages.HOOK_EXISTS)
    with hub.store.tx() as db:
        hook_id = hub.store.next_id(db, "hook", 400_000_001)
        db.execute("INSERT INTO hooks (id, repo_id, config, events, active, created_at, updated_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (hook_id, row["id"], dumps(config), json.dumps(events), int(active), now(), now()))
    hook = hook_or_404(row, hook_id)
    if active:
        deliverer().ping(hook, user["id"])  # GitHub pings every new hook
    return jsonify(shapes.hook(hub, row, hook)), 201


@bp.get("")
def list_hooks(owner: str, repo: str) -> ResponseReturnValue:
    hub = current_hub()
    row = administered(hub, owner, repo).repo
    rows = hub.store.all("SELECT * FROM hooks WHERE repo_id = ? ORDER BY id", row["id"])
    return paginate([shapes.hook(hub, row, h) for h in rows])


@bp.get("/<int:hook_id>")
def get_hook(owner: str, repo: str, hook_id: int) -> ResponseReturnValue:
    hub = current_hub()
    row = administered(hub, owner, repo).repo
    return jsonify(shapes.hook(hub, row, hook_or_404(row, hook_id)))


@bp.patch("/<int:hook_id>")
def edit_hook(owner: str, repo: str, hook_id: int) -> ResponseReturnValue:
    hub = current_hub()
    row = administered(hub, owner, repo).repo
    hook = hook_or_404(row, hook_id)
    body = json_body()
    config = json.loads(hook["config"])
    if "config" in body:
        config = _config(body["config"])
        if same_url_exists(row, config["url"], other_than=hook_id):
            raise _custom(messages.HOOK_EXISTS)
    events = json.loads(hook["events"])
    if "events" in body:
        events = _events(body["events"])
    if "add_events" in body:
        events = _events(events + list(body["add_events"] or []))
    if "remove_events" in body:
        removing = body["remove_events"] or []
        events = _events([e for e in events if e not in removing] or DEFAULT_EVENTS)
    active = body.get("active", bool(hook["active"]))
    if not isinstance(active, bool):
        raise _invalid("active")
    with hub.store.tx() as db:
        db.execute("UPDATE hooks SET config = ?, events = ?, active = ?, updated_at = ? WHERE id = ?",
                   (dumps(config), json.dumps(events), int(active), now(), hook_id))
    return jsonify(shapes.hook(hub, row, hook_or_404(row, hook_id)))


@bp.delete("/<int:hook_id>")
def delete_hook(owner: str, repo: str, hook_id: int) -> ResponseReturnValue:
    hub = current_hub()
    row = administered(hub, owner, repo).repo
    hook_or_404(row, hook_id)
    with hub.store.tx() as db:
        db.execute("DELETE FROM hooks WHERE id = ?", (hook_id,))
        db.execute("DELETE FROM deliveries WHERE hook_id = ?", (hook_id,))
    return Response(status=204)


@bp.post("/<int:hook_id>/pings")
def ping_hook(owner: str, repo: str, hook_id: int) -> ResponseReturnValue:
    hub = current_hub()
    user, row, _ = administered(hub, owner, repo)
    deliverer().ping(hook_or_404(row, hook_id), user["id"])
    return Response(status=204)


@bp.post("/<int:hook_id>/tests")
def test_hook(owner: str, repo: str, hook_id: int) -> ResponseReturnValue:
    hub = current_hub()
    user, row, _ = administered(hub, owner, repo)
    deliverer().test_push(hook_or_404(row, hook_id), user["id"])
    return Response(status=204)


# ------------------------------------------------------------------ deliveries
def delivery_or_404(hook: Any, delivery_id: int) -> Any:
    hub = current_hub()
    return or_404(hub.store.one("SELECT * FROM deliveries WHERE id = ? AND hook_id = ?", delivery_id, hook["id"]))


@bp.get("/<int:hook_id>/deliveries")
def list_deliveries(owner: str, repo: str, hook_id: int) -> ResponseReturnValue:
    hub = current_hub()
    row = administered(hub, owner, repo).repo
    hook_or_404(row, hook_id)
    rows = hub.store.all("SELECT * FROM deliveries WHERE hook_id = ? ORDER BY id DESC", hook_id)
    return paginate([shapes.delivery(hub, row, d) for d in rows])


@bp.get("/<int:hook_id>/deliveries/<int:delivery_id>")
def get_delivery(owner: str, repo: str, hook_id: int, delivery_id: int) -> ResponseReturnValue:
    hub = current_hub()
    row = administered(hub, owner, repo).repo
    found = delivery_or_404(hook_or_404(row, hook_id), delivery_id)
    return jsonify(shapes.delivery(hub, row, found, full=True))


@bp.post("/<int:hook_id>/deliveries/<int:delivery_id>/attempts")
def redeliver(owner: str, repo: str, hook_id: int, delivery_id: int) -> ResponseReturnValue:
    hub = current_hub()
    row = administered(hub, owner, repo).repo
    found = delivery_or_404(hook_or_404(row, hook_id), delivery_id)
    deliverer().redeliver(found)
    return jsonify({}), 202
