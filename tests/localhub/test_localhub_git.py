"""localhub's git REST endpoints: refs, commits, compare, branches, contents. Clients see
GitHub's status codes and messages, and every ref a REST call moves is a `push` event, like
a `git push` over HTTP."""

from __future__ import annotations

import base64
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import github
import pytest
import requests

from localhub.hub import Event
from localhub.server import LocalhubServer
from tests.conftest import git, localhub_token, operator_headers


def client(server: LocalhubServer, token: str) -> github.Github:
    """PyGithub against localhub, without the pauses it makes between requests to spare
    github.com (0.25 s per request, 1 s per write)."""
    return github.Github(auth=github.Auth.Token(token), base_url=server.api_url, retry=None,
                         seconds_between_requests=None, seconds_between_writes=None)


def git_url(server: LocalhubServer, token: str, full_name: str) -> str:
    return server.url.replace("http://", f"http://x-access-token:{token}@") + f"/{full_name}.git"


@dataclass
class Setup:
    """A repository `alice/memory` (auto-initialised) and a clone of it."""

    server: LocalhubServer
    token: str
    gh: github.Github
    repo: Any
    clone: Path
    events: list[Event]

    def api(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"token {token or self.token}"}
        return requests.request(method, f"{self.server.api_url}/repos/alice/memory{path}", headers=headers,
                                timeout=30, **kwargs)

    def commit(self, branch: str, files: dict[str, str], message: str, *, start: str | None = None) -> str:
        """Commit `files` on `branch` (made from `start`, or the remote main) and push it."""
        if start is not None or branch not in git(self.clone, "branch", "--list", branch):
            git(self.clone, "fetch", "-q", "origin")
            git(self.clone, "checkout", "-q", "-B", branch, start or "origin/main")
        else:
            git(self.clone, "checkout", "-q", branch)
        for name, text in files.items():
            target = self.clone / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        git(self.clone, "add", "-A")
        git(self.clone, "commit", "-qm", message)
        git(self.clone, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
        return git(self.clone, "rev-parse", "HEAD").strip()

    def tip(self, branch: str) -> str:
        return self.gh.get_repo("alice/memory").get_branch(branch).commit.sha

    def pushes(self, ref: str) -> list[Event]:
        return [e for e in self.events if e.name == "push" and e.data["ref"] == ref]


@pytest.fixture
def setup(localhub: LocalhubServer, tmp_path: Path) -> Setup:
    token = localhub_token(localhub, "alice")
    gh = client(localhub, token)
    repo = gh.get_user().create_repo("memory", auto_init=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", git_url(localhub, token, "alice/memory"), str(clone)], check=True)
    events: list[Event] = []
    localhub.hub.subscribe(events.append)
    return Setup(localhub, token, gh, repo, clone, events)


# ---------------------------------------------------------------------------- refs

def test_refs_create_read_match_update_delete(setup: Setup) -> None:
    main = setup.tip("main")
    ref = setup.repo.create_git_ref("refs/heads/feature/x", main)
    assert (ref.ref, ref.object.sha, ref.object.type) == ("refs/heads/feature/x", main, "commit")
    assert [p.data["after"] for p in setup.pushes("refs/heads/feature/x")] == [main]

    again = setup.api("POST", "/git/refs", json={"ref": "refs/heads/feature/x", "sha": main})
    assert (again.status_code, again.json()["message"]) == (422, "Reference already exists")
    missing = setup.api("POST", "/git/refs", json={"ref": "refs/heads/y", "sha": "1" * 40})
    assert (missing.status_code, missing.json()["message"]) == (422, "Object does not exist")

    assert setup.repo.get_git_ref("heads/feature/x").object.sha == main
    assert [r.ref for r in setup.repo.get_git_matching_refs("heads/feature")] == ["refs/heads/feature/x"]
    assert setup.api("GET", "/git/matching-refs/heads/nothing").json() == []
    assert setup.api("GET", "/git/ref/heads/nothing").status_code == 404

    # Fast-forward, then a rewind refused without force and accepted with it.
    ahead = setup.commit("feature/x", {"a.md": "a\n"}, "a", start="origin/main")
    ref.edit(ahead)
    assert setup.repo.get_git_ref("heads/feature/x").object.sha == ahead
    rewind = setup.api("PATCH", "/git/refs/heads/feature/x", json={"sha": main})
    assert (rewind.status_code, rewind.json()["message"]) == (422, "Update is not a fast forward")
    forced = setup.api("PATCH", "/git/refs/heads/feature/x", json={"sha": main, "force": True})
    assert forced.status_code == 200 and forced.json()["object"]["sha"] == main
    assert setup.pushes("refs/heads/feature/x")[-1].data == {"ref": "refs/heads/feature/x", "before": ahead,
                                                              "after": main}

    assert setup.api("DELETE", "/git/refs/heads/feature/x").status_code == 204
    assert setup.pushes("refs/heads/feature/x")[-1].data["after"] is None
    gone = setup.api("DELETE", "/git/refs/heads/feature/x")
    assert (gone.status_code, gone.json()["message"]) == (422, "Reference does not exist")
    patch_gone = setup.api("PATCH", "/git/refs/heads/feature/x", json={"sha": main})
    assert (patch_gone.status_code, patch_gone.json()["message"]) == (422, "Reference does not exist")

    setup.repo.create_git_ref("refs/tags/v1", main)
    assert setup.repo.get_git_ref("tags/v1").object.sha == main
    assert setup.pushes("refs/tags/v1")[0].data["after"] == main


# ---------------------------------------------------------------------------- commits

def test_commit_with_files_and_stats(setup: Setup) -> None:
    sha = setup.commit("main", {"notes/a.md": "one\ntwo\n", "README.md": "# memory\nchanged\n"}, "Add a note\n\nbody")
    commit = setup.repo.get_commit(sha)
    assert commit.commit.message == "Add a note\n\nbody"
    assert commit.commit.author.name == "Pat Person"
    assert commit.author is None  # pat@example.com is nobody's email on localhub
    files = {f.filename: f for f in commit.files}
    assert files["notes/a.md"].status == "added" and files["notes/a.md"].additions == 2
    assert files["README.md"].status == "modified"
    assert files["notes/a.md"].patch.startswith("@@ -0,0 +1,2 @@")
    assert commit.stats.total == sum(f.changes for f in commit.files)
    assert setup.repo.get_commit("main").sha == sha
    assert setup.repo.get_commit(sha[:10]).sha == sha

    bad = setup.api("GET", "/commits/nosuchthing")
    assert (bad.status_code, bad.json()["message"]) == (422, "No commit found for SHA: nosuchthing")

    raw = setup.repo.get_git_commit(sha)
    assert raw.sha == sha and raw.parents[0].sha == commit.parents[0].sha
    assert setup.api("GET", f"/git/commits/{'0' * 40}").status_code == 404

    initial = setup.repo.get_commit(commit.parents[0].sha)  # made by localhub for alice: linked to her
    assert initial.author.login == "alice"
    assert [f.filename for f in initial.files] == ["README.md"]


def test_list_commits_by_branch_with_pagination(setup: Setup) -> None:
    shas = [setup.commit("side", {f"n{i}.md": f"{i}\n"}, f"note {i}") for i in range(3)]
    listed = [c.sha for c in setup.repo.get_commits(sha="side")]
    assert listed[:3] == shas[::-1] and len(listed) == 4
    page = setup.api("GET", "/commits", params={"sha": "side", "per_page": 2})
    assert [c["sha"] for c in page.json()] == shas[::-1][:2]
    assert 'rel="next"' in page.headers["Link"] and "page=2" in page.headers["Link"]
    only_n1 = setup.api("GET", "/commits", params={"sha": "side", "path": "n1.md"}).json()
    assert [c["sha"] for c in only_n1] == [shas[1]]
    assert len(list(setup.repo.get_commits())) == 1  # main is untouched


def test_empty_repository_has_no_commits(localhub: LocalhubServer) -> None:
    token = localhub_token(localhub, "alice")
    client(localhub, token).get_user().create_repo("empty")
    resp = requests.get(f"{localhub.api_url}/repos/alice/empty/commits", headers={"Authorization": f"token {token}"},
                        timeout=10)
    assert (resp.status_code, resp.json()["message"]) == (409, "Git Repository is empty.")


# ---------------------------------------------------------------------------- compare, branches

def test_compare_statuses(setup: Setup) -> None:
    main = setup.tip("main")
    same = setup.repo.compare("main", main)
    assert (same.status, same.ahead_by, same.behind_by, same.total_commits) == ("identical", 0, 0, 0)

    first = setup.commit("feature", {"f.md": "f\n"}, "f1")
    second = setup.commit("feature", {"g.md": "g\n"}, "f2")
    ahead = setup.repo.compare("main", "feature")
    assert (ahead.status, ahead.ahead_by, ahead.behind_by) == ("ahead", 2, 0)
    assert [c.sha for c in ahead.commits] == [first, second]
    assert sorted(f.filename for f in ahead.files) == ["f.md", "g.md"]
    assert ahead.merge_base_commit.sha == main
    assert setup.repo.compare("feature", "main").status == "behind"

    setup.commit("main", {"m.md": "m\n"}, "m1")
    diverged = setup.repo.compare("main", "feature")
    assert (diverged.status, diverged.ahead_by, diverged.behind_by) == ("diverged", 2, 1)
    assert [f.filename for f in diverged.files] == ["f.md", "g.md"]  # three-dot: only the head's side
    same_owner = setup.api("GET", "/compare/alice:main...alice:feature")
    assert same_owner.json()["status"] == "diverged"
    assert setup.api("GET", "/compare/main...nosuch").status_code == 404


def test_branch_shows_protection(setup: Setup) -> None:
    branch = setup.repo.get_branch("main")
    assert (branch.name, branch.protected) == ("main", False)
    requests.post(f"{setup.server.url}/_localhub/repos/alice/memory/protection",
                  json={"branch": "main", "required_status_checks": ["ci"], "required_approving_review_count": 1},
                  headers=operator_headers(setup.server), timeout=10).raise_for_status()
    protected = setup.api("GET", "/branches/main").json()
    assert protected["protected"] is True
    assert protected["protection"]["required_status_checks"]["contexts"] == ["ci"]
    missing = setup.api("GET", "/branches/nope")
    assert (missing.status_code, missing.json()["message"]) == (404, "Branch not found")


def test_a_push_to_a_branch_that_requires_pull_requests_is_declined_as_github_declines_it(setup: Setup) -> None:
    """GitHub refuses such a push in its pre-receive hook ("protected branch hook declined",
    GH006); nothing moves. A login the rule lets bypass it pushes; other branches are free."""
    protect = {"branch": "main", "pull_request": True, "bypass": ["carol"]}
    requests.post(f"{setup.server.url}/_localhub/repos/alice/memory/protection", json=protect,
                  headers=operator_headers(setup.server), timeout=10).raise_for_status()
    before = setup.tip("main")
    with pytest.raises(AssertionError) as refused:
        setup.commit("main", {"notes.md": "direct\n"}, "Direct to main")
    said = str(refused.value)
    assert "[remote rejected] HEAD -> main (protected branch hook declined)" in said
    assert "GH006: Protected branch update failed for refs/heads/main." in said
    assert setup.tip("main") == before and setup.pushes("refs/heads/main") == []
    setup.commit("topic", {"notes.md": "on a branch\n"}, "On a branch")  # other branches are not protected
    carol = localhub_token(setup.server, "carol")
    setup.repo.add_to_collaborators("carol", "push")
    subprocess.run(["git", "push", "-q", git_url(setup.server, carol, "alice/memory"), "topic:main"], cwd=setup.clone,
                   check=True, capture_output=True)
    assert setup.tip("main") == setup.tip("topic")


# ---------------------------------------------------------------------------- contents

def test_contents_create_update_and_stale_sha(setup: Setup) -> None:
    created = setup.repo.create_file("notes/today.md", "Add today", "first\n")
    assert created["content"].path == "notes/today.md"
    tip = setup.tip("main")
    assert created["commit"].sha == tip
    commit = setup.repo.get_commit(tip)
    assert commit.author.login == "alice" and commit.commit.message == "Add today"
    assert setup.pushes("refs/heads/main")[-1].data["after"] == tip

    current = setup.repo.get_contents("notes/today.md")
    assert current.decoded_content == b"first\n"
    updated = setup.repo.update_file("notes/today.md", "Edit today", "second\n", current.sha)
    assert setup.repo.get_contents("notes/today.md").decoded_content == b"second\n"
    assert updated["commit"].parents[0].sha == tip

    stale = setup.api("PUT", "/contents/notes/today.md", json={
        "message": "stale", "content": base64.b64encode(b"third\n").decode(), "sha": current.sha})
    assert (stale.status_code, stale.json()["message"]) == (409, f"notes/today.md does not match {current.sha}")
    unsupplied = setup.api("PUT", "/contents/notes/today.md", json={
        "message": "no sha", "content": base64.b64encode(b"third\n").decode()})
    assert unsupplied.status_code == 422
    assert unsupplied.json()["message"] == "Invalid request.\n\n\"sha\" wasn't supplied."


    listing = setup.repo.get_contents("notes")
    assert [(c.name, c.type) for c in listing] == [("today.md", "file")]


def test_contents_on_a_branch_with_a_committer(setup: Setup) -> None:
    setup.repo.create_git_ref("refs/heads/draft", setup.tip("main"))
    resp = setup.api("PUT", "/contents/x.md", json={
        "message": "x", "content": base64.b64encode(b"x\n").decode(), "branch": "draft",
        "committer": {"name": "Robo", "email": "robo@example.com", "date": "2024-01-02T03:04:05Z"}})
    assert resp.status_code == 201
    commit = resp.json()["commit"]
    assert commit["committer"] == {"name": "Robo", "email": "robo@example.com", "date": "2024-01-02T03:04:05Z"}
    assert commit["author"]["name"] == "Robo"
    assert setup.repo.get_contents("x.md", ref="draft").decoded_content == b"x\n"
    assert setup.api("GET", "/contents/x.md").status_code == 404  # not on main


def test_refs_are_packed_as_they_accumulate_and_stay_what_they_were(setup: Setup) -> None:
    from localhub.hub import PACK_REFS_EVERY

    base = setup.tip("main")
    names = [f"refs/heads/b{i:03d}" for i in range(PACK_REFS_EVERY)]
    git(setup.clone, "push", "-q", "origin", *[f"{base}:{name}" for name in names])
    bare = setup.server.hub.repo_path(setup.server.hub.repo("alice", "memory"))
    loose = [p for p in (bare / "refs" / "heads").rglob("*") if p.is_file()]
    assert len(loose) < PACK_REFS_EVERY  # packed at the 32nd move
    listed = git(setup.clone, "ls-remote", "origin").split("\n")
    assert all(f"{base}\t{name}" in listed for name in names)
    assert setup.tip("b007") == base and len(setup.pushes("refs/heads/b031")) == 1
