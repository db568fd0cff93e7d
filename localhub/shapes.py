"""JSON shapes of GitHub objects built from localhub's rows: accounts, repositories, issues, comments,
labels, reviews, statuses and hooks (commits, refs, branches and pull requests: `git_shapes`).

Every field GitHub's OpenAPI description lists for the object is present (tests validate
each response against it), because PyGithub and other clients read fields we might not
think of, and follow the `url` fields to make their next request.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

from localhub import access
from localhub.hub import Hub


def timestamp(value: float | None) -> str | None:
    if value is None:
        return None
    return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_id(kind: str, ident: int | str) -> str:
    return base64.b64encode(f"0:{kind}{ident}".encode()).decode().rstrip("=")


def user(hub: Hub, row: Any, *, view: str = "simple") -> dict[str, Any]:
    """GitHub's simple-user; `view="public"` adds public-user's profile fields (`GET
    /users/{username}`), `view="private"` also the private counts GitHub shows only to the
    account itself (`GET /user`)."""
    api = hub.api_url()
    login = row["login"]
    url = f"{api}/users/{login}"
    data: dict[str, Any] = {
        "login": login,
        "id": row["id"],
        "node_id": node_id("User", row["id"]),
        "avatar_url": f"{hub.web_url()}/avatars/{login}",
        "gravatar_id": "",
        "url": url,
        "html_url": f"{hub.web_url()}/{login}",
        "followers_url": f"{url}/followers",
        "following_url": f"{url}/following{{/other_user}}",
        "gists_url": f"{url}/gists{{/gist_id}}",
        "starred_url": f"{url}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{url}/subscriptions",
        "organizations_url": f"{url}/orgs",
        "repos_url": f"{url}/repos",
        "events_url": f"{url}/events{{/privacy}}",
        "received_events_url": f"{url}/received_events",
        "type": row["type"],
        "user_view_type": "public",
        "site_admin": False,
    }
    if view in ("public", "private"):
        counts = hub.store.one(
            "SELECT COALESCE(SUM(private = 0), 0) AS public, COALESCE(SUM(private = 1), 0) AS private "
            "FROM repos WHERE owner_id = ?", row["id"])
        data.update({
            "name": row["name"],
            "company": None,
            "blog": "",
            "location": None,
            "email": row["email"],
            "hireable": None,
            "bio": None,
            "twitter_username": None,
            "public_repos": counts["public"],
            "public_gists": 0,
            "followers": 0,
            "following": 0,
            "created_at": timestamp(row["created_at"]),
            "updated_at": timestamp(row["created_at"]),
        })
        if view == "private":
            data.update({
                "private_gists": 0,
                "total_private_repos": counts["private"],
                "owned_private_repos": counts["private"],
                "disk_usage": 0,
                "collaborators": 0,
                "two_factor_authentication": False,
                "plan": {"name": "free", "space": 976562499, "collaborators": 0, "private_repos": 10000},
            })
    return data


def collaborator(hub: Hub, row: Any, role: str) -> dict[str, Any]:
    """GitHub's collaborator: the account with its role on a repository."""
    return {**user(hub, row), "name": row["name"], "email": row["email"],
            "permissions": access.permission_flags(role), "role_name": role}


def user_by_id(hub: Hub, user_id: int) -> dict[str, Any]:
    return user(hub, hub.user(user_id))


def repository(hub: Hub, row: Any, *, full: bool = True) -> dict[str, Any]:
    """GitHub's repository (full-repository when `full`, with the caller's `permissions`)."""
    owner_row = hub.user(row["owner_id"])
    full_name = f"{owner_row['login']}/{row['name']}"
    api = f"{hub.api_url()}/repos/{full_name}"
    web = f"{hub.web_url()}/{full_name}"
    open_count = hub.store.one(
        "SELECT COUNT(*) AS n FROM pulls WHERE repo_id = ? AND state = 'open'", row["id"])["n"]
    data: dict[str, Any] = {
        "id": row["id"],
        "node_id": node_id("Repository", row["id"]),
        "name": row["name"],
        "full_name": full_name,
        "private": bool(row["private"]),
        "owner": user(hub, owner_row),
        "html_url": web,
        "description": row["description"],
        "fork": False,
        "url": api,
        "forks_url": f"{api}/forks",
        "keys_url": f"{api}/keys{{/key_id}}",
        "collaborators_url": f"{api}/collaborators{{/collaborator}}",
        "teams_url": f"{api}/teams",
        "hooks_url": f"{api}/hooks",
        "issue_events_url": f"{api}/issues/events{{/number}}",
        "events_url": f"{api}/events",
        "assignees_url": f"{api}/assignees{{/user}}",
        "branches_url": f"{api}/branches{{/branch}}",
        "tags_url": f"{api}/tags",
        "blobs_url": f"{api}/git/blobs{{/sha}}",
        "git_tags_url": f"{api}/git/tags{{/sha}}",
        "git_refs_url": f"{api}/git/refs{{/sha}}",
        "trees_url": f"{api}/git/trees{{/sha}}",
        "statuses_url": f"{api}/statuses/{{sha}}",
        "languages_url": f"{api}/languages",
        "stargazers_url": f"{api}/stargazers",
        "contributors_url": f"{api}/contributors",
        "subscribers_url": f"{api}/subscribers",
        "subscription_url": f"{api}/subscription",
        "commits_url": f"{api}/commits{{/sha}}",
        "git_commits_url": f"{api}/git/commits{{/sha}}",
        "comments_url": f"{api}/comments{{/number}}",
        "issue_comment_url": f"{api}/issues/comments{{/number}}",
        "contents_url": f"{api}/contents/{{+path}}",
        "compare_url": f"{api}/compare/{{base}}...{{head}}",
        "merges_url": f"{api}/merges",
        "archive_url": f"{api}/{{archive_format}}{{/ref}}",
        "downloads_url": f"{api}/downloads",
        "issues_url": f"{api}/issues{{/number}}",
        "pulls_url": f"{api}/pulls{{/number}}",
        "milestones_url": f"{api}/milestones{{/number}}",
        "notifications_url": f"{api}/notifications{{?since,all,participating}}",
        "labels_url": f"{api}/labels{{/name}}",
        "releases_url": f"{api}/releases{{/id}}",
        "deployments_url": f"{api}/deployments",
        "created_at": timestamp(row["created_at"]),
        "updated_at": timestamp(row["updated_at"]),
        "pushed_at": timestamp(row["pushed_at"] or row["created_at"]),
        "git_url": f"git://{hub.web_url().split('://', 1)[-1]}/{full_name}.git",
        "ssh_url": f"git@localhub:{full_name}.git",
        "clone_url": f"{web}.git",
        "svn_url": web,
        "homepage": None,
        "size": 0,
        "stargazers_count": 0,
        "watchers_count": 0,
        "language": None,
        "has_issues": True,
        "has_projects": False,
        "has_downloads": True,
        "has_wiki": False,
        "has_pages": False,
        "has_discussions": False,
        "forks_count": 0,
        "mirror_url": None,
        "archived": False,
        "disabled": False,
        "open_issues_count": open_count,
        "license": None,
        "allow_forking": True,
        "is_template": False,
        "web_commit_signoff_required": False,
        "topics": [],
        "visibility": "private" if row["private"] else "public",
        "forks": 0,
        "open_issues": open_count,
        "watchers": 0,
        "default_branch": row["default_branch"],
    }
    if full:
        data.update({
            "permissions": access.permission_flags(hub.caller_role(row)),
            "allow_squash_merge": True,
            "allow_merge_commit": True,
            "allow_rebase_merge": True,
            "allow_auto_merge": False,
            "delete_branch_on_merge": False,
            "allow_update_branch": True,
            "use_squash_pr_title_as_default": False,
            "squash_merge_commit_title": "COMMIT_OR_PR_TITLE",
            "squash_merge_commit_message": "COMMIT_MESSAGES",
            "merge_commit_title": "MERGE_MESSAGE",
            "merge_commit_message": "PR_TITLE",
            "network_count": 0,
            "subscribers_count": 0,
        })
    return data


# ---------------------------------------------------------------- issues, comments, labels, reviews, statuses, hooks
# Used by rest_issues, rest_reviews, rest_statuses, rest_hooks and (projected onto the webhook
# schemas) by payloads. Pull requests are localhub's only issues: an issue is a pull's row.

ISSUE_ID_BASE = 700_000_000  # GitHub gives a pull request's issue its own id; localhub derives it


def issue_id(pull: Any) -> int:
    return ISSUE_ID_BASE + int(pull["id"])


def author_association(hub: Hub, repo: Any, user_id: int) -> str:
    """How GitHub relates an author to the repository: OWNER, COLLABORATOR (of any
    permission), else NONE. localhub has no organisations (so no MEMBER) and does not search
    history for CONTRIBUTOR."""
    if user_id == repo["owner_id"]:
        return "OWNER"
    collaborator = hub.store.one("SELECT 1 AS ok FROM collaborators WHERE repo_id = ? AND user_id = ?",
                                 repo["id"], user_id)
    return "NONE" if collaborator is None else "COLLABORATOR"


def reactions(url: str) -> dict[str, Any]:
    return {"url": url, "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "confused": 0,
            "heart": 0, "hooray": 0, "eyes": 0, "rocket": 0}


def repo_api(hub: Hub, repo: Any) -> str:
    return f"{hub.api_url()}/repos/{hub.full_name(repo)}"


def repo_web(hub: Hub, repo: Any) -> str:
    return f"{hub.web_url()}/{hub.full_name(repo)}"


def label(hub: Hub, repo: Any, row: Any) -> dict[str, Any]:
    """GitHub's label."""
    from urllib.parse import quote

    return {
        "id": row["id"],
        "node_id": node_id("Label", row["id"]),
        "url": f"{repo_api(hub, repo)}/labels/{quote(row['name'], safe='')}",
        "name": row["name"],
        "color": row["color"],
        "default": False,
        "description": row["description"],
    }


def labels_of(hub: Hub, repo: Any, number: int) -> list[dict[str, Any]]:
    """The labels on issue (pull request) `number`, by name as GitHub lists them."""
    rows = hub.store.all(
        "SELECT labels.* FROM labels JOIN issue_labels ON issue_labels.label_id = labels.id "
        "WHERE issue_labels.repo_id = ? AND issue_labels.number = ? ORDER BY labels.name COLLATE NOCASE",
        repo["id"], number)
    return [label(hub, repo, row) for row in rows]


def comment(hub: Hub, repo: Any, row: Any) -> dict[str, Any]:
    """GitHub's issue-comment."""
    api = repo_api(hub, repo)
    url = f"{api}/issues/comments/{row['id']}"
    return {
        "id": row["id"],
        "node_id": node_id("IssueComment", row["id"]),
        "url": url,
        "html_url": f"{repo_web(hub, repo)}/pull/{row['number']}#issuecomment-{row['id']}",
        "body": row["body"],
        "user": user_by_id(hub, row["user_id"]),
        "created_at": timestamp(row["created_at"]),
        "updated_at": timestamp(row["updated_at"]),
        "issue_url": f"{api}/issues/{row['number']}",
        "author_association": author_association(hub, repo, row["user_id"]),
        "performed_via_github_app": None,
        "reactions": reactions(f"{url}/reactions"),
        "pin": None,
        "minimized": None,
    }


def issue(hub: Hub, repo: Any, pull: Any) -> dict[str, Any]:
    """GitHub's issue for a pull request (with the `pull_request` key PyGithub's `as_issue()` reads)."""
    api = repo_api(hub, repo)
    web = repo_web(hub, repo)
    number = pull["number"]
    url = f"{api}/issues/{number}"
    comments = hub.store.one("SELECT COUNT(*) AS n FROM comments WHERE repo_id = ? AND number = ?",
                             repo["id"], number)["n"]
    closed_by = None
    if pull["state"] == "closed" and pull["merged_by_id"] is not None:
        closed_by = user_by_id(hub, pull["merged_by_id"])
    zero = {"total": 0, "completed": 0, "percent_completed": 0}
    return {
        "id": issue_id(pull),
        "node_id": node_id("PullRequest", pull["id"]),
        "url": url,
        "repository_url": api,
        "labels_url": f"{url}/labels{{/name}}",
        "comments_url": f"{url}/comments",
        "events_url": f"{url}/events",
        "html_url": f"{web}/pull/{number}",
        "number": number,
        "state": pull["state"],
        "state_reason": None,
        "title": pull["title"],
        "body": pull["body"],
        "user": user_by_id(hub, pull["user_id"]),
        "labels": labels_of(hub, repo, number),
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "locked": False,
        "active_lock_reason": None,
        "comments": comments,
        "pull_request": {
            "url": f"{api}/pulls/{number}",
            "html_url": f"{web}/pull/{number}",
            "diff_url": f"{web}/pull/{number}.diff",
            "patch_url": f"{web}/pull/{number}.patch",
            "merged_at": timestamp(pull["merged_at"]),
        },
        "closed_at": timestamp(pull["closed_at"]),
        "created_at": timestamp(pull["created_at"]),
        "updated_at": timestamp(pull["updated_at"]),
        "draft": bool(pull["draft"]),
        "closed_by": closed_by,
        "timeline_url": f"{url}/timeline",
        "type": None,
        "performed_via_github_app": None,
        "author_association": author_association(hub, repo, pull["user_id"]),
        "reactions": reactions(f"{url}/reactions"),
        "sub_issues_summary": zero,
        "parent_issue_url": None,
        "pinned_comment": None,
        "issue_dependencies_summary": {"blocked_by": 0, "blocking": 0, "total_blocked_by": 0, "total_blocking": 0},
        "issue_field_values": [],
    }


def review(hub: Hub, repo: Any, row: Any) -> dict[str, Any]:
    """GitHub's pull-request-review (REST: upper-case state)."""
    api = repo_api(hub, repo)
    html = f"{repo_web(hub, repo)}/pull/{row['number']}#pullrequestreview-{row['id']}"
    pull_url = f"{api}/pulls/{row['number']}"
    return {
        "id": row["id"],
        "node_id": node_id("PullRequestReview", row["id"]),
        "user": user_by_id(hub, row["user_id"]),
        "body": row["body"] or "",
        "state": row["state"],
        "html_url": html,
        "pull_request_url": pull_url,
        "_links": {"html": {"href": html}, "pull_request": {"href": pull_url}},
        "submitted_at": timestamp(row["submitted_at"]),
        "commit_id": row["commit_id"],
        "author_association": author_association(hub, repo, row["user_id"]),
    }


def status(hub: Hub, repo: Any, row: Any, *, simple: bool = False) -> dict[str, Any]:
    """GitHub's status (with `creator`), or simple-commit-status as the combined status lists it."""
    creator = hub.user(row["creator_id"])
    data: dict[str, Any] = {
        "url": f"{repo_api(hub, repo)}/statuses/{row['sha']}",
        "avatar_url": f"{hub.web_url()}/avatars/{creator['login']}",
        "id": row["id"],
        "node_id": node_id("StatusContext", row["id"]),
        "state": row["state"],
        "description": row["description"],
        "target_url": row["target_url"],
        "context": row["context"],
        "created_at": timestamp(row["created_at"]),
        "updated_at": timestamp(row["updated_at"]),
    }
    if simple:
        data["required"] = None
    else:
        data["creator"] = user(hub, creator)
    return data


SECRET_MASK = "********"  # GitHub never shows a hook's secret again


def hook_config(config: dict[str, Any]) -> dict[str, Any]:
    shown = {"content_type": config.get("content_type", "form"), "insecure_ssl": str(config.get("insecure_ssl", "0")),
             "url": config.get("url")}
    if config.get("secret"):
        shown["secret"] = SECRET_MASK
    return shown


def hook_last_response(hub: Hub, hook_id: int) -> dict[str, Any]:
    """`{code, status, message}` of the hook's latest finished delivery ("unused" before any)."""
    row = hub.store.one("SELECT status_code, status FROM deliveries WHERE hook_id = ? AND status != 'pending' "
                        "ORDER BY id DESC LIMIT 1", hook_id)
    if row is None:
        return {"code": None, "status": "unused", "message": None}
    ok = row["status"] == "OK"
    return {"code": row["status_code"] or None, "status": "active" if ok else "failed", "message": row["status"]}


def hook(hub: Hub, repo: Any, row: Any) -> dict[str, Any]:
    """GitHub's hook (repository webhook)."""
    import json

    url = f"{repo_api(hub, repo)}/hooks/{row['id']}"
    return {
        "type": "Repository",
        "id": row["id"],
        "name": "web",
        "active": bool(row["active"]),
        "events": json.loads(row["events"]),
        "config": hook_config(json.loads(row["config"])),
        "updated_at": timestamp(row["updated_at"]),
        "created_at": timestamp(row["created_at"]),
        "url": url,
        "test_url": f"{url}/test",
        "ping_url": f"{url}/pings",
        "deliveries_url": f"{url}/deliveries",
        "last_response": hook_last_response(hub, row["id"]),
    }


def delivery(hub: Hub, repo: Any, row: Any, *, full: bool = False) -> dict[str, Any]:
    """GitHub's hook-delivery-item, or hook-delivery (with request and response) when `full`."""
    import json

    data: dict[str, Any] = {
        "id": row["id"],
        "guid": row["guid"],
        "delivered_at": timestamp(row["delivered_at"] or row["created_at"]),
        "redelivery": bool(row["redelivery"]),
        "duration": round(row["duration"] or 0.0, 3),
        "status": row["status"],
        "status_code": row["status_code"] or 0,
        "event": row["event"],
        "action": row["action"],
        "installation_id": None,
        "repository_id": row["repo_id"],
        "throttled_at": None,
    }
    if full:
        data["url"] = f"{repo_api(hub, repo)}/hooks/{row['hook_id']}/deliveries/{row['id']}"
        data["request"] = {
            "headers": json.loads(row["request_headers"]) if row["request_headers"] else None,
            "payload": json.loads(row["payload"]),
        }
        data["response"] = {
            "headers": json.loads(row["response_headers"]) if row["response_headers"] else None,
            "payload": row["response_body"],
        }
    return data
