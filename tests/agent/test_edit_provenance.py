"""A direct agent edit is the most common write; it carries its provenance like a dream's:
the agent, the conversation and the turn's transcript messages, as git trailers, and
`memrepo why` on a line it wrote quotes what the user said."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from bot.agent import AgentSession
from bot.contracts import AGENT_ID, CONVERSATION_ID, TRANSCRIPT_RANGE
from bot.memfs.create import init_repository
from bot.memfs.store.repo import MemoryRepo
from bot.provenance.why import render_why, why
from bot.trailers import trailer_map
from bot.transcript import TranscriptStore

HUMAN = "system/human.md"


@pytest.fixture
def memory(tmp_path: Path) -> MemoryRepo:
    return init_repository(tmp_path / "memory", "ada", "Ada")


def _message(repo: MemoryRepo, sha: str) -> str:
    return repo.git[sha].peel(pygit2.Commit).message


def test_a_direct_edit_names_its_agent_conversation_and_turn(memory: MemoryRepo, tmp_path: Path) -> None:
    with AgentSession(memory, "c1", home=tmp_path / "home", background_dreams=False) as session:
        session.record("user", "Hello.")
        asked = session.record("user", "I moved to Lisbon last week.")
        answered = session.record("assistant", "I will remember that.")
        result = session.handle_tool_call({"command": "str_replace", "path": HUMAN, "old_str": "Nothing recorded yet.",
                                           "new_str": "Lives in Lisbon.", "reason": "Record where the user lives"})
    assert result.ok and result.route == "direct", result.message
    message = _message(memory, result.commit)
    assert message.splitlines()[0] == "Record where the user lives"
    assert dict(trailer_map(message)) == {AGENT_ID: "ada", CONVERSATION_ID: "c1",
                                          TRANSCRIPT_RANGE: f"{asked.message_id}..{answered.message_id}"}


def test_why_quotes_the_user_for_a_line_an_agent_wrote(memory: MemoryRepo, tmp_path: Path) -> None:
    home = tmp_path / "home"
    with AgentSession(memory, "c1", home=home, background_dreams=False) as session:
        session.record("user", "Please call me Sam from now on.")
        session.record("tool_call", "memory str_replace")
        result = session.handle_tool_call({"command": "str_replace", "path": HUMAN, "old_str": "Nothing recorded yet.",
                                           "new_str": "Wants to be called Sam."})
    assert result.route == "direct", result.message
    line = (memory.root / HUMAN).read_text().splitlines().index("Wants to be called Sam.") + 1
    with TranscriptStore(home, fsync=False) as store:
        report = why(memory.root, HUMAN, line, forge=False, transcripts=store)
    [origin] = report["origins"]
    assert origin["writer"] == "agent" and origin["turn"]["conversation_id"] == "c1"
    assert [m["text"] for m in origin["transcript"]["messages"]] == ["Please call me Sam from now on."]
    text = render_why(report)
    assert "Made in conversation c1 by agent ada" in text
    assert "What the user said" in text and "> Please call me Sam from now on." in text
    assert "no transcript is linked" not in text


def test_an_edit_before_any_message_still_names_the_conversation(memory: MemoryRepo, tmp_path: Path) -> None:
    with AgentSession(memory, "c2", home=tmp_path / "home", background_dreams=False) as session:
        result = session.handle_tool_call({"command": "str_replace", "path": HUMAN, "old_str": "Nothing recorded yet.",
                                           "new_str": "Likes tea."})
    assert dict(trailer_map(_message(memory, result.commit))) == {AGENT_ID: "ada", CONVERSATION_ID: "c2"}
