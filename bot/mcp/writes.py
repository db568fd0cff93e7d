"""Where an MCP tool call touches memory: the agent session of the server (bot/agent), one call
at a time.

Every memory tool call goes through `AgentSession.handle_tool_call`, so the rules an agent's
writes follow hold over MCP too: a small edit is one commit pushed to `main`; a large one, one
touching a protected path, or one made in a turn that saw `external:` content becomes a pull
request labelled `memrepo:agent-edit` (and `memrepo:untrusted`), and the result says it is not
in main yet. The session is made for one conversation and used by one thread at a time, so the
server's worker threads take turns here.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from typing import Any

from bot.agent import AgentSession, EditResult
from bot.transcript.model import check_kind, check_source, check_text, default_source

CONVERSATION_PREFIX = "mcp-"
TOOL_USE_META = "claudecode/toolUseId"  # Claude Code's id of a tool call, in the call's _meta
CODEX_CALL_META = "callId"  # Codex's id of a tool call (the rollout's call_id), in the call's _meta


def conversation_id(given: str | None = None) -> str:
    """The conversation this server's writes and records belong to: the one given, or a fresh
    `mcp-<8 hex digits>` for each server process."""
    return given if given else CONVERSATION_PREFIX + secrets.token_hex(4)


@dataclass(frozen=True)
class Recorded:
    """What `record` did: the row, the turn after it, and the outcome of a dream it ran (if any)."""

    row: dict[str, str]
    turn: int
    untrusted: tuple[str, ...]
    dream: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {**self.row, "turn": self.turn, "untrusted_sources": list(self.untrusted), "dream": self.dream}


class Writes:
    """The server's agent session, used by one worker thread at a time."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        self._lock = threading.Lock()

    def perform(self, call: dict[str, Any]) -> EditResult:
        """One memory tool call as the agent: a view, a direct commit, a pull request, or a
        refusal that changes nothing (never raises for bad input). Blocking: git and network."""
        with self._lock:
            return self.session.handle_tool_call(call)

    def replace(self, session: AgentSession) -> None:
        """Serve another conversation from now on (a new Codex session): the one before is
        closed once no call uses it."""
        with self._lock:
            before, self.session = self.session, session
            before.close()

    def catch_up(self, transcript: Any, tool_use: str | None = None) -> None:
        """Bring the session's turn up to the harness's own transcript (a Claude Code
        session's: bot/claude_code/transcript.py) before a write, up to the call `tool_use`."""
        with self._lock:
            transcript.catch_up(self.session, tool_use)

    def record(self, kind: str, text: str, source: str | None) -> Recorded:
        """Append one transcript row to the session's conversation; MemrepoError (one line) for
        a bad kind, source or text, with nothing written. A `user` row from `user` starts a new
        turn; an `external:` source taints the turn; an `assistant` row counts a dream step."""
        check_kind(kind)
        source = check_source(source) if source is not None else default_source(kind)
        check_text(text)
        with self._lock:
            dreams = self.session.dream_messages
            before, last = len(dreams), (dreams[-1] if dreams else None)
            message = self.session.record(kind, text, source)
            ran = len(dreams) != before or (bool(dreams) and dreams[-1] is not last)
            turn = self.session.turn
            return Recorded(message.to_row(), turn.number, turn.external, dreams[-1] if ran else None)

    def close(self) -> None:
        with self._lock:
            self.session.close()
