"""Texts of an agent edit that goes to a pull request, as pure functions: the title, the body
(templates/pr/agent-edit.md.j2) and the commit message with its trailers
(templates/agent/edit-commit.txt.j2: `Agent-ID`, `Conversation-ID`, `Transcript-Range` when
the turn recorded messages, `Base-Commit`, and one `Source` per external source for untrusted
edits).

The body is written for a reviewer who has ten seconds: what the user said in the turn, word
for word, comes first; a deletion of core memory (`system/`) is said in bold before anything
else; and the body ends with the same provenance block as a dream's (`dream_id: null`,
trigger `agent-edit`), so tools read both alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from bot.agent.routing import Route
from bot.agent.turns import starts_turn
from bot.memfs import V1, is_core
from bot.pullrequest.provenance import (
    EDIT_STRATEGY,
    EDIT_TRIGGER,
    Change,
    Provenance,
    ProvenanceError,
    TranscriptRange,
    parse_provenance,
    render_provenance,
)
from bot.pullrequest.render import plain_text, safe_text
from bot.templating import render
from bot.texts import Text, to_the_second
from bot.trailers import commit_text
from bot.transcript.model import Message

AGENT_EDIT_TITLE_NOTED = "memory edit by {agent} ({notes}): {reason}"
AGENT_EDIT_CHANGED = Text("{lines:|line|lines} changed in {files:|file|files}")
AGENT_EDIT_TRANSCRIPT = Text("{count:|message|messages}, `{first}` ({first_at}) to `{last}` ({last_at})")

TITLE_REASON_CHARS = 72
SAID_CHARS = 2000  # of one message the user typed, quoted in the body


@dataclass(frozen=True)
class EditContext:
    """Everything the texts of one edit pull request say. `window`: the turn's transcript
    messages, oldest first (empty when the turn recorded none); `deleted`: the paths the edit
    removes (a file moved elsewhere counts as removed from where it was)."""

    agent_id: str
    conversation_id: str
    turn: int
    command: str
    reason: str
    paths: tuple[str, ...]
    base_commit: str
    branch: str
    route: Route
    window: tuple[Message, ...] = ()
    deleted: tuple[str, ...] = ()
    layout: str = V1  # the memory's, which says what core memory is
    memory_repository: str | None = None  # the agent's own memory, when this edit is to a shared one

    @property
    def said(self) -> tuple[Message, ...]:
        """What the user typed in the turn."""
        return tuple(m for m in self.window if starts_turn(m.kind, m.source))

    @property
    def core_deleted(self) -> tuple[str, ...]:
        return tuple(p for p in self.deleted if is_core(p, self.layout))


def _inline(text: str) -> str:
    """Safe inside backticks on one line."""
    return safe_text(" ".join(text.split())).replace("`", "'")


def _quote(text: str) -> list[str]:
    """A message as the lines of a markdown block quote, inert, cut at SAID_CHARS."""
    if len(text) > SAID_CHARS:
        text = text[: SAID_CHARS - 1].rstrip() + "…"
    return [safe_text(line).rstrip() for line in text.strip().splitlines()] or [""]


def _and(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def title(ctx: EditContext) -> str:
    subject = " ".join(ctx.reason.split()) or ctx.command
    if len(subject) > TITLE_REASON_CHARS:
        subject = subject[: TITLE_REASON_CHARS - 1].rstrip() + "…"
    notes = []
    if ctx.route.empties_core:
        notes.append("deletes all core memory")
    elif ctx.core_deleted:
        notes.append("deletes core memory")
    if ctx.route.untrusted:
        notes.append("untrusted, needs approval")
    if not notes:
        return f"memory edit by {ctx.agent_id}: {subject}"
    return AGENT_EDIT_TITLE_NOTED.format(agent=ctx.agent_id, notes="; ".join(notes), reason=subject)


def provenance(ctx: EditContext) -> Provenance:
    """The edit's provenance block: a dream's, with no dream (`dream_id` None, trigger
    `agent-edit`); each changed path rests on what the user said in the turn (on the whole turn
    when they said nothing in it, so nothing is hidden)."""
    window = ctx.window
    transcript = TranscriptRange.of(window) if window else None
    rests_on = tuple(m.message_id for m in (ctx.said or window))
    summary = " ".join(ctx.reason.split()) or ctx.command
    return Provenance(dream_id=None, agent_id=ctx.agent_id, conversation_id=ctx.conversation_id or None,
                      base_commit=ctx.base_commit, trigger=EDIT_TRIGGER, strategy=EDIT_STRATEGY, model=None,
                      transcript=transcript, changes=tuple(Change(p, summary, rests_on) for p in ctx.paths),
                      memory_repository=ctx.memory_repository)


def _turn_parts(window: Sequence[Message], conversation_id: str, turn: int) -> dict[str, object]:
    """What the body says of the turn: what the user said, and the table's conversation, turn
    and transcript rows (the parts `with_turn` writes again once the turn is known)."""
    said = [{"message_id": m.message_id, "at": to_the_second(m.captured_at), "lines": _quote(m.text)}
            for m in window if starts_turn(m.kind, m.source)]
    transcript = None if not window else AGENT_EDIT_TRANSCRIPT.format(
        count=len(window), first=window[0].message_id, first_at=to_the_second(window[0].captured_at),
        last=window[-1].message_id, last_at=to_the_second(window[-1].captured_at))
    return {"said": said, "turn_recorded": bool(window), "conversation_id": conversation_id, "turn": turn,
            "transcript": transcript}


def body(ctx: EditContext) -> str:
    core = [f"`{_inline(p)}`" for p in ctx.core_deleted]
    text = render("pr/agent-edit.md.j2", agent_id=ctx.agent_id, reason=safe_text(ctx.reason.strip()),
                  core=_and(core) if core else "", core_count=len(core), empties_core=ctx.route.empties_core,
                  sources=[_inline(s) for s in ctx.route.sources], reasons=[safe_text(r) for r in ctx.route.reasons],
                  changed=AGENT_EDIT_CHANGED.format(lines=ctx.route.changed_lines, files=len(ctx.paths)),
                  paths=[{"path": _inline(p), "deleted": p in ctx.deleted} for p in ctx.paths],
                  command=ctx.command, base_commit=ctx.base_commit, branch=ctx.branch,
                  memory_repository=_inline(ctx.memory_repository) if ctx.memory_repository else "",
                  provenance=render_provenance(provenance(ctx)).rstrip("\n"),
                  **_turn_parts(ctx.window, ctx.conversation_id, ctx.turn))
    return text.rstrip("\n") + "\n"


def with_turn(text: str, unknown_start: str, linked: str, conversation_id: str,
              window: Sequence[Message]) -> str | None:
    """The body `text` of a harness's commits' pull request, opened before the turn behind them
    was imported, now naming that turn: its one line that begins with `unknown_start` (the
    sentence that the conversation cannot be known) becomes `linked`, what the user said is
    quoted, the table names the conversation and transcript, and the provenance block names
    them, every change resting on what the user said. Nothing else changes. None when the body
    is not such a body as memrepo wrote it (a person rewrote it, or it names a conversation
    already), so it is left as it is."""
    try:
        block = parse_provenance(text)
    except ProvenanceError:
        return None
    if (block is None or block.trigger != EDIT_TRIGGER or block.conversation_id is not None
            or block.transcript is not None or not window or not conversation_id):
        return None
    lines = [line for line in text.splitlines() if line.startswith(safe_text(unknown_start))]
    if len(lines) != 1:
        return None
    unknown = plain_text(lines[0])
    old_block = render_provenance(block)
    if not text.endswith(old_block):
        return None
    head = text[:-len(old_block)]
    before = {"unknown": lines[0], "said": render("pr/agent-edit-said.md.j2", **_turn_parts((), "", 0)),
              "rows": render("pr/agent-edit-turn.md.j2", **_turn_parts((), "", 0))}
    if any(head.count(part) != 1 for part in before.values()):
        return None
    parts = _turn_parts(window, conversation_id, 0)
    rests_on = tuple(m.message_id for m in ([m for m in window if starts_turn(m.kind, m.source)] or window))
    named = replace(block, conversation_id=conversation_id, transcript=TranscriptRange.of(window),
        changes=tuple(replace(c, summary=c.summary.replace(" ".join(unknown.split()), " ".join(linked.split())),
                              message_ids=rests_on) for c in block.changes))
    after = {"unknown": safe_text(linked.strip()), "said": render("pr/agent-edit-said.md.j2", **parts),
             "rows": render("pr/agent-edit-turn.md.j2", **parts)}
    for key, part in before.items():
        head = head.replace(part, after[key])
    return head + render_provenance(named)


def commit_message(ctx: EditContext) -> str:
    reason = commit_text(ctx.reason.strip() or ctx.command)  # the Source trailers stay readable to git
    window = ctx.window
    transcript_range = f"{window[0].message_id}..{window[-1].message_id}" if window else None
    text = render("agent/edit-commit.txt.j2", reason=reason, agent_id=ctx.agent_id,
                  conversation_id=ctx.conversation_id, base_commit=ctx.base_commit,
                  transcript_range=transcript_range, sources=[" ".join(s.split()) for s in ctx.route.sources])
    return text.rstrip("\n") + "\n"

