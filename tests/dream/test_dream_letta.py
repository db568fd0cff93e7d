"""A dream over a Letta Code conversation: Letta's own writer makes the transcript, `memrepo
transcript import --from letta` takes it, `memrepo dream` opens a pull request on localhub
whose provenance names Letta's agent, conversation and messages."""

from __future__ import annotations

import pytest

from bot.pullrequest.provenance import parse_provenance
from bot.trailers import trailer_map
from tests.conftest import git, run_cli
from tests.dream.test_dream_run import World, world  # noqa: F401  (the localhub fixture)
from tests.letta_writer import AGENT, CONVERSATION, Turn, assistant, reasoning, tool, user, write

TURNS = [
    Turn([user("I moved to Lyon last week.", "o1", "message-u1"),
          reasoning("They moved; worth keeping.", "message-a1"),
          assistant("Noted: Lyon it is.", "message-a1"),
          tool("toolu_01", "WebFetch", '{"url":"https://example.com/lyon"}', "Lyon: pop. 520,000")]),
    Turn([user("My sister Ines visits in May.", "o2", "message-u2"),
          assistant("I'll remember that.", "message-a2", after_reasoning=False)],
         at="2026-03-14T09:05:00.000Z"),
]


def test_a_dream_over_an_imported_letta_conversation_names_letta_ids(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    root = world.tmp / "letta"
    write(root, TURNS)
    code, out, err = run_cli(capsys, "transcript", "import", "--from", "letta", str(root), "--home", str(world.home))
    assert (code, err) == (0, "") and out.startswith("imported 7 messages from 1 Letta conversation")

    code, out, err = run_cli(capsys, "dream", "--repo", str(world.memory.root), "--home", str(world.home),
                             "--agent", AGENT, "--conversation", CONVERSATION)
    assert (code, err) == (0, "") and "opened pull request #1" in out
    pr = world.client().get_pull_request(1)
    assert pr.head_ref.startswith("memrepo/dream/") and pr.labels == ()
    p = parse_provenance(pr.body)
    assert (p.agent_id, p.conversation_id) == (AGENT, CONVERSATION)
    assert (p.transcript.first_message_id, p.transcript.last_message_id, p.transcript.count) == \
        ("message-u1", "message-a2", 7)
    assert [(c.path, c.message_ids) for c in p.changes] == \
        [(f"conversations/{CONVERSATION}/2026-03.md", ("message-u1", "message-u2"))]
    assert "I moved to Lyon last week." in pr.body

    head = world.branch_commit(pr.head_ref)
    trailers = trailer_map(git(world.memory.root, "log", "-1", "--format=%B", head))
    assert (trailers["Agent-ID"], trailers["Conversation-ID"], trailers["Transcript-Range"]) == \
        (AGENT, CONVERSATION, "message-u1..message-a2")
