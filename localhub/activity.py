"""The repository activity GitHub records: `GET /repos/{owner}/{repo}/activity`.

Every ref update (a push over git, a REST ref update, a pull request's merge, update-branch)
is recorded with the account that made it, so who pushed a pull request's head can be read
back as on GitHub: the integrator asks this to keep the pusher from approving their own push
(GitHub's "most recent reviewable push" rule). An entry has GitHub's shape (`id`, `node_id`,
`before`, `after`, `ref`, `timestamp`, `activity_type`, `actor`), newest first unless
`direction=asc`, filtered by `ref` (`refs/heads/x` or `x`), `actor` and `activity_type`, and
paged as localhub's other lists are (page numbers and a `Link` header).

The recorder listens to the hub ahead of every other listener, so an entry exists before the
webhooks a push causes are delivered.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request
from flask.blueprints import BlueprintSetupState
from flask.typing import ResponseReturnValue

from localhub import merging, messages, shapes
from localhub.errors import ApiError
from localhub.hub import EXTENSION as HUB
from localhub.hub import Event, Hub, current_hub
from localhub.lookup import requested
from localhub.paging import paginate
from localhub.store import now

ZERO_SHA = "0" * 40
TYPES = ("push", "force_push", "branch_creation", "branch_deletion", "pr_merge", "merge_queue_merge")
TABLE = """CREATE TABLE IF NOT EXISTS activity (
  id INTEGER PRIMARY KEY, repo_id INTEGER NOT NULL, ref TEXT NOT NULL, before TEXT NOT NULL, after TEXT NOT NULL,
  activity_type TEXT NOT NULL, actor_id INTEGER NOT NULL, created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS activity_by_ref ON activity (repo_id, ref);"""


def activity_type(before: str | None, after: str | None, *, merged_pull: bool, fast_forward: bool) -> str:
    """GitHub's name for a ref update: created, deleted, a pull request's merge, a push that
    rewrote history, or a plain push."""
    if before is None:
        return "branch_creation"
    if after is None:
        return "branch_deletion"
    if merged_pull:
        return "pr_merge"
    return "push" if fast_forward else "force_push"


class Recorder:
    """Records each `push` event of a hub as one activity entry."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        with hub.store.tx() as db:
            for statement in TABLE.split(";"):
                if statement.strip():
                    db.execute(statement)
        hub.subscribe(self.on_event, first=True)

    def on_event(self, event: Event) -> None:
        if event.name != "push":
            return
        before, after, ref = event.data.get("before"), event.data.get("after"), str(event.data["ref"])
        merged = after is not None and self.hub.store.one(
            "SELECT 1 AS ok FROM pulls WHERE repo_id = ? AND merge_commit_sha = ? AND merged_at IS NOT NULL",
            event.repo_id, after) is not None
        forward = True
        if before is not None and after is not None and not merged:
            git = self.hub.git(self.hub.repo_by_id(event.repo_id))
            forward = merging.contains(git, after, before)
        kind = activity_type(before, after, merged_pull=merged, fast_forward=forward)
        with self.hub.store.tx() as db:
            activity_id = self.hub.store.next_id(db, "activity", 1_300_000_001)
            db.execute("INSERT INTO activity (id, repo_id, ref, before, after, activity_type, actor_id, created_at) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (activity_id, event.repo_id, ref, before or ZERO_SHA, after or ZERO_SHA, kind,
                        event.sender_id, now()))


bp = Blueprint("github_activity", __name__, url_prefix="/api/v3/repos/<owner>/<repo>")


@bp.record_once
def start_recording(state: BlueprintSetupState) -> None:
    """Each app records its own hub's ref updates from registration on."""
    Recorder(state.app.extensions[HUB])


def entry(hub: Hub, row: Any, actors: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """One entry in GitHub's shape (`actors` keeps the accounts already shaped)."""
    actor = actors.get(row["actor_id"]) or actors.setdefault(row["actor_id"], shapes.user_by_id(hub, row["actor_id"]))
    return {"id": row["id"], "node_id": shapes.node_id("RepositoryActivity", row["id"]), "before": row["before"],
            "after": row["after"], "ref": row["ref"], "timestamp": shapes.timestamp(row["created_at"]),
            "activity_type": row["activity_type"], "actor": actor}


@bp.get("/activity")
def list_activity(owner: str, repo: str) -> ResponseReturnValue:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    args = request.args
    direction = args.get("direction", "desc")
    kind = args.get("activity_type")
    for field, value, choices in (("direction", direction, ("asc", "desc")), ("activity_type", kind, TYPES)):
        if value is not None and value not in choices:  # GitHub's validation-error-simple: plain strings
            raise ApiError(422, messages.VALIDATION_FAILED, errors=[  # type: ignore[list-item]
                messages.ACTIVITY_BAD_FILTER.format(field=field, choices=", ".join(choices))])
    where, values = ["repo_id = ?"], [row["id"]]
    ref = args.get("ref")
    if ref:
        where.append("ref = ?")
        values.append(ref if ref.startswith("refs/") else f"refs/heads/{ref}")
    if kind:
        where.append("activity_type = ?")
        values.append(kind)
    actor = args.get("actor")
    if actor:
        account = hub.user_by_login(actor)
        where.append("actor_id = ?")
        values.append(account["id"] if account is not None else -1)
    order = "ASC" if direction == "asc" else "DESC"
    rows = hub.store.all(f"SELECT * FROM activity WHERE {' AND '.join(where)} ORDER BY id {order}", *values)
    actors: dict[int, dict[str, Any]] = {}
    return paginate([entry(hub, r, actors) for r in rows])
