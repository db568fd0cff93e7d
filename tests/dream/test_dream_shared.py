"""A dream that learned something for the team proposes it to the shared memory, on a real
localhub over HTTP with real git: the dreamer decides per change which memory it belongs to
(the path of each call); a change addressed as shared/<NAME>/<path> is a dream pull request on
the shared repository, under its policy, whose provenance names the dream, the agent, the
agent's own memory, the conversation and the messages; the agent's own pull request carries
its own changes and the cursor, never the team's file."""

from __future__ import annotations

import pytest

from bot.contracts import dream_branch
from bot.dream.shared import split
from bot.dream.strategies import DreamInput, Proposal, ProposedCall
from bot.dream.strategies.llm import build_request
from bot.errors import MemrepoError
from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.memfs import shared_projection as shared
from bot.memfs import sync
from bot.pullrequest.provenance import parse_provenance
from tests.conftest import git
from tests.dream.test_dream_run import FAST, World, world  # noqa: F401 (the fixture)
from tests.memfs.test_shared_follow import _team

RUNBOOK = {"command": "create", "path": "shared/team/runbooks/deploys.md", "description": "How and when we deploy.",
           "file_text": "- Production deploys happen on Tuesdays only.\n", "reason": "the team's deploy day"}
TEA = {"command": "create", "path": "notes/tea.md", "description": "What Sam drinks.",
       "file_text": "- Sam drinks green tea.\n", "reason": "Sam's tea"}


class Deciding:
    """A strategy that puts the team's knowledge in shared/team/ and Sam's in the agent's memory."""

    name = "deciding"

    def propose(self, dream: DreamInput) -> Proposal:
        assert dream.shared == ("team",)
        ids = tuple(m.message_id for m in dream.messages)
        return Proposal((ProposedCall(RUNBOOK, "the team deploys on Tuesdays", ids[:1]),
                         ProposedCall(TEA, "Sam drinks green tea", ids[1:])), "a team rule and a preference")


def test_a_dream_proposes_team_knowledge_to_the_shared_memory_and_its_own_to_the_agents(
        world: World) -> None:  # noqa: F811
    assert sync.push(world.memory).pushed
    url, team, carol = _team(world.server, world.tmp, "alice")
    shared.attach(world.memory, url, name="team", env={})
    world.say("For the whole team: production deploys happen on Tuesdays only.")
    world.say("I drink green tea.")
    result = world.dream(strategy=Deciding())
    assert "Team knowledge for shared memory team: pull request #" in result.message, result.message

    # The team's pull request on carol/team: the dreamer's (a dream's branch, no label), naming everything.
    client = ForgeClient("carol/team", TokenCredentials(carol), base_url=world.server.api_url, policy=FAST,
                         min_write_interval=0.0, timeout=10)
    [pr] = client.list_open_pull_requests()
    assert pr.head_ref == dream_branch(result.dream_id) and pr.labels == ()
    provenance = parse_provenance(pr.body)
    assert provenance is not None and provenance.dream_id == result.dream_id
    assert (provenance.agent_id, provenance.conversation_id) == ("a1", "c1")
    assert provenance.memory_repository == f"{world.server.url}/alice/memory.git"
    assert [c.path for c in provenance.changes] == ["runbooks/deploys.md"]
    assert "production deploys happen on Tuesdays only" in pr.body
    assert "the dreamer's cursor" in pr.body and "Merging this pull request also moves" not in pr.body
    git(team.root, "fetch", "-q", "origin", f"+refs/heads/{pr.head_ref.removeprefix('refs/heads/')}:refs/pr")
    assert "- Production deploys happen on Tuesdays only." in git(team.root, "show", "refs/pr:runbooks/deploys.md")
    assert sync.status(team, fetch=True).remote_head == team.head_sha()  # nothing merged by itself

    # The agent's own pull request: its own change and the cursor, not the team's file.
    [own] = world.open_pulls()
    files = git(world.memory.root, "diff", "--name-only", world.main_sha(), world.branch_commit(own.head_ref))
    assert sorted(files.split()) == [".memrepo/cursors/a1/c1.json", "notes/tea.md"]
    assert [c.path for c in parse_provenance(own.body).changes] == ["notes/tea.md"]


def test_a_read_only_attachment_refuses_a_dreams_change_and_nothing_is_opened(world: World) -> None:  # noqa: F811
    assert sync.push(world.memory).pushed
    url, _, carol = _team(world.server, world.tmp, "alice")
    shared.attach(world.memory, url, name="team", read_only=True, env={})
    world.say("For the whole team: production deploys happen on Tuesdays only.")

    class Forcing:
        name = "forcing"

        def propose(self, dream: DreamInput) -> Proposal:
            assert dream.shared == ()  # a read-only attachment is not offered
            return Proposal((ProposedCall(RUNBOOK, "the deploy day", (dream.messages[0].message_id,)),), "x")

    with pytest.raises(MemrepoError) as failed:
        world.dream(strategy=Forcing())
    assert "\n" not in str(failed.value)
    world.assert_nothing_left()
    client = ForgeClient("carol/team", TokenCredentials(carol), base_url=world.server.api_url, policy=FAST,
                         min_write_interval=0.0, timeout=10)
    assert client.list_open_pull_requests() == []


@pytest.mark.parametrize(("paths", "own", "team"), [
    (["notes/a.md"], ["notes/a.md"], {}),
    (["shared/team/a.md"], [], {"team": ["a.md"]}),
    (["shared/other/a.md"], ["shared/other/a.md"], {}),  # not attached: the agent's own folder
    (["shared/team/a.md", "notes/b.md", "shared/team/c.md"], ["notes/b.md"], {"team": ["a.md", "c.md"]}),
])
def test_split_sends_each_change_to_the_memory_its_path_names(paths: list[str], own: list[str],
                                                              team: dict[str, list[str]]) -> None:
    calls = tuple(ProposedCall({"command": "delete", "path": p, "reason": "r"}, "s", ("m",)) for p in paths)
    mine, theirs = split(Proposal(calls, "x"), ("team",))
    assert [c.call["path"] for c in mine.calls] == own
    assert {name: [c.call.args["path"] for c in found] for name, found in theirs.items()} == team


def test_split_refuses_a_call_that_spans_two_memories() -> None:
    call = ProposedCall({"command": "rename", "old_path": "notes/a.md", "new_path": "shared/team/a.md",
                         "reason": "r"}, "s", ("m",))
    with pytest.raises(MemrepoError, match="between memories"):
        split(Proposal((call,), "x"), ("team",))


def test_the_llm_strategy_is_told_which_shared_memories_it_may_address() -> None:
    from tests.dream.test_dream_llm import DREAM

    plain = build_request(DREAM, "m1")
    assert "shared_memories" not in plain["messages"][1]["content"] and "shared/<name>" not in \
        plain["messages"][0]["content"]
    told = build_request(DREAM.__class__(**{**DREAM.__dict__, "shared": ("team",)}), "m1")
    assert '"shared_memories": [{"name": "team", "address": "shared/team/"}]' in told["messages"][1]["content"]
    assert "shared/<name>/<path>" in told["messages"][0]["content"]
