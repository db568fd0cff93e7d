"""Texts of an agent edit that goes to a pull request, as pure functions: the title, the body
(templates/pr/agent-edit.md.j2) and the commit message with its trailers
(templates/agent/edit-commit.txt.j2: `Agent-ID`, `Conversation-ID`, `Base-Commit`, and one
`Source` per external source for untrusted edits)."""

from __future__ import annotations

from dataclasses import dataclass

from bot import messages
from bot.agent.routing import Route
from bot.dream.render import safe_text
from bot.templating import render
from bot.trailers import commit_text

TITLE_REASON_CHARS = 72


@dataclass(frozen=True)
class EditContext:
    """Everything the texts of one edit pull request say."""

    agent_id: str
    conversation_id: str
    turn: int
    command: str
    reason: str
    paths: tuple[str, ...]
    base_commit: str
    branch: str
    route: Route


def _inline(text: str) -> str:
    """Safe inside backticks on one line."""
    return safe_text(" ".join(text.split())).replace("`", "'")


def title(ctx: EditContext) -> str:
    subject = " ".join(ctx.reason.split()) or ctx.command
    if len(subject) > TITLE_REASON_CHARS:
        subject = subject[: TITLE_REASON_CHARS - 1].rstrip() + "…"
    template = messages.AGENT_EDIT_TITLE_UNTRUSTED if ctx.route.untrusted else messages.AGENT_EDIT_TITLE
    return template.format(agent=ctx.agent_id, reason=subject)


def body(ctx: EditContext) -> str:
    text = render("pr/agent-edit.md.j2", agent_id=ctx.agent_id, reason=safe_text(ctx.reason.strip()),
                  sources=[_inline(s) for s in ctx.route.sources], reasons=[safe_text(r) for r in ctx.route.reasons],
                  changed_lines=ctx.route.changed_lines, paths=[_inline(p) for p in ctx.paths],
                  conversation_id=ctx.conversation_id, turn=ctx.turn, command=ctx.command,
                  base_commit=ctx.base_commit, branch=ctx.branch)
    return text.rstrip("\n") + "\n"


def commit_message(ctx: EditContext) -> str:
    reason = commit_text(ctx.reason.strip() or ctx.command)  # the Source trailers stay readable to git
    text = render("agent/edit-commit.txt.j2", reason=reason, agent_id=ctx.agent_id,
                  conversation_id=ctx.conversation_id, base_commit=ctx.base_commit,
                  sources=[" ".join(s.split()) for s in ctx.route.sources])
    return text.rstrip("\n") + "\n"
