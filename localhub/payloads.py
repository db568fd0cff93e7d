"""Webhook payloads, shaped as GitHub sends them and checked against both published schemas:
the request bodies of GitHub's OpenAPI description's `x-webhooks` (tests/fixtures/github-openapi/
webhooks.json) and octokit's webhook schemas (tests/fixtures/github-webhooks), where the first
wins when they disagree. Octokit's forbid extra keys, so the REST shapes are projected onto the
keys each webhook object has, not sent as they are.

A payload is built when its event is emitted, in the emitting thread, so it shows the state at
that moment (as GitHub's do) even when it is delivered later. `Event.data` carries:

- `push`: ref, before, after (None = did not exist)
- `pull_request`: number; before/after (synchronize), label (labeled/unlabeled), changes (edited)
- `pull_request_review`: number, review_id
- `issue_comment`: number, comment_id
- `status`: id
- `member`: member_id; old_permission (edited)
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pygit2

from localhub import git_shapes, merging, messages, shapes
from localhub.hub import Event, Hub

ZERO_SHA = "0" * 40
PUSH_COMMIT_LIMIT = 2048  # GitHub's limit for webhook deliveries (20 is the timeline's)

# The keys each webhook object has (octokit/webhooks-schemas 7.6.1), in GitHub's order.
USER_KEYS = ("login", "id", "node_id", "avatar_url", "gravatar_id", "url", "html_url", "followers_url",
             "following_url", "gists_url", "starred_url", "subscriptions_url", "organizations_url", "repos_url",
             "events_url", "received_events_url", "type", "site_admin")
ISSUE_KEYS = ("url", "repository_url", "labels_url", "comments_url", "events_url", "html_url", "id", "node_id",
              "number", "title", "user", "labels", "state", "locked", "assignee", "assignees", "milestone",
              "comments", "created_at", "updated_at", "closed_at", "author_association", "active_lock_reason",
              "draft", "performed_via_github_app", "pull_request", "body", "reactions", "timeline_url",
              "state_reason")
COMMENT_KEYS = ("url", "html_url", "issue_url", "id", "node_id", "user", "created_at", "updated_at",
                "author_association", "body", "reactions", "performed_via_github_app")
REVIEW_KEYS = ("id", "node_id", "user", "body", "commit_id", "submitted_at", "state", "html_url",
               "pull_request_url", "author_association", "_links")
SIMPLE_PULL_KEYS = ("url", "id", "node_id", "html_url", "diff_url", "patch_url", "issue_url", "number", "state",
                    "locked", "title", "user", "body", "created_at", "updated_at", "closed_at", "merged_at",
                    "merge_commit_sha", "assignee", "assignees", "requested_reviewers", "requested_teams", "labels",
                    "milestone", "draft", "commits_url", "review_comments_url", "review_comment_url", "comments_url",
                    "statuses_url", "head", "base", "_links", "author_association", "auto_merge", "active_lock_reason")
PULL_KEYS = (*SIMPLE_PULL_KEYS, "merged", "mergeable", "rebaseable", "mergeable_state", "merged_by", "comments",
             "review_comments", "maintainer_can_modify", "commits", "additions", "deletions", "changed_files")
REPOSITORY_FIELDS = frozenset((
    "id", "node_id", "name", "full_name", "private", "owner", "html_url", "description", "fork", "url", "forks_url",
    "keys_url", "collaborators_url", "teams_url", "hooks_url", "issue_events_url", "events_url", "assignees_url",
    "branches_url", "tags_url", "blobs_url", "git_tags_url", "git_refs_url", "trees_url", "statuses_url",
    "languages_url", "stargazers_url", "contributors_url", "subscribers_url", "subscription_url", "commits_url",
    "git_commits_url", "comments_url", "issue_comment_url", "contents_url", "compare_url", "merges_url",
    "archive_url", "downloads_url", "issues_url", "pulls_url", "milestones_url", "notifications_url", "labels_url",
    "releases_url", "deployments_url", "created_at", "updated_at", "pushed_at", "git_url", "ssh_url", "clone_url",
    "svn_url", "homepage", "size", "stargazers_count", "watchers_count", "language", "has_issues", "has_projects",
    "has_downloads", "has_wiki", "has_pages", "has_discussions", "forks_count", "mirror_url", "archived",
    "disabled", "open_issues_count", "license", "forks", "open_issues", "watchers", "stargazers", "default_branch",
    "allow_squash_merge", "allow_merge_commit", "allow_rebase_merge", "allow_auto_merge", "allow_forking",
    "allow_update_branch", "use_squash_pr_title_as_default", "squash_merge_commit_message",
    "squash_merge_commit_title", "merge_commit_message", "merge_commit_title", "is_template",
    "web_commit_signoff_required", "topics", "visibility", "delete_branch_on_merge", "master_branch",
    "permissions", "public", "organization", "custom_properties"))
HOOK_KEYS = ("type", "id", "name", "active", "events", "config", "updated_at", "created_at", "url", "test_url",
             "ping_url", "deliveries_url")


def _pick(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: data[key] for key in keys if key in data}


# ---------------------------------------------------------------------------------- common objects
def user(hub: Hub, user_id: int) -> dict[str, Any]:
    """The webhook user: the REST simple-user without the fields the webhook schema lacks."""
    return _pick(shapes.user_by_id(hub, user_id), USER_KEYS)


def _authored(hub: Hub, rest: dict[str, Any], keys: tuple[str, ...], user_id: int) -> dict[str, Any]:
    """A REST shape on the webhook's keys, with the webhook user in place of the REST one."""
    return {**_pick(rest, keys), "user": user(hub, user_id)}


def repository(hub: Hub, repo: Any, *, push: bool = False) -> dict[str, Any]:
    """The webhook repository. `push` payloads differ, as on GitHub: `created_at` and
    `pushed_at` are epoch seconds, the owner carries name and email, and `stargazers` and
    `master_branch` are added."""
    data = {key: value for key, value in shapes.repository(hub, repo, full=False).items()
            if key in REPOSITORY_FIELDS}
    owner = hub.user(repo["owner_id"])
    data["owner"] = user(hub, owner["id"])
    if push:
        data["owner"] = {"name": owner["name"] or owner["login"], "email": owner["email"], **data["owner"]}
        data["created_at"] = int(repo["created_at"])
        data["pushed_at"] = int(repo["pushed_at"] or repo["created_at"])
        data["stargazers"] = 0
        data["master_branch"] = repo["default_branch"]
    data["custom_properties"] = {}
    return data


def pull_request(hub: Hub, repo: Any, pull: Any, *, simple: bool = False) -> dict[str, Any]:
    """The webhook pull-request (or simple-pull-request, as review events carry it): the REST
    shape (same numbers, same live `mergeable_state`) on the webhook's keys, with webhook users
    and repositories inside."""
    rest = git_shapes.pull_request(hub, pull, simple=simple)
    data = _pick(rest, SIMPLE_PULL_KEYS if simple else PULL_KEYS)
    owner = user(hub, repo["owner_id"])
    repo_shape = repository(hub, repo)
    data["user"] = user(hub, pull["user_id"])
    for side in ("head", "base"):
        data[side] = {**rest[side], "user": owner, "repo": repo_shape}
    if not simple:
        data["merged_by"] = user(hub, pull["merged_by_id"]) if pull["merged_by_id"] is not None else None
    return data


def _iso(seconds: int, offset_minutes: int) -> str:
    return datetime.fromtimestamp(seconds, timezone(timedelta(minutes=offset_minutes))).isoformat()


def _username(hub: Hub, email: str | None) -> str | None:
    """The login of the account a commit's email belongs to (hub.account_by_email)."""
    row = hub.account_by_email(email)
    return None if row is None else str(row["login"])


def _person(hub: Hub, signature: pygit2.Signature) -> dict[str, Any]:
    data: dict[str, Any] = {"name": signature.name, "email": signature.email}
    login = _username(hub, signature.email)
    if login:
        data["username"] = login
    return data


# ---------------------------------------------------------------------------------- push
def _push_commit(hub: Hub, repo: Any, git: pygit2.Repository, commit: pygit2.Commit, distinct: bool) -> dict[str, Any]:
    # A root commit is compared with the empty tree: every file in it was added.
    diff = git.diff(commit.parents[0].tree, commit.tree) if commit.parents else commit.tree.diff_to_tree(swap=True)
    added: list[str] = []
    removed: list[str] = []
    modified: list[str] = []
    for delta in diff.deltas:
        status = delta.status_char()
        if status == "A":
            added.append(delta.new_file.path)
        elif status == "D":
            removed.append(delta.old_file.path)
        elif status == "R":  # GitHub reports a rename as one file removed and one added
            removed.append(delta.old_file.path)
            added.append(delta.new_file.path)
        else:
            modified.append(delta.new_file.path)
    sha = str(commit.id)
    return {
        "id": sha,
        "tree_id": str(commit.tree_id),
        "distinct": distinct,
        "message": commit.message.rstrip("\n"),
        "timestamp": _iso(commit.author.time, commit.author.offset),
        "url": f"{shapes.repo_web(hub, repo)}/commit/{sha}",
        "author": _person(hub, commit.author),
        "committer": _person(hub, commit.committer),
        "added": added,
        "removed": removed,
        "modified": modified,
    }


def _reachable_elsewhere(git: pygit2.Repository, others: list[str], before: str | None) -> set[str]:
    """Commits reachable from another branch but not from `before`: a pushed commit (never
    reachable from `before`) is GitHub's "distinct" exactly when it is not among them. One walk,
    bounded by what the other branches have that `before` has not; without `before` the pushed
    commits were listed with every other branch hidden, so none of them is reachable elsewhere."""
    if before is None or not others:
        return set()
    walker = git.walk(None, pygit2.enums.SortMode.NONE)
    for tip in others:
        with contextlib.suppress(KeyError, ValueError):
            walker.push(tip)
    with contextlib.suppress(KeyError, ValueError):
        walker.hide(before)
    return {str(commit.id) for commit in walker}


def push(hub: Hub, repo: Any, ref: str, before: str | None, after: str | None, sender_id: int) -> dict[str, Any]:
    """GitHub's push payload for `ref` moving from `before` to `after` (None: did not exist)."""
    git = hub.git(repo)
    web = shapes.repo_web(hub, repo)
    short = ref.split("/", 2)[-1] if ref.startswith(("refs/heads/", "refs/tags/")) else ref
    others = [str(git.references[name].peel(pygit2.Commit).id) for name in git.references
              if name.startswith("refs/heads/") and name != ref]
    head: pygit2.Commit | None = None
    commits: list[dict[str, Any]] = []
    forced = False
    if after is not None:
        head = git.get(after).peel(pygit2.Commit)
        if ref.startswith("refs/heads/"):
            walker = git.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
            hidden = [before] if before is not None else others
            for sha in hidden:
                with contextlib.suppress(KeyError, ValueError):
                    walker.hide(sha)
            elsewhere = _reachable_elsewhere(git, others, before)
            for commit in walker:
                if len(commits) >= PUSH_COMMIT_LIMIT:
                    break
                commits.append(_push_commit(hub, repo, git, commit, str(commit.id) not in elsewhere))
        if before is not None:
            try:
                old = git.get(before).peel(pygit2.Commit)
                forced = old.id != head.id and not git.descendant_of(head.id, old.id)
            except (AttributeError, KeyError, ValueError):
                forced = True
    if before is None:
        compare = f"{web}/compare/{short}"
    else:
        compare = f"{web}/compare/{before[:12]}...{(after or ZERO_SHA)[:12]}"
    head_commit = None
    if head is not None:
        head_commit = next((c for c in commits if c["id"] == str(head.id)), None)
        if head_commit is None:
            distinct = not merging.tips_containing(git, str(head.id), {tip: tip for tip in others})
            head_commit = _push_commit(hub, repo, git, head, distinct)
    sender = hub.user(sender_id)
    return {
        "ref": ref,
        "before": before or ZERO_SHA,
        "after": after or ZERO_SHA,
        "repository": repository(hub, repo, push=True),
        "pusher": {"name": sender["login"],
                   "email": sender["email"] or f"{sender['id']}+{sender['login']}@users.noreply.localhub"},
        "sender": user(hub, sender_id),
        "created": before is None,
        "deleted": after is None,
        "forced": forced,
        "base_ref": None,
        "compare": compare,
        "commits": commits,
        "head_commit": head_commit,
    }


# ---------------------------------------------------------------------------------- status
def _commit_object(hub: Hub, repo: Any, sha: str) -> dict[str, Any]:
    """The commit as a status event carries it (GitHub's REST commit without stats and files)."""
    git = hub.git(repo)
    commit = git.get(sha).peel(pygit2.Commit)
    api = shapes.repo_api(hub, repo)
    web = shapes.repo_web(hub, repo)

    def person(signature: pygit2.Signature) -> dict[str, Any]:
        when = datetime.fromtimestamp(signature.time, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {"name": signature.name, "email": signature.email, "date": when}

    def account(signature: pygit2.Signature) -> dict[str, Any] | None:
        login = _username(hub, signature.email)
        row = hub.user_by_login(login) if login else None
        return user(hub, row["id"]) if row is not None else None

    return {
        "sha": sha,
        "node_id": shapes.node_id("Commit", sha),
        "commit": {
            "author": person(commit.author),
            "committer": person(commit.committer),
            "message": commit.message.rstrip("\n"),
            "tree": {"sha": str(commit.tree_id), "url": f"{api}/git/trees/{commit.tree_id}"},
            "url": f"{api}/git/commits/{sha}",
            "comment_count": 0,
            "verification": git_shapes.unsigned(),  # with verified_at, which GitHub's description requires
        },
        "url": f"{api}/commits/{sha}",
        "html_url": f"{web}/commit/{sha}",
        "comments_url": f"{api}/commits/{sha}/comments",
        "author": account(commit.author),
        "committer": account(commit.committer),
        "parents": [{"sha": str(p), "url": f"{api}/commits/{p}", "html_url": f"{web}/commit/{p}"}
                    for p in commit.parent_ids],
    }


STATUS_BRANCHES = 10  # GitHub's cap on a status event's `branches`


def status(hub: Hub, repo: Any, row: Any, sender_id: int) -> dict[str, Any]:
    git = hub.git(repo)
    api = shapes.repo_api(hub, repo)
    tips = {name.removeprefix("refs/heads/"): str(git.references[name].peel(pygit2.Commit).id)
            for name in sorted(git.references) if name.startswith("refs/heads/")}
    # GitHub lists at most 10 branches containing the sha; those it heads first.
    holding = merging.tips_containing(git, row["sha"], tips)
    containing = sorted(holding, key=lambda name: (tips[name] != row["sha"], name))[:STATUS_BRANCHES]
    branches = [{"name": name, "commit": {"sha": tips[name], "url": f"{api}/commits/{tips[name]}"},
                 "protected": False} for name in sorted(containing)]
    creator = hub.user(row["creator_id"])
    return {
        "id": row["id"],
        "sha": row["sha"],
        "name": hub.full_name(repo),
        "target_url": row["target_url"],
        "avatar_url": f"{hub.web_url()}/avatars/{creator['login']}",
        "context": row["context"],
        "description": row["description"],
        "state": row["state"],
        "commit": _commit_object(hub, repo, row["sha"]),
        "branches": branches,
        "created_at": shapes.timestamp(row["created_at"]),
        "updated_at": shapes.timestamp(row["updated_at"]),
        "repository": repository(hub, repo),
        "sender": user(hub, sender_id),
    }


# ---------------------------------------------------------------------------------- ping
def ping(hub: Hub, hook_row: Any, sender_id: int) -> dict[str, Any]:
    repo = hub.repo_by_id(hook_row["repo_id"])
    rest = shapes.hook(hub, repo, hook_row)
    hook = _pick(rest, HOOK_KEYS)
    if rest["last_response"]["code"] is None and rest["last_response"]["message"] is None:
        hook["last_response"] = rest["last_response"]  # the schema knows only the "unused" form
    return {
        "zen": messages.ZEN[hook_row["id"] % len(messages.ZEN)],
        "hook_id": hook_row["id"],
        "hook": hook,
        "repository": repository(hub, repo),
        "sender": user(hub, sender_id),
    }


# ---------------------------------------------------------------------------------- dispatch
def build(hub: Hub, event: Event) -> dict[str, Any] | None:
    """The payload GitHub would send for `event`, or None for events localhub does not deliver
    (or whose subject is already gone)."""
    repo = hub.repo_by_id(event.repo_id)
    data = event.data
    sender = user(hub, event.sender_id)
    if event.name == "push":
        return push(hub, repo, data["ref"], data.get("before"), data.get("after"), event.sender_id)
    if event.name == "status":
        row = hub.store.one("SELECT * FROM statuses WHERE id = ?", data["id"])
        return status(hub, repo, row, event.sender_id) if row is not None else None
    if event.name == "pull_request":
        pull = hub.find_pull(repo, data["number"])
        if pull is None:
            return None
        payload: dict[str, Any] = {"action": event.action, "number": pull["number"]}
        if event.action == "synchronize":
            payload["before"] = data.get("before") or ZERO_SHA
            payload["after"] = data.get("after") or pull["head_sha"]
        if event.action == "edited":
            payload["changes"] = data.get("changes") or {}
        payload["pull_request"] = pull_request(hub, repo, pull)
        if event.action in ("labeled", "unlabeled"):
            label = hub.store.one("SELECT * FROM labels WHERE repo_id = ? AND name = ?", repo["id"], data["label"])
            if label is None:
                return None
            payload["label"] = shapes.label(hub, repo, label)
        payload.update(repository=repository(hub, repo), sender=sender)
        return payload
    if event.name == "pull_request_review":
        pull = hub.find_pull(repo, data["number"])
        row = hub.store.one("SELECT * FROM reviews WHERE id = ?", data["review_id"])
        if pull is None or row is None:
            return None
        review = _authored(hub, shapes.review(hub, repo, row), REVIEW_KEYS, row["user_id"])
        review["state"] = row["state"].lower()  # webhooks say "approved" where REST says "APPROVED"
        return {"action": event.action, "review": review, "pull_request": pull_request(hub, repo, pull, simple=True),
                "repository": repository(hub, repo), "sender": sender}
    if event.name == "member":
        payload = {"action": event.action, "member": user(hub, data["member_id"])}
        if event.action == "edited":
            payload["changes"] = {"old_permission": {"from": data.get("old_permission") or ""}}
        return {**payload, "repository": repository(hub, repo), "sender": sender}
    if event.name == "issue_comment":
        pull = hub.find_pull(repo, data["number"])
        row = hub.store.one("SELECT * FROM comments WHERE id = ?", data["comment_id"])
        if pull is None or row is None:
            return None
        issue = _authored(hub, shapes.issue(hub, repo, pull), ISSUE_KEYS, pull["user_id"])
        comment = _authored(hub, shapes.comment(hub, repo, row), COMMENT_KEYS, row["user_id"])
        return {"action": event.action, "issue": issue, "comment": comment,
                "repository": repository(hub, repo), "sender": sender}
    return None
