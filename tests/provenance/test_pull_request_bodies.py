"""Pull request bodies a reviewer reads in ten seconds: an agent edit's quotes what the user
said in the turn, says a deletion of core memory plainly, counts without "(s)", shows times to
the second and ends with a provenance block memrepo reads back; a dream's body likewise; the
integrator's comment on a resolution says what, how and what a person can do. Tables over the
pure renderers, then one protected change end to end through localhub."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.agent import AgentSession, render
from bot.agent.routing import Route
from bot.config import Policy
from bot.contracts import LABEL_AGENT_EDIT
from bot.dream.render import pr_body
from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.forge.retry import RetryPolicy
from bot.integrator.act import resolved_comment
from bot.integrator.state import PullState
from bot.pullrequest.provenance import (
    EDIT_STRATEGY,
    EDIT_TRIGGER,
    Change,
    Provenance,
    TranscriptRange,
    parse_provenance,
)
from bot.texts import to_the_second
from bot.transcript.model import Message
from localhub.server import LocalhubServer
from tests.conftest import LocalhubMemory, arm_fault, disarm_faults, memory_on_localhub

SHA = "0123456789abcdef0123456789abcdef01234567"
HUMAN = "system/human.md"
PERSONA = "system/persona.md"
MICROS = re.compile(r"\d{2}:\d{2}:\d{2}\.\d+")
MAIL = "external:mailto:pat@example.net"


def row(n: int, text: str, kind: str = "user", source: str = "user", at: str = "2026-03-14T09:30:12.654321Z"
        ) -> Message:
    return Message(f"m_{n}", "a1", "c1", kind, source, at, text)


def edit(*, window: tuple[Message, ...] = (), paths: tuple[str, ...] = (PERSONA,), deleted: tuple[str, ...] = (),
         lines: int = 1, sources: tuple[str, ...] = (), empties_core: bool = False, conversation: str = "c1",
         reason: str = "Write in British English") -> render.EditContext:
    route = Route(False, (LABEL_AGENT_EDIT,), changed_lines=lines, protected=tuple(p for p in paths
                                                                                   if p.startswith("system/")),
                  sources=sources, empties_core=empties_core)
    return render.EditContext("a1", conversation, 2, "str_replace", reason, paths, SHA, "memrepo/edit/a1/0a1b2c3d",
                              route, window, deleted)


def above_block(body: str) -> str:
    return body.split("<!-- memrepo:provenance")[0]


# ------------------------------------------------------------------------------------ an agent's edit
TURN = (row(1, "Please write in British English from now on.\n\nAnd <b>keep</b> it short."),
        row(2, "str_replace system/persona.md", "tool_call", "agent", "2026-03-14T09:30:13.000001Z"))


@pytest.mark.parametrize("ctx, said, absent", [
    (edit(window=TURN),
     ["`m_1`, 2026-03-14 09:30:12 UTC:\n\n> Please write in British English from now on.\n>\n"
      "> And &lt;b&gt;keep&lt;/b&gt; it short.\n"], ["<b>"]),
    (edit(window=TURN[1:]), ["The user typed nothing in this turn"], ["> "]),
    (edit(), ["The turn recorded no transcript messages"], ["> "]),
], ids=["quoted", "no-user-message", "no-transcript"])
def test_an_edit_body_quotes_what_the_user_said_in_the_turn(ctx: render.EditContext, said: list[str],
                                                            absent: list[str]) -> None:
    body = render.body(ctx)
    head = above_block(body)
    section = head.split("## What the user said\n", 1)[1].split("\n## ", 1)[0]
    for text in said:
        assert text in section
    for text in absent:
        assert text not in section
    assert "not yet in main" not in body and "Merging this pull request puts the edit in `main`" in body


@pytest.mark.parametrize("ctx, transcript, rests_on", [
    (edit(window=TURN), TranscriptRange("m_1", "m_2", TURN[0].captured_at, TURN[1].captured_at, 2), ("m_1",)),
    (edit(window=TURN[1:]), TranscriptRange("m_2", "m_2", TURN[1].captured_at, TURN[1].captured_at, 1), ("m_2",)),
    (edit(), None, ()),
])
def test_an_edit_body_ends_with_a_provenance_block_naming_the_turn(ctx: render.EditContext,
                                                                   transcript: TranscriptRange | None,
                                                                   rests_on: tuple[str, ...]) -> None:
    body = render.body(ctx)
    assert body.endswith("-->\n")
    assert parse_provenance(body) == Provenance(
        dream_id=None, agent_id="a1", conversation_id="c1", base_commit=SHA, trigger=EDIT_TRIGGER,
        strategy=EDIT_STRATEGY, model=None, transcript=transcript,
        changes=(Change(PERSONA, "Write in British English", rests_on),))


def test_an_edit_made_outside_a_conversation_says_so_and_its_block_has_no_conversation() -> None:
    body = render.body(edit(conversation=""))
    assert "| conversation | none (made outside a conversation) |" in body
    parsed = parse_provenance(body)
    assert parsed is not None and parsed.conversation_id is None and parsed.transcript is None


@pytest.mark.parametrize("ctx, title, callout", [
    (edit(paths=(HUMAN, PERSONA), deleted=(HUMAN, PERSONA), lines=11, empties_core=True, reason="Forget it all"),
     "memory edit by a1 (deletes all core memory): Forget it all",
     "**This edit deletes core memory: `system/human.md` and `system/persona.md`.** Core memory (`system/`) is "
     "compiled into the agent's system prompt, and this leaves none of it: once merged, the agent starts every "
     "turn with no persona and nothing about the user."),
    (edit(paths=(HUMAN,), deleted=(HUMAN,), lines=6, reason="Forget the user"),
     "memory edit by a1 (deletes core memory): Forget the user",
     "**This edit deletes core memory: `system/human.md`.** Core memory (`system/`) is compiled into the agent's "
     "system prompt; once merged, the agent no longer sees what it holds."),
    (edit(paths=(HUMAN,), deleted=(HUMAN,), lines=6, sources=(MAIL,), reason="Forget the user"),
     "memory edit by a1 (deletes core memory; untrusted, needs approval): Forget the user",
     "**This edit deletes core memory: `system/human.md`.**"),
    (edit(paths=("reference/old.md",), deleted=("reference/old.md",), reason="Drop a note"),
     "memory edit by a1: Drop a note", None),
])
def test_a_deletion_of_core_memory_is_said_plainly_in_title_and_body(ctx: render.EditContext, title: str,
                                                                     callout: str | None) -> None:
    assert render.title(ctx) == title
    body = render.body(ctx)
    intro = body.split("## What the user said")[0]
    if callout is None:
        assert "deletes core memory" not in body
    else:
        assert callout in intro  # before anything else a reviewer reads
    for path in ctx.deleted:
        assert f"- `{path}` (deleted)" in body


@pytest.mark.parametrize("lines, paths, expected", [
    (1, (PERSONA,), "1 line changed in 1 file:"),
    (11, (HUMAN, PERSONA), "11 lines changed in 2 files:"),
])
def test_an_edit_body_counts_without_parentheses(lines: int, paths: tuple[str, ...], expected: str) -> None:
    body = render.body(edit(lines=lines, paths=paths, window=TURN))
    assert expected in body
    assert "(s)" not in body


def test_an_edit_body_shows_times_to_the_second_and_keeps_them_exact_in_the_block() -> None:
    body = render.body(edit(window=TURN))
    assert MICROS.findall(above_block(body)) == []
    assert "`m_1` (2026-03-14 09:30:12 UTC) to `m_2` (2026-03-14 09:30:13 UTC)" in body
    parsed = parse_provenance(body)
    assert parsed is not None and parsed.transcript is not None
    assert parsed.transcript.first_at == "2026-03-14T09:30:12.654321Z"


def test_an_edit_commit_names_the_turns_messages() -> None:
    text = render.commit_message(edit(window=TURN))
    assert "\nTranscript-Range: m_1..m_2\n" in text
    assert "Transcript-Range" not in render.commit_message(edit())


@pytest.mark.parametrize("stamp, shown", [
    ("2026-03-14T09:30:12.654321Z", "2026-03-14 09:30:12 UTC"),
    ("2026-03-14T11:30:12+02:00", "2026-03-14 09:30:12 UTC"),
    ("2026-03-14T09:30:12", "2026-03-14 09:30:12 UTC"),
    ("yesterday", "yesterday"),
    (None, ""),
])
def test_times_to_the_second(stamp: str | None, shown: str) -> None:
    assert to_the_second(stamp) == shown


# ------------------------------------------------------------------------------------ a dream
def test_a_dream_body_shows_times_to_the_second_and_counts_without_parentheses() -> None:
    window = [row(1, "I live in Berlin."), row(2, "Noted.", "assistant", "agent", "2026-03-14T09:31:00.5Z")]
    p = Provenance(dream_id="20260314T093012Z-0a1b2c3d", agent_id="a1", conversation_id="c1", base_commit=SHA,
                   trigger="manual", strategy="verbatim", model=None,
                   transcript=TranscriptRange("m_1", "m_2", window[0].captured_at, window[1].captured_at, 2),
                   changes=(Change("conversations/c1/2026-03.md", "Recorded.", ("m_1",)),))
    body = pr_body(p, "Recorded one statement.", window, ".memrepo/cursors/a1/c1.json")
    head = above_block(body)
    assert MICROS.findall(head) == [] and "(s)" not in head
    assert "Rests on 1 message:\n\n- `m_1` at 2026-03-14 09:30:12 UTC (user, source user)" in head
    assert "| transcript | 2 messages, `m_1` (2026-03-14 09:30:12 UTC) to `m_2` (2026-03-14 09:31:00 UTC) |" in head
    assert parse_provenance(body) == p


# ------------------------------------------------------------------------------------ the integrator
def pull_state(**kw: Any) -> PullState:
    base = dict(number=7, state="open", merged=False, draft=False, head_sha="f" * 40, head_ref="memrepo/dream/x",
                base_sha="e" * 40, base_ref="main", mergeable=True, mergeable_state=None, merges_cleanly=True,
                labels=(), author="memrepo[bot]", changed_paths=("reference/facts.md",), untrusted_sources=(),
                merge_commit_sha=None, validation=None, status=None, reviews=(), attempts=0, last_merge=None,
                resolution_tried=False, head_published=False, history=(), claim_shown=True)
    base.update(kw)
    return PullState(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("state, merge, expected, absent", [
    (pull_state(), "explicit", ["it is merged next, under the repository's merge mode (`explicit`).",
                                "It reaches `main` without waiting for a review"], ["approve it"]),
    (pull_state(), "review", ["approves this new head", "If it is right, approve it"], ["revert the merge"]),
    (pull_state(untrusted_sources=(MAIL,)), "auto", ["approves this new head"], ["revert the merge"]),
    (pull_state(changed_paths=(PERSONA,)), "explicit", ["approves this new head"], ["revert the merge"]),
], ids=["explicit", "review", "untrusted", "protected"])
def test_a_resolution_comment_says_what_how_and_what_a_person_can_do(state: PullState, merge: str,
                                                                    expected: list[str], absent: list[str]) -> None:
    policy = Policy(merge=merge, protected=(PERSONA,))
    text = resolved_comment(state, policy, "e" * 40, "a" * 40, ["reference/facts.md"],
                            {"reference/facts.md": ("'description' changed on both sides",)}, "llm")
    assert text.startswith("**memrepo resolved the conflicts between this branch and `main`** and pushed the "
                           "resolution as aaaaaaaaaaaa.")
    assert "both sides changed 1 file:\n\n- `reference/facts.md`" in text
    assert "- `reference/facts.md`: 'description' changed on both sides" in text
    assert "(with the llm resolver for text both sides changed)" in text
    assert '"Merge eeeeeeeeeeee into memrepo/dream/x"' in text
    for part in ("**What conflicted.**", "**How.**", "**What you can do.**", *expected):
        assert part in text
    for part in absent:
        assert part not in text


# ------------------------------------------------------------------------------------ end to end
FAST = RetryPolicy(max_total_seconds=3.0, max_attempts=3, backoff_base=0.05, backoff_cap=0.2)


class World(LocalhubMemory):
    def client(self) -> ForgeClient:
        return ForgeClient("alice/memory", TokenCredentials(self.token), base_url=self.server.api_url, policy=FAST,
                           min_write_interval=0.0, timeout=10)


@pytest.fixture
def world(localhub: LocalhubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    world = memory_on_localhub(localhub, tmp_path, monkeypatch, World)
    yield world
    world.store.close()


def test_a_protected_change_quotes_the_user_and_ends_with_a_provenance_block(world: World) -> None:
    said_text = "Please write in British English from now on."
    with AgentSession(world.memory.root, "c1", store=world.store, forge_retry=FAST, env={},
                      background_dreams=False) as s:
        said = s.record("user", said_text)
        s.record("tool_call", "insert into system/persona.md", "agent")
        result = s.handle_tool_call({"command": "insert", "path": PERSONA, "insert_line": -1,
                                     "insert_text": "I write in British English.",
                                     "reason": "Write in British English, as the user asked"})
    assert result.ok and result.route == "pull-request", result.message
    pr = world.client().get_pull_request(result.pull_request)
    assert pr.title == "memory edit by a1: Write in British English, as the user asked"
    assert f"`{said.message_id}`, {to_the_second(said.captured_at)}:\n\n> {said_text}\n" in pr.body
    assert "(s)" not in pr.body and MICROS.findall(above_block(pr.body)) == []
    assert pr.body.rstrip().endswith("-->")
    provenance = parse_provenance(pr.body)
    assert provenance is not None and provenance.dream_id is None and provenance.trigger == EDIT_TRIGGER
    assert (provenance.agent_id, provenance.conversation_id, provenance.base_commit) == (
        "a1", "c1", world.memory.head_sha())
    assert provenance.transcript is not None and provenance.transcript.count == 2
    assert provenance.transcript.first_message_id == said.message_id
    assert provenance.changes == (Change(PERSONA, "Write in British English, as the user asked",
                                         (said.message_id,)),)


def test_a_pull_request_that_deletes_both_core_files_says_so(world: World) -> None:
    patch = "*** Begin Patch\n*** Delete File: system/human.md\n*** Delete File: system/persona.md\n*** End Patch\n"
    with AgentSession(world.memory.root, "c1", store=world.store, forge_retry=FAST, env={},
                      background_dreams=False) as s:
        s.record("user", "Forget everything, start from nothing.")
        result = s.handle_tool_call({"command": "apply_patch", "patch": patch, "reason": "Start from nothing"})
    assert result.ok and result.route == "pull-request", result.message
    pr = world.client().get_pull_request(result.pull_request)
    assert pr.title == "memory edit by a1 (deletes all core memory): Start from nothing"
    assert pr.body.split("## What the user said")[0].count(
        "**This edit deletes core memory: `system/human.md` and `system/persona.md`.**") == 1
    assert "no persona and nothing about the user" in pr.body
    assert "- `system/human.md` (deleted)\n- `system/persona.md` (deleted)" in pr.body
    assert re.search(r"\d+ lines changed in 2 files:", pr.body)


def test_a_pull_request_withdrawn_for_want_of_its_labels_says_why_on_it(world: World) -> None:
    import requests

    arm_fault(world.server, method="POST", path="/repos/*/issues/*/labels", status=503, times=100)
    with AgentSession(world.memory.root, "c1", store=world.store, forge_retry=FAST, env={},
                      background_dreams=False) as s:
        s.record("user", "Please write in British English from now on.")
        result = s.handle_tool_call({"command": "insert", "path": PERSONA, "insert_line": -1,
                                     "insert_text": "I write in British English.", "reason": "British English"})
    disarm_faults(world.server)
    assert not result.ok and result.route == "refused" and "could not be labelled" in result.message
    pull = world.client().get_pull_request(1)
    assert pull.state == "closed" and not pull.merged
    said = requests.get(f"{world.server.api_url}/repos/alice/memory/issues/1/comments", timeout=10,
                        headers={"Authorization": f"token {world.token}"}).json()
    [comment] = [c["body"] for c in said]
    assert comment.startswith("**memrepo closed this pull request: its labels could not be set**")
    assert "The edit was not made" in comment
