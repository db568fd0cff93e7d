"""Which imported turn a harness's commit came from (bot/agent/harness_turn.py): a table over
plain messages. Letta stamps every row of a turn with the moment the turn's rows were appended,
after the commits the turn made."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.agent.harness_turn import Linked, Unknown, link
from bot.transcript.model import Message

AGENT = "agent-1"
COMMIT = datetime(2026, 3, 14, 9, 0, 0, tzinfo=UTC)  # git's whole second


def turn(conversation: str, at: str, *ids: str) -> list[Message]:
    kinds = ["user", *["assistant"] * (len(ids) - 1)]
    return [Message(i, AGENT, conversation, kind, "user" if kind == "user" else "agent", at, f"text {i}")
            for i, kind in zip(ids, kinds, strict=True)]


@pytest.mark.parametrize(("conversations", "expected"), [
    # the turn appended right after the commit, in its conversation
    ({"c1": turn("c1", "2026-03-14T09:00:04.120Z", "m1", "m2")}, Linked("c1", "m1", "m2")),
    # within the commit's own second: git floors the commit's time
    ({"c1": turn("c1", "2026-03-14T09:00:00.500Z", "m1", "m2")}, Linked("c1", "m1", "m2")),
    # an earlier turn of the conversation is not the commit's; the next one is
    ({"c1": turn("c1", "2026-03-14T08:59:58Z", "m0", "m1") + turn("c1", "2026-03-14T09:00:09Z", "m2", "m3", "m4")},
     Linked("c1", "m2", "m4")),
    # of two conversations, the one whose turn ended first after the commit
    ({"c1": turn("c1", "2026-03-14T09:05:00Z", "a1", "a2"), "c2": turn("c2", "2026-03-14T09:00:03Z", "b1", "b2")},
     Linked("c2", "b1", "b2")),
    # only the first turn after the commit, not the ones after it
    ({"c1": turn("c1", "2026-03-14T09:00:03Z", "m1", "m2") + turn("c1", "2026-03-14T09:01:00Z", "m3", "m4")},
     Linked("c1", "m1", "m2")),
])
def test_a_commit_is_linked_to_the_first_turn_that_ended_after_it(conversations: dict, expected: Linked) -> None:
    assert link(COMMIT, conversations, AGENT) == expected


@pytest.mark.parametrize(("conversations", "why"), [
    ({}, "no transcript of agent agent-1 has been imported"),
    ({"c1": []}, "no transcript of agent agent-1 has been imported"),
    ({"c1": turn("c1", "2026-03-14T08:59:59.900Z", "m1", "m2")}, "no imported turn of agent agent-1 ended within 30"),
    ({"c1": turn("c1", "2026-03-14T09:31:00Z", "m1", "m2")}, "may not be imported yet"),
    ({"c1": turn("c1", "2026-03-14T09:00:02Z", "a1"), "c2": turn("c2", "2026-03-14T09:00:02Z", "b1")},
     "conversations c1, c2 of agent agent-1 ended a turn at the same moment"),
])
def test_what_cannot_be_known_is_said(conversations: dict, why: str) -> None:
    found = link(COMMIT, conversations, AGENT)
    assert isinstance(found, Unknown) and why in found.why, found
