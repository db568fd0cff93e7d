"""What a turn is, and which external content it saw (pure).

A turn is the part of the conversation from one message the user typed (a transcript row of
kind `user` whose source is `user`) up to the next one; `AgentSession.begin_turn()` starts a
new one explicitly, for harnesses that do not record the user's messages. Every row recorded
during the turn is in its context; a row whose source is `external:<uri>` (a fetched page,
an e-mail, a document) taints the turn, and every memory write made while the turn lasts is
routed to a pull request labelled `memrepo:untrusted` that names those sources.

The taint ends with the turn, not earlier: a write in the same turn as the content is the
one an instruction hidden in that content can cause without the user noticing. Harnesses
that carry external content over into later turns should record it again there (or call
`begin_turn()` only when the context no longer holds it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.agent.routing import EXTERNAL_PREFIX


@dataclass(frozen=True)
class Turn:
    """The current turn: its number (0 before the first) and the external sources it saw."""

    number: int = 0
    external: tuple[str, ...] = ()

    @property
    def untrusted(self) -> bool:
        return bool(self.external)


def starts_turn(kind: str, source: str) -> bool:
    """A message the user typed begins a new turn."""
    return kind == "user" and source == "user"


def begin(turn: Turn) -> Turn:
    """A new, clean turn."""
    return Turn(turn.number + 1)


def after_row(turn: Turn, kind: str, source: str) -> Turn:
    """The turn after one transcript row of `kind` from `source` was recorded."""
    if starts_turn(kind, source):
        turn = begin(turn)
    if source.startswith(EXTERNAL_PREFIX) and source not in turn.external:
        turn = replace(turn, external=(*turn.external, source))
    return turn
