"""What a turn is, which transcript messages it holds, and what untrusted content the model's
context holds (pure).

A turn is the part of the conversation from one message the user typed (a transcript row of
kind `user` whose source is `user`) up to the next one; `AgentSession.begin_turn()` starts a
new one explicitly, for harnesses that do not record the user's messages. A direct edit's
commit names the turn's messages (`Transcript-Range: <first>..<last>`), so `memrepo why` can
quote what the user said.

Untrusted by default: a row from `external:<uri>` (a fetched page, an e-mail, a document), and
a row from a tool (`tool:<name>`) that the repository's policy does not list under
`trusted_sources`, is content the user did not write and that can carry instructions. It
taints the context, and every memory write made while it is there, `/remember` included, goes
to a pull request labelled `memrepo:untrusted` that names the sources (a tool is named as
`external:tool:<name>`, the one form the `Source` trailer and the integrator know).

The taint lasts while the content is in the model's context, not until the next user message:
a page read in one turn is still there in the next. It drops when the harness says the
context no longer holds it: a `compaction` row, or `AgentSession.context_cleared()`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from bot.contracts import EXTERNAL_PREFIX
from bot.trailers import untrusted_source

UNREADABLE_SOURCE = EXTERNAL_PREFIX + "unreadable-source"  # a row whose source label was refused


@dataclass(frozen=True)
class Turn:
    """The current turn: its number (0 before the first), its first and last transcript
    messages, and the untrusted sources the model's context holds (in `external:` form)."""

    number: int = 0
    external: tuple[str, ...] = ()
    first_message_id: str | None = None
    last_message_id: str | None = None

    @property
    def untrusted(self) -> bool:
        return bool(self.external)

    @property
    def transcript_range(self) -> str | None:
        """`<first>..<last>`, the Transcript-Range trailer of an edit made now, or None."""
        if self.first_message_id is None:
            return None
        return f"{self.first_message_id}..{self.last_message_id or self.first_message_id}"


def starts_turn(kind: str, source: str) -> bool:
    """A message the user typed begins a new turn."""
    return kind == "user" and source == "user"


def begin(turn: Turn, message_id: str | None = None) -> Turn:
    """A new turn (beginning with `message_id`); the context still holds what it held."""
    return Turn(turn.number + 1, turn.external, message_id, message_id)


def taint(turn: Turn, source: str) -> Turn:
    return turn if source in turn.external else replace(turn, external=(*turn.external, source))


def after_row(turn: Turn, kind: str, source: str, message_id: str | None = None,
              trusted: Iterable[str] = ()) -> Turn:
    """The turn after one transcript row of `kind` from `source` was recorded."""
    if starts_turn(kind, source):
        turn = begin(turn, message_id)
    elif message_id is not None:
        turn = replace(turn, first_message_id=turn.first_message_id or message_id, last_message_id=message_id)
    if kind == "compaction":
        turn = cleared(turn)
    marked = untrusted_source(source, trusted)
    return turn if marked is None else taint(turn, marked)


def cleared(turn: Turn) -> Turn:
    """The turn once the model's context no longer holds the untrusted content it saw."""
    return replace(turn, external=())
