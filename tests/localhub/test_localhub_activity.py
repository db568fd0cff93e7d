"""localhub records who moved each ref, as GitHub's repository activity API says it
(`GET /repos/{owner}/{repo}/activity`, checked against GitHub's OpenAPI description by the
`localhub` fixture), and says who may write changed with GitHub's `member` event (checked
against octokit's webhook schemas). Both over real HTTP and real git."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import requests

from localhub import payloads
from localhub.hub import Event
from localhub.server import LocalhubServer
from tests.conftest import localhub_token
from tests.localhub.test_localhub_issues import Checkout, client, open_pull
from tests.localhub.test_localhub_webhooks import schema_problem

REPO = "sam/memory"


def _activity(server: LocalhubServer, token: str, **params: Any) -> list[dict[str, Any]]:
    resp = requests.get(f"{server.api_url}/repos/{REPO}/activity", params=params,
                        headers={"Authorization": f"token {token}"}, timeout=10)
    assert resp.status_code == 200, resp.text
    return resp.json()  # type: ignore[no-any-return]


def test_every_ref_update_is_recorded_with_whoever_made_it(localhub: LocalhubServer, tmp_path: Path) -> None:
    sam, wes = localhub_token(localhub, "sam"), localhub_token(localhub, "wes")
    repo = client(localhub, sam).get_user().create_repo("memory", auto_init=True)
    repo.add_to_collaborators("wes", "push")
    checkout = Checkout.clone(localhub, wes, REPO, tmp_path / "wes")
    first = checkout.commit("notes", {"notes.md": "one\n"}, "notes")
    checkout.push("notes")
    second = checkout.commit("notes", {"notes.md": "two\n"}, "more notes")
    checkout.push("notes")
    rewritten = checkout.commit("notes", {"notes.md": "three\n"}, "rewritten")
    checkout.push("notes")  # a fast-forward
    number = open_pull(localhub, wes, REPO, "notes")
    merged = client(localhub, sam).get_repo(REPO).get_pull(number).merge()
    assert merged.merged

    newest = _activity(localhub, sam, ref="refs/heads/notes")
    assert [(a["activity_type"], a["actor"]["login"], a["after"]) for a in newest] == [
        ("push", "wes", rewritten), ("push", "wes", second), ("branch_creation", "wes", first)]
    assert newest[-1]["before"] == "0" * 40 and newest[0]["before"] == second
    assert _activity(localhub, sam, ref="notes") == newest  # a branch's name alone
    oldest = _activity(localhub, wes, ref="notes", direction="asc")
    assert [a["id"] for a in oldest] == [a["id"] for a in reversed(newest)]
    main = _activity(localhub, sam, ref="main")
    assert [(a["activity_type"], a["actor"]["login"]) for a in main] == [("pr_merge", "sam"),
                                                                         ("branch_creation", "sam")]
    assert main[0]["after"] == merged.sha
    assert [a["after"] for a in _activity(localhub, sam, actor="sam", activity_type="pr_merge")] == [merged.sha]
    assert _activity(localhub, sam, actor="nobody-here") == []
    paged = _activity(localhub, sam, per_page=2, page=2)
    assert [a["id"] for a in paged] == [a["id"] for a in _activity(localhub, sam)][2:4]


def test_a_force_push_and_a_rest_ref_update_are_named_as_github_names_them(localhub: LocalhubServer,
                                                                          tmp_path: Path) -> None:
    sam = localhub_token(localhub, "sam")
    repo = client(localhub, sam).get_user().create_repo("memory", auto_init=True)
    checkout = Checkout.clone(localhub, sam, REPO, tmp_path / "sam")
    checkout.commit("draft", {"a.md": "a\n"}, "a")
    checkout.push("draft")
    ref = repo.get_git_ref("heads/draft")
    ref.edit(repo.get_branch("main").commit.sha, force=True)  # back to main: history rewritten
    ref.delete()
    kinds = [a["activity_type"] for a in _activity(localhub, sam, ref="draft")]
    assert kinds == ["branch_deletion", "force_push", "branch_creation"]
    resp = requests.get(f"{localhub.api_url}/repos/{REPO}/activity", params={"activity_type": "teleport"},
                        headers={"Authorization": f"token {sam}"}, timeout=10)
    assert resp.status_code == 422


def test_adding_changing_and_removing_a_collaborator_is_a_member_event(localhub: LocalhubServer) -> None:
    sam = localhub_token(localhub, "sam")
    localhub_token(localhub, "wes")
    seen: list[Event] = []
    localhub.hub.subscribe(lambda event: seen.append(event) if event.name == "member" else None)
    repo = client(localhub, sam).get_user().create_repo("memory")
    repo.add_to_collaborators("wes", "push")
    repo.add_to_collaborators("wes", "push")  # nothing changed: no event
    repo.add_to_collaborators("wes", "admin")
    repo.remove_from_collaborators("wes")
    repo.remove_from_collaborators("wes")  # not a collaborator any more: no event
    assert [e.action for e in seen] == ["added", "edited", "removed"]
    for event in seen:
        payload = payloads.build(localhub.hub, event)
        assert payload is not None and payload["member"]["login"] == "wes" and payload["sender"]["login"] == "sam"
        assert schema_problem("member", payload) is None, schema_problem("member", payload)
    assert payloads.build(localhub.hub, seen[1])["changes"] == {"old_permission": {"from": "push"}}  # type: ignore[index]
