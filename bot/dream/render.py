"""Texts of a dream, as pure functions: the pull request's title and body (from
templates/pr/dream.md.j2, provenance block last) and the commit message with its trailers
(templates/commit/dream.txt.j2)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot import messages
from bot.dream.provenance import Provenance, render_provenance
from bot.templating import render
from bot.transcript.model import Message

QUOTE_CHARS = 160
TRAILERS = ("Dream-ID", "Agent-ID", "Conversation-ID", "Transcript-Range", "Base-Commit")


@dataclass(frozen=True)
class QuotedMessage:
    message_id: str
    captured_at: str
    kind: str
    source: str
    quote: str


def safe_text(text: str) -> str:
    """Text from a transcript or a model, made inert in markdown: no raw HTML (a stray
    `<!--` would hide the rest of the body, or fake a provenance block)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def short_quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """One line, at most `limit` characters of the message (an ellipsis marks a cut)."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return safe_text(flat.replace('"', "'"))


def title(provenance: Provenance) -> str:
    return messages.DREAM_PR_TITLE.format(
        agent=provenance.agent_id, conversation=provenance.conversation_id, changes=len(provenance.changes),
        count=provenance.transcript.count)


def _changes(provenance: Provenance, window: Sequence[Message]) -> list[dict[str, object]]:
    by_id = {m.message_id: m for m in window}
    out = []
    for change in provenance.changes:
        quoted = [QuotedMessage(m.message_id, m.captured_at, m.kind, m.source, short_quote(m.text))
                  for m in (by_id[i] for i in change.message_ids if i in by_id)]
        out.append({"path": change.path, "summary": safe_text(change.summary), "messages": quoted})
    return out


def pr_body(provenance: Provenance, summary: str, window: Sequence[Message], cursor_path: str) -> str:
    """The pull request body: summary, changes with the messages they rest on, where the
    dream comes from, and the provenance block at the very end."""
    text = render("pr/dream.md.j2", summary=safe_text(summary), changes=_changes(provenance, window),
                  agent_id=provenance.agent_id, conversation_id=provenance.conversation_id,
                  trigger=provenance.trigger, strategy=provenance.strategy, model=provenance.model,
                  transcript=provenance.transcript, base_commit=provenance.base_commit,
                  dream_id=provenance.dream_id, cursor_path=cursor_path,
                  provenance=render_provenance(provenance).rstrip("\n"))
    return text.rstrip("\n") + "\n"


def commit_message(provenance: Provenance, summary: str) -> str:
    """Subject, summary, one line per change, then the trailers as the last paragraph."""
    changes = [{"path": c.path, "summary": " ".join(c.summary.split())} for c in provenance.changes]
    text = render("commit/dream.txt.j2", title=title(provenance), summary=summary.strip(), changes=changes,
                  dream_id=provenance.dream_id, agent_id=provenance.agent_id,
                  conversation_id=provenance.conversation_id, transcript=provenance.transcript,
                  base_commit=provenance.base_commit)
    return text.rstrip("\n") + "\n"


def trailers(message: str) -> dict[str, str]:
    """The dream trailers of a commit message (its last paragraph)."""
    last = message.rstrip("\n").rsplit("\n\n", 1)[-1]
    out = {}
    for line in last.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key in TRAILERS:
            out[key] = value.strip()
    return out
