"""One Claude Code session's transcript, kept up to date in the transcript store, so that a
write names the turn that made it.

Claude Code starts memrepo's MCP server for each session with CLAUDE_CODE_SESSION_ID (and
CLAUDE_PROJECT_DIR) in its environment, and gives its hooks the session's `transcript_path`;
the SessionStart hook keeps that path beside what the session saw (bot/claude_code/hook.py).
Before each write, `catch_up` imports what the session file gained since the last look
(bot/transcript/claude_code_import.py) and feeds the rows the agent session has not seen yet
into its turn: the commit then carries the session as `Conversation-ID` and the turn's
messages as `Transcript-Range`, whatever route the write takes, and a turn that read untrusted
content routes its writes to a pull request as any agent's would.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from bot.claude_code import hook
from bot.errors import MemrepoError
from bot.transcript.claude_code_import import SUFFIX, default_root, import_claude_code

if TYPE_CHECKING:
    from bot.agent import AgentSession

log = logging.getLogger("memrepo.claude_code")

SESSION_ENV = "CLAUDE_CODE_SESSION_ID"
CALL_WAIT_SECONDS = 2.0  # how long a write waits for Claude Code to write down the call that made it
CALL_POLL_SECONDS = 0.02
PROJECT_ENV = "CLAUDE_PROJECT_DIR"
_PROJECT_NAME = re.compile(r"[^A-Za-z0-9]")


def session_id(env: Mapping[str, str]) -> str | None:
    """The session Claude Code started this process for, if it did."""
    return env.get(SESSION_ENV, "").strip() or None


def transcript_path(root: Path, session: str, env: Mapping[str, str]) -> Path | None:
    """The session's file: where the SessionStart hook said it is, else where Claude Code keeps
    it for the project (CLAUDE_PROJECT_DIR); None when neither is known or there."""
    told = hook.seen_fact(hook.state_file(root, session), "transcript")
    if told is not None:
        return Path(told)
    project = env.get(PROJECT_ENV)
    if not project:
        return None
    guess = default_root(env) / _PROJECT_NAME.sub("-", project) / f"{session}{SUFFIX}"
    return guess if guess.is_file() else None


class SessionTranscript:
    """Keeps an agent session's turn in step with its Claude Code session's file."""

    def __init__(self, root: Path, session: str, env: Mapping[str, str]) -> None:
        self.root = root
        self.session = session
        self.env = env
        self.last: str | None = None  # the last row fed into the turn

    def catch_up(self, agent: AgentSession, tool_use: str | None = None) -> None:
        """Import what is new and feed it into `agent`'s turn. `tool_use`: the id of the call
        being served; Claude Code writes the message holding it a moment after it starts the
        call, so the import waits for it (CALL_WAIT_SECONDS at most). A session file that
        cannot be found or read leaves the turn as it is (logged): the write still names the
        session."""
        path = transcript_path(self.root, self.session, self.env)
        if path is not None and tool_use:
            written_down(path, tool_use)
        if path is None or not path.is_file():
            log.warning("no transcript of Claude Code session %s found; the write names the session only",
                        self.session)
            return
        try:
            import_claude_code(agent.store, agent.agent_id, path)
            if self.session not in agent.store.conversations(agent.agent_id):
                return
            rows = agent.store.read(agent.agent_id, self.session, after=self.last)
        except MemrepoError as exc:
            log.warning("the transcript of Claude Code session %s was not imported: %s", self.session, exc)
            return
        if rows:
            agent.observe(rows)
            self.last = rows[-1].message_id


def written_down(path: Path, tool_use: str, wait: float = CALL_WAIT_SECONDS) -> bool:
    """Whether the session file holds the call `tool_use` (a whole line), waiting up to `wait`.
    The file itself may not be there yet: Claude Code writes a new session's file a moment
    after its first rows, so a first call can arrive before it."""
    needle = json.dumps(tool_use).encode()
    deadline = time.monotonic() + wait
    while True:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            data = b""
        except OSError:
            return False
        at = data.find(needle)
        if at >= 0 and data.find(b"\n", at) >= 0:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(CALL_POLL_SECONDS)
