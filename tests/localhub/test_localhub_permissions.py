"""GitHub's permissions on localhub, over real HTTP and real git: who may fetch and push, who
may label, who GitHub says an author is (`author_association`), what the collaborator
permission endpoint answers, and which accounts the commits of a pull request belong to."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import github
import pytest
import requests

from localhub.server import LocalhubServer
from tests.conftest import git, localhub_token, operator_headers
from tests.localhub.test_localhub_issues import Checkout, client, git_url, open_pull


@dataclass
class Repos:
    """alice's public `memory` and private `secret` (each with a first commit), and tokens."""

    server: LocalhubServer
    alice: str
    bob: str
    tmp: Path

    def api(self, method: str, path: str, token: str, **kw: Any) -> requests.Response:
        return requests.request(method, f"{self.server.api_url}{path}", headers={"Authorization": f"token {token}"},
                                timeout=10, **kw)

    def add_collaborator(self, repo: str, login: str, permission: str) -> None:
        resp = self.api("PUT", f"/repos/alice/{repo}/collaborators/{login}", self.alice,
                        json={"permission": permission})
        assert resp.status_code == 204, resp.text

    def git(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """git as a person runs it, without a terminal to ask for a password on."""
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)

    def url(self, token: str, repo: str) -> str:
        return git_url(self.server, token, f"alice/{repo}")

    def main(self, repo: str) -> str:
        return self.server.hub.refs(self.server.hub.repo("alice", repo))["refs/heads/main"]

    def commit_as(self, token: str, repo: str, name: str) -> Path:
        """A clone of alice/`repo` through alice's token, its remote switched to `token`, with
        one new commit on main."""
        path = self.tmp / name
        git(self.tmp, "clone", "-q", self.url(self.alice, repo), str(path))
        git(path, "remote", "set-url", "origin", self.url(token, repo))
        (path / f"{name}.md").write_text(f"{name}\n")
        git(path, "add", "-A")
        git(path, "commit", "-qm", name)
        return path


@pytest.fixture
def repos(localhub: LocalhubServer, tmp_path: Path) -> Repos:
    alice = localhub_token(localhub, "alice")
    me = client(localhub, alice).get_user()
    me.create_repo("memory", auto_init=True)
    me.create_repo("secret", auto_init=True, private=True)
    return Repos(localhub, alice, localhub_token(localhub, "bob"), tmp_path)


# ---------------------------------------------------------------------------------- git: fetch
def test_a_stranger_cannot_fetch_a_private_repository(repos: Repos) -> None:
    for args in (("ls-remote", repos.url(repos.bob, "secret")),
                 ("clone", "-q", repos.url(repos.bob, "secret"), str(repos.tmp / "stolen"))):
        done = repos.git(*args)
        assert done.returncode != 0
        assert "Repository not found" in done.stderr
    assert not (repos.tmp / "stolen").exists()
    resp = requests.get(f"{repos.server.url}/alice/secret.git/info/refs", params={"service": "git-upload-pack"},
                        auth=("x-access-token", repos.bob), timeout=10)
    assert resp.status_code == 404


def test_any_collaborator_fetches_a_private_repository(repos: Repos) -> None:
    repos.add_collaborator("secret", "bob", "pull")
    done = repos.git("clone", "-q", repos.url(repos.bob, "secret"), str(repos.tmp / "clone"))
    assert done.returncode == 0, done.stderr
    assert git(repos.tmp / "clone", "rev-parse", "HEAD").strip() == repos.main("secret")


def test_anyone_signed_in_fetches_a_public_repository(repos: Repos) -> None:
    done = repos.git("ls-remote", repos.url(repos.bob, "memory"), "refs/heads/main")
    assert done.returncode == 0 and done.stdout.split()[0] == repos.main("memory")


def test_no_or_a_wrong_token_is_asked_for_credentials(repos: Repos) -> None:
    info = f"{repos.server.url}/alice/memory.git/info/refs"
    for auth in (None, ("x-access-token", "ghp_wrong")):
        resp = requests.get(info, params={"service": "git-upload-pack"}, auth=auth, timeout=10)
        assert resp.status_code == 401
        assert resp.headers["WWW-Authenticate"].startswith("Basic")


# ---------------------------------------------------------------------------------- git: push
def test_a_stranger_cannot_push_to_a_public_repository(repos: Repos) -> None:
    before = repos.main("memory")
    clone = repos.commit_as(repos.bob, "memory", "bob")
    done = repos.git("push", "origin", "main", cwd=clone)
    assert done.returncode != 0
    assert "Permission to alice/memory.git denied to bob" in done.stderr
    assert repos.main("memory") == before
    resp = requests.get(f"{repos.server.url}/alice/memory.git/info/refs", params={"service": "git-receive-pack"},
                        auth=("x-access-token", repos.bob), timeout=10)
    assert resp.status_code == 403


def test_a_stranger_cannot_push_to_a_private_repository_it_cannot_see(repos: Repos) -> None:
    clone = repos.commit_as(repos.bob, "secret", "bob")
    done = repos.git("push", "origin", "main", cwd=clone)
    assert done.returncode != 0 and "Repository not found" in done.stderr


def test_the_post_of_a_push_is_refused_without_its_advertisement(repos: Repos) -> None:
    """The second request of a push, sent straight away: no ref moves."""
    before = repos.main("memory")
    command = f"{before} {'1' * 40} refs/heads/main\0report-status\n"
    body = f"{len(command) + 4:04x}{command}0000".encode()
    resp = requests.post(f"{repos.server.url}/alice/memory.git/git-receive-pack", data=body,
                         auth=("x-access-token", repos.bob), timeout=10,
                         headers={"Content-Type": "application/x-git-receive-pack-request"})
    assert resp.status_code == 403
    assert repos.main("memory") == before


@pytest.mark.parametrize("permission, pushes", [("pull", False), ("triage", False), ("push", True),
                                                ("maintain", True), ("admin", True)])
def test_collaborators_push_with_write_access(repos: Repos, permission: str, pushes: bool) -> None:
    repos.add_collaborator("secret", "bob", permission)
    clone = repos.commit_as(repos.bob, "secret", "bob")
    done = repos.git("push", "origin", "main", cwd=clone)
    assert (done.returncode == 0) is pushes, done.stderr
    assert (repos.main("secret") == git(clone, "rev-parse", "HEAD").strip()) is pushes


def _installation_token(server: LocalhubServer, account: str) -> str:
    """A token of the installation of a new App on `account`."""
    app = requests.post(f"{server.url}/_localhub/apps", json={"name": f"app-{account}", "owner": account},
                        headers=operator_headers(server), timeout=30).json()
    installed = requests.post(f"{server.url}/_localhub/apps/{app['id']}/installations", json={"account": account},
                              headers=operator_headers(server), timeout=10).json()
    integration = github.GithubIntegration(auth=github.Auth.AppAuth(app["id"], app["private_key"]),
                                           base_url=server.api_url)
    return str(integration.get_access_token(installed["id"]).token)


def test_an_installation_writes_to_its_accounts_repositories_only(repos: Repos) -> None:
    ours = _installation_token(repos.server, "alice")
    clone = repos.commit_as(ours, "secret", "app")
    assert repos.git("push", "origin", "main", cwd=clone).returncode == 0
    localhub_token(repos.server, "carol")
    theirs = _installation_token(repos.server, "carol")
    assert "Repository not found" in repos.git("ls-remote", repos.url(theirs, "secret")).stderr
    clone = repos.commit_as(theirs, "memory", "other-app")
    assert "denied" in repos.git("push", "origin", "main", cwd=clone).stderr


# ---------------------------------------------------------------------------------- labels
@pytest.fixture
def pull(repos: Repos) -> int:
    """Pull request 1 on alice/memory, from alice's branch `change`, with label `ready` existing."""
    checkout = Checkout.clone(repos.server, repos.alice, "alice/memory", repos.tmp / "alice")
    checkout.commit("change", {"a.md": "a\n"}, "change")
    checkout.push("change")
    assert repos.api("POST", "/repos/alice/memory/labels", repos.alice, json={"name": "ready"}).status_code == 201
    return open_pull(repos.server, repos.alice, "alice/memory", "change")


def _label_calls(repos: Repos, number: int, token: str) -> dict[str, int]:
    base = f"/repos/alice/memory/issues/{number}/labels"
    return {
        "add": repos.api("POST", base, token, json={"labels": ["ready"]}).status_code,
        "set": repos.api("PUT", base, token, json={"labels": ["ready"]}).status_code,
        "remove": repos.api("DELETE", f"{base}/ready", token).status_code,
        "clear": repos.api("DELETE", base, token).status_code,
    }


def test_a_stranger_cannot_label(repos: Repos, pull: int) -> None:
    assert set(_label_calls(repos, pull, repos.bob).values()) == {403}
    resp = repos.api("POST", f"/repos/alice/memory/issues/{pull}/labels", repos.bob, json={"labels": ["ready"]})
    assert resp.json()["message"] == "Must have triage access to repository."
    assert repos.api("GET", f"/repos/alice/memory/issues/{pull}/labels", repos.bob).json() == []
    assert repos.api("POST", "/repos/alice/memory/labels", repos.bob, json={"name": "mine"}).status_code == 403


def test_a_reader_cannot_label_and_triage_can(repos: Repos, pull: int) -> None:
    repos.add_collaborator("memory", "bob", "pull")
    assert set(_label_calls(repos, pull, repos.bob).values()) == {403}
    repos.add_collaborator("memory", "bob", "triage")
    assert _label_calls(repos, pull, repos.bob) == {"add": 200, "set": 200, "remove": 200, "clear": 204}


def test_labels_are_created_with_write_access(repos: Repos, pull: int) -> None:
    """GitHub lets triage apply the labels a repository has; making a new one takes write."""
    repos.add_collaborator("memory", "bob", "triage")
    base = f"/repos/alice/memory/issues/{pull}/labels"
    resp = repos.api("POST", base, repos.bob, json={"labels": ["brand-new"]})
    assert resp.status_code == 403
    assert resp.json()["errors"] == [{"resource": "Repository", "field": "label", "code": "unauthorized"}]
    assert repos.api("POST", "/repos/alice/memory/labels", repos.bob, json={"name": "mine"}).status_code == 403
    repos.add_collaborator("memory", "bob", "push")
    assert repos.api("POST", base, repos.bob, json={"labels": ["brand-new"]}).status_code == 200
    assert repos.api("POST", "/repos/alice/memory/labels", repos.bob, json={"name": "mine"}).status_code == 201


def test_an_installation_labels(repos: Repos, pull: int) -> None:
    token = _installation_token(repos.server, "alice")
    resp = repos.api("POST", f"/repos/alice/memory/issues/{pull}/labels", token, json={"labels": ["ready", "new"]})
    assert resp.status_code == 200 and [label["name"] for label in resp.json()] == ["new", "ready"]


# ---------------------------------------------------------------------------------- author_association
def test_author_association_says_who_the_author_is(repos: Repos, pull: int) -> None:
    carol = localhub_token(repos.server, "carol")
    repos.add_collaborator("memory", "carol", "pull")
    associations = {}
    for login, token in (("alice", repos.alice), ("bob", repos.bob), ("carol", carol)):
        comment = repos.api("POST", f"/repos/alice/memory/issues/{pull}/comments", token, json={"body": "hi"})
        review = repos.api("POST", f"/repos/alice/memory/pulls/{pull}/reviews", token,
                           json={"event": "COMMENT", "body": "hm"})
        associations[login] = {comment.json()["author_association"], review.json()["author_association"]}
    assert associations == {"alice": {"OWNER"}, "bob": {"NONE"}, "carol": {"COLLABORATOR"}}
    assert repos.api("GET", f"/repos/alice/memory/pulls/{pull}", repos.bob).json()["author_association"] == "OWNER"


def test_a_pull_request_opened_by_a_stranger_is_none(repos: Repos) -> None:
    repos.add_collaborator("memory", "bob", "push")
    checkout = Checkout.clone(repos.server, repos.bob, "alice/memory", repos.tmp / "bob")
    checkout.commit("idea", {"b.md": "b\n"}, "idea")
    checkout.push("idea")
    number = open_pull(repos.server, repos.bob, "alice/memory", "idea")
    assert repos.api("GET", f"/repos/alice/memory/issues/{number}", repos.bob).json()["author_association"] \
        == "COLLABORATOR"
    repos.api("DELETE", "/repos/alice/memory/collaborators/bob", repos.alice)
    assert repos.api("GET", f"/repos/alice/memory/pulls/{number}", repos.alice).json()["author_association"] == "NONE"


# ---------------------------------------------------------------------------------- the permission endpoint
def _permission(repos: Repos, repo: str, login: str, token: str | None = None) -> requests.Response:
    return repos.api("GET", f"/repos/alice/{repo}/collaborators/{login}/permission", token or repos.alice)


@pytest.mark.parametrize("granted, permission, role", [
    ("pull", "read", "read"), ("triage", "read", "triage"), ("push", "write", "write"),
    ("maintain", "write", "maintain"), ("admin", "admin", "admin")])
def test_a_collaborators_permission(repos: Repos, granted: str, permission: str, role: str) -> None:
    repos.add_collaborator("secret", "bob", granted)
    resp = _permission(repos, "secret", "bob")
    assert resp.status_code == 200
    body = resp.json()
    assert (body["permission"], body["role_name"], body["user"]["login"]) == (permission, role, "bob")


def test_the_permission_of_the_owner_a_stranger_and_an_app(repos: Repos) -> None:
    answers = {(repo, login): (lambda b: (b["permission"], b["role_name"]))(_permission(repos, repo, login).json())
               for repo in ("memory", "secret") for login in ("alice", "bob")}
    assert answers == {("memory", "alice"): ("admin", "admin"), ("memory", "bob"): ("read", "read"),
                       ("secret", "alice"): ("admin", "admin"), ("secret", "bob"): ("none", "none")}
    _installation_token(repos.server, "alice")
    body = _permission(repos, "secret", "app-alice[bot]").json()
    assert (body["permission"], body["user"]["type"]) == ("write", "Bot")
    assert _permission(repos, "secret", "nobody-here").status_code == 404


def test_the_permission_endpoint_needs_push_access(repos: Repos) -> None:
    assert _permission(repos, "memory", "alice", repos.bob).status_code == 403
    assert _permission(repos, "secret", "alice", repos.bob).status_code == 404
    repos.add_collaborator("secret", "bob", "push")
    assert _permission(repos, "secret", "alice", repos.bob).json()["permission"] == "admin"


def test_a_repository_shows_the_callers_own_permissions(repos: Repos) -> None:
    assert repos.api("GET", "/repos/alice/memory", repos.bob).json()["permissions"] == {
        "admin": False, "maintain": False, "push": False, "triage": False, "pull": True}
    repos.add_collaborator("memory", "bob", "triage")
    assert repos.api("GET", "/repos/alice/memory", repos.bob).json()["permissions"]["triage"] is True
    assert all(repos.api("GET", "/repos/alice/memory", repos.alice).json()["permissions"].values())


# ---------------------------------------------------------------------------------- commits' accounts
def test_the_commits_of_a_pull_request_name_their_accounts(repos: Repos) -> None:
    """GitHub links a commit to the account whose noreply address (with or without its id) or
    email the commit carries; anyone else is null."""
    bob_id = repos.server.hub.user_by_login("bob")["id"]
    checkout = Checkout.clone(repos.server, repos.alice, "alice/memory", repos.tmp / "alice")
    people = [("Bob", "bob@users.noreply.github.com"), ("Bob", f"{bob_id}+bob@users.noreply.github.com"),
              ("Alice", f"{repos.server.hub.user_by_login('alice')['id']}+alice@users.noreply.localhub"),
              ("Mallory", "mallory@example.com"), ("Mallory", "bob@users.noreply.evil.example")]
    git(checkout.path, "checkout", "-q", "-b", "mixed")
    for number, (name, email) in enumerate(people):
        (checkout.path / f"{number}.md").write_text(f"{number}\n")
        git(checkout.path, "add", "-A")
        git(checkout.path, "-c", f"user.name={name}", "-c", f"user.email={email}", "commit", "-qm", str(number))
    checkout.push("mixed")
    number = open_pull(repos.server, repos.alice, "alice/memory", "mixed")
    commits = repos.api("GET", f"/repos/alice/memory/pulls/{number}/commits", repos.alice).json()
    logins = [(c["author"] or {}).get("login") for c in commits]
    assert logins == ["bob", "bob", "alice", None, None]
    assert [(c["committer"] or {}).get("login") for c in commits] == logins


def test_a_pull_requests_head_and_base_name_their_repository(repos: Repos, pull: int) -> None:
    body = repos.api("GET", f"/repos/alice/memory/pulls/{pull}", repos.alice).json()
    assert body["head"]["repo"]["full_name"] == body["base"]["repo"]["full_name"] == "alice/memory"


# ---------------------------------------------------------------------------------- REST writes
def test_a_stranger_cannot_change_a_public_repository_through_rest(repos: Repos, pull: int) -> None:
    """What a push is refused, REST is refused too: refs, files, merges, statuses, hooks."""
    main = repos.main("memory")
    base = "/repos/alice/memory"
    content = {"message": "x", "content": "eA=="}
    calls = {
        "create ref": repos.api("POST", f"{base}/git/refs", repos.bob, json={"ref": "refs/heads/mine", "sha": main}),
        "move main": repos.api("PATCH", f"{base}/git/refs/heads/main", repos.bob, json={"sha": main, "force": True}),
        "delete branch": repos.api("DELETE", f"{base}/git/refs/heads/change", repos.bob),
        "write a file": repos.api("PUT", f"{base}/contents/x.md", repos.bob, json=content),
        "merge": repos.api("PUT", f"{base}/pulls/{pull}/merge", repos.bob, json={}),
        "update branch": repos.api("PUT", f"{base}/pulls/{pull}/update-branch", repos.bob, json={}),
        "close": repos.api("PATCH", f"{base}/pulls/{pull}", repos.bob, json={"state": "closed"}),
        "status": repos.api("POST", f"{base}/statuses/{main}", repos.bob, json={"state": "success"}),
    }
    assert {what: resp.status_code for what, resp in calls.items()} == dict.fromkeys(calls, 403)
    assert {resp.json()["message"] for resp in calls.values()} == {"Must have push access to repository."}
    hooks = {"list": repos.api("GET", f"{base}/hooks", repos.bob),
             "create": repos.api("POST", f"{base}/hooks", repos.bob,
                                 json={"config": {"url": "http://127.0.0.1:9/hook"}})}
    assert {what: resp.status_code for what, resp in hooks.items()} == {"list": 404, "create": 404}
    assert repos.main("memory") == main
    assert repos.api("GET", f"{base}/pulls/{pull}", repos.bob).json()["state"] == "open"


def test_a_writer_changes_it_and_an_author_edits_their_own(repos: Repos, pull: int) -> None:
    repos.add_collaborator("memory", "bob", "push")
    main = repos.main("memory")
    base = "/repos/alice/memory"
    assert repos.api("POST", f"{base}/git/refs", repos.bob, json={"ref": "refs/heads/mine", "sha": main}) \
        .status_code == 201
    assert repos.api("POST", f"{base}/statuses/{main}", repos.bob, json={"state": "success"}).status_code == 201
    assert repos.api("GET", f"{base}/hooks", repos.bob).status_code == 404  # hooks are for admins
    repos.add_collaborator("memory", "bob", "pull")
    checkout = Checkout.clone(repos.server, repos.alice, "alice/memory", repos.tmp / "bob-branch")
    checkout.commit("bobs", {"b.md": "b\n"}, "bob's")
    checkout.push("bobs")
    own = open_pull(repos.server, repos.bob, "alice/memory", "bobs")
    assert repos.api("PATCH", f"{base}/pulls/{own}", repos.bob, json={"title": "Mine"}).status_code == 200
    assert repos.api("PATCH", f"{base}/pulls/{pull}", repos.bob, json={"title": "Theirs"}).status_code == 403


def test_only_the_author_or_a_writer_edits_or_deletes_a_comment(repos: Repos, pull: int) -> None:
    base = "/repos/alice/memory/issues"
    alices = repos.api("POST", f"{base}/{pull}/comments", repos.alice, json={"body": "mine"}).json()["id"]
    bobs = repos.api("POST", f"{base}/{pull}/comments", repos.bob, json={"body": "bob's"}).json()["id"]
    assert repos.api("PATCH", f"{base}/comments/{alices}", repos.bob, json={"body": "hacked"}).status_code == 403
    assert repos.api("DELETE", f"{base}/comments/{alices}", repos.bob).status_code == 403
    assert repos.api("PATCH", f"{base}/comments/{bobs}", repos.bob, json={"body": "better"}).status_code == 200
    assert repos.api("DELETE", f"{base}/comments/{bobs}", repos.alice).status_code == 204
    assert repos.api("GET", f"{base}/comments/{alices}", repos.bob).json()["body"] == "mine"


def test_protection_counts_the_reviews_of_writers_only(repos: Repos, pull: int) -> None:
    """GitHub's required approvals (and blocking change requests) come from reviewers with
    write access; anyone else's review is only a comment as far as merging goes."""
    requests.post(f"{repos.server.url}/_localhub/repos/alice/memory/protection",
                  json={"branch": "main", "required_approving_review_count": 1},
                  headers=operator_headers(repos.server), timeout=10).raise_for_status()
    reviews = f"/repos/alice/memory/pulls/{pull}/reviews"

    def state() -> str:
        return str(repos.api("GET", f"/repos/alice/memory/pulls/{pull}", repos.alice).json()["mergeable_state"])

    carol = localhub_token(repos.server, "carol")
    assert repos.api("POST", reviews, carol, json={"event": "REQUEST_CHANGES", "body": "no"}).status_code == 200
    assert repos.api("POST", reviews, repos.bob, json={"event": "APPROVE"}).status_code == 200
    merge = repos.api("PUT", f"/repos/alice/memory/pulls/{pull}/merge", repos.alice, json={})
    assert (merge.status_code, merge.json()["message"]) == \
        (405, "At least 1 approving review is required by reviewers with write access.")
    repos.add_collaborator("memory", "bob", "push")
    assert repos.api("PUT", f"/repos/alice/memory/pulls/{pull}/merge", repos.alice, json={}).status_code == 200, \
        state()
