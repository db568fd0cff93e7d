"""An agent identity that is a GitHub App is also who pushes: against localhub over real HTTP, with
alice's own token in GITHUB_TOKEN and in the clone's URL. The branch of the App's pull request is
pushed by `ada-app[bot]` (localhub's activity API names the pusher, as GitHub's does), so alice's
approval counts and the integrator merges; a direct commit of main is pushed by the App too. The
installation token git uses is kept beside the record (owner only, with its expiry) and replaced
when it is about to expire; a key the forge refuses is one line and nothing is written."""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from bot import agent_credential
from bot.agent import AgentSession
from bot.agent_credential import Recorded
from bot.sockets import free_port
from localhub.server import LocalhubServer
from tests.conftest import git, localhub_token, memory_on_localhub, operator_headers, run_cli
from tests.letta_conformance.test_letta_memory import integrate
from tests.review.test_agent_identity import World, _app
from tests.review.test_review_cli import FAST, REPO


@pytest.fixture
def world(localhub: LocalhubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    """alice/memory on localhub; alice's own token in GITHUB_TOKEN and in the clone's URL."""
    world = memory_on_localhub(localhub, tmp_path, monkeypatch, World)
    for name in ("MEMREPO_REVIEW_TOKEN", "GH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", world.token)
    yield world
    world.store.close()



def set_app(world: World, capsys: pytest.CaptureFixture[str]) -> dict:
    app = _app(world)
    key = world.token_file(app["private_key"], "app.pem")
    code, _out, err = world.identity(capsys, "set", "--app-id", str(app["id"]), "--app-key-file", str(key),
                                     "--installation-id", str(app["installation"]))
    assert code == 0, err
    return app


def pushers(world: World, ref: str) -> list[str]:
    """Who moved `ref` on the forge, newest first, as its activity API says."""
    answer = requests.get(f"{world.server.api_url}/repos/{REPO}/activity", params={"ref": ref}, timeout=10,
                          headers={"Authorization": f"token {world.token}"})
    answer.raise_for_status()
    return [a["actor"]["login"] for a in answer.json()]


def kept_path(world: World) -> Path:
    return agent_credential.kept_token_path(world.memory.root)


def direct_edit(world: World, text: str = "hello") -> object:
    call = {"command": "create", "path": f"system/{text}.md", "file_text": f"---\ndescription: notes\n---\n{text}\n"}
    with AgentSession(world.memory.root, "c1", store=world.store, forge_retry=FAST, background_dreams=False,
                      env={"GITHUB_TOKEN": world.token}) as s:
        return s.handle_tool_call(call)


def test_the_apps_proposal_is_pushed_by_the_app_and_the_person_approves_it(
        world: World, capsys: pytest.CaptureFixture[str], redis_url: str) -> None:
    set_app(world, capsys)
    number = world.propose()
    pull = world.gh().get_repo(REPO).get_pull(number)
    assert pull.user.login == "ada-app[bot]"
    assert pushers(world, f"refs/heads/{pull.head.ref}") == ["ada-app[bot]"]  # not alice, whose token is about

    kept = kept_path(world)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    data = json.loads(kept.read_text())
    assert data["expires_at"] > time.time() + 300 and data["token"].startswith("ghs_")

    code, _out, err = run_cli(capsys, "review", "approve", str(number), "--repo", str(world.memory.root))
    assert code == 0, err
    assert data["token"] not in _out + err
    integrator = localhub_token(world.server, "memrepo-bot")  # the integrator's own account
    world.gh().get_repo(REPO).add_to_collaborators("memrepo-bot", "push")
    integrate(world.server, integrator, redis_url, world.tmp / "work", number)


def test_a_direct_commit_of_main_is_pushed_by_the_app(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    set_app(world, capsys)
    result = direct_edit(world)
    assert result.ok and result.route == "direct" and result.pushed, result.message  # type: ignore[attr-defined]
    assert pushers(world, "refs/heads/main")[0] == "ada-app[bot]"


def test_an_expired_kept_token_is_replaced(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    set_app(world, capsys)
    assert direct_edit(world, "one").ok  # type: ignore[attr-defined]
    kept = kept_path(world)
    first = json.loads(kept.read_text())
    kept.write_text(json.dumps({**first, "expires_at": time.time() - 1}))  # expired
    number = world.propose()
    again = json.loads(kept.read_text())
    assert again["token"] != first["token"] and again["expires_at"] > time.time() + 300
    pull = world.gh().get_repo(REPO).get_pull(number)
    assert pushers(world, f"refs/heads/{pull.head.ref}") == ["ada-app[bot]"]

    kept.write_text(json.dumps({**again, "expires_at": time.time() + 120}))  # less than five minutes left
    assert direct_edit(world, "two").ok  # type: ignore[attr-defined]
    assert json.loads(kept.read_text())["token"] != again["token"]
    assert pushers(world, "refs/heads/main")[0] == "ada-app[bot]"


def test_a_key_the_forge_refuses_is_one_line_and_nothing_is_written(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    set_app(world, capsys)
    other = requests.post(f"{world.server.url}/_localhub/apps", json={"name": "eve-app", "owner": "alice"},
                          headers=operator_headers(world.server), timeout=30).json()  # a valid key, another App's
    recorded = agent_credential.read(world.memory.root)
    assert recorded is not None
    agent_credential.write(world.memory.root, Recorded(recorded.login, app_id=recorded.app_id,
                                                       private_key=other["private_key"],
                                                       installation_id=recorded.installation_id,
                                                       source=recorded.source))
    head = git(world.memory.root, "rev-parse", "HEAD")
    branches = {b.name for b in world.gh().get_repo(REPO).get_branches()}
    for result in (direct_edit(world), _proposal(world)):
        assert not result.ok, result.message  # type: ignore[attr-defined]
        said = result.message  # type: ignore[attr-defined]
        assert len(said.strip().splitlines()) == 1 and "refused" in said and "Traceback" not in said, said
        assert "BEGIN" not in said and world.token not in said
    assert not kept_path(world).exists()
    assert git(world.memory.root, "rev-parse", "HEAD") == head
    assert git(world.memory.root, "status", "--porcelain") == ""
    assert {b.name for b in world.gh().get_repo(REPO).get_branches()} == branches


def test_a_forge_that_does_not_answer_leaves_a_direct_commit_saved_for_the_next_sync(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    """Unlike a refused key, an unreachable forge says nothing against the identity: the direct
    commit is saved locally, as any commit made offline, and nothing is kept."""
    set_app(world, capsys)
    git(world.memory.root, "remote", "set-url", "origin", f"http://127.0.0.1:{free_port()}/{REPO}.git")  # no one there
    head = git(world.memory.root, "rev-parse", "HEAD")
    result = direct_edit(world, "offline")
    assert result.ok, result.message  # type: ignore[attr-defined]
    assert "NOT pushed" in result.message  # type: ignore[attr-defined]
    assert git(world.memory.root, "rev-parse", "HEAD^") == head
    assert not kept_path(world).exists()


def _proposal(world: World) -> object:
    from tests.review.test_review_cli import PERSONA

    text = (world.memory.read(PERSONA) or b"").decode()
    last = text.rstrip("\n").splitlines()[-1]
    call = {"command": "str_replace", "path": PERSONA, "old_str": last, "new_str": last + " Short.",
            "reason": "Be concise"}
    with AgentSession(world.memory.root, "c1", store=world.store, forge_retry=FAST, background_dreams=False,
                      env={"GITHUB_TOKEN": world.token}) as s:
        return s.handle_tool_call(call)


def test_identity_clear_removes_the_kept_token(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    set_app(world, capsys)
    assert direct_edit(world).ok  # type: ignore[attr-defined]
    assert kept_path(world).exists()
    code, _out, err = world.identity(capsys, "clear")
    assert code == 0, err
    assert not kept_path(world).exists() and not agent_credential.record_path(world.memory.root).exists()


def test_follow_pushes_a_harness_commit_as_the_app(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    set_app(world, capsys)
    (world.memory.root / "system" / "harness.md").write_text("---\ndescription: a harness's note\n---\nhi\n")
    git(world.memory.root, "add", "-A")
    git(world.memory.root, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "harness note")
    code, _out, err = run_cli(capsys, "follow", "--once", "--repo", str(world.memory.root))
    assert code == 0, err
    assert git(world.memory.root, "rev-parse", "HEAD") == git(world.memory.root, "rev-parse", "origin/main")
    assert kept_path(world).exists(), _out
    assert pushers(world, "refs/heads/main")[0] == "ada-app[bot]"
