"""Pull requests: list, create, get, update, their commits and files, the pull requests of
a commit, merge (merge commit, squash, rebase), update-branch; mergeability through
mergeability.py; and localhub's own branch protection endpoint.

Pull requests follow their branches: a push to a head branch moves the pull request's head
(`synchronize`), a push to a base branch resets mergeability of the pull requests on it, a
push that puts a pull request's head into its base marks it merged (as GitHub does), and
deleting either branch closes it. Merges move the base branch with a compare-and-swap, so a
base that moved since it was read is GitHub's 405, never a lost update.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request
from flask.blueprints import BlueprintSetupState

from localhub import git_shapes, merging, messages, shapes
from localhub.errors import ApiError, json_body, not_found
from localhub.hub import EXTENSION as HUB
from localhub.hub import Event, Hub, current_hub
from localhub.lookup import authored, requested, writable
from localhub.mergeability import (
    Mergeability,
    behind,
    blockers,
    key,
    set_protection,
    state,
)
from localhub.paging import paginate
from localhub.store import now

log = logging.getLogger("localhub.pulls")

MAX_COMMITS = 250  # GitHub lists at most 250 commits of a pull request
PULL_ID_START = 1_900_000_001
METHODS = ("merge", "squash", "rebase")


def before_base_update(repo: Any, ref: str, expected: str) -> None:
    """Called between reading the base branch and moving it in a merge; a test replaces it
    to move the base meanwhile (GitHub's "Base branch was modified")."""


# ---------------------------------------------------------------------------- helpers


def one_of(body: dict[str, Any], field: str, choices: tuple[str, ...], default: str | None = None) -> str | None:
    value = body.get(field, default)
    if value is not None and value not in choices:
        raise ApiError(422, messages.NOT_ONE_OF.format(field=field, value=json.dumps(value),
                                              choices=json.dumps(list(choices))))
    return value


def optional_string(body: dict[str, Any], field: str) -> str | None:
    value = body.get(field)
    if value is not None and not isinstance(value, str):
        raise ApiError(422, messages.NOT_A_STRING.format(field=field, value=json.dumps(value)))
    return value


def invalid(field: str) -> ApiError:
    return ApiError(422, messages.VALIDATION_FAILED,
                    errors=[{"resource": "PullRequest", "field": field, "code": "invalid"}])


def custom(message: str, field: str | None = None) -> ApiError:
    error: dict[str, Any] = {"resource": "PullRequest", "code": "custom", "message": message}
    if field:
        error["field"] = field
    return ApiError(422, messages.VALIDATION_FAILED, errors=[error])


def reload(hub: Hub, pull_id: int) -> Any:
    return hub.store.one("SELECT * FROM pulls WHERE id = ?", pull_id)


def branch_name(repo_owner: str, value: str) -> str | None:
    """`branch` or `owner:branch` as the pull request API takes it; None for another owner
    (localhub has no forks)."""
    owner, sep, name = value.partition(":")
    if not sep:
        return value
    return name if owner.lower() == repo_owner.lower() else None


def pin_head(git: Any, number: int, sha: str) -> None:
    """`refs/pull/N/head`, as GitHub keeps it: the head stays fetchable after its branch goes."""
    try:
        git.references.create(f"refs/pull/{number}/head", sha, force=True)
    except Exception:  # a concurrent writer holds the lock; the next change pins it again
        log.debug("could not pin refs/pull/%s/head", number)


# ---------------------------------------------------------------------------- messages


def merge_message(repo_owner: str, pull: Any, method: str, commits: list[Any],
                  title: str | None, message: str | None) -> str:
    """GitHub's default commit title/message for each merge method (repository defaults:
    MERGE_MESSAGE + PR_TITLE, COMMIT_OR_PR_TITLE + COMMIT_MESSAGES)."""
    number = pull["number"]
    if method == "merge":
        title = title or f"Merge pull request #{number} from {repo_owner}/{pull['head_ref']}"
        message = pull["title"] if message is None else message
    else:
        if len(commits) == 1:
            summary, _, rest = commits[0].message.strip().partition("\n")
            title = title or f"{summary} (#{number})"
            message = rest.strip() if message is None else message
        else:
            title = title or f"{pull['title']} (#{number})"
            if message is None:
                message = "\n\n".join(f"* {c.message.strip()}" for c in commits)
    return f"{title}\n\n{message}\n" if message else f"{title}\n"


# ---------------------------------------------------------------------------- state of an app

class Pulls:
    """An app's pull request machinery that outlives a request: the mergeability worker, one
    merge lock per repository, and the listener that makes pull requests follow their
    branches. Hub events also come from background threads (an update-branch merge), so the
    listener holds its hub rather than asking the request for it."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.engine = Mergeability(hub)
        self._merge_locks: dict[int, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        # per (repository, branch): its last tip seen here and which open heads that tip holds
        self._held_at: dict[tuple[int, str], tuple[str, dict[str, bool]]] = {}
        self._held_lock = threading.Lock()
        hub.subscribe(self.on_event)

    def merge_lock(self, repo_id: int) -> threading.Lock:
        """One merge at a time per repository, so a pull request is never merged twice."""
        with self._locks_guard:
            return self._merge_locks.setdefault(repo_id, threading.Lock())

    def close(self, pull: Any, sender_id: int, *, merged_sha: str | None = None) -> None:
        hub = self.hub
        stamp = now()
        with hub.store.tx() as db:
            if merged_sha is None:
                db.execute("UPDATE pulls SET state = 'closed', closed_at = ?, updated_at = ? WHERE id = ?",
                           (stamp, stamp, pull["id"]))
            else:
                db.execute("UPDATE pulls SET state = 'closed', closed_at = ?, updated_at = ?, merged_at = ?, "
                           "merged_by_id = ?, merge_commit_sha = ?, mergeable = NULL, rebaseable = NULL, "
                           "mergeable_state = 'unknown' WHERE id = ?",
                           (stamp, stamp, stamp, sender_id, merged_sha, pull["id"]))

    # -------------------------------------------------------------- following branches
    def on_event(self, event: Event) -> None:
        hub = self.hub
        try:
            if event.name == "push":
                ref = str(event.data.get("ref") or "")
                if ref.startswith("refs/heads/"):
                    self.followed(event, ref.removeprefix("refs/heads/"))
            elif event.name == "pull_request_review":
                self.refresh_states(event.repo_id, "number = ?", event.data.get("number"))
            elif event.name == "status":
                status = hub.store.one("SELECT sha FROM statuses WHERE id = ?", event.data.get("id"))
                if status is not None:
                    self.refresh_states(event.repo_id, "head_sha = ?", status["sha"])
        except Exception:  # a listener must not fail the request that triggered it
            log.exception("updating pull requests after %s failed", event.name)

    def refresh_states(self, repo_id: int, clause: str, value: Any) -> None:
        """Reviews, statuses and protection change `mergeable_state` without moving the head
        or base: store the new state (webhook payloads read it from the row)."""
        hub = self.hub
        repo = hub.repo_by_id(repo_id)
        for pull in hub.store.all(f"SELECT * FROM pulls WHERE repo_id = ? AND state = 'open' AND "
                                  f"mergeable IS NOT NULL AND {clause}", repo_id, value):
            with hub.store.tx() as db:
                db.execute("UPDATE pulls SET mergeable_state = ? WHERE id = ? AND mergeable_key = ?",
                           (state(hub, repo, pull), pull["id"], pull["mergeable_key"]))

    def followed(self, event: Event, branch: str) -> None:
        hub = self.hub
        after = event.data.get("after")
        sender = event.sender_id
        repo = hub.repo_by_id(event.repo_id)
        git = hub.git(repo)
        for pull in hub.store.all("SELECT * FROM pulls WHERE repo_id = ? AND state = 'open' AND head_ref = ?",
                                  repo["id"], branch):
            if after is None:
                self.close(pull, sender)
                hub.emit("pull_request", "closed", repo["id"], sender, number=pull["number"], merged=False)
                continue
            if pull["head_sha"] == after:
                continue
            with hub.store.tx() as db:
                db.execute("UPDATE pulls SET head_sha = ?, updated_at = ? WHERE id = ?", (after, now(), pull["id"]))
            pin_head(git, pull["number"], after)
            self.engine.reset(pull["id"])
            hub.emit("pull_request", "synchronize", repo["id"], sender, number=pull["number"],
                     before=pull["head_sha"], after=after)
        onto = hub.store.all("SELECT * FROM pulls WHERE repo_id = ? AND state = 'open' AND base_ref = ?",
                             repo["id"], branch)
        if after is None:
            for pull in onto:
                self.close(pull, sender)
                hub.emit("pull_request", "closed", repo["id"], sender, number=pull["number"], merged=False)
            return
        # A pull request whose head the base now holds was merged by this push, as on GitHub.
        with self._held_lock:
            previous = self._held_at.get((repo["id"], branch))
        held = merging.held_by(git, after, {p["head_sha"] for p in onto}, previous)
        with self._held_lock:
            self._held_at[(repo["id"], branch)] = (after, held)
        moved = []
        brought = merging.bringing_commits(git, event.data.get("before"), after,
                                           {p["head_sha"] for p in onto if held[p["head_sha"]]})
        for pull in onto:
            if held[pull["head_sha"]]:
                self.close(pull, sender, merged_sha=brought.get(pull["head_sha"], pull["head_sha"]))
                hub.emit("pull_request", "closed", repo["id"], sender, number=pull["number"], merged=True)
            elif pull["base_sha"] != after:
                moved.append(pull["id"])
        if moved:
            with hub.store.tx() as db:
                db.executemany("UPDATE pulls SET base_sha = ? WHERE id = ?", [(after, i) for i in moved])
            self.engine.reset(*moved)


PULLS = "localhub.pulls"  # app.extensions key of the app's Pulls


def current_pulls() -> Pulls:
    """The pull request machinery of the app answering this request."""
    return current_app.extensions[PULLS]  # type: ignore[no-any-return]


bp = Blueprint("github_pulls", __name__, url_prefix="/api/v3/repos/<owner>/<repo>")


@bp.record_once
def start_following(state: BlueprintSetupState) -> None:
    """Each app gets its own Pulls, listening to its hub from registration on."""
    pulls = Pulls(state.app.extensions[HUB])
    state.app.extensions[PULLS] = pulls


# ------------------------------------------------------------------ list, create, get, update
@bp.get("/pulls")
def list_pulls(owner: str, repo: str) -> Response:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    args = request.args
    wanted = args.get("state", "open")
    if wanted not in ("open", "closed", "all"):
        wanted = "open"
    sql = "SELECT * FROM pulls WHERE repo_id = ?"
    params: list[Any] = [row["id"]]
    if wanted != "all":
        sql += " AND state = ?"
        params.append(wanted)
    if args.get("head"):
        head = branch_name(owner, args["head"]) if ":" in args["head"] else None
        if ":" in args["head"] and head is None:
            return paginate([])
        if head is not None:
            sql += " AND head_ref = ?"
            params.append(head)
    if args.get("base"):
        sql += " AND base_ref = ?"
        params.append(args["base"])
    sort = args.get("sort", "created")
    direction = args.get("direction") or ("desc" if sort in ("created", "updated") else "asc")
    order = {"updated": "updated_at", "popularity": "(SELECT COUNT(*) FROM comments c WHERE "
             "c.repo_id = pulls.repo_id AND c.number = pulls.number)",
             "long-running": "created_at"}.get(sort, "created_at")
    sql += f" ORDER BY {order} {'ASC' if direction == 'asc' else 'DESC'}, number " \
           f"{'ASC' if direction == 'asc' else 'DESC'}"
    rows = hub.store.all(sql, *params)
    return paginate([git_shapes.pull_request(hub, r, simple=True) for r in rows])


@bp.post("/pulls")
def create_pull(owner: str, repo: str) -> tuple[Response, int, dict[str, str]]:
    hub = current_hub()
    user, row, _ = requested(hub, owner, repo)
    body = json_body()
    for field in ("head", "base"):
        if body.get(field) is None:
            raise ApiError(422, messages.NOT_SUPPLIED.format(field=field))
    title = optional_string(body, "title")
    text = optional_string(body, "body")
    head_value = optional_string(body, "head") or ""
    base = optional_string(body, "base") or ""
    if not title:
        raise ApiError(422, messages.VALIDATION_FAILED, errors=[
            {"resource": "PullRequest", "code": "missing_field", "field": "title"}])
    git = hub.git(row)
    head = branch_name(owner, head_value)
    head_sha = merging.branch_tip(git, head) if head else None
    base_sha = merging.branch_tip(git, base) if base else None
    if head_sha is None:
        raise invalid("head")
    if base_sha is None:
        raise invalid("base")
    label = f"{hub.user(row['owner_id'])['login']}:{head}"
    existing = hub.store.one("SELECT number FROM pulls WHERE repo_id = ? AND state = 'open' AND head_ref = ? "
                             "AND base_ref = ?", row["id"], head, base)
    if existing is not None:
        raise custom(messages.ALREADY_EXISTS.format(label=label))
    if head == base or merging.contains(git, base_sha, head_sha):
        raise custom(messages.NO_COMMITS.format(base=base, head=head))
    stamp = now()
    with hub.store.tx() as db:
        number = db.execute("SELECT next_number FROM repos WHERE id = ?", (row["id"],)).fetchone()["next_number"]
        db.execute("UPDATE repos SET next_number = next_number + 1 WHERE id = ?", (row["id"],))
        pull_id = hub.store.next_id(db, "pull", PULL_ID_START)
        db.execute(
            "INSERT INTO pulls (id, repo_id, number, user_id, title, body, state, draft, head_ref, head_sha, "
            "base_ref, base_sha, mergeable_key, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, ?, ?, ?, ?, ?)",
            (pull_id, row["id"], number, user["id"], title, text, int(bool(body.get("draft"))), head, head_sha,
             base, base_sha, key(head_sha, base_sha), stamp, stamp))
    pin_head(git, number, head_sha)
    current_pulls().engine.reset(pull_id)
    hub.emit("pull_request", "opened", row["id"], user["id"], number=number)
    shape = git_shapes.pull_request(hub, reload(hub, pull_id))
    return jsonify(shape), 201, {"Location": shape["url"]}


@bp.get("/pulls/<int:number>")
def get_pull(owner: str, repo: str, number: int) -> Response:
    hub = current_hub()
    pull = requested(hub, owner, repo, number).pull
    current_pulls().engine.wanted(pull)
    return jsonify(git_shapes.pull_request(hub, pull))


@bp.patch("/pulls/<int:number>")
def update_pull(owner: str, repo: str, number: int) -> Response:
    hub = current_hub()
    target = requested(hub, owner, repo, number)
    user, row, pull = authored(hub, target, target.pull["user_id"])
    body = json_body()
    title = optional_string(body, "title")
    text = optional_string(body, "body")
    base = optional_string(body, "base")
    new_state = one_of(body, "state", ("open", "closed"))
    changes: dict[str, Any] = {}
    updates: dict[str, Any] = {}
    if title is not None and title != pull["title"]:
        changes["title"] = {"from": pull["title"]}
        updates["title"] = title
    if "body" in body and text != pull["body"]:
        changes["body"] = {"from": pull["body"] or ""}
        updates["body"] = text
    git = hub.git(row)
    if base is not None and base != pull["base_ref"]:
        if pull["state"] != "open":
            raise custom(messages.BASE_OF_CLOSED, "base")
        base_sha = merging.branch_tip(git, base)
        if base_sha is None or base == pull["head_ref"]:
            raise invalid("base")
        changes["base"] = {"ref": {"from": pull["base_ref"]}, "sha": {"from": pull["base_sha"]}}
        updates.update(base_ref=base, base_sha=base_sha)
    action = None
    if new_state == "closed" and pull["state"] == "open":
        action = "closed"
        updates.update(state="closed", closed_at=now())
    elif new_state == "open" and pull["state"] == "closed":
        if pull["merged_at"] is not None:
            raise custom(messages.REOPEN_MERGED, "state")
        head_sha = merging.branch_tip(git, pull["head_ref"])
        if head_sha is None:
            raise custom(messages.REOPEN_DELETED, "state")
        clash = hub.store.one("SELECT number FROM pulls WHERE repo_id = ? AND state = 'open' AND head_ref = ? "
                              "AND base_ref = ? AND id != ?", row["id"], pull["head_ref"],
                              updates.get("base_ref", pull["base_ref"]), pull["id"])
        if clash is not None:
            raise custom(messages.ALREADY_EXISTS.format(label=f"{owner}:{pull['head_ref']}"))
        action = "reopened"
        updates.update(state="open", closed_at=None, head_sha=head_sha,
                       base_sha=merging.branch_tip(git, updates.get("base_ref", pull["base_ref"]))
                       or pull["base_sha"])
    if updates:
        updates["updated_at"] = now()
        assignments = ", ".join(f"{column} = ?" for column in updates)
        with hub.store.tx() as db:
            db.execute(f"UPDATE pulls SET {assignments} WHERE id = ?", (*updates.values(), pull["id"]))
    if "base_ref" in updates or action == "reopened":
        current_pulls().engine.reset(pull["id"])
    if action == "reopened":
        pin_head(git, number, updates["head_sha"])
    if changes:
        hub.emit("pull_request", "edited", row["id"], user["id"], number=number, changes=changes)
    if action == "closed":
        hub.emit("pull_request", "closed", row["id"], user["id"], number=number, merged=False)
    elif action == "reopened":
        hub.emit("pull_request", "reopened", row["id"], user["id"], number=number)
    return jsonify(git_shapes.pull_request(hub, reload(hub, pull["id"])))


# ------------------------------------------------------------------ commits, files
@bp.get("/pulls/<int:number>/commits")
def pull_commits(owner: str, repo: str, number: int) -> Response:
    hub = current_hub()
    _, row, pull = requested(hub, owner, repo, number)
    git = hub.git(row)
    commits = merging.commits_between(git, pull["base_sha"], pull["head_sha"], limit=MAX_COMMITS)
    return paginate([git_shapes.commit(hub, row, git, c) for c in commits])


@bp.get("/pulls/<int:number>/files")
def pull_files(owner: str, repo: str, number: int) -> Response:
    hub = current_hub()
    _, row, pull = requested(hub, owner, repo, number)
    git = hub.git(row)
    changes = merging.range_changes(git, pull["base_sha"], pull["head_sha"])
    return paginate([git_shapes.diff_entry(hub, row, pull["head_sha"], c) for c in changes])


@bp.get("/commits/<sha>/pulls")
def commit_pulls(owner: str, repo: str, sha: str) -> Response:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    git = hub.git(row)
    commit = merging.find_commit(git, sha)
    if commit is None:
        raise ApiError(422, messages.NO_COMMIT_FOUND.format(sha=sha))
    target = str(commit.id)
    found = []
    for pull in hub.store.all("SELECT * FROM pulls WHERE repo_id = ? ORDER BY number DESC", row["id"]):
        if pull["merged_at"] is not None:
            hit = pull["merge_commit_sha"] == target or _in_pull(git, pull, target)
        elif pull["state"] == "open":
            hit = _in_pull(git, pull, target)
        else:
            hit = False
        if hit:
            found.append(git_shapes.pull_request(hub, pull, simple=True))
    return paginate(found)


# ------------------------------------------------------------------ merge
@bp.get("/pulls/<int:number>/merge")
def is_merged(owner: str, repo: str, number: int) -> Response:
    hub = current_hub()
    if requested(hub, owner, repo, number).pull["merged_at"] is None:
        raise not_found()
    return Response(status=204)


@bp.put("/pulls/<int:number>/merge")
def merge(owner: str, repo: str, number: int) -> Response:
    hub = current_hub()
    pulls = current_pulls()
    user, row, _ = writable(hub, owner, repo, number)
    body = json_body()
    method = one_of(body, "merge_method", METHODS, "merge") or "merge"
    title = optional_string(body, "commit_title")
    message = optional_string(body, "commit_message")
    expected_head = optional_string(body, "sha")
    with pulls.merge_lock(row["id"]):
        pull = hub.pull(row, number)
        if pull["state"] != "open":
            raise ApiError(405, messages.NOT_MERGEABLE)
        if expected_head is not None and expected_head != pull["head_sha"]:
            raise ApiError(409, messages.HEAD_MODIFIED)
        if pull["draft"]:
            raise ApiError(405, messages.STILL_DRAFT)
        if pull["mergeable"] is None:
            pull = pulls.engine.compute_now(pull["id"])
        if pull["mergeable"] is not None and not pull["mergeable"]:
            raise ApiError(405, messages.NOT_MERGEABLE)
        refused = blockers(hub, row, pull)
        if refused:
            raise ApiError(405, refused[0])
        git = hub.git(row)
        if behind(hub, row, pull, git):
            raise ApiError(405, messages.HEAD_OUT_OF_DATE)
        base_ref = f"refs/heads/{pull['base_ref']}"
        base_tip = merging.branch_tip(git, pull["base_ref"])
        if base_tip is None:
            raise ApiError(405, messages.NOT_MERGEABLE)
        head = pull["head_sha"]
        commits = merging.commits_between(git, base_tip, head)
        text = merge_message(owner, pull, method, commits, title, message)
        github = merging.github_signature()
        try:
            if method == "merge":
                new = merging.merge_commit(git, base_tip, head, text, merging.user_signature(user), github)
            elif method == "squash":
                author = merging.user_signature(hub.user(pull["user_id"]))
                new = merging.squash_commit(git, base_tip, head, text, author, github)
            else:
                new = merging.rebase_commits(git, base_tip, head, github)
        except merging.MergeConflict:
            if method == "rebase" and merging.merges_cleanly(git, base_tip, head):
                raise ApiError(405, messages.CANNOT_REBASE) from None
            raise ApiError(405, messages.NOT_MERGEABLE) from None
        before_base_update(row, base_ref, base_tip)
        if not merging.compare_and_swap(git, base_ref, base_tip, new, message=f"merge pull #{number}"):
            raise ApiError(405, messages.BASE_MODIFIED)
        pulls.close(pull, user["id"], merged_sha=new)
    hub.ref_moved(row, base_ref, base_tip, new, user["id"])
    hub.emit("pull_request", "closed", row["id"], user["id"], number=number, merged=True)
    return jsonify({"sha": new, "merged": True, "message": messages.MERGED})


@bp.put("/pulls/<int:number>/update-branch")
def update_branch(owner: str, repo: str, number: int) -> tuple[Response, int]:
    hub = current_hub()
    user, row, pull = writable(hub, owner, repo, number)
    body = json_body()
    expected = optional_string(body, "expected_head_sha")
    if pull["state"] != "open":
        raise ApiError(422, messages.UPDATE_CLOSED)
    if expected is not None and expected != pull["head_sha"]:
        raise ApiError(422, messages.EXPECTED_HEAD_MISMATCH)
    git = hub.git(row)
    base_tip = merging.branch_tip(git, pull["base_ref"])
    head = pull["head_sha"]
    if base_tip is None or merging.contains(git, head, base_tip):
        raise ApiError(422, messages.NO_NEW_BASE_COMMITS)
    if not merging.merges_cleanly(git, head, base_tip):
        raise ApiError(422, messages.UPDATE_CONFLICT)

    def job() -> None:
        repo_git = hub.git(row)
        message = f"Merge branch '{pull['base_ref']}' into {pull['head_ref']}\n"
        try:
            new = merging.merge_commit(repo_git, head, base_tip, message, merging.user_signature(user),
                                       merging.github_signature())
        except merging.MergeConflict:
            return
        ref = f"refs/heads/{pull['head_ref']}"
        if merging.compare_and_swap(repo_git, ref, head, new, message="update pull request branch"):
            hub.ref_moved(row, ref, head, new, user["id"])

    current_pulls().engine.later(0, job)
    html = f"{shapes.repo_web(hub, row)}/pull/{number}"
    return jsonify({"message": messages.UPDATING_BRANCH, "url": html}), 202


# ------------------------------------------------------------------ localhub: branch protection
admin = Blueprint("localhub_protection", __name__, url_prefix="/_localhub/repos/<owner>/<repo>")


@admin.post("/protection")
def protect(owner: str, repo: str) -> Response:
    """Set (or with `"enabled": false` remove) the protection rule of a branch: the
    operator's, as every endpoint under `/_localhub/` (localhub.access). A rule that requires
    pull requests (`pull_request`, on when reviews are required) refuses a push to the branch
    with GitHub's "protected branch hook declined", but from the logins in `bypass`."""
    hub = current_hub()
    row = hub.repo(owner, repo)
    body = json_body()
    branch = body.get("branch", row["default_branch"])
    count = body.get("required_approving_review_count", 0)
    contexts = body.get("required_status_checks", [])
    if (not isinstance(branch, str) or not branch or not isinstance(count, int) or count < 0
            or not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts)):
        raise ApiError(422, messages.VALIDATION_FAILED, errors=[{"resource": "Protection", "code": "invalid",
                                                        "field": "body"}])
    bypass = body.get("bypass", [])
    if not isinstance(bypass, list) or not all(isinstance(b, str) for b in bypass):
        raise ApiError(422, messages.VALIDATION_FAILED, errors=[{"resource": "Protection", "code": "invalid",
                                                        "field": "bypass"}])
    rule = None
    if body.get("enabled", True):
        # A pull request is required (pushes refused, as GitHub's pre-receive hook does) when
        # reviews are, or when asked; `bypass` lists the logins a ruleset lets push anyway.
        rule = {"required_approving_review_count": count, "required_status_checks": contexts,
                "strict": bool(body.get("strict", False)),
                "pull_request": bool(body.get("pull_request", count > 0)), "bypass": bypass}
    set_protection(hub, row["id"], branch, rule)
    current_pulls().refresh_states(row["id"], "base_ref = ?", branch)
    return jsonify({"branch": branch, "protection": rule})


@admin.get("/protection")
def protections(owner: str, repo: str) -> Response:
    hub = current_hub()
    row = hub.repo(owner, repo)
    return jsonify(json.loads(row["protection"]) if row["protection"] else {})


def _in_pull(git: Any, pull: Any, sha: str) -> bool:
    """Whether `sha` is one of the pull request's commits (in its head, not in its base)."""
    try:
        return merging.contains(git, pull["head_sha"], sha) and not merging.contains(git, pull["base_sha"], sha)
    except (KeyError, ValueError):
        return False
