"""Which imported conversation, and which turn of it, a harness's commit came from: pure.

Letta Code's memory commits carry no conversation: the author is `<agent id>@letta.com`, the
message is the tool's reason, and there are no trailers. Its transcript (bot/transcript/letta.py)
is appended at the end of each turn, every row of one append stamped with the same `captured_at`,
the moment of the append. A commit made during a turn is therefore older than the rows of that
turn: the turn behind a commit made at T is the first append at or after T (git keeps whole
seconds, so T is the commit's second, and an append within that same second before the commit
cannot be told from one after it), in whichever conversation of the agent it is, if it came
soon enough (MAX_TURN) to be that turn. Two conversations appending at that same first moment
cannot be told apart, and then nothing is claimed. What cannot be known is said, never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.dates import parse_when
from bot.transcript.model import Message

MAX_TURN = timedelta(minutes=30)  # an append later than this is another turn's, not the commit's


@dataclass(frozen=True)
class Linked:
    """The conversation and the turn's messages (first..last, as a Transcript-Range says them)."""

    conversation_id: str
    first: str
    last: str

    @property
    def transcript_range(self) -> str:
        return f"{self.first}..{self.last}"


@dataclass(frozen=True)
class Unknown:
    """Why the conversation behind the commit cannot be known, in words for the pull request."""

    why: str


def link(made_at: datetime, conversations: Mapping[str, Sequence[Message]], agent_id: str) -> Linked | Unknown:
    """The turn of `agent_id`'s imported `conversations` (each oldest first) that a commit made at
    `made_at` came from, or why it cannot be known."""
    if not any(conversations.values()):
        return Unknown(f"no transcript of agent {agent_id} has been imported (`memrepo follow --transcripts`)")
    turns: list[tuple[datetime, str, list[Message]]] = []
    for conversation, rows in sorted(conversations.items()):
        batch: list[Message] = []
        for row in rows:
            at = parse_when(row.captured_at)
            if made_at <= at <= made_at + MAX_TURN:
                if batch and row.captured_at != batch[0].captured_at:
                    break
                batch.append(row)
        if batch:
            turns.append((parse_when(batch[0].captured_at), conversation, batch))
    if not turns:
        return Unknown(f"no imported turn of agent {agent_id} ended within {int(MAX_TURN.total_seconds() // 60)} "
                       f"minutes after the commit (made {made_at.isoformat()}); its transcript may not be "
                       "imported yet")
    turns.sort(key=lambda turn: turn[0])
    first = turns[0]
    if len(turns) > 1 and turns[1][0] == first[0]:
        names = ", ".join(turn[1] for turn in turns if turn[0] == first[0])
        return Unknown(f"conversations {names} of agent {agent_id} ended a turn at the same moment after the "
                       "commit, so which one made it cannot be told")
    return Linked(first[1], first[2][0].message_id, first[2][-1].message_id)
