"""Shared memory end to end: two agents' memories and one shared memory on a running `memrepo
serve --local` stack (localhub, Redis, the receiver and the integrator's worker), real git
clones, a real transcript store. Nothing is mocked."""

from __future__ import annotations

from pathlib import Path

import github
import pytest
import yaml

from bot.agent.session import AgentSession
from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.memfs import MemoryRepo, PromptCompiler, sync
from bot.memfs import shared_projection as shared
from bot.memfs.create import init_repository
from bot.provenance.why import render_why, why
from bot.pullrequest.provenance import parse_provenance
from bot.transcript import TranscriptStore
from tests.conftest import FORGE_ENV, StoreClock, git
from tests.memory_forge import FAST
from tests.served import LocalStack
from tests.waiting import wait_until

MERGE_TIMEOUT = 60.0
RUNBOOK = "runbooks/deploys.md"
SAID = "Remember for the whole team: production deploys happen on Tuesdays only."


def _memory(stack: LocalStack, tmp: Path, login: str, agent: str) -> tuple[MemoryRepo, str]:
    """<login>/memory on the stack's localhub, made by `memrepo init` for `agent` and pushed."""
    token = stack.new_token(login)
    github.Github(auth=github.Auth.Token(token), base_url=stack.api, retry=None).get_user().create_repo("memory")
    memory = init_repository(tmp / login / "memory", agent, agent.upper())
    sync.set_remote(memory, stack.web.replace("http://", f"http://x-access-token:{token}@") + f"/{login}/memory.git")
    return memory, token


def _team(stack: LocalStack, tmp: Path, writers: tuple[str, ...]) -> tuple[str, str]:
    """alice/team: a memory whose policy merges only what a person approved, `writers` its
    collaborators; (its URL without credentials, alice's token)."""
    token = stack.new_token("alice")
    hub = github.Github(auth=github.Auth.Token(token), base_url=stack.api, retry=None)
    repo = hub.get_user().create_repo("team")
    for login in writers:
        stack.new_token(login)
        repo.add_to_collaborators(login, "push")
    team = init_repository(tmp / "alice" / "team", "t0", "Team")
    (team.root / ".memrepo" / "config.yml").write_text("merge: review\n")
    git(team.root, "add", "-A")
    git(team.root, "commit", "-q", "-m", "policy: a person approves every change")
    url = f"{stack.web}/alice/team.git"
    sync.set_remote(team, url.replace("http://", f"http://x-access-token:{token}@"))
    return url, token


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in FORGE_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMREPO_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_two_agents_share_one_memory_through_reviewed_pull_requests(served: LocalStack, tmp_path: Path,
                                                                     home: Path) -> None:
    url, alice = _team(served, tmp_path, ("bob", "carol"))
    first, _ = _memory(served, tmp_path, "bob", "a1")
    second, carol = _memory(served, tmp_path, "carol", "a2")

    # Both attach it with their own forge token (their origin's); the record is in their history.
    for memory in (first, second):
        said = shared.attach(memory, url, name="team", env={})
        assert "attached" in said and "the record is pushed" in said, said
        assert git(memory.root, "log", "-1", "--format=%s").strip().startswith("shared: attach team")
    assert [row.name for row in shared.rows(first)] == ["team"]

    # Each sees the shared tree in its prompt, at its own projection root.
    for memory in (first, second):
        text = PromptCompiler(memory.root).compile().text
        assert "<shared_memory>" in text and 'address="shared/team/"' in text
        assert "$MEMORY_DIR/../memory.shared/team/" in text and "persona.md" in text

    # The second agent runs a session that follows its memory's head events.
    following = AgentSession(second, "c2", home=home, env={}, background_dreams=False,
                             events_url=f"{served.receiver}/v1/repos/carol/memory/events", agent_token=carol)
    streams = following.shared_subscribers
    wait_until(lambda: streams and all(s.connected.is_set() for s in streams), 20,
               "the second agent's stream of alice/team")

    # The first agent writes a shared file in a conversation: its own main does not move, and a
    # pull request naming it, its memory and its conversation is opened on alice/team.
    own_main = first.head_sha()
    store = TranscriptStore(home, fsync=False, clock=StoreClock())
    session = AgentSession(first, "c1", store=store, env={}, background_dreams=False)
    try:
        session.record("user", SAID)
        result = session.handle_tool_call({
            "command": "create", "path": f"shared/team/{RUNBOOK}", "description": "How and when we deploy.",
            "file_text": "# Deploys\n\n- production deploys happen on Tuesdays only\n",
            "reason": "the team's deploy day"})
    finally:
        session.close()
    assert result.ok and result.route == "pull-request", result.message
    assert result.paths == [f"shared/team/{RUNBOOK}"]
    assert MemoryRepo.open(first.root).head_sha() == own_main
    assert sync.status(first, fetch=True).remote_head == own_main
    client = ForgeClient("alice/team", TokenCredentials(alice), base_url=served.api, policy=FAST,
                         min_write_interval=0.0, timeout=10)
    pr = client.get_pull_request(result.pull_request)
    provenance = parse_provenance(pr.body)
    assert provenance is not None and provenance.agent_id == "a1" and provenance.conversation_id == "c1"
    assert provenance.memory_repository == f"{served.web}/bob/memory.git"
    assert provenance.transcript is not None and provenance.transcript.count >= 1
    assert SAID in pr.body

    # alice approves; the shared memory's integrator merges under its own policy (review).
    hub = github.Github(auth=github.Auth.Token(alice), base_url=served.api, retry=None)
    hub.get_repo("alice/team").get_pull(pr.number).create_review(event="APPROVE")
    wait_until(lambda: client.get_pull_request(pr.number).merged, MERGE_TIMEOUT,
               lambda: "the merge; worker log:\n" + served.worker_log.read_text()[-3000:])

    # The other agent, following its memory's event stream, follows the shared memory's too: its
    # next prompt shows the change, with nothing else done.
    wait_until(lambda: "deploys.md — How and when we deploy." in following.system_prompt(), MERGE_TIMEOUT,
               lambda: f"the merge in the second agent's prompt; its streams: "
                       f"{[s.last_error for s in following.shared_subscribers]}")
    following.close()
    assert [done.line.split(":")[0] for done in shared.sync_all(second, env={})] == ["team"]

    # `why` from the second agent's memory quotes what the first agent's user said.
    report = why(second.root, f"shared/team/{RUNBOOK}", 3, forge=None)
    assert SAID in render_why(report)
    store.close()

    # Detaching takes it out of the prompt and out of the folder.
    assert "detached team" in shared.detach(second, "team")
    text = PromptCompiler(second.root).compile().text
    assert "<shared_memory>" not in text and not (second.root.parent / "memory.shared").exists()
    assert yaml.safe_load((second.root / ".memrepo" / "shared.yml").read_text())["attached"] == []
