"""JSON shapes of GitHub objects, built from localhub's rows.

Every field GitHub's OpenAPI description lists for the object is present (tests validate
each response against it), because PyGithub and other clients read fields we might not
think of, and follow the `url` fields to make their next request.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

from bot.forge.localhub.hub import Hub


def timestamp(value: float | None) -> str | None:
    if value is None:
        return None
    return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_id(kind: str, ident: int | str) -> str:
    return base64.b64encode(f"0:{kind}{ident}".encode()).decode().rstrip("=")


def user(hub: Hub, row: Any) -> dict[str, Any]:
    """GitHub's simple-user."""
    api = hub.api_url()
    login = row["login"]
    url = f"{api}/users/{login}"
    return {
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


def user_by_id(hub: Hub, user_id: int) -> dict[str, Any]:
    return user(hub, hub.user(user_id))


def repository(hub: Hub, row: Any, *, full: bool = True) -> dict[str, Any]:
    """GitHub's repository (full-repository when `full`)."""
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
            "permissions": {"admin": True, "maintain": True, "push": True, "triage": True, "pull": True},
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
