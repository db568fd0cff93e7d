"""One Codex session's rollout, kept up to date in the transcript store, so that a write names
the turn that made it.

Codex starts memrepo's MCP server with a minimal environment (no session id), and names the
session in each tool call's `_meta` (`sessionId`, and the call's `callId`); its hooks are told
the rollout's path, which the SessionStart hook keeps beside what the session saw
(`.git/memrepo/codex/<session>.json`, bot/codex/state.py). Before each write the server imports
what the rollout gained (bot/transcript/codex_import.py), waiting for the call being served to
be written down, and feeds the new rows into the agent session's turn: the commit then carries
the session as `Conversation-ID` and the turn's item ids as `Transcript-Range`, and a turn that
read untrusted content routes its writes to a pull request as any agent's would.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from bot.claude_code.state import seen_fact
from bot.claude_code.transcript import SessionTranscript
from bot.codex import state

if TYPE_CHECKING:
    from bot.transcript import TranscriptStore

SESSION_META = "sessionId"
CALL_META = "callId"


def session_of(meta: Mapping[str, object]) -> str | None:
    """The Codex session a tool call's `_meta` names, if it names one."""
    session = meta.get(SESSION_META)
    if not isinstance(session, str) or not session.strip():
        turn = meta.get("x-codex-turn-metadata")
        session = turn.get("session_id") if isinstance(turn, Mapping) else None
    return session.strip() if isinstance(session, str) and session.strip() else None


class CodexTranscript(SessionTranscript):
    """Keeps an agent session's turn in step with its Codex session's rollout."""

    harness = "Codex"

    def path(self) -> Path | None:
        told = shared_fact(self.root, self.session)
        return Path(told) if told is not None else None

    def bring_in(self, store: TranscriptStore, agent_id: str, path: Path) -> None:
        from bot.transcript.codex_import import import_codex

        import_codex(store, agent_id, path)


def shared_fact(root: Path, session: str) -> str | None:
    """The rollout a hook of this session was told of."""
    return seen_fact(state.state_file(root, session), "transcript")
