"""JSON shapes of GitHub's git objects and pull requests (commits, refs, branches, diffs, the
pull request itself), built from localhub's rows and git objects; accounts, repositories,
issues, reviews, statuses and hooks are in `shapes`.

Used by rest_git and rest_pulls; `pull_request` is also what webhook payloads and the pages
carry. As in `shapes`, every field GitHub's OpenAPI description lists is present (tests
validate each response against it).
"""

from __future__ import annotations

from typing import Any

from localhub import shapes
from localhub.hub import Hub


def git_person(sig: Any) -> dict[str, Any]:
    """A git signature as GitHub's git-user (`{name, email, date}`)."""
    return {"name": sig.name, "email": sig.email, "date": shapes.timestamp(sig.time)}


def account_of(hub: Hub, sig: Any) -> dict[str, Any] | None:
    """The account a commit's author or committer belongs to (hub.account_by_email), None
    for anyone else."""
    row = hub.account_by_email(sig.email)
    return shapes.user(hub, row) if row is not None else None


def unsigned() -> dict[str, Any]:
    return {"verified": False, "reason": "unsigned", "signature": None, "payload": None, "verified_at": None}


def git_commit(hub: Hub, repo: Any, commit: Any) -> dict[str, Any]:
    """GitHub's git-commit (`GET /git/commits/{sha}`, the `commit` of a contents write)."""
    api = shapes.repo_api(hub, repo)
    web = shapes.repo_web(hub, repo)
    sha = str(commit.id)
    return {
        "sha": sha,
        "node_id": shapes.node_id("Commit", sha),
        "url": f"{api}/git/commits/{sha}",
        "html_url": f"{web}/commit/{sha}",
        "author": git_person(commit.author),
        "committer": git_person(commit.committer),
        "tree": {"sha": str(commit.tree_id), "url": f"{api}/git/trees/{commit.tree_id}"},
        "message": commit.message.rstrip("\n"),
        "parents": [{"sha": str(p), "url": f"{api}/git/commits/{p}", "html_url": f"{web}/commit/{p}"}
                    for p in commit.parent_ids],
        "verification": unsigned(),
    }


def diff_entry(hub: Hub, repo: Any, ref: str, change: Any) -> dict[str, Any]:
    """GitHub's diff-entry for a merging.FileChange seen at `ref`."""
    from urllib.parse import quote

    path = quote(change.filename)
    data: dict[str, Any] = {
        "sha": change.sha,
        "filename": change.filename,
        "status": change.status,
        "additions": change.additions,
        "deletions": change.deletions,
        "changes": change.changes,
        "blob_url": f"{shapes.repo_web(hub, repo)}/blob/{ref}/{path}",
        "raw_url": f"{shapes.repo_web(hub, repo)}/raw/{ref}/{path}",
        "contents_url": f"{shapes.repo_api(hub, repo)}/contents/{path}?ref={ref}",
    }
    if change.patch is not None:
        data["patch"] = change.patch
    if change.previous_filename:
        data["previous_filename"] = change.previous_filename
    return data


def commit(hub: Hub, repo: Any, git: Any, commit: Any, *, files: bool = False) -> dict[str, Any]:
    """GitHub's commit (`GET /commits/{ref}` with `files` and `stats`, lists without)."""
    api = shapes.repo_api(hub, repo)
    web = shapes.repo_web(hub, repo)
    sha = str(commit.id)
    data: dict[str, Any] = {
        "url": f"{api}/commits/{sha}",
        "sha": sha,
        "node_id": shapes.node_id("Commit", sha),
        "html_url": f"{web}/commit/{sha}",
        "comments_url": f"{api}/commits/{sha}/comments",
        "commit": {
            "url": f"{api}/git/commits/{sha}",
            "author": git_person(commit.author),
            "committer": git_person(commit.committer),
            "message": commit.message.rstrip("\n"),
            "tree": {"sha": str(commit.tree_id), "url": f"{api}/git/trees/{commit.tree_id}"},
            "comment_count": 0,
            "verification": unsigned(),
        },
        "author": account_of(hub, commit.author),
        "committer": account_of(hub, commit.committer),
        "parents": [{"sha": str(p), "url": f"{api}/commits/{p}", "html_url": f"{web}/commit/{p}"}
                    for p in commit.parent_ids],
    }
    if files:
        from localhub import merging

        changes = merging.commit_changes(git, commit)
        additions = sum(c.additions for c in changes)
        deletions = sum(c.deletions for c in changes)
        data["stats"] = {"total": additions + deletions, "additions": additions, "deletions": deletions}
        data["files"] = [diff_entry(hub, repo, sha, c) for c in changes]
    return data


def git_ref(hub: Hub, repo: Any, name: str, target: Any) -> dict[str, Any]:
    """GitHub's git-ref for `refs/...` pointing at a commit or an annotated tag object."""
    api = shapes.repo_api(hub, repo)
    kind = "tag" if getattr(target, "type_str", "commit") == "tag" else "commit"
    sha = str(target.id)
    return {
        "ref": name,
        "node_id": shapes.node_id("Ref", f"{repo['id']}:{name}"),
        "url": f"{api}/git/{name}",
        "object": {"type": kind, "sha": sha, "url": f"{api}/git/{kind}s/{sha}"},
    }


def branch(hub: Hub, repo: Any, git: Any, name: str, tip: Any) -> dict[str, Any]:
    """GitHub's branch-with-protection, protection from localhub's rule for the branch."""
    from urllib.parse import quote

    from localhub import mergeability

    api = shapes.repo_api(hub, repo)
    rule = mergeability.protection(repo, name)
    url = f"{api}/branches/{quote(name)}"
    contexts = [str(c) for c in (rule or {}).get("required_status_checks") or []]
    checks: dict[str, Any] = {
        "enforcement_level": "non_admins" if contexts else "off",
        "contexts": contexts,
        "checks": [{"context": c, "app_id": None} for c in contexts],
    }
    protection: dict[str, Any] = {"enabled": rule is not None, "required_status_checks": checks}
    if rule is not None:
        checks.update({"url": f"{url}/protection/required_status_checks", "strict": bool(rule.get("strict")),
                       "contexts_url": f"{url}/protection/required_status_checks/contexts"})
        protection["url"] = f"{url}/protection"
        count = int(rule.get("required_approving_review_count") or 0)
        if count:
            protection["required_pull_request_reviews"] = {
                "url": f"{url}/protection/required_pull_request_reviews",
                "dismiss_stale_reviews": False,
                "require_code_owner_reviews": False,
                "required_approving_review_count": count,
                "require_last_push_approval": False,
            }
    return {
        "name": name,
        "commit": commit(hub, repo, git, tip),
        "_links": {"self": url, "html": f"{shapes.repo_web(hub, repo)}/tree/{quote(name)}"},
        "protected": rule is not None,
        "protection": protection,
        "protection_url": f"{url}/protection",
    }


def pull_request(hub: Hub, row: Any, *, simple: bool = False) -> dict[str, Any]:
    """GitHub's pull-request (webhook payloads, GET/create/update), or pull-request-simple
    (lists) when `simple`. `mergeable_state` is worked out live: reviews, statuses and
    protection change it without the head or base moving."""
    from localhub import mergeability, merging

    repo = hub.repo_by_id(row["repo_id"])
    owner = hub.user(repo["owner_id"])
    api = shapes.repo_api(hub, repo)
    web = shapes.repo_web(hub, repo)
    number = row["number"]
    url = f"{api}/pulls/{number}"
    html = f"{web}/pull/{number}"
    repo_shape = shapes.repository(hub, repo, full=False)
    owner_shape = shapes.user(hub, owner)

    def side(ref: str, sha: str) -> dict[str, Any]:
        return {"label": f"{owner['login']}:{ref}", "ref": ref, "sha": sha, "user": owner_shape, "repo": repo_shape}

    data: dict[str, Any] = {
        "url": url,
        "id": row["id"],
        "node_id": shapes.node_id("PullRequest", row["id"]),
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "issue_url": f"{api}/issues/{number}",
        "commits_url": f"{url}/commits",
        "review_comments_url": f"{url}/comments",
        "review_comment_url": f"{api}/pulls/comments{{/number}}",
        "comments_url": f"{api}/issues/{number}/comments",
        "statuses_url": f"{api}/statuses/{row['head_sha']}",
        "number": number,
        "state": row["state"],
        "locked": False,
        "title": row["title"],
        "user": shapes.user_by_id(hub, row["user_id"]),
        "body": row["body"],
        "labels": shapes.labels_of(hub, repo, number),
        "milestone": None,
        "active_lock_reason": None,
        "created_at": shapes.timestamp(row["created_at"]),
        "updated_at": shapes.timestamp(row["updated_at"]),
        "closed_at": shapes.timestamp(row["closed_at"]),
        "merged_at": shapes.timestamp(row["merged_at"]),
        "merge_commit_sha": row["merge_commit_sha"],
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "head": side(row["head_ref"], row["head_sha"]),
        "base": side(row["base_ref"], row["base_sha"]),
        "_links": {
            "self": {"href": url},
            "html": {"href": html},
            "issue": {"href": f"{api}/issues/{number}"},
            "comments": {"href": f"{api}/issues/{number}/comments"},
            "review_comments": {"href": f"{url}/comments"},
            "review_comment": {"href": f"{api}/pulls/comments{{/number}}"},
            "commits": {"href": f"{url}/commits"},
            "statuses": {"href": f"{api}/statuses/{row['head_sha']}"},
        },
        "author_association": shapes.author_association(hub, repo, row["user_id"]),
        "auto_merge": None,
        "draft": bool(row["draft"]),
    }
    if simple:
        return data
    comments = hub.store.one("SELECT COUNT(*) AS n FROM comments WHERE repo_id = ? AND number = ?",
                             repo["id"], number)["n"]
    try:
        commits, additions, deletions, changed = merging.range_stats(hub.git(repo), row["base_sha"], row["head_sha"])
    except (KeyError, ValueError):  # objects gone (a repository replaced on disk)
        commits = additions = deletions = changed = 0
    data.update({
        "merged": row["merged_at"] is not None,
        "mergeable": None if row["mergeable"] is None else bool(row["mergeable"]),
        "rebaseable": None if row["rebaseable"] is None else bool(row["rebaseable"]),
        "mergeable_state": mergeability.state(hub, repo, row),
        "merged_by": shapes.user_by_id(hub, row["merged_by_id"]) if row["merged_by_id"] is not None else None,
        "comments": comments,
        "review_comments": 0,
        "maintainer_can_modify": False,
        "commits": commits,
        "additions": additions,
        "deletions": deletions,
        "changed_files": changed,
    })
    return data
