"""The end of a Claude Code turn (Stop) and of a session (SessionEnd): the session's transcript
into the transcript store, and the dream triggers its new messages make.

Each hook imports what the session file gained (bot/transcript/claude_code_import.py), as the
memory's agent, with the session id as the conversation. The rows no hook has counted yet make
the trigger events memrepo's own sessions make: each assistant message is a `step`, each
compaction summary a `compaction`; `.memrepo/config.yml`'s dream settings decide, as for any
agent, whether a dream runs (bot/dream/events.py). A dream calls a model and opens a pull
request, so the events are handed to a process of their own, detached from the hook, which
writes what happened to `<session>.log` beside the session's state
(`.git/memrepo/claude-code/`): the user's turn never waits for a dream, and a headless
`claude -p` that exits does not take the dream with it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from bot.claude_code import state
from bot.errors import MemrepoError
from bot.transcript.model import Message

if TYPE_CHECKING:
    from bot.memfs import MemoryRepo
    from bot.transcript import TranscriptStore

HOOK_NO_SESSION = "the hook input names no session_id and transcript_path"
NO_AGENT = "{repo} has no agent (memrepo.agentId in its git config): run `memrepo init` or `memrepo clone` for one"

EVENT_OF_KIND = {"assistant": "step", "compaction": "compaction"}
Spawn = Callable[[Path, str, list[str]], None]


def events_of(rows: Iterable[Message]) -> list[str]:
    """The dream trigger events of new transcript rows, in order (pure)."""
    return [EVENT_OF_KIND[row.kind] for row in rows if row.kind in EVENT_OF_KIND]


def agent_of(repo: MemoryRepo) -> str:
    from bot.memfs import configured_agent_id

    agent = configured_agent_id(repo)
    if not agent:
        raise MemrepoError(NO_AGENT.format(repo=repo.root))
    return agent


def after_turn(root: Path, hook_input: dict, spawn: Spawn | None = None) -> list[str]:
    """Import the session's transcript and hand the new trigger events on; the events."""
    from bot.transcript.claude_code_import import import_claude_code

    session, transcript = hook_input.get("session_id"), hook_input.get("transcript_path")
    if not isinstance(session, str) or not session or not isinstance(transcript, str) or not transcript:
        raise MemrepoError(HOOK_NO_SESSION)
    from bot.claude_code.transcript import transcript_problem

    problem = transcript_problem(transcript, hook_input.get("cwd"), os.environ)
    if problem is not None:  # another project's session, or a file that is none: nothing read, nothing kept
        raise MemrepoError(problem)
    return hand_on(root, session, transcript, state.state_file(root, session),
                   lambda store, agent: import_claude_code(store, agent, transcript), spawn or spawn_triggers)


def hand_on(root: Path, session: str, transcript: str, where: Path,
            importer: Callable[[TranscriptStore, str], object], spawn: Spawn) -> list[str]:
    """Import the session's transcript (`importer`, as the memory's agent) and hand on the
    trigger events of the rows no turn's end counted yet, the count kept in the session's
    state file `where`; the events. Both harnesses' Stop hooks end here."""
    from bot.memfs import MemoryRepo
    from bot.transcript import TranscriptStore

    state.remember(where, transcript=transcript)
    agent = agent_of(MemoryRepo.open(root))
    with TranscriptStore() as store:
        importer(store, agent)
        known = session in store.conversations(agent)
        rows = store.read(agent, session, after=state.seen_fact(where, "counted")) if known else []
    if not rows:
        return []
    events = events_of(rows)
    if events:  # handed on before they are marked counted: a failed start loses no trigger
        spawn(root, session, events)
    state.remember(where, counted=rows[-1].message_id)
    return events


def log_file(root: Path, session: str, folder: tuple[str, ...] = state.STATE_DIR) -> Path:
    where = state.state_file(root, session, folder)
    assert where is not None  # the repository was opened above
    return where.with_suffix(".log")


def spawn_triggers(root: Path, session: str, events: list[str], module: str = state.HOOK_MODULE,
                   folder: tuple[str, ...] = state.STATE_DIR) -> None:
    """`python -m <module> triggers` (Claude Code's hook module, or another harness's) in a
    session of its own, its output to the session's log."""
    log = log_file(root, session, folder)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        child = subprocess.Popen([sys.executable, "-m", module, state.TRIGGERS, "--repo", str(root)],
                                 stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True, close_fds=True)
    assert child.stdin is not None
    child.stdin.write(json.dumps({"session_id": session, "events": events}).encode())
    child.stdin.close()


def fire(root: Path, hook_input: dict) -> list[str]:
    """Handle the trigger events one after the other (the detached process); a line each that
    did something (a dream ran, or failed)."""
    from bot.dream.events import handle_event
    from bot.memfs import MemoryRepo

    session, events = hook_input.get("session_id"), hook_input.get("events")
    if not isinstance(session, str) or not isinstance(events, list):
        raise MemrepoError(HOOK_NO_SESSION)
    repo = MemoryRepo.open(root)
    agent = agent_of(repo)
    said = []
    for event in events:
        try:
            outcome = handle_event(repo, agent, session, str(event))
        except MemrepoError as exc:
            said.append(f"{_now()} a dream did not run: {exc}")
            continue
        if outcome.ran:
            said.append(f"{_now()} {outcome.message}")
    return said


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
