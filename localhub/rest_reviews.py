"""Pull request reviews: `POST/GET /repos/{o}/{r}/pulls/{n}/reviews`, `GET .../reviews/{id}`.

GitHub's rules are kept because the bot's review flow depends on them: an author cannot
approve or request changes on their own pull request, and REQUEST_CHANGES and COMMENT need a
body. Each submitted review emits `pull_request_review` `submitted`. Pending reviews (no
`event`) and inline review comments are not modelled; both are refused with a 422 that says so.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from localhub import messages, shapes
from localhub.errors import ApiError, json_body, or_404
from localhub.hub import Hub, current_hub
from localhub.lookup import requested
from localhub.paging import paginate
from localhub.store import now

STATES = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}


def _refuse(message: str) -> ApiError:
    """GitHub answers every refused review with a list of plain strings in `errors` (its
    validation-error-simple shape), never with field objects."""
    return ApiError(422, messages.UNPROCESSABLE, errors=[message])  # type: ignore[list-item]


bp = Blueprint("github_reviews", __name__, url_prefix="/api/v3/repos/<owner>/<repo>/pulls/<int:number>")


@bp.post("/reviews")
def create_review(owner: str, repo: str, number: int) -> ResponseReturnValue:
    hub = current_hub()
    user, row, pull = requested(hub, owner, repo, number)
    body_json = json_body()
    event = body_json.get("event")
    body = body_json.get("body")
    if event is None or event == "":
        raise _refuse(messages.NO_PENDING_REVIEWS)
    if event not in STATES:
        raise _refuse(messages.BAD_EVENT)
    if body is not None and not isinstance(body, str):
        raise _refuse(messages.BAD_BODY)
    if body_json.get("comments"):
        raise _refuse(messages.NO_REVIEW_COMMENTS)
    if pull["user_id"] == user["id"] and event == "APPROVE":
        raise _refuse(messages.OWN_APPROVE)
    if pull["user_id"] == user["id"] and event == "REQUEST_CHANGES":
        raise _refuse(messages.OWN_REQUEST_CHANGES)
    if event in ("REQUEST_CHANGES", "COMMENT") and not (body or "").strip():
        raise _refuse(messages.NEEDS_BODY)
    commit_id = body_json.get("commit_id") or pull["head_sha"]
    if not isinstance(commit_id, str) or not _is_commit(hub, row, commit_id):
        raise _refuse(messages.BAD_COMMIT)
    with hub.store.tx() as db:
        review_id = hub.store.next_id(db, "review", 3_000_001)
        db.execute("INSERT INTO reviews (id, repo_id, number, user_id, state, body, commit_id, submitted_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (review_id, row["id"], number, user["id"], STATES[event], body or "", commit_id, now()))
    hub.emit("pull_request_review", "submitted", row["id"], user["id"], number=number, review_id=review_id)
    return jsonify(shapes.review(hub, row, hub.store.one("SELECT * FROM reviews WHERE id = ?", review_id)))


@bp.get("/reviews")
def list_reviews(owner: str, repo: str, number: int) -> ResponseReturnValue:
    hub = current_hub()
    row = requested(hub, owner, repo, number).repo
    rows = hub.store.all("SELECT * FROM reviews WHERE repo_id = ? AND number = ? ORDER BY id", row["id"], number)
    return paginate([shapes.review(hub, row, r) for r in rows])


@bp.get("/reviews/<int:review_id>")
def get_review(owner: str, repo: str, number: int, review_id: int) -> ResponseReturnValue:
    hub = current_hub()
    row = requested(hub, owner, repo, number).repo
    found = or_404(hub.store.one("SELECT * FROM reviews WHERE id = ? AND repo_id = ? AND number = ?",
                                 review_id, row["id"], number))
    return jsonify(shapes.review(hub, row, found))


def _is_commit(hub: Hub, repo: Any, sha: str) -> bool:
    try:
        obj = hub.git(repo).get(sha)
    except (ValueError, KeyError):
        return False
    return obj is not None and obj.type_str == "commit"
