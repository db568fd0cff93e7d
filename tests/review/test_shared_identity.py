"""A shared memory is written to as the agent's recorded identity, not as the person whose token is
about: against localhub over real HTTP, alice's memory attaches carol/team with alice's own token
(in GITHUB_TOKEN, in the memory's URL and so in the projection's). Once `memrepo identity set`
records ada-bot (an account) or ada-app (a GitHub App) for alice's memory, a harness commit in the
projection proposed by `memrepo follow`, and a `shared/team/...` write of the memory tool, open
their pull request on carol/team as that identity, and its branch is pushed by it (localhub's
activity API names the pusher, as GitHub's does); the projection's fetches go as the App too. An
App not installed on the shared repository's account is refused in one line, nothing written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from bot import agent_credential
from bot.agent import AgentSession
from bot.memfs import MemoryRepo, sync
from bot.memfs import shared_projection as shared
from localhub.server import LocalhubServer
from tests.conftest import git, operator_headers, run_cli
from tests.memfs.test_shared_follow import NOTE, _commit_in, _team
from tests.review.test_agent_identity import World, _app, alice_and_ada
from tests.review.test_review_cli import FAST

TEAM = "carol/team"


class Shared(World):
    team_url: str = ""
    carol: str = ""  # carol's token: she owns carol/team

    @property
    def projection(self) -> Path:
        return self.tmp / "memory.shared" / "team"

    def team(self, path: str, **params: str) -> list[dict]:
        answer = requests.get(f"{self.server.api_url}/repos/{TEAM}/{path}", params=params, timeout=10,
                              headers={"Authorization": f"token {self.carol}"})
        answer.raise_for_status()
        return answer.json()

    def pull(self, number: int) -> dict:
        return self.team(f"pulls/{number}")  # type: ignore[return-value]

    def pushers(self, branch: str) -> list[str]:
        return [a["actor"]["login"] for a in self.team("activity", ref=f"refs/heads/{branch}")]

    def branches(self) -> set[str]:
        return {b["name"] for b in self.team("branches")}

    def write(self, text: str = "oncall") -> object:
        """The memory tool's write of a shared file, in a session in alice's shell."""
        call = {"command": "create", "path": f"shared/team/{text}.md", "file_text": NOTE}
        with AgentSession(self.memory.root, "c1", store=self.store, forge_retry=FAST, background_dreams=False,
                          env={"GITHUB_TOKEN": self.token}) as s:
            s.record("user", "Sam is on call this week.")
            return s.handle_tool_call(call)


@pytest.fixture
def world(localhub: LocalhubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Shared]:
    """alice/memory with carol/team attached by alice's token; ada-bot may write to both."""
    world = alice_and_ada(localhub, tmp_path, monkeypatch, Shared)
    assert sync.push(world.memory).pushed
    world.team_url, _team_clone, world.carol = _team(localhub, tmp_path, "alice")
    world.gh(world.carol).get_repo(TEAM).add_to_collaborators("ada-bot", "push")
    shared.attach(world.memory, world.team_url, name="team", env={})  # alice's token, from her memory's URL
    yield world
    world.store.close()


def set_app(world: Shared, capsys: pytest.CaptureFixture[str], *, on_team: bool) -> dict:
    """ada-app installed on alice's account (and on carol's when `on_team`), recorded for alice's memory."""
    app = _app(world)
    if on_team:
        installed = requests.post(f"{world.server.url}/_localhub/apps/{app['id']}/installations",
                                  json={"account": "carol"}, headers=operator_headers(world.server), timeout=10)
        installed.raise_for_status()
    key = world.token_file(app["private_key"], "app.pem")
    code, _out, err = world.identity(capsys, "set", "--app-id", str(app["id"]), "--app-key-file", str(key),
                                     "--installation-id", str(app["installation"]))
    assert code == 0, err
    return app


def test_follow_proposes_a_projections_commit_as_the_recorded_account(
        world: Shared, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = world.identity(capsys, "set", "--token-file", str(world.token_file(world.agent)))
    assert code == 0, err
    code, out, err = run_cli(capsys, "follow", "--once", "--repo", str(world.memory.root))
    assert code == 0, out + err
    _commit_in(world.projection, NOTE)
    code, out, err = run_cli(capsys, "follow", "--once", "--repo", str(world.memory.root))
    assert code == 0 and "pull request #" in out, out + err
    number = int(out.split("pull request #", 1)[1].split(" ", 1)[0])
    pull = world.pull(number)
    assert pull["user"]["login"] == "ada-bot"  # not alice, whose token the projection's URL carries
    assert world.pushers(pull["head"]["ref"]) == ["ada-bot"]
    assert world.token not in out + err and world.agent not in out + err


def test_the_memory_tools_shared_write_is_the_apps_and_its_fetches_too(
        world: Shared, capsys: pytest.CaptureFixture[str]) -> None:
    set_app(world, capsys, on_team=True)
    result = world.write()
    assert result.ok and result.route == "pull-request", result.message  # type: ignore[attr-defined]
    pull = world.pull(result.pull_request)  # type: ignore[attr-defined]
    assert pull["user"]["login"] == "ada-app[bot]"
    assert world.pushers(pull["head"]["ref"]) == ["ada-app[bot]"]
    kept = agent_credential.read_kept(world.projection)  # carol's installation's token, kept in the projection
    assert kept is not None and kept.token.startswith("ghs_")
    own = agent_credential.read_kept(world.memory.root)
    assert own is None or own.token != kept.token

    # A token the forge refuses in the projection's URL: its fetches succeed only as the App.
    sync.set_remote(MemoryRepo.open(world.projection),
                    world.team_url.replace("http://", "http://x-access-token:refused@"))
    moved = world.write("second")  # a second pull request, whose base is fetched as the App
    assert moved.ok, moved.message  # type: ignore[attr-defined]
    code, out, err = run_cli(capsys, "shared", "sync", "--repo", str(world.memory.root))
    assert code == 0 and "team:" in out, out + err


def test_an_app_not_installed_on_the_shared_repository_is_refused_in_one_line(
        world: Shared, capsys: pytest.CaptureFixture[str]) -> None:
    app = set_app(world, capsys, on_team=False)
    before = world.branches()
    head = git(world.projection, "rev-parse", "HEAD")
    result = world.write()
    said = result.message  # type: ignore[attr-defined]
    assert not result.ok, said  # type: ignore[attr-defined]
    assert len(said.strip().splitlines()) == 1 and "Traceback" not in said, said
    assert f"GitHub App {app['id']}" in said and "is not installed on carol/team" in said
    assert "install the App on carol's account" in said and "BEGIN" not in said and world.token not in said
    assert world.branches() == before
    assert agent_credential.read_kept(world.projection) is None
    assert git(world.projection, "rev-parse", "HEAD") == head and git(world.projection, "status", "--porcelain") == ""


def test_an_identity_set_on_a_projection_is_refused_in_one_line_naming_its_memory(
        world: Shared, capsys: pytest.CaptureFixture[str]) -> None:
    """A projection writes as the memory it is attached to, so a record of its own would never be read."""
    code, out, err = run_cli(capsys, "identity", "set", "--token-file", str(world.token_file(world.agent)),
                             "--repo", str(world.projection))
    assert code == 1 and out == "", out
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "projection" in err and f"--repo {world.memory.root}" in err, err
    assert not agent_credential.record_path(world.projection).exists()
