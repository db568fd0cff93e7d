"""Users and repositories: `GET /user`, `GET /users/{login}`, `POST /user/repos`,
`GET /repos/{owner}/{repo}`, and collaborators (`PUT`, `GET`, `DELETE`
`/repos/{owner}/{repo}/collaborators/{username}`).

A private repository is seen only by its owner, its collaborators and installation tokens of
an App on its owner's account (hub.can_read); anyone else gets GitHub's 404. localhub adds a
collaborator at once (GitHub's 204, as for an organisation member) rather than inviting.
Whether someone is a collaborator, and their permission
(`GET /repos/{owner}/{repo}/collaborators/{username}/permission`), is GitHub's answer to
callers with push access only.
"""

from __future__ import annotations

import re
from typing import Any

import pygit2
from flask import Blueprint, Response, g, jsonify
from flask.typing import ResponseReturnValue

from localhub import access, messages, shapes
from localhub.errors import ApiError, json_body, not_found, or_404
from localhub.hub import Hub, current_hub
from localhub.lookup import Target, requested
from localhub.store import now

PERMISSIONS = ("pull", "triage", "push", "maintain", "admin")

REPO_NAME = re.compile(r"^[A-Za-z0-9._-]{1,100}$")


bp = Blueprint("github_repos", __name__, url_prefix="/api/v3")


@bp.get("/user")
def me() -> ResponseReturnValue:
    hub = current_hub()
    return jsonify(shapes.user(hub, hub.current_user(), view="private"))


@bp.get("/users/<login>")
def get_user(login: str) -> ResponseReturnValue:
    hub = current_hub()
    hub.current_user()
    return jsonify(shapes.user(hub, or_404(hub.user_by_login(login)), view="public"))


@bp.post("/user/repos")
def create_repo() -> ResponseReturnValue:
    hub = current_hub()
    return create_repository(hub, hub.current_user(), json_body())


def create_repository(hub: Hub, user: Any, body: dict[str, Any]) -> tuple[Response, int]:
    """`POST /user/repos` for `user`: shared by GitHub's call and the operator's, which
    creates a repository for an existing account without a token of that account."""
    name = body.get("name")
    if not isinstance(name, str) or not REPO_NAME.match(name) or name in (".", "..") or name.endswith(".git"):
        raise ApiError(422, messages.REPOSITORY_NOT_CREATED, errors=[{
            "resource": "Repository", "code": "custom", "field": "name", "message": messages.REPOSITORY_NAME_INVALID}])
    description = body.get("description")
    private = bool(body.get("private", False))
    with hub.store.tx() as db:
        if db.execute("SELECT id FROM repos WHERE owner_id = ? AND name = ?", (user["id"], name)).fetchone():
            raise ApiError(422, messages.REPOSITORY_NOT_CREATED, errors=[{
                "resource": "Repository", "code": "custom", "field": "name",
                "message": messages.REPOSITORY_NAME_TAKEN}])
        repo_id = hub.store.next_id(db, "repo", 500001)
        db.execute("INSERT INTO repos (id, owner_id, name, description, private, created_at, updated_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (repo_id, user["id"], name, description, int(private), now(), now()))
        row = db.execute("SELECT * FROM repos WHERE id = ?", (repo_id,)).fetchone()
        path = hub.repo_path(row)
        path.parent.mkdir(parents=True, exist_ok=True)
        git = pygit2.init_repository(str(path), bare=True, initial_head="main")
        git.config["http.receivepack"] = "true"
        git.config["receive.denyNonFastForwards"] = "false"
    hub.emit("repository", "created", repo_id, user["id"])  # GitHub's `repository` event (not delivered)
    if body.get("auto_init"):
        signature = pygit2.Signature(user["login"], f"{user['id']}+{user['login']}@users.noreply.localhub")
        tree = git.TreeBuilder()
        tree.insert("README.md", git.create_blob(f"# {name}\n\n{description or ''}\n".encode()),
                    pygit2.GIT_FILEMODE_BLOB)
        sha = git.create_commit("refs/heads/main", signature, signature, "Initial commit", tree.write(), [])
        hub.ref_moved(row, "refs/heads/main", None, str(sha), user["id"])
    return jsonify(shapes.repository(hub, hub.repo_by_id(repo_id))), 201


# localhub's own: a repository for an account that exists, asked for by the operator (as every
# endpoint under /_localhub/, localhub.access), so `create-repo` need not mint another token for
# an owner who has one.
admin = Blueprint("localhub_repos", __name__, url_prefix="/_localhub/users/<login>")


@admin.post("/repos")
def create_repo_for(login: str) -> ResponseReturnValue:
    hub = current_hub()
    user = or_404(hub.user_by_login(login))
    g.user = user  # the answer is the owner's view of it, as GitHub's would be
    return create_repository(hub, user, json_body())


@bp.get("/repos/<owner>/<repo>")
def get_repo(owner: str, repo: str) -> ResponseReturnValue:
    hub = current_hub()
    return jsonify(shapes.repository(hub, requested(hub, owner, repo).repo))


def _admin(owner: str, repo: str) -> Target:
    hub = current_hub()
    target = requested(hub, owner, repo)
    if not hub.can_admin(target.user, target.repo):
        raise ApiError(403, messages.NEEDS_ADMIN)
    return target


@bp.put("/repos/<owner>/<repo>/collaborators/<username>")
def add_collaborator(owner: str, repo: str, username: str) -> ResponseReturnValue:
    hub = current_hub()
    target = _admin(owner, repo)
    body = json_body()
    permission = body.get("permission", "push")
    if permission not in PERMISSIONS:
        raise ApiError(422, messages.VALIDATION_FAILED, errors=[{
            "resource": "Repository", "code": "invalid", "field": "permission",
            "message": messages.PERMISSION_NOT_ONE_OF.format(choices=", ".join(PERMISSIONS))}])
    user = or_404(hub.user_by_login(username))
    old = hub.store.one("SELECT permission FROM collaborators WHERE repo_id = ? AND user_id = ?",
                        target.repo["id"], user["id"])
    hub.add_collaborator(target.repo["id"], user["id"], permission)
    if old is None:  # GitHub's `member` event: who may write changed
        hub.emit("member", "added", target.repo["id"], target.user["id"], member_id=user["id"])
    elif old["permission"] != permission:
        hub.emit("member", "edited", target.repo["id"], target.user["id"], member_id=user["id"],
                 old_permission=old["permission"])
    return Response(status=204)


def _pusher(owner: str, repo: str, refusal: str) -> Target:
    hub = current_hub()
    target = requested(hub, owner, repo)
    if not hub.caller_may("write", target.repo):
        raise ApiError(403, refusal)
    return target


@bp.get("/repos/<owner>/<repo>/collaborators/<username>")
def is_collaborator(owner: str, repo: str, username: str) -> ResponseReturnValue:
    hub = current_hub()
    target = _pusher(owner, repo, messages.COLLABORATORS_NEED_PUSH)
    user = hub.user_by_login(username)
    found = user is not None and (user["id"] == target.repo["owner_id"] or hub.store.one(
        "SELECT 1 AS ok FROM collaborators WHERE repo_id = ? AND user_id = ?", target.repo["id"],
        user["id"]) is not None)
    if not found:
        raise not_found()
    return Response(status=204)


@bp.get("/repos/<owner>/<repo>/collaborators/<username>/permission")
def collaborator_permission(owner: str, repo: str, username: str) -> ResponseReturnValue:
    """`username`'s role on the repository, whatever grants it (owner, collaborator, an App
    installed on the owner's account, a public repository): `permission` in GitHub's
    legacy terms, `role_name` exactly."""
    hub = current_hub()
    target = _pusher(owner, repo, messages.PERMISSION_NEEDS_PUSH)
    user = or_404(hub.user_by_login(username))
    role = hub.role(user, target.repo)
    return jsonify({"permission": access.legacy_permission(role), "role_name": role,
                    "user": shapes.collaborator(hub, user, role)})


@bp.delete("/repos/<owner>/<repo>/collaborators/<username>")
def remove_collaborator(owner: str, repo: str, username: str) -> ResponseReturnValue:
    hub = current_hub()
    target = _admin(owner, repo)
    user = hub.user_by_login(username)
    if user is not None:
        with hub.store.tx() as db:
            removed = db.execute("DELETE FROM collaborators WHERE repo_id = ? AND user_id = ?",
                                 (target.repo["id"], user["id"])).rowcount
        if removed:
            hub.emit("member", "removed", target.repo["id"], target.user["id"], member_id=user["id"])
    return Response(status=204)
