"""The trigger state of each conversation, kept under MEMREPO_HOME so that a trigger
arriving while a dream is open survives the process:

    <home>/dreams/<agent>/<conversation>.json
        {"steps": 0, "pending": null, "open_dream_id": null, "open_pr": null, "updated_at": "..."}

Writes are atomic (temporary file + rename) under a per-agent lock file, so two processes
counting steps for the same agent never lose an update.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from bot.bounded_json import loads_bounded
from bot.contracts import check_id, is_dream_id
from bot.dream.triggers import TriggerState
from bot.errors import MemrepoError
from bot.file_lock import file_lock
from bot.transcript import home as homes

DREAM_STATE_BAD = "the dream trigger state {path} is damaged ({problem}); remove it to start counting again"

FOLDER = "dreams"


def state_path(home: Path, agent_id: str, conversation_id: str) -> Path:
    check_id(agent_id, "agent_id")
    check_id(conversation_id, "conversation_id")
    return home / FOLDER / agent_id / f"{conversation_id}.json"


def parse_state(data: bytes, path: Path) -> TriggerState:
    """The state from the file's bytes; a damaged file is an error naming it (never reset
    silently: a lost pending trigger is what this file exists to prevent)."""
    try:
        raw = loads_bounded(data.decode("utf-8"), what="the dream state")
        steps, pending = raw["steps"], raw["pending"]
        dream_id, pr = raw["open_dream_id"], raw["open_pr"]
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
            raise ValueError("steps")
        if pending not in (None, "step-count", "compaction", "manual"):
            raise ValueError("pending")
        if dream_id is not None and not is_dream_id(dream_id):
            raise ValueError("open_dream_id")
        if pr is not None and (isinstance(pr, bool) or not isinstance(pr, int) or pr < 1):
            raise ValueError("open_pr")
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise MemrepoError(DREAM_STATE_BAD.format(path=path, problem=exc)) from None
    return TriggerState(steps, pending, dream_id, pr)


def render_state(state: TriggerState, now: str) -> bytes:
    data = {"steps": state.steps, "pending": state.pending, "open_dream_id": state.open_dream,
            "open_pr": state.open_pr, "updated_at": now}
    return (json.dumps(data, indent=2) + "\n").encode("utf-8")


class TriggerStates:
    """Load, update and save trigger states under one home folder."""

    def __init__(self, home: str | os.PathLike[str] | None = None,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.home = homes.resolve(home)
        self.clock = clock

    def load(self, agent_id: str, conversation_id: str) -> TriggerState:
        path = state_path(self.home, agent_id, conversation_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return TriggerState()
        return parse_state(data, path)

    def save(self, agent_id: str, conversation_id: str, state: TriggerState) -> None:
        path = state_path(self.home, agent_id, conversation_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        tmp.write_bytes(render_state(state, self.clock().strftime("%Y-%m-%dT%H:%M:%SZ")))
        os.replace(tmp, path)

    @contextlib.contextmanager
    def locked(self, agent_id: str) -> Iterator[None]:
        """One writer of an agent's trigger states at a time (threads and processes)."""
        check_id(agent_id, "agent_id")
        with file_lock(self.home / FOLDER / agent_id / ".lock"):
            yield
