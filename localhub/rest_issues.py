"""Issues as far as pull requests need them: `GET /repos/{o}/{r}/issues/{n}` (a pull
request seen as an issue), issue comments, and labels.

Issues and pull requests share numbers on GitHub; localhub has only pull requests, so an
issue number that is not a pull request's is GitHub's 404. Labels that do not exist yet are
created when added to an issue, as GitHub does. Comments emit `issue_comment` events, label
changes `pull_request` `labeled`/`unlabeled` ones.

As on GitHub, applying and removing labels takes triage access, and making a label (by name
on an issue, or `POST /labels`) write access; without it the answer is 403.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, Response, jsonify, request
from flask.typing import ResponseReturnValue

from localhub import messages, shapes
from localhub.errors import ApiError, json_body, or_404
from localhub.hub import Hub, current_hub
from localhub.lookup import authored, requested
from localhub.paging import paginate
from localhub.store import now

DEFAULT_LABEL_COLOR = "ededed"
COLOR = re.compile(r"^[0-9A-Fa-f]{6}$")


def touch_pull(hub: Hub, pull: Any) -> None:
    """Comments and labels update the issue's `updated_at`, as on GitHub."""
    with hub.store.tx() as db:
        db.execute("UPDATE pulls SET updated_at = ? WHERE id = ?", (now(), pull["id"]))


def _label_names(value: Any) -> list[str]:
    """Label names from any body GitHub accepts: `["a"]`, `{"labels": ["a"]}`,
    `{"labels": [{"name": "a"}]}` or `[{"name": "a"}]`."""
    if isinstance(value, dict):
        value = value.get("labels", [])
    if not isinstance(value, list):
        raise ApiError(422, messages.VALIDATION_FAILED,
                       errors=[{"resource": "Label", "code": "invalid", "field": "labels"}])
    names: list[str] = []
    for item in value:
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, str) or not name.strip():
            raise ApiError(422, messages.VALIDATION_FAILED,
                           errors=[{"resource": "Label", "code": "invalid", "field": "name"}])
        name = name.strip()
        if name.lower() not in (n.lower() for n in names):
            names.append(name)
    return names


def _json_any() -> Any:
    """The request's JSON, object or array (label endpoints take both)."""
    if not request.data:
        return {}
    try:
        return request.get_json(force=True, silent=False)
    except Exception:  # werkzeug raises BadRequest subclasses for malformed JSON
        raise ApiError(400, messages.BAD_JSON) from None


def _comment_body() -> str:
    """The `body` of a comment being written: GitHub refuses a missing or empty one."""
    body = json_body().get("body")
    if not isinstance(body, str) or not body:
        raise ApiError(422, messages.VALIDATION_FAILED,
                       errors=[{"resource": "IssueComment", "code": "missing_field", "field": "body"}])
    return body


def _color(value: Any) -> str:
    if value is None:
        return DEFAULT_LABEL_COLOR
    if not isinstance(value, str) or not COLOR.match(value.removeprefix("#")):
        raise ApiError(422, messages.VALIDATION_FAILED,
                       errors=[{"resource": "Label", "code": "invalid", "field": "color"}])
    return value.removeprefix("#").lower()


def ensure_label(hub: Hub, repo: Any, name: str) -> Any:
    """The label named `name` (any case), created with GitHub's default colour if missing."""
    with hub.store.tx() as db:
        row = db.execute("SELECT * FROM labels WHERE repo_id = ? AND name = ?", (repo["id"], name)).fetchone()
        if row is not None:
            return row
        label_id = hub.store.next_id(db, "label", 2_000_001)
        db.execute("INSERT INTO labels (id, repo_id, name, color) VALUES (?, ?, ?, ?)",
                   (label_id, repo["id"], name, DEFAULT_LABEL_COLOR))
        return db.execute("SELECT * FROM labels WHERE id = ?", (label_id,)).fetchone()


def _may_label(hub: Hub, repo: Any) -> None:
    """GitHub's 403 unless the caller may apply and remove labels (triage or more)."""
    if not hub.caller_may("triage", repo):
        raise ApiError(403, messages.NEEDS_TRIAGE)


def _may_create_labels(hub: Hub, repo: Any, names: list[str] | None = None) -> None:
    """GitHub's 403 when the caller may not make labels (write or more) and would: with
    `POST /labels`, or by naming on an issue (`names`) a label the repository lacks."""
    if hub.caller_may("write", repo):
        return
    known = {row["name"].lower() for row in hub.store.all("SELECT name FROM labels WHERE repo_id = ?", repo["id"])}
    if names is None or any(name.lower() not in known for name in names):
        raise ApiError(403, messages.CANNOT_CREATE_LABELS,
                       errors=[{"resource": "Repository", "field": "label", "code": "unauthorized"}])


def _issue_label_rows(hub: Hub, repo: Any, number: int) -> list[Any]:
    return hub.store.all(
        "SELECT labels.* FROM labels JOIN issue_labels ON issue_labels.label_id = labels.id "
        "WHERE issue_labels.repo_id = ? AND issue_labels.number = ?", repo["id"], number)


bp = Blueprint("github_issues", __name__, url_prefix="/api/v3/repos/<owner>/<repo>")


def emit_labels(repo: Any, pull: Any, added: list[str], removed: list[str]) -> None:
    hub = current_hub()
    sender = hub.current_user()["id"]
    for name in removed:
        hub.emit("pull_request", "unlabeled", repo["id"], sender, number=pull["number"], label=name)
    for name in added:
        hub.emit("pull_request", "labeled", repo["id"], sender, number=pull["number"], label=name)


def set_issue_labels(repo: Any, pull: Any, names: list[str], *, replace: bool) -> None:
    """Add `names` to the issue (or make them its only labels when `replace`), emitting an
    event for each label that actually came or went."""
    hub = current_hub()
    _may_label(hub, repo)
    _may_create_labels(hub, repo, names)
    before = {row["id"]: row["name"] for row in _issue_label_rows(hub, repo, pull["number"])}
    wanted = [ensure_label(hub, repo, name) for name in names]
    wanted_ids = {row["id"] for row in wanted}
    with hub.store.tx() as db:
        if replace:
            for label_id in set(before) - wanted_ids:
                db.execute("DELETE FROM issue_labels WHERE repo_id = ? AND number = ? AND label_id = ?",
                           (repo["id"], pull["number"], label_id))
        for row in wanted:
            db.execute("INSERT OR IGNORE INTO issue_labels (repo_id, number, label_id) VALUES (?, ?, ?)",
                       (repo["id"], pull["number"], row["id"]))
    removed = [before[i] for i in before if replace and i not in wanted_ids]
    added = [row["name"] for row in wanted if row["id"] not in before]
    if added or removed:
        touch_pull(hub, pull)
    emit_labels(repo, pull, added, removed)


# ------------------------------------------------------------------ the issue itself
@bp.get("/issues/<int:number>")
def get_issue(owner: str, repo: str, number: int) -> ResponseReturnValue:
    hub = current_hub()
    _, row, pull = requested(hub, owner, repo, number)
    return jsonify(shapes.issue(hub, row, pull))


# ------------------------------------------------------------------ comments
@bp.post("/issues/<int:number>/comments")
def create_comment(owner: str, repo: str, number: int) -> ResponseReturnValue:
    hub = current_hub()
    user, row, pull = requested(hub, owner, repo, number)
    body = _comment_body()
    with hub.store.tx() as db:
        comment_id = hub.store.next_id(db, "comment", 1_000_000_001)
        db.execute("INSERT INTO comments (id, repo_id, number, user_id, body, created_at, updated_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)", (comment_id, row["id"], number, user["id"], body, now(), now()))
    touch_pull(hub, pull)
    hub.emit("issue_comment", "created", row["id"], user["id"], number=number, comment_id=comment_id)
    comment = hub.store.one("SELECT * FROM comments WHERE id = ?", comment_id)
    return jsonify(shapes.comment(hub, row, comment)), 201


@bp.get("/issues/<int:number>/comments")
def list_comments(owner: str, repo: str, number: int) -> ResponseReturnValue:
    hub = current_hub()
    row = requested(hub, owner, repo, number).repo
    rows = hub.store.all("SELECT * FROM comments WHERE repo_id = ? AND number = ? ORDER BY id", row["id"], number)
    since = request.args.get("since")
    items = [shapes.comment(hub, row, c) for c in rows]
    if since:
        items = [c for c in items if c["updated_at"] >= since]
    return paginate(items)


def comment_or_404(repo: Any, comment_id: int) -> Any:
    hub = current_hub()
    return or_404(hub.store.one("SELECT * FROM comments WHERE id = ? AND repo_id = ?", comment_id, repo["id"]))


@bp.get("/issues/comments/<int:comment_id>")
def get_comment(owner: str, repo: str, comment_id: int) -> ResponseReturnValue:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    return jsonify(shapes.comment(hub, row, comment_or_404(row, comment_id)))


@bp.patch("/issues/comments/<int:comment_id>")
def edit_comment(owner: str, repo: str, comment_id: int) -> ResponseReturnValue:
    hub = current_hub()
    target = requested(hub, owner, repo)
    row = authored(hub, target, comment_or_404(target.repo, comment_id)["user_id"]).repo
    body = _comment_body()
    with hub.store.tx() as db:
        db.execute("UPDATE comments SET body = ?, updated_at = ? WHERE id = ?", (body, now(), comment_id))
    return jsonify(shapes.comment(hub, row, comment_or_404(row, comment_id)))


@bp.delete("/issues/comments/<int:comment_id>")
def delete_comment(owner: str, repo: str, comment_id: int) -> ResponseReturnValue:
    hub = current_hub()
    target = requested(hub, owner, repo)
    authored(hub, target, comment_or_404(target.repo, comment_id)["user_id"])
    with hub.store.tx() as db:
        db.execute("DELETE FROM comments WHERE id = ?", (comment_id,))
    return Response(status=204)


# ------------------------------------------------------------------ repository labels
@bp.get("/labels")
def list_labels(owner: str, repo: str) -> ResponseReturnValue:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    rows = hub.store.all("SELECT * FROM labels WHERE repo_id = ? ORDER BY name COLLATE NOCASE", row["id"])
    return paginate([shapes.label(hub, row, r) for r in rows])


@bp.post("/labels")
def create_label(owner: str, repo: str) -> ResponseReturnValue:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    body = json_body()
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ApiError(422, messages.VALIDATION_FAILED,
                       errors=[{"resource": "Label", "code": "missing_field", "field": "name"}])
    _may_create_labels(hub, row)
    color = _color(body.get("color"))
    description = body.get("description")
    with hub.store.tx() as db:
        if db.execute("SELECT id FROM labels WHERE repo_id = ? AND name = ?", (row["id"], name)).fetchone():
            raise ApiError(422, messages.VALIDATION_FAILED,
                           errors=[{"resource": "Label", "code": "already_exists", "field": "name"}])
        label_id = hub.store.next_id(db, "label", 2_000_001)
        db.execute("INSERT INTO labels (id, repo_id, name, color, description) VALUES (?, ?, ?, ?, ?)",
                   (label_id, row["id"], name.strip(), color, description))
    return jsonify(shapes.label(hub, row, hub.store.one("SELECT * FROM labels WHERE id = ?", label_id))), 201


@bp.get("/labels/<path:name>")
def get_label(owner: str, repo: str, name: str) -> ResponseReturnValue:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    found = or_404(hub.store.one("SELECT * FROM labels WHERE repo_id = ? AND name = ?", row["id"], name))
    return jsonify(shapes.label(hub, row, found))


# ------------------------------------------------------------------ an issue's labels
@bp.get("/issues/<int:number>/labels")
def issue_labels(owner: str, repo: str, number: int) -> ResponseReturnValue:
    hub = current_hub()
    row = requested(hub, owner, repo, number).repo
    return paginate(shapes.labels_of(hub, row, number))


@bp.route("/issues/<int:number>/labels", methods=["POST", "PUT"])
def add_labels(owner: str, repo: str, number: int) -> ResponseReturnValue:
    """POST adds labels, PUT makes them the issue's only ones."""
    hub = current_hub()
    _, row, pull = requested(hub, owner, repo, number)
    set_issue_labels(row, pull, _label_names(_json_any()), replace=request.method == "PUT")
    return jsonify(shapes.labels_of(hub, row, number))


@bp.delete("/issues/<int:number>/labels")
def remove_all_labels(owner: str, repo: str, number: int) -> ResponseReturnValue:
    hub = current_hub()
    _, row, pull = requested(hub, owner, repo, number)
    set_issue_labels(row, pull, [], replace=True)
    return Response(status=204)


@bp.delete("/issues/<int:number>/labels/<path:name>")
def remove_label(owner: str, repo: str, number: int, name: str) -> ResponseReturnValue:
    hub = current_hub()
    _, row, pull = requested(hub, owner, repo, number)
    _may_label(hub, row)
    found = hub.store.one(
        "SELECT labels.* FROM labels JOIN issue_labels ON issue_labels.label_id = labels.id "
        "WHERE issue_labels.repo_id = ? AND issue_labels.number = ? AND labels.name = ?",
        row["id"], number, name)
    if found is None:
        raise ApiError(404, messages.LABEL_NOT_FOUND)
    with hub.store.tx() as db:
        db.execute("DELETE FROM issue_labels WHERE repo_id = ? AND number = ? AND label_id = ?",
                   (row["id"], number, found["id"]))
    touch_pull(hub, pull)
    emit_labels(row, pull, [], [found["name"]])
    return jsonify(shapes.labels_of(hub, row, number))
