"""`memrepo log` names each writer's role from what its commits carry: agents, dreamers and
the integrator's own commits by their memrepo addresses; a merge the forge made for the
integrator by its merger (the GitHub App's `[bot]` account, the deployment's bot login, or
`serve --local`'s account) and GitHub's web-flow committer; everyone else is a person. The
merges here are real ones, made by localhub for each account; `--json` gives one document."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from bot import identity
from bot.forge.client import ForgeClient
from bot.forge.credentials import AppCredentials, TokenCredentials
from bot.forge.shapes import NewPullRequest
from bot.identity import commit_role
from bot.memfs.tool.memory_tool import MemoryTool
from tests.conftest import (
    PERSON_EMAIL,
    PERSON_NAME,
    LocalhubMemory,
    git,
    localhub_app,
    localhub_token,
    memory_on_localhub,
)
from tests.conftest import run_cli as run
from tests.memory_forge import FAST, REPO

CUSTOM_BOT = "acme-memory-bot"


@dataclass
class World(LocalhubMemory):
    """alice/memory on localhub, the agent's clone, and a second clone people push branches from."""

    work: Path | None = None

    def client(self, credentials: Any) -> ForgeClient:
        return ForgeClient(REPO, credentials, base_url=self.server.api_url, policy=FAST, min_write_interval=0.0,
                           timeout=10)

    def as_user(self, login: str) -> ForgeClient:
        """A client acting as `login`, made a collaborator who may merge unless it is alice."""
        token = localhub_token(self.server, login)
        if login != "alice":
            requests.put(f"{self.server.api_url}/repos/{REPO}/collaborators/{login}", json={"permission": "push"},
                         headers={"Authorization": f"token {self.token}"}, timeout=10).raise_for_status()
        return self.client(TokenCredentials(token))

    def pull(self, branch: str, path: str, who: identity.Identity | None, title: str) -> int:
        """A pull request of one commit (by `who`, a person when None) adding `path` on `branch`."""
        assert self.work is not None
        git(self.work, "fetch", "-q", "origin")
        git(self.work, "checkout", "-q", "-B", branch, "origin/main")
        (self.work / path).parent.mkdir(parents=True, exist_ok=True)
        (self.work / path).write_text(f"Notes from {branch}.\n")
        git(self.work, "add", path)
        name, email = (who.name, who.email) if who else (PERSON_NAME, PERSON_EMAIL)
        git(self.work, "-c", f"user.name={name}", "-c", f"user.email={email}", "commit", "-qm", title, "--no-verify")
        git(self.work, "push", "-q", "origin", branch)
        return self.as_user("alice").open_pull_request(NewPullRequest(head=branch, base="main", title=title)).number

    def merge(self, client: ForgeClient, number: int) -> str:
        pull = client.wait_for_mergeability(number, timeout=20)
        assert pull.mergeable, pull
        result = client.merge(number, pull.head_sha)
        assert result.merged and result.sha, result
        return result.sha

    def app(self) -> AppCredentials:
        app = localhub_app(self.server, "alice")
        return AppCredentials(app["id"], app["private_key"])


@pytest.fixture
def world(localhub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.delenv("MEMREPO_BOT_LOGIN", raising=False)
    made = memory_on_localhub(localhub, tmp_path, monkeypatch, World)
    made.work = tmp_path / "work"
    url = localhub.url.replace("http://", f"http://x-access-token:{made.token}@") + f"/{REPO}.git"
    git(tmp_path, "clone", "-q", url, str(made.work))
    yield made
    made.store.close()


@pytest.fixture
def history(world: World) -> dict[str, str]:
    """Each kind of writer's commits on alice/memory's main, pulled into the agent's clone:
    summary -> the role it must be shown with."""
    assert MemoryTool(world.memory).call({"command": "core_memory_append", "label": "human", "content": "Likes tea.",
                                          "reason": "Note tea"}).ok
    dreamer = identity.dreamer("20260314T090000Z-0a1b2c3d")
    number = world.pull("memrepo/dream/20260314T090000Z-0a1b2c3d", "conversations/c1/2026-03.md", dreamer,
                        "Dream: what c1 said")
    world.merge(world.client(world.app()), number)  # the GitHub App: memrepo[bot]
    number = world.pull("memrepo/edit/a1/0001", "reference/big.md", identity.agent("a1", "Ada"), "A large edit")
    world.merge(world.as_user(identity.LOCAL_BOT_LOGIN), number)  # serve --local's account
    number = world.pull("memrepo/dream/20260314T100000Z-0a1b2c3e", "conversations/c2/2026-03.md", dreamer,
                        "Dream: what c2 said")
    world.merge(world.as_user("alice"), number)  # a person merges a dream on the web
    number = world.pull("memrepo/edit/a1/0002", "reference/other.md", identity.agent("a1", "Ada"), "Another edit")
    world.merge(world.as_user(CUSTOM_BOT), number)  # a deployment's own bot account
    number = world.pull("notes", "notes.md", None, "A person's notes")
    world.merge(world.as_user("alice"), number)
    git(world.memory.root, "pull", "-q", "--ff-only", "origin", "main")
    return {
        "Note tea": "agent",
        "Dream: what c1 said": "dreamer",
        "Merge pull request #1 from alice/memrepo/dream/20260314T090000Z-0a1b2c3d": "integrator",
        "A large edit": "agent",
        "Merge pull request #2 from alice/memrepo/edit/a1/0001": "integrator",
        "Dream: what c2 said": "dreamer",
        "Merge pull request #3 from alice/memrepo/dream/20260314T100000Z-0a1b2c3e": "human",
        "Another edit": "agent",
        "Merge pull request #4 from alice/memrepo/edit/a1/0002": "human",  # unless MEMREPO_BOT_LOGIN names it
        "A person's notes": "human",
        "Merge pull request #5 from alice/notes": "human",
    }


def log_json(capsys: pytest.CaptureFixture[str], root: Path, *extra: str) -> list[dict[str, Any]]:
    code, out, err = run(capsys, "log", "--repo", str(root), "--json", *extra)
    assert (code, err) == (0, ""), err
    return json.loads(out)


def test_merges_made_for_the_integrator_are_the_integrators(world: World, history: dict[str, str],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    entries = log_json(capsys, world.memory.root)
    roles = {e["summary"]: e["role"] for e in entries}
    first = git(world.memory.root, "log", "--reverse", "--format=%s", "main").splitlines()[0]
    expected = {**history, first: "agent"}  # `memrepo init` commits as the memory's agent
    assert roles == {summary: expected[summary] for summary in roles}
    assert set(roles) == set(expected)
    merger = next(e for e in entries if e["summary"].startswith("Merge pull request #1 "))
    assert merger["author"]["name"] == "memrepo[bot]"
    assert merger["author"]["email"].endswith("+memrepo[bot]@users.noreply.localhub")
    assert git(world.memory.root, "show", "-s", "--format=%cn <%ce>", merger["sha"]).strip() == (
        "GitHub <noreply@github.com>")


def test_the_deployments_bot_login_names_its_merges(world: World, history: dict[str, str],
                                                    capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_BOT_LOGIN", CUSTOM_BOT.upper())  # logins ignore case
    roles = {e["summary"]: e["role"] for e in log_json(capsys, world.memory.root)}
    assert roles["Merge pull request #4 from alice/memrepo/edit/a1/0002"] == "integrator"
    assert roles["Merge pull request #3 from alice/memrepo/dream/20260314T100000Z-0a1b2c3e"] == "human"


def test_the_text_log_shows_the_same_roles(world: World, history: dict[str, str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "log", "--repo", str(world.memory.root))
    assert code == 0
    columns = [re.split(r" {2,}", line, maxsplit=4) for line in out.splitlines()]  # sha, time, role, author, summary
    roles = {summary: role for _, _, role, _, summary in columns}
    assert {summary: roles.get(summary) for summary in history} == history
    entries = log_json(capsys, world.memory.root)
    lines = out.splitlines()
    assert len(lines) == len(entries)
    for line, e in zip(lines, entries, strict=True):
        assert line.startswith(e["sha"][:10] + "  " + e["time"].replace("T", " ") + "  " + f"{e['role']:<10}  ")
        assert line.endswith(e["summary"])


def test_json_entries_carry_the_changed_paths(world: World, history: dict[str, str],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    entries = log_json(capsys, world.memory.root)
    assert all(set(e) == {"sha", "time", "author", "role", "summary", "paths"} for e in entries)
    by_summary = {e["summary"]: e for e in entries}
    assert by_summary["Note tea"]["paths"] == ["system/human.md"]
    # A merge lists what it brought into main: the files of its pull request.
    assert by_summary["Merge pull request #2 from alice/memrepo/edit/a1/0001"]["paths"] == ["reference/big.md"]
    root = entries[-1]
    assert root["paths"] == sorted(git(world.memory.root, "ls-tree", "-r", "--name-only", root["sha"]).split())
    shas = [e["sha"] for e in entries]  # every commit once, newest (main's tip) first
    assert sorted(shas) == sorted(git(world.memory.root, "log", "--format=%H").split())
    assert shas[0] == git(world.memory.root, "rev-parse", "HEAD").strip()
    # Filters apply as in the text log; nothing matching is an empty list, still one document.
    only = log_json(capsys, world.memory.root, "reference/big.md")  # git's simplification: the merge only passed it on
    assert [e["summary"] for e in only] == ["A large edit"]
    assert len(log_json(capsys, world.memory.root, "-n", "3")) == 3
    assert log_json(capsys, world.memory.root, "--until", "2000-01-01") == []


def test_the_policy_file_has_a_history_too(memory, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    entries = log_json(capsys, memory.root, ".memrepo/config.yml")
    assert len(entries) == 1 and ".memrepo/config.yml" in entries[0]["paths"]


# ---------------------------------------------------------------------------- the rule, by table

WEB = identity.WEB_FLOW_EMAIL
APP = "41898282+memrepo[bot]@users.noreply.github.com"
OTHER_APP = "49699333+dependabot[bot]@users.noreply.github.com"
LOCAL_BOT = "1003+memrepo-bot@users.noreply.localhub"
GHE_BOT = "17+acme-memory-bot@users.noreply.ghe.example.com"
DREAM_MERGE = "Merge pull request #12 from acme/memrepo/dream/20260314T090000Z-0a1b2c3d\n\nDream\n"
EDIT_MERGE = "Merge pull request #13 from acme/memrepo/edit/a1/3f2a\n\nA large edit\n"
OTHER_MERGE = "Merge pull request #14 from acme/notes\n\nNotes\n"

ROLES: list[tuple[str, str, str, str, tuple[str, ...], str]] = [
    # id, author email, committer email, message, bot logins, role
    ("agent", "a1@agents.memrepo", "a1@agents.memrepo", "Note tea", (), "agent"),
    ("agent, any case", "A1@Agents.Memrepo", "", "x", (), "agent"),
    ("dreamer", "20260314T090000Z-0a1b2c3d@dreams.memrepo", "", "Dream", (), "dreamer"),
    ("integrator's resolution", "integrator@bot.memrepo", "integrator@bot.memrepo",
     "Merge 0123abc into memrepo/dream/x: conflicts resolved by memrepo", (), "integrator"),
    ("person", "pat@example.com", "pat@example.com", "Edit", (), "human"),
    ("person's web edit", "1+pat@users.noreply.github.com", WEB, "Update notes.md", (), "human"),
    ("person merges a dream on the web", "1+pat@users.noreply.github.com", WEB, DREAM_MERGE, (), "human"),
    ("person with a public address merges", "pat@example.com", WEB, DREAM_MERGE, (), "human"),
    ("the App merges a dream", APP, WEB, DREAM_MERGE, (), "integrator"),
    ("the App merges an agent edit", APP, WEB, EDIT_MERGE, (), "integrator"),
    ("the App's older noreply form", "memrepo[bot]@users.noreply.github.com", WEB, DREAM_MERGE, (), "integrator"),
    ("the App, GitHub Enterprise", "5+memrepo[bot]@users.noreply.ghe.example.com", WEB, DREAM_MERGE, (),
     "integrator"),
    ("an App merging a person's branch is not known to be memrepo's", APP, WEB, OTHER_MERGE, (), "human"),
    ("any App merging a memrepo branch is taken for the integrator", OTHER_APP, WEB, DREAM_MERGE, (), "integrator"),
    ("an App's merge not committed by GitHub", APP, "pat@example.com", DREAM_MERGE, (), "human"),
    ("a title that only starts alike", APP, WEB, "Merge pull request #12 from acme/memrepo/dreamy", (), "human"),
    ("a squash by the App", APP, WEB, "Dream: what c1 said (#12)", (), "human"),
    ("the bot login, configured", GHE_BOT, WEB, OTHER_MERGE, ("acme-memory-bot",), "integrator"),
    ("the bot login, any case", GHE_BOT, "", "x", (" ACME-Memory-Bot ",), "integrator"),
    ("the bot login, not configured", GHE_BOT, WEB, EDIT_MERGE, (), "human"),
    ("an empty setting names nobody", "1+pat@users.noreply.github.com", WEB, DREAM_MERGE, ("",), "human"),
    ("serve --local's account on localhub", LOCAL_BOT, WEB, OTHER_MERGE, (), "integrator"),
    ("the same login on github.com is a person's", "9+memrepo-bot@users.noreply.github.com", WEB, EDIT_MERGE, (),
     "human"),
    ("a [bot] name outside a forge's no-reply addresses", "memrepo[bot]@example.com", WEB, DREAM_MERGE, (),
     "human"),
]


@pytest.mark.parametrize(("author", "committer", "message", "bots", "role"), [r[1:] for r in ROLES],
                         ids=[r[0] for r in ROLES])
def test_commit_role(author: str, committer: str, message: str, bots: tuple[str, ...], role: str) -> None:
    assert commit_role(author, committer, message, bots) == role
    assert role in identity.ROLES


@pytest.mark.parametrize(("email", "account"), [
    ("41898282+memrepo[bot]@users.noreply.github.com", ("memrepo[bot]", "github.com")),
    ("pat@users.noreply.github.com", ("pat", "github.com")),
    ("1003+memrepo-bot@users.noreply.localhub", ("memrepo-bot", "localhub")),
    ("17+x@users.noreply.GHE.example.com", ("x", "ghe.example.com")),
    ("pat@example.com", None),
    ("noreply@github.com", None),
    ("1+@users.noreply.github.com", None),
])
def test_forge_account(email: str, account: tuple[str, str] | None) -> None:
    assert identity.forge_account(email) == account


def test_serve_local_gives_the_integrator_the_account_log_knows() -> None:
    from bot.serve import local

    assert local.BOT_LOGIN == identity.LOCAL_BOT_LOGIN


def test_why_and_at_give_the_same_roles_as_the_log(world: World, history: dict[str, str]) -> None:
    from datetime import UTC, datetime

    from bot.memfs.history.travel import at
    from bot.provenance.why import why

    report = why(world.memory.root, "conversations/c1/2026-03.md", 1, forge=False, transcripts=False)
    [origin] = report["origins"]
    assert origin["writer"] == "dreamer" and origin["via"] == "merge"
    assert origin["landed"]["role"] == "integrator"  # the GitHub App's merge, as the log has it
    assert at(world.memory.root, datetime.now(UTC))["role"] == history["Merge pull request #5 from alice/notes"]
