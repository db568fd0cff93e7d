"""`memrepo identity`: an agent identity separate from the person, against localhub over real HTTP
with two accounts. alice owns alice/memory and her shell exports GITHUB_TOKEN (her own token, the
one the clone's URL carries too); ada-bot is a second account with write access. Once `identity
set` records ada-bot's token, the agent's proposal is ada-bot's, alice approves it with `memrepo
review approve`, and the integrator merges it. Bad input is refused in one line, nothing recorded."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import github
import pytest
import requests

from bot import agent_credential
from bot.agent import AgentSession
from bot.memfs import MemoryRepo
from localhub.server import LocalhubServer
from tests.conftest import git, localhub_app, localhub_token, memory_on_localhub, run_cli
from tests.letta_conformance.test_letta_memory import integrate
from tests.review.test_review_cli import REPO
from tests.review.test_review_cli import World as ReviewWorld


class World(ReviewWorld):
    agent: str = ""  # ada-bot's token

    def gh(self, token: str | None = None) -> github.Github:
        return github.Github(auth=github.Auth.Token(token or self.token), base_url=self.server.api_url, retry=None)

    def identity(self, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
        return run_cli(capsys, "identity", *argv, "--repo", str(self.memory.root))

    def token_file(self, token: str, name: str = "agent-token") -> Path:
        path = self.tmp / name
        path.write_text(token + "\n")
        return path

    def propose(self, said: str = "Be more concise.", env: dict[str, str] | None = None) -> int:
        """The agent's protected edit, opened as a pull request by its session, in alice's shell."""
        return super().propose(said, env or {"GITHUB_TOKEN": self.token})


W = TypeVar("W", bound=World)


def alice_and_ada(localhub: LocalhubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: type[W]) -> W:
    """alice/memory, with alice's own token in her shell for everything, and ada-bot a writer of it."""
    world = memory_on_localhub(localhub, tmp_path, monkeypatch, kind)
    for name in ("MEMREPO_REVIEW_TOKEN", "GH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", world.token)
    world.agent = localhub_token(localhub, "ada-bot")
    world.gh().get_repo(REPO).add_to_collaborators("ada-bot", "push")
    return world


@pytest.fixture
def world(localhub: LocalhubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    world = alice_and_ada(localhub, tmp_path, monkeypatch, World)
    yield world
    world.store.close()


def test_the_agent_proposes_as_its_own_account_and_the_person_approves_it(
        world: World, capsys: pytest.CaptureFixture[str], redis_url: str) -> None:
    code, out, err = world.identity(capsys, "set", "--token-file", str(world.token_file(world.agent)))
    assert code == 0, err
    assert "ada-bot" in out and "(alice)" in out and world.agent not in out + err
    record = agent_credential.record_path(world.memory.root)
    assert stat.S_IMODE(record.stat().st_mode) == 0o600 and stat.S_IMODE(record.parent.stat().st_mode) == 0o700
    assert not record.is_relative_to(world.memory.root / "system")
    assert git(world.memory.root, "status", "--porcelain") == ""  # nothing in the working tree

    code, out, err = world.identity(capsys, "show", "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert (shown["login"], shown["kind"], shown["recorded"]) == ("ada-bot", "token", True)
    assert world.agent not in out

    number = world.propose()
    pull = world.gh().get_repo(REPO).get_pull(number)
    assert pull.user.login == "ada-bot"  # not alice, though GITHUB_TOKEN and the URL are hers

    code, out, err = run_cli(capsys, "review", "approve", str(number), "--repo", str(world.memory.root))
    assert code == 0, err
    assert [(r.user.login, r.state) for r in pull.get_reviews()] == [("alice", "APPROVED")]
    integrator = localhub_token(world.server, "memrepo-bot")  # the integrator's own account
    world.gh().get_repo(REPO).add_to_collaborators("memrepo-bot", "push")
    integrate(world.server, integrator, redis_url, world.tmp / "work", number)


def test_without_an_identity_the_persons_token_writes_and_cannot_approve(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    number = world.propose()
    assert world.gh().get_repo(REPO).get_pull(number).user.login == "alice"
    code, _out, err = run_cli(capsys, "review", "approve", str(number), "--repo", str(world.memory.root))
    assert code == 5 and "your own" in err
    code, out, _err = world.identity(capsys, "show")
    assert code == 0 and "No agent identity recorded" in out and "GITHUB_TOKEN" in out and world.token not in out


def test_the_recorded_identity_pushes_the_agents_commits(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    """Pushes go first to the recorded account: a URL without credentials still pushes."""
    from bot.memfs import sync

    assert world.identity(capsys, "set", "--token-env", "ADA_TOKEN")[0] == 1  # not set yet
    assert not agent_credential.record_path(world.memory.root).exists()
    import os

    os.environ["ADA_TOKEN"] = world.agent
    try:
        code, _out, err = world.identity(capsys, "set", "--token-env", "ADA_TOKEN")
    finally:
        del os.environ["ADA_TOKEN"]
    assert code == 0, err
    sync.set_remote(world.memory, f"{world.server.url}/{REPO}.git")  # no token in the URL any more
    (world.memory.root / "system" / "note.md").write_text("---\ndescription: a note\n---\nhello\n")
    git(world.memory.root, "add", "-A")
    git(world.memory.root, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "note")
    pushed = sync.push(world.memory)
    assert pushed.pushed, pushed.summary
    activity = requests.get(f"{world.server.api_url}/repos/{REPO}/activity", timeout=10,
                            headers={"Authorization": f"token {world.token}"}).json()
    assert activity[0]["actor"]["login"] == "ada-bot"

    code, out, _err = world.identity(capsys, "clear")
    assert code == 0 and "GITHUB_TOKEN" in out
    assert not agent_credential.record_path(world.memory.root).exists()


def _app(world: World) -> dict:
    return localhub_app(world.server, "alice", "ada-app")


def test_a_github_app_installation_is_recorded_and_opens_the_proposal(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    app = _app(world)
    key = world.token_file(app["private_key"], "app.pem")
    code, out, err = world.identity(capsys, "set", "--app-id", str(app["id"]), "--app-key-file", str(key),
                                    "--installation-id", str(app["installation"]))
    assert code == 0, err
    assert "ada-app[bot]" in out and "BEGIN" not in out
    number = world.propose()
    assert world.gh().get_repo(REPO).get_pull(number).user.login == "ada-app[bot]"


@pytest.mark.parametrize("case", ["unreadable key file", "a key that is no key", "unreadable token file",
                                  "no write permission",
                                  "unknown installation", "the person's own login", "no memory", "no credential"])
def test_bad_input_is_one_line_and_records_nothing(
        world: World, capsys: pytest.CaptureFixture[str], case: str) -> None:
    repo = str(world.memory.root)
    if case == "unreadable key file":
        argv = ["--app-id", "1", "--app-key-file", str(world.tmp / "missing.pem"), "--installation-id", "1"]
        said = "cannot be read"
    elif case == "a key that is no key":
        key = world.token_file("not a PEM key", "app.pem")
        argv, said = ["--app-id", "1", "--app-key-file", str(key), "--installation-id", "1"], "private key cannot sign"
    elif case == "unreadable token file":
        argv, said = ["--token-file", str(world.tmp / "missing")], "cannot be read"
    elif case == "no write permission":
        carol = localhub_token(world.server, "carol")
        world.gh().get_repo(REPO).add_to_collaborators("carol", "pull")
        argv, said = ["--token-file", str(world.token_file(carol))], "carol may not write"
    elif case == "unknown installation":
        app = _app(world)
        key = world.token_file(app["private_key"], "app.pem")
        argv = ["--app-id", str(app["id"]), "--app-key-file", str(key), "--installation-id", "99999"]
        said = "refused"
    elif case == "the person's own login":
        argv, said = ["--token-env", "GITHUB_TOKEN"], "your own account"
    elif case == "no memory":
        (world.tmp / "empty").mkdir()
        repo, argv, said = str(world.tmp / "empty"), ["--token-file", str(world.token_file(world.agent))], "git"
    else:
        argv, said = [], "--token-file"
    code, out, err = run_cli(capsys, "identity", "set", *argv, "--repo", repo)
    assert code != 0 and out == "" and len(err.strip().splitlines()) == 1 and said in err, err
    assert "Traceback" not in err and world.agent not in err and world.token not in err
    assert not agent_credential.record_path(world.memory.root).exists()


def test_status_and_doctor_name_the_agents_account_and_warn_when_it_is_the_reviewers(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    repo = str(world.memory.root)
    code, out, err = run_cli(capsys, "repository", "status", "--fetch", "--repo", repo)
    assert code == 0, err
    assert "the agent writes as alice, the account you review with" in out and "memrepo identity set" in out
    with AgentSession(world.memory.root, "c1", store=world.store, background_dreams=False,
                      env={"GITHUB_TOKEN": world.token}) as s:
        assert "the agent writes as alice, the account you review with" in s.doctor()

    assert world.identity(capsys, "set", "--token-file", str(world.token_file(world.agent)))[0] == 0
    code, out, err = run_cli(capsys, "repository", "status", "--repo", repo)  # no forge call: the record says
    assert code == 0 and "the agent writes as ada-bot (recorded identity)" in out, err
    code, out, err = run_cli(capsys, "repository", "status", "--fetch", "--json", "--repo", repo)
    assert code == 0, err
    data = json.loads(out)
    assert data["agent_account"] == {"agent": "ada-bot", "source": "recorded identity", "reviewer": "alice"}
    assert data["same_account_as_reviewer"] is False
    with AgentSession(world.memory.root, "c1", store=world.store, background_dreams=False,
                      env={"GITHUB_TOKEN": world.token}) as s:
        report = s.doctor()
    assert "the agent writes as ada-bot (recorded identity); you review as alice" in report
    assert "account you review with" not in report


@pytest.mark.parametrize("argv", [["identity", "show"], ["identity", "set", "--token-env", "GITHUB_TOKEN"],
                                  ["review", "list"]], ids=["identity show", "identity set", "review list"])
def test_a_memory_without_a_remote_is_named_in_one_line_for_what_the_command_does(
        memory: MemoryRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        argv: list[str]) -> None:
    """The forge is found from origin for an identity and for a review as for a dream: the line
    says the memory has no remote and how to connect one, not that a dream has nowhere to go."""
    monkeypatch.setenv("GITHUB_TOKEN", "not-a-real-token")
    code, out, err = run_cli(capsys, *argv, "--repo", str(memory.root))
    assert code != 0 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "has no remote" in err and "memrepo repository set URL" in err and "dream" not in err, err
    assert not agent_credential.record_path(memory.root).exists()
