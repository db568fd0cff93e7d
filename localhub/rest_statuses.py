"""Commit statuses: `POST /repos/{o}/{r}/statuses/{sha}`, `GET .../commits/{ref}/statuses`
(newest first) and the combined status `GET .../commits/{ref}/status`.

The combined state follows GitHub: the latest status per context counts; `failure` if any is
`error` or `failure`, `pending` if any is pending or there are none, else `success`. Each new
status emits a `status` event.
"""

from __future__ import annotations

import re
from typing import Any

import pygit2
from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from localhub import messages, shapes
from localhub.errors import ApiError, json_body
from localhub.hub import Hub, current_hub
from localhub.lookup import requested, writable
from localhub.paging import page_of, paginate
from localhub.store import now

STATES = ("error", "failure", "pending", "success")
DEFAULT_CONTEXT = "default"
FULL_SHA = re.compile(r"^[0-9a-f]{40}$")


def _no_commit(ref: str) -> ApiError:
    return ApiError(422, messages.NO_COMMIT_FOUND.format(sha=ref))


def resolve(hub: Hub, repo: Any, ref: str) -> str:
    """The commit sha `ref` names: a sha (full or abbreviated), a branch, a tag, or a full ref."""
    git = hub.git(repo)
    candidates = [ref] if ref.startswith("refs/") else [f"refs/heads/{ref}", f"refs/tags/{ref}"]
    for name in candidates:
        if name in git.references:
            return str(git.references[name].peel(pygit2.Commit).id)
    if re.fullmatch(r"[0-9a-fA-F]{4,40}", ref):
        try:
            obj = git.revparse_single(ref)
            return str(obj.peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            pass
    raise _no_commit(ref)


def combined_state(latest: list[Any]) -> str:
    states = {row["state"] for row in latest}
    if states & {"error", "failure"}:
        return "failure"
    if not latest or "pending" in states:
        return "pending"
    return "success"


bp = Blueprint("github_statuses", __name__, url_prefix="/api/v3/repos/<owner>/<repo>")


@bp.post("/statuses/<sha>")
def create_status(owner: str, repo: str, sha: str) -> ResponseReturnValue:
    hub = current_hub()
    user, row, _ = writable(hub, owner, repo)
    body = json_body()
    state = body.get("state")
    if state not in STATES:
        raise ApiError(422, "Validation Failed", errors=[
            {"resource": "Status", "code": "custom", "field": "state", "message": messages.BAD_STATE}])
    if not FULL_SHA.match(sha.lower()):
        raise ApiError(422, "Validation Failed", errors=[
            {"resource": "Status", "code": "custom", "field": "sha", "message": messages.BAD_SHA}])
    sha = sha.lower()
    try:
        obj = hub.git(row).get(sha)
    except (ValueError, KeyError):
        obj = None
    if obj is None or obj.type_str != "commit":
        raise _no_commit(sha)
    context = body.get("context") or DEFAULT_CONTEXT
    for key in ("target_url", "description"):
        if body.get(key) is not None and not isinstance(body.get(key), str):
            raise ApiError(422, "Validation Failed", errors=[
                {"resource": "Status", "code": "invalid", "field": key}])
    with hub.store.tx() as db:
        status_id = hub.store.next_id(db, "status", 5_000_001)
        db.execute("INSERT INTO statuses (id, repo_id, sha, state, context, description, target_url, creator_id, "
                   "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (status_id, row["id"], sha, state, str(context), body.get("description"),
                    body.get("target_url"), user["id"], now(), now()))
    hub.emit("status", None, row["id"], user["id"], id=status_id)
    created = hub.store.one("SELECT * FROM statuses WHERE id = ?", status_id)
    return jsonify(shapes.status(hub, row, created)), 201


def list_statuses(owner: str, repo: str, ref: str) -> ResponseReturnValue:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    sha = resolve(hub, row, ref)
    rows = hub.store.all("SELECT * FROM statuses WHERE repo_id = ? AND sha = ? ORDER BY id DESC", row["id"], sha)
    return paginate([shapes.status(hub, row, r) for r in rows])


bp.add_url_rule("/commits/<path:ref>/statuses", "list_statuses", list_statuses, methods=["GET"])
# GitHub still answers the older `GET /statuses/{ref}` (not in its OpenAPI description),
# and PyGithub's Commit.get_statuses() calls it.
bp.add_url_rule("/statuses/<path:ref>", "list_statuses_legacy", list_statuses, methods=["GET"])


@bp.get("/commits/<path:ref>/status")
def combined_status(owner: str, repo: str, ref: str) -> ResponseReturnValue:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    sha = resolve(hub, row, ref)
    latest = hub.store.all(
        "SELECT * FROM statuses WHERE id IN (SELECT MAX(id) FROM statuses WHERE repo_id = ? AND sha = ? "
        "GROUP BY context) ORDER BY id", row["id"], sha)
    api = shapes.repo_api(hub, row)
    return jsonify({
        "state": combined_state(latest),
        "statuses": [shapes.status(hub, row, r, simple=True) for r in page_of(latest)],
        "sha": sha,
        "total_count": len(latest),
        "repository": shapes.repository(hub, row, full=False),
        "commit_url": f"{api}/commits/{sha}",
        "url": f"{api}/commits/{sha}/status",
    })
