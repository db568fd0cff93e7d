"""The end of a Codex turn (Stop): the session's rollout into the transcript store, and the
dream triggers its new messages make, handed to a detached process as Claude Code's Stop hook
hands them (bot/claude_code/turn_end.py: each assistant message a `step`, each compaction a
`compaction`; `.memrepo/config.yml` decides whether a dream runs). The process writes what
happened to `<session>.log` beside the session's state (`.git/memrepo/codex/`)."""

from __future__ import annotations

import os
from pathlib import Path

from bot.claude_code import turn_end as shared
from bot.codex import state
from bot.errors import MemrepoError


def after_turn(root: Path, hook_input: dict, sessions: Path, spawn: shared.Spawn | None = None) -> list[str]:
    """Import the session's rollout and hand the new trigger events on; the events."""
    from bot.transcript.codex_import import import_codex

    session, transcript = hook_input.get("session_id"), hook_input.get("transcript_path")
    if not isinstance(session, str) or not session or not isinstance(transcript, str) or not transcript:
        raise MemrepoError(shared.HOOK_NO_SESSION)
    problem = state.transcript_problem(transcript, sessions, os.environ)
    if problem is not None:  # nothing read, nothing kept
        raise MemrepoError(problem)
    return shared.hand_on(root, session, transcript, state.state_file(root, session),
                          lambda store, agent: import_codex(store, agent, transcript), spawn or _spawn)


def _spawn(root: Path, session: str, events: list[str]) -> None:
    shared.spawn_triggers(root, session, events, module=state.HOOK_MODULE, folder=state.STATE_DIR)
