"""`memrepo review` against real parts: a memory made by `memrepo init` on localhub over real
HTTP, an agent's protected edit opened as a pull request by the agent's session with the
agent's token (alice's, in the remote URL), and a person (bob, a collaborator who may write)
working it with their own token. The forge's refusals localhub cannot produce are played with
`responses`, in GitHub's published shapes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import github
import pytest
import responses

from bot.agent import AgentSession
from bot.contracts import STATUS_CONTEXT
from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.forge.retry import RetryPolicy
from bot.forge.shapes import NewPullRequest, StatusUpdate
from localhub.server import LocalhubServer
from tests.conftest import LocalhubMemory, git, localhub_token, memory_on_localhub, run_cli

REPO = "alice/memory"
PERSONA = "system/persona.md"
FAST = RetryPolicy(max_total_seconds=5.0, max_attempts=3, backoff_base=0.05, backoff_cap=0.2)


class World(LocalhubMemory):
    bob: str = ""

    def client(self, token: str | None = None) -> ForgeClient:
        return ForgeClient(REPO, TokenCredentials(token or self.token), base_url=self.server.api_url, policy=FAST,
                           min_write_interval=0.0, timeout=10)

    def propose(self, said: str = "Be more concise.", env: dict[str, str] | None = None) -> int:
        """The agent's protected edit, opened as a pull request by its session (in a shell with `env`)."""
        text = (self.memory.read(PERSONA) or b"").decode()
        last = text.rstrip("\n").splitlines()[-1]
        call = {"command": "str_replace", "path": PERSONA, "old_str": last,
                "new_str": last + " I keep answers short.", "reason": "Be concise"}
        with AgentSession(self.memory.root, "c1", store=self.store, forge_retry=FAST, background_dreams=False,
                          env=env or {}) as s:
            s.record("user", said)
            result = s.handle_tool_call(call)
        assert result.ok and result.route == "pull-request", result.message
        return int(result.pull_request)


@pytest.fixture
def world(localhub: LocalhubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    world = memory_on_localhub(localhub, tmp_path, monkeypatch, World)
    world.bob = localhub_token(localhub, "bob")
    gh = github.Github(auth=github.Auth.Token(world.token), base_url=localhub.api_url, retry=None)
    gh.get_repo(REPO).add_to_collaborators("bob", "push")
    monkeypatch.setenv("MEMREPO_REVIEW_TOKEN", world.bob)
    yield world
    world.store.close()


def review(capsys: pytest.CaptureFixture[str], world: World, *argv: str) -> tuple[int, str, str]:
    return run_cli(capsys, "review", *argv, "--repo", str(world.memory.root))


def test_list_names_the_kind_the_agent_the_conversation_and_what_it_waits_for(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    number = world.propose()
    code, out, err = review(capsys, world, "list", "--json")
    assert code == 0, err
    [entry] = json.loads(out)
    assert entry["number"] == number
    assert entry["kind"] == "agent edit"
    assert entry["proposed_by"] == "a1" and entry["author"] == "alice"
    assert entry["conversation_id"] == "c1"
    assert "checks" in entry["waits_for"]  # no integrator ran: memrepo/validate is not set
    code, out, err = review(capsys, world, "list")
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith(f"#{number}"))
    assert "agent edit" in row and "a1" in row and "c1" in row


def test_show_quotes_the_users_words_and_the_diff(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    number = world.propose("Please be more concise from now on.")
    code, out, err = review(capsys, world, "show", str(number))
    assert code == 0, err
    assert "Please be more concise from now on." in out
    assert f"--- {PERSONA}" in out and "+" in out and "I keep answers short." in out
    assert f"/alice/memory/pull/{number}" in out


def test_approve_submits_the_persons_approval_of_the_head(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    number = world.propose()
    code, _out, err = review(capsys, world, "approve", str(number))
    assert code == 0, err
    pull = world.client().get_pull_request(number)
    reviews = world.client().list_reviews(number)
    assert [(r.author, r.state, r.commit_id) for r in reviews] == [("bob", "APPROVED", pull.head_sha)]


def test_reject_requests_changes_with_the_reason_then_closes(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    number = world.propose()
    code, _out, err = review(capsys, world, "reject", str(number), "--reason", "Keep the persona as it is.")
    assert code == 0, err
    reviews = world.client().list_reviews(number)
    assert [(r.author, r.state, r.body) for r in reviews] == [
        ("bob", "CHANGES_REQUESTED", "Keep the persona as it is.")]
    assert world.client().get_pull_request(number).state == "closed"


def test_merge_waits_for_review_unless_the_policy_lets_its_author_merge(
        world: World, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    number = world.propose()
    pull = world.client().get_pull_request(number)
    world.client().set_status(pull.head_sha, StatusUpdate("pending", STATUS_CONTEXT, "waiting for a review"))
    world.client().add_labels(number, ["memrepo:needs-review"])
    monkeypatch.setenv("MEMREPO_REVIEW_TOKEN", world.token)  # the person is the agent's account
    code, out, err = review(capsys, world, "merge", str(number))
    assert code == 6 and out == "" and len(err.splitlines()) == 1 and "waits for review" in err, err
    assert world.client().get_pull_request(number).state == "open"
    code, out, err = review(capsys, world, "approve", str(number))
    assert code == 5 and len(err.splitlines()) == 1 and "your own" in err, err

    # The policy at the base lets the author merge: the one account's merge is the review.
    config = world.memory.root / ".memrepo" / "config.yml"
    policy = config.read_text()
    assert "  allow_author_merge: false\n" in policy  # spelled out by `memrepo init`
    config.write_text(policy.replace("  allow_author_merge: false\n", "  allow_author_merge: true\n"))
    git(world.memory.root, "-c", "core.hooksPath=/dev/null", "commit", "-qam", "policy: the author may merge")
    git(world.memory.root, "push", "-q", "origin", "main")
    world.client().update_branch(number)
    pull = world.client().wait_for_mergeability(number, timeout=20)
    world.client().set_status(pull.head_sha, StatusUpdate("pending", STATUS_CONTEXT, "waiting for a review"))
    code, out, err = review(capsys, world, "merge", str(number))
    assert code == 0 and world.client().get_pull_request(number).merged, err


# ---------------------------------------------------------------------------------- refusals
def one_line(code: int, out: str, err: str, expected: int) -> str:
    assert code == expected, (code, out, err)
    assert out == "" and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_refusals_are_one_line_with_their_exit_code_and_change_nothing(
        world: World, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    number = world.propose()
    assert "has no pull request #999" in one_line(*review(capsys, world, "show", "999"), 4)
    assert "has no pull request #999" in one_line(*review(capsys, world, "approve", "999"), 4)

    # a pull request a person opened from their own branch is not memory's
    root = world.memory.root
    git(root, "switch", "-qc", "feature")
    (root / "notes.txt").write_text("a person's note\n")
    git(root, "add", "notes.txt")
    git(root, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "a person's note")
    git(root, "push", "-q", "origin", "feature")
    git(root, "switch", "-q", "main")
    plain = world.client().open_pull_request(NewPullRequest(head="feature", base="main", title="Not memory"))
    err = one_line(*review(capsys, world, "approve", str(plain.number)), 4)
    assert "not a memory pull request" in err

    # a token of someone the repository does not let write
    monkeypatch.setenv("MEMREPO_REVIEW_TOKEN", localhub_token(world.server, "carol"))
    err = one_line(*review(capsys, world, "merge", str(number)), 5)
    assert "refused" in err

    for name in ("MEMREPO_REVIEW_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert "MEMREPO_REVIEW_TOKEN" in one_line(*review(capsys, world, "list"), 3)
    assert world.client().list_reviews(number) == []
    assert world.client().get_pull_request(number).state == "open"


@responses.activate
def test_a_token_without_permission_is_one_line(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    """GitHub's 403 for a fine-grained token without pull request write access, as its REST
    reference documents the error body (message, documentation_url, status)."""
    responses.add_passthru(world.server.url)
    number = world.propose()
    api = world.server.api_url
    pull = _pull_json(world, number)
    responses.add(responses.GET, f"{api}/repos/{REPO}/pulls/{number}", json=pull, status=200)
    responses.add(responses.GET, f"{api}/user", json={"login": "bob", "id": 2, "type": "User"}, status=200)
    responses.add(responses.GET, f"{api}/repos/{REPO}/collaborators/bob/permission", status=200,
                  json={"permission": "write", "role_name": "write", "user": {"login": "bob", "id": 2}})
    responses.add(responses.POST, f"{api}/repos/{REPO}/pulls/{number}/reviews", status=403, json={
        "message": "Resource not accessible by personal access token",
        "documentation_url": "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request",
        "status": "403"})
    err = one_line(*review(capsys, world, "approve", str(number)), 5)
    assert "Resource not accessible by personal access token" in err


def _pull_json(world: World, number: int) -> dict[str, Any]:
    import requests

    resp = requests.get(f"{world.server.api_url}/repos/{REPO}/pulls/{number}",
                        headers={"Authorization": f"token {world.token}"}, timeout=10)
    resp.raise_for_status()
    return resp.json()


def test_repository_status_and_doctor_count_what_waits(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    number = world.propose()
    world.client().add_labels(number, ["memrepo:needs-review"])
    code, out, err = run_cli(capsys, "repository", "status", "--fetch", "--repo", str(world.memory.root))
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("pull requests:"))
    assert "1 open memory pull request in alice/memory: 1 wait for review, 0 in conflict" in row
    code, out, err = run_cli(capsys, "repository", "status", "--fetch", "--json", "--repo", str(world.memory.root))
    assert json.loads(out)["pull_requests"] == {"repository": REPO, "open": 1, "review": 1, "conflict": 0}
    with AgentSession(world.memory.root, "c1", store=world.store, forge_retry=FAST, background_dreams=False,
                      env={}) as s:
        report = s.command("/doctor").text
    assert "1 open memory pull request in alice/memory: 1 wait for review" in report
