"""Texts of a dream, as pure functions: the pull request's title and body (from
templates/pr/dream.md.j2, provenance block last) and the commit message with its trailers
(templates/commit/dream.txt.j2): `Dream-ID`, `Agent-ID`, `Conversation-ID`,
`Transcript-Range`, `Base-Commit`, and one `Source` per external source the transcript range
holds (the integrator reads those and waits for a person's approval).

The trailers are the message's last paragraph, as git reads trailers: the text before them
(the summary may come from a model that read untrusted content) is kept from hiding them from
git's own tools, which stop reading a message at a `---` line or a scissors line."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.pullrequest.provenance import Provenance, render_provenance
from bot.pullrequest.render import safe_text
from bot.templating import render
from bot.texts import Text, plural, to_the_second
from bot.trailers import commit_text, untrusted_source
from bot.transcript.model import Message

DREAM_PR_TITLE = Text("Dream for {agent}/{conversation}: {changes:|change|changes} from {count:|message|messages}")

QUOTE_CHARS = 160


@dataclass(frozen=True)
class QuotedMessage:
    message_id: str
    captured_at: str
    kind: str
    source: str
    quote: str


def short_quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """One line, at most `limit` characters of the message (an ellipsis marks a cut)."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return safe_text(flat.replace('"', "'"))


def title(provenance: Provenance) -> str:
    return DREAM_PR_TITLE.format(
        agent=provenance.agent_id, conversation=provenance.conversation_id, changes=len(provenance.changes),
        count=provenance.transcript.count)


def _changes(provenance: Provenance, window: Sequence[Message]) -> list[dict[str, object]]:
    by_id = {m.message_id: m for m in window}
    out = []
    for change in provenance.changes:
        quoted = [QuotedMessage(m.message_id, to_the_second(m.captured_at), m.kind, m.source, short_quote(m.text))
                  for m in (by_id[i] for i in change.message_ids if i in by_id)]
        out.append({"path": change.path, "summary": safe_text(change.summary), "messages": quoted,
                    "rests_on": plural(len(quoted), "message")})
    return out


def external_sources(window: Iterable[Message], trusted: Iterable[str] = ()) -> tuple[str, ...]:
    """The untrusted sources of the transcript rows a dream reads (`external:` ones, and tool
    results the policy's `trusted_sources` does not list, as `external:tool:<name>`), each
    once, in the order first seen: what an agent's own edit would be held for, a dream is too."""
    listed = tuple(trusted)
    marked = (untrusted_source(m.source, listed) for m in window)
    return tuple(dict.fromkeys(source for source in marked if source))


def _inline(text: str) -> str:
    """Safe inside backticks on one line."""
    return safe_text(" ".join(text.split())).replace("`", "'")


def pr_body(provenance: Provenance, summary: str, window: Sequence[Message], cursor_path: str,
            sources: Sequence[str] = ()) -> str:
    """The pull request body: why a person must approve it when the transcript held external
    content (`sources`), summary, changes with the messages they rest on, where the dream
    comes from, and the provenance block at the very end."""
    t = provenance.transcript
    assert t is not None  # a dream always reads messages
    text = render("pr/dream.md.j2", summary=safe_text(summary), changes=_changes(provenance, window),
                  sources=[_inline(s) for s in sources],
                  agent_id=provenance.agent_id, conversation_id=provenance.conversation_id,
                  trigger=provenance.trigger, strategy=provenance.strategy, model=provenance.model,
                  transcript=t, messages=plural(t.count, "message"), first_at=to_the_second(t.first_at),
                  last_at=to_the_second(t.last_at), base_commit=provenance.base_commit,
                  dream_id=provenance.dream_id, cursor_path=cursor_path,
                  memory_repository=_inline(provenance.memory_repository) if provenance.memory_repository else "",
                  provenance=render_provenance(provenance).rstrip("\n"))
    return text.rstrip("\n") + "\n"


def commit_message(provenance: Provenance, summary: str, sources: Sequence[str] = ()) -> str:
    """Subject, summary, one line per change, then the trailers as the last paragraph (one
    `Source` trailer per external source, as an agent's untrusted edit has them)."""
    changes = [{"path": c.path, "summary": " ".join(c.summary.split())} for c in provenance.changes]
    text = render("commit/dream.txt.j2", title=title(provenance), summary=commit_text(summary.strip()),
                  changes=changes, dream_id=provenance.dream_id, agent_id=provenance.agent_id,
                  conversation_id=provenance.conversation_id, transcript=provenance.transcript,
                  base_commit=provenance.base_commit, sources=[" ".join(s.split()) for s in sources])
    return text.rstrip("\n") + "\n"
