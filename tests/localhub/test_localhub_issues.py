"""localhub's issue comments, labels, reviews and commit statuses, driven through PyGithub the
way the bot drives GitHub. Every REST answer is also checked against GitHub's OpenAPI
description by the `localhub` fixture (tests/conformance.py)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import github
import pytest
import requests
from github.Commit import Commit
from github.Repository import Repository

from localhub.server import LocalhubServer
from tests.conftest import localhub_token


def client(server: LocalhubServer, token: str, per_page: int = 30) -> github.Github:
    """PyGithub against localhub, without its throttling between requests (GitHub's etiquette
    for the real API; here it would only slow the tests down)."""
    return github.Github(auth=github.Auth.Token(token), base_url=server.api_url, retry=None, per_page=per_page,
                         seconds_between_requests=None, seconds_between_writes=None)


def git_url(server: LocalhubServer, token: str, full_name: str) -> str:
    return server.url.replace("http://", f"http://x-access-token:{token}@") + f"/{full_name}.git"


def run_git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


@dataclass
class Checkout:
    """A clone of a localhub repository, to push real branches (pushes emit `push` events)."""

    path: Path

    @classmethod
    def clone(cls, server: LocalhubServer, token: str, full_name: str, path: Path) -> Checkout:
        subprocess.run(["git", "clone", "-q", git_url(server, token, full_name), str(path)], check=True)
        return cls(path)

    def commit(self, branch: str, files: dict[str, str | None], message: str) -> str:
        """Commit on `branch` (created from the current HEAD if new); None deletes a file."""
        if branch in run_git(self.path, "branch", "--list", branch):
            run_git(self.path, "checkout", "-q", branch)
        else:
            run_git(self.path, "checkout", "-q", "-b", branch)
        for name, text in files.items():
            target = self.path / name
            if text is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
        run_git(self.path, "add", "-A")
        run_git(self.path, "commit", "-qm", message)
        return run_git(self.path, "rev-parse", "HEAD")

    def push(self, branch: str, *, force: bool = False) -> None:
        run_git(self.path, "push", "-q", *(["--force"] if force else []), "origin", branch)

    def delete_remote(self, branch: str) -> None:
        run_git(self.path, "push", "-q", "origin", "--delete", branch)


def open_pull(server: LocalhubServer, token: str, full_name: str, head: str, *, base: str = "main",
              title: str = "Add notes") -> int:
    """Open a pull request from the pushed branch `head`, as `token`'s account."""
    pull = client(server, token).get_repo(full_name).create_pull(title=title, body="Please review.", head=head,
                                                                 base=base)
    return int(pull.number)


def commit_of(repo: Repository, sha: str) -> Commit:
    """A PyGithub Commit for `sha` without fetching it (statuses need only its sha and url)."""
    return Commit(repo._requester, attributes={"sha": sha, "url": f"{repo.url}/commits/{sha}"}, completed=False)


@dataclass
class World:
    """alice owns `alice/memory`; bob, a collaborator who may push, pushed `feature` and opened
    pull request `number` on it."""

    server: LocalhubServer
    alice: github.Github
    bob: github.Github
    alice_token: str
    bob_token: str
    repo: Repository
    checkout: Checkout
    head_sha: str
    number: int

    def as_bob(self) -> Repository:
        return self.bob.get_repo("alice/memory")


@pytest.fixture
def world(localhub: LocalhubServer, tmp_path: Path) -> World:
    alice_token = localhub_token(localhub, "alice")
    bob_token = localhub_token(localhub, "bob")
    alice = client(localhub, alice_token)
    repo = alice.get_user().create_repo("memory", auto_init=True)
    repo.add_to_collaborators("bob", "push")
    checkout = Checkout.clone(localhub, bob_token, "alice/memory", tmp_path / "bob")
    head_sha = checkout.commit("feature", {"notes/ada.md": "# Ada\n"}, "Add Ada's notes")
    checkout.push("feature")
    number = open_pull(localhub, bob_token, "alice/memory", "feature")
    return World(localhub, alice, client(localhub, bob_token), alice_token, bob_token, repo, checkout, head_sha,
                 number)


def api(world: World, method: str, path: str, token: str | None = None, **kwargs: object) -> requests.Response:
    return requests.request(method, f"{world.server.api_url}/repos/alice/memory{path}",
                            headers={"Authorization": f"token {token or world.alice_token}"}, timeout=10,
                            **kwargs)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------- the issue
def test_a_pull_request_is_also_an_issue_and_other_numbers_are_404(world: World) -> None:
    issue = world.repo.get_issue(world.number)
    assert (issue.number, issue.title, issue.user.login, issue.state) == (world.number, "Add notes", "bob", "open")
    assert issue.pull_request is not None
    assert issue.pull_request.html_url.endswith(f"/alice/memory/pull/{world.number}")
    for path in ("/issues/99", "/issues/99/comments", "/issues/99/labels"):
        resp = api(world, "GET", path)
        assert (resp.status_code, resp.json()["message"]) == (404, "Not Found")


# ---------------------------------------------------------------------------------- comments
def test_issue_comments_are_created_listed_edited_and_deleted(world: World) -> None:
    issue = world.as_bob().get_issue(world.number)
    first = issue.create_comment("First!")
    second = world.repo.get_issue(world.number).create_comment("Looks useful.")
    assert (first.user.login, second.user.login) == ("bob", "alice")
    assert [c.body for c in issue.get_comments()] == ["First!", "Looks useful."]
    assert world.repo.get_issue(world.number).comments == 2
    first.edit("First, edited")
    assert world.repo.get_issue(world.number).get_comment(first.id).body == "First, edited"
    first.delete()
    assert [c.id for c in issue.get_comments()] == [second.id]
    assert api(world, "GET", f"/issues/comments/{first.id}").status_code == 404


def test_a_comment_needs_a_body(world: World) -> None:
    resp = api(world, "POST", f"/issues/{world.number}/comments", json={})
    assert resp.status_code == 422
    assert resp.json()["errors"] == [{"resource": "IssueComment", "code": "missing_field", "field": "body"}]


def test_comments_are_paginated_with_link_headers(world: World) -> None:
    issue = world.repo.get_issue(world.number)
    for n in range(5):
        issue.create_comment(f"comment {n}")
    resp = api(world, "GET", f"/issues/{world.number}/comments", params={"per_page": 2})
    assert len(resp.json()) == 2
    assert 'rel="next"' in resp.headers["Link"] and 'rel="last"' in resp.headers["Link"]
    paged = client(world.server, world.alice_token, per_page=2)
    assert [c.body for c in paged.get_repo("alice/memory").get_issue(world.number).get_comments()] == [
        f"comment {n}" for n in range(5)]


# ---------------------------------------------------------------------------------- labels
def test_repository_labels_are_created_and_read(world: World) -> None:
    bug = world.repo.create_label("bug", "d73a4a", "Something is wrong")
    assert (bug.name, bug.color, bug.description) == ("bug", "d73a4a", "Something is wrong")
    assert world.repo.get_label("bug").id == bug.id
    with pytest.raises(github.GithubException) as duplicate:
        world.repo.create_label("Bug", "000000")
    assert duplicate.value.status == 422
    assert duplicate.value.data["errors"] == [{"resource": "Label", "code": "already_exists", "field": "name"}]
    with pytest.raises(github.GithubException) as colour:
        world.repo.create_label("odd", "not-a-colour")
    assert colour.value.data["errors"][0]["field"] == "color"
    with pytest.raises(github.UnknownObjectException):
        world.repo.get_label("missing")


def test_labels_on_a_pull_request_are_added_set_and_removed(world: World) -> None:
    world.repo.create_label("bug", "d73a4a")
    issue = world.repo.get_issue(world.number)
    issue.add_to_labels("bug", "needs review", "area/sync")
    assert sorted(label.name for label in issue.get_labels()) == ["area/sync", "bug", "needs review"]
    created = world.repo.get_label("needs review")
    assert created.color == "ededed"  # created on the fly with GitHub's default colour
    assert world.repo.get_label("area/sync").name == "area/sync"
    issue.set_labels("wip")
    assert [label.name for label in issue.get_labels()] == ["wip"]
    assert [label.name for label in world.repo.get_issue(world.number).labels] == ["wip"]
    issue.remove_from_labels("wip")
    assert list(issue.get_labels()) == []
    resp = api(world, "DELETE", f"/issues/{world.number}/labels/wip")
    assert (resp.status_code, resp.json()["message"]) == (404, "Label does not exist")
    assert sorted(label.name for label in world.repo.get_labels()) == ["area/sync", "bug", "needs review", "wip"]


# ---------------------------------------------------------------------------------- reviews
def test_reviews_follow_githubs_rules(world: World) -> None:
    as_bob = world.as_bob().get_pull(world.number)
    as_alice = world.repo.get_pull(world.number)

    def refused(pull: object, **kwargs: str) -> str:
        with pytest.raises(github.GithubException) as info:
            pull.create_review(**kwargs)  # type: ignore[attr-defined]
        assert info.value.status == 422
        return str(info.value.data["errors"][0])

    assert refused(as_bob, event="APPROVE") == "Can not approve your own pull request"
    assert refused(as_bob, event="REQUEST_CHANGES", body="hm") == "Can not request changes on your own pull request"
    assert refused(as_alice, event="REQUEST_CHANGES") == "You need to leave a comment indicating the requested changes."
    assert refused(as_alice, event="COMMENT") == "You need to leave a comment indicating the requested changes."
    comment = as_bob.create_review(event="COMMENT", body="Note to self: add tests.")
    changes = as_alice.create_review(event="REQUEST_CHANGES", body="Please add a summary.")
    approval = as_alice.create_review(event="APPROVE")
    assert [(r.state, r.user.login) for r in (comment, changes, approval)] == [
        ("COMMENTED", "bob"), ("CHANGES_REQUESTED", "alice"), ("APPROVED", "alice")]
    assert approval.commit_id == world.head_sha
    assert [r.id for r in as_alice.get_reviews()] == [comment.id, changes.id, approval.id]
    assert as_alice.get_review(changes.id).body == "Please add a summary."
    assert api(world, "GET", f"/pulls/{world.number}/reviews/1").status_code == 404
    resp = api(world, "POST", f"/pulls/{world.number}/reviews", json={"event": "MERGE"})
    assert resp.status_code == 422


# ---------------------------------------------------------------------------------- statuses
def test_statuses_and_the_combined_status(world: World) -> None:
    commit = commit_of(world.repo, world.head_sha)
    assert (commit.get_combined_status().state, commit.get_combined_status().total_count) == ("pending", 0)
    commit.create_status("pending", context="ci")
    assert commit.get_combined_status().state == "pending"
    commit.create_status("success", target_url="https://ci.example/1", description="passed", context="ci")
    commit.create_status("failure", context="lint")
    combined = commit.get_combined_status()
    assert (combined.state, combined.total_count, combined.sha) == ("failure", 2, world.head_sha)
    assert {s.context: s.state for s in combined.statuses} == {"ci": "success", "lint": "failure"}
    commit.create_status("success", context="lint")
    assert commit.get_combined_status().state == "success"
    default = commit.create_status("error")
    assert (default.context, default.creator.login) == ("default", "alice")
    assert commit.get_combined_status().state == "failure"
    listed = api(world, "GET", f"/commits/{world.head_sha}/statuses").json()
    states = [(s["context"], s["state"]) for s in listed]
    assert states == [("default", "error"), ("lint", "success"), ("lint", "failure"), ("ci", "success"),
                      ("ci", "pending")]  # newest first
    by_branch = api(world, "GET", "/commits/feature/status").json()
    assert (by_branch["sha"], by_branch["state"]) == (world.head_sha, "failure")


def test_bad_statuses_are_refused_as_github_does(world: World) -> None:
    resp = api(world, "POST", f"/statuses/{world.head_sha}", json={"state": "great"})
    assert resp.status_code == 422
    assert resp.json()["errors"][0]["message"] == "state is not included in the list"
    unknown = "1" * 40
    resp = api(world, "POST", f"/statuses/{unknown}", json={"state": "success"})
    assert (resp.status_code, resp.json()["message"]) == (422, f"No commit found for SHA: {unknown}")
    resp = api(world, "POST", "/statuses/HEAD", json={"state": "success"})
    assert resp.json()["errors"][0]["message"] == "sha must be a 40 character SHA1"
    resp = api(world, "GET", "/commits/no-such-branch/status")
    assert (resp.status_code, resp.json()["message"]) == (422, "No commit found for SHA: no-such-branch")


def test_pygithub_lists_statuses_through_githubs_older_path(tmp_path: Path) -> None:
    """PyGithub's Commit.get_statuses() calls `GET /repos/{o}/{r}/statuses/{sha}`, which GitHub
    serves but does not describe in its OpenAPI document, so this runs without the `localhub`
    fixture's conformance check."""
    with LocalhubServer(tmp_path / "data") as server:
        repo = client(server, localhub_token(server, "alice")).get_user().create_repo("memory", auto_init=True)
        sha = str(server.hub.git(server.hub.repo("alice", "memory")).references["refs/heads/main"].target)
        commit = commit_of(repo, sha)
        commit.create_status("pending", context="ci")
        commit.create_status("success", context="ci")
        assert [s.state for s in commit.get_statuses()] == ["success", "pending"]
