"""localhub's pull requests: mergeability that starts unknown and is computed in the
background, merges (merge commit, squash, rebase) with GitHub's refusals, update-branch,
branch protection, and pull requests following pushes to their branches."""

from __future__ import annotations

from typing import Any

import github
import pytest
import requests

from localhub import rest_pulls
from localhub.hub import Event
from tests.conftest import localhub_token, operator_headers
from tests.localhub.test_localhub_git import Setup, client, setup
from tests.waiting import wait_until

__all__ = ["setup"]  # the fixture, shared with the git tests


def mergeable(setup: Setup, number: int) -> Any:
    """The pull request once GitHub (localhub) has computed its mergeability."""
    repo = setup.gh.get_repo("alice/memory")
    return wait_until(lambda: (pull := repo.get_pull(number)).mergeable is not None and pull, 20,
                      f"pull request {number}'s mergeability")


def opened(setup: Setup, branch: str, files: dict[str, str], title: str = "Change") -> Any:
    setup.commit(branch, files, f"{title} on {branch}")
    return setup.repo.create_pull(base="main", head=branch, title=title, body="why")


def pull_events(setup: Setup, action: str) -> list[Event]:
    return [e for e in setup.events if e.name == "pull_request" and e.action == action]


def refused(call: Any) -> tuple[int, str]:
    with pytest.raises(github.GithubException) as info:
        call()
    return info.value.status, info.value.data["message"]


# ---------------------------------------------------------------------------- mergeability and merge

def test_mergeable_is_computed_in_the_background_then_merge(setup: Setup) -> None:
    pr = opened(setup, "feature", {"notes/a.md": "a\n"})
    assert pr.mergeable is None and pr.mergeable_state == "unknown"
    repo = setup.gh.get_repo("alice/memory")
    assert repo.get_pull(pr.number).mergeable is None  # the first read starts the computation
    ready = mergeable(setup, pr.number)
    assert (ready.mergeable, ready.mergeable_state, ready.rebaseable) == (True, "clean", True)
    assert (ready.commits, ready.additions, ready.changed_files) == (1, 1, 1)
    assert pull_events(setup, "opened")[0].data == {"number": pr.number}

    status, message = refused(lambda: ready.merge(sha="0" * 40))
    assert (status, message) == (409, "Head branch was modified. Review and try the merge again.")

    base_before = setup.tip("main")
    result = ready.merge(sha=ready.head.sha)
    assert (result.merged, result.message) == (True, "Pull Request successfully merged")
    merge = repo.get_commit(result.sha)
    assert [p.sha for p in merge.parents] == [base_before, ready.head.sha]
    assert (merge.commit.committer.name, merge.commit.committer.email) == ("GitHub", "noreply@github.com")
    assert merge.author.login == "alice"
    assert merge.commit.message == f"Merge pull request #{pr.number} from alice/feature\n\nChange"
    assert setup.tip("main") == result.sha

    merged = repo.get_pull(pr.number)
    assert (merged.state, merged.merged, merged.merged_by.login, merged.merge_commit_sha) == \
        ("closed", True, "alice", result.sha)
    assert merged.is_merged()
    assert pull_events(setup, "closed")[-1].data == {"number": pr.number, "merged": True}
    assert setup.pushes("refs/heads/main")[-1].data == {"ref": "refs/heads/main", "before": base_before,
                                                         "after": result.sha}
    assert refused(lambda: merged.merge()) == (405, "Pull Request is not mergeable")


def test_conflict_is_dirty_and_cannot_be_merged(setup: Setup) -> None:
    pr = opened(setup, "feature", {"README.md": "feature's line\n"})
    setup.commit("main", {"README.md": "main's line\n"}, "main edits the same line")
    ready = mergeable(setup, pr.number)
    assert (ready.mergeable, ready.mergeable_state) == (False, "dirty")
    assert refused(lambda: ready.merge()) == (405, "Pull Request is not mergeable")
    assert not setup.gh.get_repo("alice/memory").get_pull(pr.number).is_merged()
    resp = setup.api("PUT", f"/pulls/{pr.number}/update-branch", json={})
    assert (resp.status_code, resp.json()["message"]) == (422, "merge conflict between base and head")
    resp = setup.api("PUT", f"/pulls/{pr.number}/merge", json={"merge_method": "octopus"})
    assert resp.status_code == 422
    assert resp.json()["message"] == ("Invalid request.\n\nFor 'properties/merge_method', \"octopus\" is not one of "
                                      "[\"merge\", \"squash\", \"rebase\"].")


def test_closed_pull_request_cannot_be_merged_until_reopened(setup: Setup) -> None:
    pr = opened(setup, "feature", {"a.md": "a\n"})
    pr.edit(state="closed")
    assert pull_events(setup, "closed")[-1].data == {"number": pr.number, "merged": False}
    assert refused(lambda: pr.merge()) == (405, "Pull Request is not mergeable")
    pr.edit(state="open")
    assert pull_events(setup, "reopened")
    assert mergeable(setup, pr.number).merge().merged


def test_squash_merge_makes_one_commit(setup: Setup) -> None:
    setup.commit("feature", {"a.md": "a\n"}, "first")
    setup.commit("feature", {"b.md": "b\n"}, "second")
    pr = setup.repo.create_pull(base="main", head="feature", title="Two notes", body="")
    base_before = setup.tip("main")
    result = mergeable(setup, pr.number).merge(merge_method="squash")
    squash = setup.repo.get_commit(result.sha)
    assert [p.sha for p in squash.parents] == [base_before]
    assert squash.commit.message == f"Two notes (#{pr.number})\n\n* first\n\n* second"
    assert squash.commit.committer.email == "noreply@github.com"
    assert sorted(f.filename for f in squash.files) == ["a.md", "b.md"]


def test_rebase_merge_replays_each_commit(setup: Setup) -> None:
    first = setup.commit("feature", {"a.md": "a\n"}, "first")
    setup.commit("feature", {"b.md": "b\n"}, "second")
    setup.commit("main", {"m.md": "m\n"}, "main moves on")
    pr = setup.repo.create_pull(base="main", head="feature", title="Rebase me", body="")
    base_before = setup.tip("main")
    result = mergeable(setup, pr.number).merge(merge_method="rebase")
    tip = setup.repo.get_commit(result.sha)
    assert tip.commit.message == "second" and tip.commit.author.name == "Pat Person"
    assert tip.commit.committer.name == "GitHub"
    replayed_first = setup.repo.get_commit(tip.parents[0].sha)
    assert replayed_first.commit.message == "first" and replayed_first.sha != first
    assert replayed_first.parents[0].sha == base_before
    assert setup.gh.get_repo("alice/memory").get_pull(pr.number).merge_commit_sha == result.sha


def test_base_branch_modified_during_the_merge_is_405(setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    pr = opened(setup, "feature", {"a.md": "a\n"})
    ready = mergeable(setup, pr.number)
    hub = setup.server.hub
    elsewhere = setup.commit("other", {"o.md": "o\n"}, "other work")

    def someone_pushes(repo: Any, ref: str, expected: str) -> None:
        hub.git(repo).references[ref].set_target(elsewhere)

    monkeypatch.setattr(rest_pulls, "before_base_update", someone_pushes)
    assert refused(lambda: ready.merge()) == (405, "Base branch was modified. Review and try the merge again.")
    assert setup.tip("main") == elsewhere  # the concurrent update survives
    assert setup.gh.get_repo("alice/memory").get_pull(pr.number).state == "open"


# ---------------------------------------------------------------------------- following branches

def test_push_to_head_synchronizes_and_resets_mergeability(setup: Setup) -> None:
    pr = opened(setup, "feature", {"a.md": "a\n"})
    before = mergeable(setup, pr.number).head.sha
    after = setup.commit("feature", {"b.md": "b\n"}, "more")
    repo = setup.gh.get_repo("alice/memory")
    again = repo.get_pull(pr.number)
    assert (again.head.sha, again.mergeable, again.mergeable_state) == (after, None, "unknown")
    assert pull_events(setup, "synchronize")[-1].data == {"number": pr.number, "before": before, "after": after}
    assert mergeable(setup, pr.number).commits == 2


def test_push_to_base_resets_mergeability_and_moves_base_sha(setup: Setup) -> None:
    pr = opened(setup, "feature", {"a.md": "a\n"})
    mergeable(setup, pr.number)
    main = setup.commit("main", {"m.md": "m\n"}, "main moves")
    again = setup.gh.get_repo("alice/memory").get_pull(pr.number)
    assert (again.base.sha, again.mergeable) == (main, None)
    assert mergeable(setup, pr.number).mergeable is True


def test_head_pushed_into_base_is_merged_and_deleted_head_is_closed(setup: Setup) -> None:
    pr = opened(setup, "feature", {"a.md": "a\n"})
    other = opened(setup, "other", {"o.md": "o\n"})
    setup.repo.get_git_ref("heads/main").edit(pr.head.sha)
    setup.repo.get_git_ref("heads/other").delete()
    repo = setup.gh.get_repo("alice/memory")
    merged = repo.get_pull(pr.number)
    assert (merged.state, merged.merged, merged.merge_commit_sha) == ("closed", True, pr.head.sha)
    closed = repo.get_pull(other.number)
    assert (closed.state, closed.merged) == ("closed", False)


# ---------------------------------------------------------------------------- update-branch

def test_update_branch_merges_base_into_head(setup: Setup) -> None:
    pr = opened(setup, "feature", {"a.md": "a\n"})
    head = pr.head.sha
    resp = setup.api("PUT", f"/pulls/{pr.number}/update-branch", json={"expected_head_sha": "0" * 40})
    assert resp.status_code == 422
    current = setup.api("PUT", f"/pulls/{pr.number}/update-branch", json={})
    assert (current.status_code, current.json()["message"]) == (422, "There are no new commits on the base branch.")

    main = setup.commit("main", {"m.md": "m\n"}, "main moves")
    accepted = setup.api("PUT", f"/pulls/{pr.number}/update-branch", json={"expected_head_sha": head})
    assert accepted.status_code == 202
    assert accepted.json()["message"] == "Updating pull request branch."
    repo = setup.gh.get_repo("alice/memory")
    updated = wait_until(lambda: (pull := repo.get_pull(pr.number)).head.sha != head and pull, 20,
                         "the branch's update")
    merge = repo.get_commit(updated.head.sha)
    assert [p.sha for p in merge.parents] == [head, main]
    assert merge.commit.message == "Merge branch 'main' into feature"
    assert pull_events(setup, "synchronize")[-1].data == {"number": pr.number, "before": head,
                                                          "after": updated.head.sha}


# ---------------------------------------------------------------------------- protection

def protect(setup: Setup, **rule: Any) -> None:
    requests.post(f"{setup.server.url}/_localhub/repos/alice/memory/protection", json={"branch": "main", **rule},
                  headers=operator_headers(setup.server), timeout=10).raise_for_status()


def test_protection_blocks_until_approved_and_checks_pass(setup: Setup) -> None:
    protect(setup, required_approving_review_count=1, required_status_checks=["ci"])
    pr = opened(setup, "feature", {"a.md": "a\n"})
    ready = mergeable(setup, pr.number)
    assert (ready.mergeable, ready.mergeable_state) == (True, "blocked")
    assert refused(lambda: ready.merge()) == \
        (405, "At least 1 approving review is required by reviewers with write access.")

    bob = client(setup.server, localhub_token(setup.server, "bob")).get_repo("alice/memory")
    setup.repo.add_to_collaborators("bob", "push")  # only reviews of writers count
    bob.get_pull(pr.number).create_review(event="REQUEST_CHANGES", body="not yet")
    assert refused(lambda: ready.merge()) == (405, "Changes have been requested.")
    bob.get_pull(pr.number).create_review(event="APPROVE")
    assert refused(lambda: ready.merge()) == (405, 'Required status check "ci" is expected.')
    stored = setup.server.hub.store.one("SELECT mergeable_state FROM pulls WHERE number = ?", pr.number)
    assert stored["mergeable_state"] == "blocked"  # what webhook payloads read

    setup.repo.get_commit(ready.head.sha).create_status("failure", context="ci")
    assert refused(lambda: ready.merge()) == (405, 'Required status check "ci" is failing.')
    setup.repo.get_commit(ready.head.sha).create_status("success", context="ci")
    assert setup.gh.get_repo("alice/memory").get_pull(pr.number).mergeable_state == "clean"
    stored = setup.server.hub.store.one("SELECT mergeable_state FROM pulls WHERE number = ?", pr.number)
    assert stored["mergeable_state"] == "clean"
    assert ready.merge().merged


def test_unstable_when_a_status_fails_and_behind_when_strict(setup: Setup) -> None:
    pr = opened(setup, "feature", {"a.md": "a\n"})
    ready = mergeable(setup, pr.number)
    setup.repo.get_commit(ready.head.sha).create_status("pending", context="lint")
    assert setup.gh.get_repo("alice/memory").get_pull(pr.number).mergeable_state == "unstable"

    protect(setup, strict=True)
    setup.commit("main", {"m.md": "m\n"}, "main moves")
    behind = mergeable(setup, pr.number)
    assert behind.mergeable_state == "behind"
    assert refused(lambda: behind.merge()) == (405, "Head branch is out of date. Review and try the merge again.")


def test_draft_pull_request(setup: Setup) -> None:
    setup.commit("feature", {"a.md": "a\n"}, "a")
    pr = setup.repo.create_pull(base="main", head="feature", title="WIP", body="", draft=True)
    ready = mergeable(setup, pr.number)
    assert (ready.draft, ready.mergeable_state) == (True, "draft")
    assert refused(lambda: ready.merge()) == (405, "Pull Request is still a draft")


# ---------------------------------------------------------------------------- create, list, update

def test_create_refusals(setup: Setup) -> None:
    opened(setup, "feature", {"a.md": "a\n"})

    def create(**body: Any) -> tuple[int, Any]:
        resp = setup.api("POST", "/pulls", json={"title": "t", **body})
        return resp.status_code, resp.json()

    status, body = create(head="feature", base="main")
    assert status == 422 and body["errors"][0]["message"] == "A pull request already exists for alice:feature."
    status, body = create(head="main", base="main")
    assert status == 422 and body["errors"][0]["message"] == "No commits between main and main"
    status, body = create(head="nope", base="main")
    assert status == 422 and body["errors"][0] == {"resource": "PullRequest", "field": "head", "code": "invalid"}
    status, body = create(head="feature", base="nope")
    assert status == 422 and body["errors"][0]["field"] == "base"
    status, body = create(base="main")
    assert (status, body["message"]) == (422, "Invalid request.\n\n\"head\" wasn't supplied.")


def test_list_filters_and_pagination(setup: Setup) -> None:
    numbers = [opened(setup, f"f{i}", {f"f{i}.md": "x\n"}, title=f"PR {i}").number for i in range(3)]
    setup.gh.get_repo("alice/memory").get_pull(numbers[0]).edit(state="closed")
    repo = setup.gh.get_repo("alice/memory")
    assert [p.number for p in repo.get_pulls()] == numbers[:0:-1]
    assert [p.number for p in repo.get_pulls(state="all", direction="asc")] == numbers
    assert [p.number for p in repo.get_pulls(state="all", head="alice:f1")] == [numbers[1]]
    assert [p.number for p in repo.get_pulls(state="closed", base="main")] == [numbers[0]]
    page = setup.api("GET", "/pulls", params={"state": "all", "per_page": 2})
    assert len(page.json()) == 2 and 'rel="next"' in page.headers["Link"]
    second = setup.api("GET", "/pulls", params={"state": "all", "per_page": 2, "page": 2})
    assert [p["number"] for p in second.json()] == [numbers[0]] and 'rel="prev"' in second.headers["Link"]


def test_edit_title_body_and_base(setup: Setup) -> None:
    pr = opened(setup, "feature", {"a.md": "a\n"})
    setup.repo.create_git_ref("refs/heads/release", setup.tip("main"))
    pr.edit(title="Better", body="new body", base="release")
    again = setup.gh.get_repo("alice/memory").get_pull(pr.number)
    assert (again.title, again.body, again.base.ref) == ("Better", "new body", "release")
    changes = pull_events(setup, "edited")[-1].data["changes"]
    assert changes["title"] == {"from": "Change"} and changes["base"]["ref"] == {"from": "main"}


def test_commits_files_and_pulls_of_a_commit(setup: Setup) -> None:
    first = setup.commit("feature", {"a.md": "a\n"}, "first")
    second = setup.commit("feature", {"b.md": "b\nc\n"}, "second")
    pr = setup.repo.create_pull(base="main", head="feature", title="Two", body="")
    assert [c.sha for c in pr.get_commits()] == [first, second]
    assert [(f.filename, f.status, f.additions) for f in pr.get_files()] == [("a.md", "added", 1),
                                                                          ("b.md", "added", 2)]
    assert [p.number for p in setup.repo.get_commit(first).get_pulls()] == [pr.number]
    assert list(setup.repo.get_commit(setup.tip("main")).get_pulls()) == []
    result = mergeable(setup, pr.number).merge()
    assert [p.number for p in setup.repo.get_commit(result.sha).get_pulls()] == [pr.number]
    unknown = setup.api("GET", "/commits/nosuch/pulls")
    assert (unknown.status_code, unknown.json()["message"]) == (422, "No commit found for SHA: nosuch")
