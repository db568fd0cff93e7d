"""Git over REST: refs (get, match, create, update, delete), commits (one with its files, a
list, the git object), compare, branches and the contents API, all read from and written to
the bare repository with pygit2 in-process.

Every ref that moves goes through a compare-and-swap (merging.compare_and_swap) and then
`hub.ref_moved`, so REST writes produce the same `push` events, pull request updates and
mergeability resets as a `git push`.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Any
from urllib.parse import quote

import pygit2
from flask import Blueprint, Response, jsonify, request

from localhub import git_shapes, merging, messages, shapes
from localhub.errors import ApiError, json_body, not_found
from localhub.hub import Hub, current_hub
from localhub.lookup import requested, writable
from localhub.mergeability import protection
from localhub.paging import page_of, paginate

MAX_COMPARE_COMMITS = 250  # GitHub lists at most 250 commits of a comparison
INLINE_LIMIT = 1024 * 1024  # the contents API inlines files up to 1 MB
CONTENT_RETRIES = 3


# ---------------------------------------------------------------------------- helpers


def required_string(body: dict[str, Any], field: str) -> str:
    value = body.get(field)
    if value is None:
        raise ApiError(422, messages.NOT_SUPPLIED.format(field=field))
    if not isinstance(value, str):
        import json

        raise ApiError(422, messages.NOT_A_STRING.format(field=field, value=json.dumps(value)))
    return value


def full_ref(ref: str) -> str:
    """`heads/main` (as the URL has it) or `refs/heads/main` -> `refs/heads/main`."""
    return "refs/" + ref.removeprefix("refs/")


def object_or_none(git: pygit2.Repository, sha: str) -> pygit2.Object | None:
    try:
        return git.get(sha) if merging.HEX.match(sha) and len(sha) == 40 else None
    except (ValueError, KeyError):
        return None


def emits_push(ref: str) -> bool:
    return ref.startswith(("refs/heads/", "refs/tags/"))


def parse_date(value: Any) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def person(value: Any, field: str) -> pygit2.Signature | None:
    """`{"name", "email", "date"?}` from a contents write as a git signature."""
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) \
            or not isinstance(value.get("email"), str):
        raise ApiError(422, messages.NOT_SUPPLIED.format(field=f"{field}.name"))
    return merging.signature(value["name"], value["email"], parse_date(value.get("date")))


def encode_content(data: bytes) -> str:
    """Base64 as GitHub sends file contents: lines of 60 characters."""
    text = base64.b64encode(data).decode("ascii")
    return "".join(text[i:i + 60] + "\n" for i in range(0, len(text), 60))


def content_entry(hub: Hub, repo: Any, ref: str, path: str, obj: pygit2.Object, *,
                  inline: bool = False) -> dict[str, Any]:
    """GitHub's content-file / directory entry for `obj` at `path` on `ref`."""
    api = shapes.repo_api(hub, repo)
    web = shapes.repo_web(hub, repo)
    quoted = quote(path)
    is_dir = isinstance(obj, pygit2.Tree)
    url = f"{api}/contents/{quoted}?ref={quote(ref, safe='')}"
    git_url = f"{api}/git/{'trees' if is_dir else 'blobs'}/{obj.id}"
    html = f"{web}/{'tree' if is_dir else 'blob'}/{ref}/{quoted}"
    size = 0 if is_dir else obj.size
    data: dict[str, Any] = {
        "type": "dir" if is_dir else "file",
        "size": size,
        "name": path.rsplit("/", 1)[-1],
        "path": path,
        "sha": str(obj.id),
        "url": url,
        "git_url": git_url,
        "html_url": html,
        "download_url": None if is_dir else f"{web}/raw/{ref}/{quoted}",
        "_links": {"self": url, "git": git_url, "html": html},
    }
    if inline and not is_dir:
        if size <= INLINE_LIMIT:
            data.update(content=encode_content(obj.data), encoding="base64")
        else:
            data.update(content="", encoding="none")
    return data


def split_basehead(basehead: str) -> tuple[str, str]:
    base, sep, head = basehead.partition("...")
    if not sep:
        base, sep, head = basehead.partition("..")
    if not sep or not base or not head:
        raise not_found()
    return base, head


def side(owner: str, value: str) -> str:
    """`ref`, `owner:ref` or `owner:repo:ref` (same repository only: localhub has no forks)."""
    parts = value.split(":")
    if len(parts) == 1:
        return value
    if parts[0].lower() != owner.lower():
        raise not_found()
    return parts[-1]


# ---------------------------------------------------------------------------- routes

bp = Blueprint("github_git", __name__, url_prefix="/api/v3/repos/<owner>/<repo>")


def ref_shape(row: Any, git: pygit2.Repository, name: str) -> dict[str, Any]:
    hub = current_hub()
    reference = git.references[name]
    return git_shapes.git_ref(hub, row, name, git[reference.target])


# ------------------------------------------------------------------ refs
@bp.get("/git/ref/<path:ref>")
def get_ref(owner: str, repo: str, ref: str) -> Response:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    git = hub.git(row)
    name = full_ref(ref)
    if git.references.get(name) is None:
        raise not_found()
    return jsonify(ref_shape(row, git, name))


@bp.get("/git/matching-refs/", defaults={"ref": ""})
@bp.get("/git/matching-refs/<path:ref>")
@bp.get("/git/refs", defaults={"ref": ""})
def matching_refs(owner: str, repo: str, ref: str) -> Response:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    git = hub.git(row)
    prefix = full_ref(ref) if ref else "refs/"
    names = sorted(n for n in git.references if n.startswith(prefix) and n.startswith("refs/"))
    return paginate([ref_shape(row, git, n) for n in names])


@bp.post("/git/refs")
def create_ref(owner: str, repo: str) -> tuple[Response, int, dict[str, str]]:
    hub = current_hub()
    user, row, _ = writable(hub, owner, repo)
    body = json_body()
    name = required_string(body, "ref")
    sha = required_string(body, "sha")
    if not name.startswith("refs/") or name.count("/") < 2 or not pygit2.reference_is_valid_name(name):
        raise ApiError(422, messages.REF_INVALID)
    git = hub.git(row)
    if object_or_none(git, sha) is None:
        raise ApiError(422, messages.OBJECT_MISSING)
    if git.references.get(name) is not None or not merging.compare_and_swap(git, name, None, sha):
        raise ApiError(422, messages.REF_EXISTS)
    if emits_push(name):
        hub.ref_moved(row, name, None, sha, user["id"])
    shape = ref_shape(row, git, name)
    return jsonify(shape), 201, {"Location": shape["url"]}


@bp.patch("/git/refs/<path:ref>")
def update_ref(owner: str, repo: str, ref: str) -> Response:
    hub = current_hub()
    user, row, _ = writable(hub, owner, repo)
    body = json_body()
    sha = required_string(body, "sha")
    force = bool(body.get("force", False))
    name = full_ref(ref)
    git = hub.git(row)
    target = object_or_none(git, sha)
    if target is None:
        raise ApiError(422, messages.OBJECT_MISSING)
    for _ in range(CONTENT_RETRIES):
        current = git.references.get(name)
        if current is None:
            raise ApiError(422, messages.REF_MISSING)
        before = str(current.target)
        if not force and not _fast_forward(git, before, sha):
            raise ApiError(422, messages.NOT_FAST_FORWARD)
        if before == sha or merging.compare_and_swap(git, name, before, sha):
            break
    else:
        raise ApiError(422, messages.NOT_FAST_FORWARD)
    if before != sha and emits_push(name):
        hub.ref_moved(row, name, before, sha, user["id"])
    return jsonify(ref_shape(row, git, name))


@bp.delete("/git/refs/<path:ref>")
def delete_ref(owner: str, repo: str, ref: str) -> Response:
    hub = current_hub()
    user, row, _ = writable(hub, owner, repo)
    name = full_ref(ref)
    git = hub.git(row)
    current = git.references.get(name)
    if current is None:
        raise ApiError(422, messages.REF_MISSING)
    if name == f"refs/heads/{row['default_branch']}":
        raise ApiError(422, messages.DEFAULT_BRANCH_DELETE)
    before = str(current.target)
    if not merging.compare_and_swap(git, name, before, None):
        raise ApiError(422, messages.REF_MISSING)
    if emits_push(name):
        hub.ref_moved(row, name, before, None, user["id"])
    return Response(status=204)


# ------------------------------------------------------------------ commits
@bp.get("/git/commits/<sha>")
def get_git_commit(owner: str, repo: str, sha: str) -> Response:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    obj = object_or_none(hub.git(row), sha)
    if not isinstance(obj, pygit2.Commit):
        raise not_found()
    return jsonify(git_shapes.git_commit(hub, row, obj))


@bp.get("/commits")
def list_commits(owner: str, repo: str) -> Response:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    git = hub.git(row)
    if merging.is_empty(git):
        raise ApiError(409, messages.EMPTY_REPOSITORY)
    start = request.args.get("sha") or row["default_branch"]
    tip = merging.find_commit(git, start)
    if tip is None:
        raise not_found()
    path = (request.args.get("path") or "").strip("/") or None
    commits = merging.history(git, str(tip.id), path)
    author = request.args.get("author")
    if author:
        commits = [c for c in commits if _authored_by(hub, c, author)]
    since = parse_date(request.args.get("since"))
    until = parse_date(request.args.get("until"))
    if since is not None:
        commits = [c for c in commits if c.committer.time >= since]
    if until is not None:
        commits = [c for c in commits if c.committer.time <= until]
    return paginate([git_shapes.commit(hub, row, git, c) for c in commits])


@bp.get("/commits/<path:ref>")
def get_commit(owner: str, repo: str, ref: str) -> Response:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    git = hub.git(row)
    if merging.is_empty(git):
        raise ApiError(409, messages.EMPTY_REPOSITORY)
    commit = merging.find_commit(git, ref)
    if commit is None:
        raise ApiError(422, messages.NO_COMMIT_FOUND.format(sha=ref))
    return jsonify(git_shapes.commit(hub, row, git, commit, files=True))


# ------------------------------------------------------------------ compare
@bp.get("/compare/<path:basehead>")
def compare(owner: str, repo: str, basehead: str) -> Response:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    git = hub.git(row)
    base_name, head_name = split_basehead(basehead)
    base = merging.find_commit(git, side(owner, base_name))
    head = merging.find_commit(git, side(owner, head_name))
    if base is None or head is None:
        raise not_found()
    base_sha, head_sha = str(base.id), str(head.id)
    fork = merging.merge_base(git, base_sha, head_sha)
    if fork is None:
        raise ApiError(404, messages.NO_COMMON_ANCESTOR.format(base=base_name, head=head_name))
    ahead, behind = merging.ahead_behind(git, base_sha, head_sha)
    status = "identical" if not ahead and not behind else "ahead" if not behind else \
        "behind" if not ahead else "diverged"
    commits = merging.commits_between(git, base_sha, head_sha)[:MAX_COMPARE_COMMITS]
    if "per_page" in request.args or "page" in request.args:
        commits = page_of(commits)
    changes = merging.tree_changes(git, git[fork].peel(pygit2.Tree), head.tree)
    api = shapes.repo_api(hub, row)
    web = shapes.repo_web(hub, row)
    owner_login = hub.user(row["owner_id"])["login"]
    return jsonify({
        "url": f"{api}/compare/{basehead}",
        "html_url": f"{web}/compare/{basehead}",
        "permalink_url": f"{web}/compare/{owner_login}:{base_sha}...{owner_login}:{head_sha}",
        "diff_url": f"{web}/compare/{basehead}.diff",
        "patch_url": f"{web}/compare/{basehead}.patch",
        "base_commit": git_shapes.commit(hub, row, git, base),
        "merge_base_commit": git_shapes.commit(hub, row, git, git[fork].peel(pygit2.Commit)),
        "status": status,
        "ahead_by": ahead,
        "behind_by": behind,
        "total_commits": ahead,
        "commits": [git_shapes.commit(hub, row, git, c) for c in commits],
        "files": [git_shapes.diff_entry(hub, row, head_sha, c) for c in changes],
    })


# ------------------------------------------------------------------ branches
@bp.get("/branches/<path:branch>")
def get_branch(owner: str, repo: str, branch: str) -> Response:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    git = hub.git(row)
    tip = merging.branch_tip(git, branch)
    if tip is None:
        raise ApiError(404, messages.BRANCH_NOT_FOUND)
    return jsonify(git_shapes.branch(hub, row, git, branch, git[tip].peel(pygit2.Commit)))


@bp.get("/branches")
def list_branches(owner: str, repo: str) -> Response:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    git = hub.git(row)
    api = shapes.repo_api(hub, row)
    names = sorted(n.removeprefix("refs/heads/") for n in git.references if n.startswith("refs/heads/"))
    items = []
    for name in names:
        sha = merging.branch_tip(git, name)
        items.append({"name": name, "commit": {"sha": sha, "url": f"{api}/commits/{sha}"},
                      "protected": protection(row, name) is not None})
    return paginate(items)


# ------------------------------------------------------------------ contents
@bp.get("/contents", defaults={"path": ""})
@bp.get("/contents/", defaults={"path": ""})
@bp.get("/contents/<path:path>")
def get_contents(owner: str, repo: str, path: str) -> Response:
    hub = current_hub()
    row = requested(hub, owner, repo).repo
    git = hub.git(row)
    if merging.is_empty(git):
        raise ApiError(404, messages.EMPTY_CONTENTS)
    ref = request.args.get("ref") or row["default_branch"]
    commit = merging.find_commit(git, ref)
    if commit is None:
        raise ApiError(404, messages.NO_COMMIT_FOR_REF.format(ref=ref))
    path = path.strip("/")
    obj = merging.blob_at(git, commit, path)
    if obj is None:
        raise not_found()
    if isinstance(obj, pygit2.Tree):
        entries = sorted(obj, key=lambda e: e.name)
        return jsonify([content_entry(hub, row, ref, f"{path}/{e.name}" if path else e.name, git[e.id])
                        for e in entries])
    return jsonify(content_entry(hub, row, ref, path, obj, inline=True))


@bp.put("/contents/<path:path>")
def put_contents(owner: str, repo: str, path: str) -> tuple[Response, int]:
    hub = current_hub()
    user, row, _ = writable(hub, owner, repo)
    body = json_body()
    message = required_string(body, "message")
    encoded = required_string(body, "content")
    try:
        data = base64.b64decode("".join(encoded.split()), validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(422, messages.NOT_BASE64) from None
    sha = body.get("sha")
    branch = body.get("branch") or row["default_branch"]
    committer = person(body.get("committer"), "committer") or merging.user_signature(user)
    author = person(body.get("author"), "author") or committer
    path = path.strip("/")
    if not path:
        raise not_found()
    git = hub.git(row)
    ref = f"refs/heads/{branch}"
    for _ in range(CONTENT_RETRIES):
        tip = merging.branch_tip(git, branch)
        if tip is None and not merging.is_empty(git):
            raise ApiError(404, messages.BRANCH_NAMED_NOT_FOUND.format(branch=branch))
        parent = git[tip].peel(pygit2.Commit) if tip else None
        existing = merging.blob_at(git, parent, path)
        if isinstance(existing, pygit2.Tree):
            raise ApiError(422, messages.PATH_IS_DIRECTORY.format(path=path))
        if existing is not None:
            if sha is None:
                raise ApiError(422, messages.NOT_SUPPLIED.format(field="sha"))
            if sha != str(existing.id):
                raise ApiError(409, messages.FILE_MISMATCH.format(path=path, sha=sha))
        blob = git.create_blob(data)
        tree = merging.tree_with_file(git, parent.tree if parent else None, path, blob)
        new = str(git.create_commit(None, author, committer, message, tree, [parent.id] if parent else []))
        if merging.compare_and_swap(git, ref, tip, new, message="contents"):
            break
    else:
        raise ApiError(409, messages.CONFLICT)
    hub.ref_moved(row, ref, tip, new, user["id"])
    commit = git[new].peel(pygit2.Commit)
    content = content_entry(hub, row, branch, path, git[blob])
    return jsonify({"content": content, "commit": git_shapes.git_commit(hub, row, commit)}), \
        200 if existing is not None else 201


def _fast_forward(git: pygit2.Repository, before: str, after: str) -> bool:
    try:
        return merging.contains(git, after, before)
    except (KeyError, ValueError, pygit2.GitError):
        return False


def _authored_by(hub: Hub, commit: pygit2.Commit, author: str) -> bool:
    """GitHub's `author` filter: a login or an email."""
    if "@" in author:
        return commit.author.email.lower() == author.lower()
    account = git_shapes.account_of(hub, commit.author)
    return account is not None and account["login"].lower() == author.lower()
