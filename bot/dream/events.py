"""What starts a dream: the session's trigger events (`step`, `compaction`, `manual`, and
`closed` when a dream's pull request was merged or closed), counted per conversation by
`triggers.decide`, and the per-conversation run lock that keeps two runs of one conversation
from dreaming at once (the second is told the first is running)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bot.config import Dream
from bot.dream import texts, triggers
from bot.dream.runner import DreamResult, run_dream
from bot.dream.state import TriggerStates
from bot.file_lock import file_lock
from bot.memfs import MemoryRepo


@dataclass(frozen=True)
class EventResult:
    """What handling a trigger event did: `result` is set when a dream ran."""

    ran: bool
    message: str
    trigger: str | None = None
    result: DreamResult | None = None


@contextlib.contextmanager
def _running(states: TriggerStates, agent_id: str, conversation_id: str) -> Iterator[bool]:
    """True when this process may run the conversation's dream now (no other run is on)."""
    with file_lock(states.home / "dreams" / agent_id / f".{conversation_id}.run.lock", wait=False) as free:
        yield free


def handle_event(repo: MemoryRepo | str | os.PathLike[str], agent_id: str, conversation_id: str, event: str,
                 *, home: str | os.PathLike[str] | None = None, dream_policy: Dream | None = None,
                 **run: object) -> EventResult:
    """Count or act on a trigger event (`step`, `compaction`, `manual`, `closed`) for one
    conversation, running a dream when triggers.decide says so. `run` goes to run_dream.
    `dream_policy` replaces the policy's `dream` section (a session's `/sleeptime` setting)."""
    return handle_events(repo, agent_id, conversation_id, [event], home=home, dream_policy=dream_policy, **run)


def handle_events(repo: MemoryRepo | str | os.PathLike[str], agent_id: str, conversation_id: str,
                  events: Sequence[str], *, home: str | os.PathLike[str] | None = None,
                  dream_policy: Dream | None = None, **run: object) -> EventResult:
    """`handle_event` for events that arrived together (an import's new rows): all are
    counted, and at most one dream runs (triggers.decide_all)."""
    repo = repo if isinstance(repo, MemoryRepo) else MemoryRepo.open(repo)
    states = TriggerStates(home)
    policy = dream_policy or repo.policy("HEAD").dream
    with states.locked(agent_id):
        decision = triggers.decide_all(states.load(agent_id, conversation_id), events, policy)
        states.save(agent_id, conversation_id, decision.state)
    if not decision.run or decision.trigger is None:
        return EventResult(False, decision.reason)
    trigger = decision.trigger
    with _running(states, agent_id, conversation_id) as free:
        if not free:
            return EventResult(False, texts.DREAM_RUNNING.format(conversation=conversation_id), trigger)
        try:
            result = run_dream(repo, agent_id, conversation_id, trigger=trigger, home=home, **run)  # type: ignore[arg-type]
        except BaseException:
            with states.locked(agent_id):
                states.save(agent_id, conversation_id,
                            triggers.after(states.load(agent_id, conversation_id), trigger, triggers.FAILED))
            raise
        with states.locked(agent_id):
            current = states.load(agent_id, conversation_id)
            states.save(agent_id, conversation_id, triggers.after(current, trigger, result.status,
                                                                  dream_id=result.dream_id, pr=result.pr))
    message = result.message
    if result.status == triggers.ALREADY_OPEN:
        message += " " + texts.DREAM_REMEMBERED.format(trigger=trigger)
    return EventResult(True, message, trigger, result)


def on_step(repo: MemoryRepo | str | os.PathLike[str], agent_id: str, conversation_id: str,
            **kw: object) -> EventResult:
    """The session calls this after each assistant step."""
    return handle_event(repo, agent_id, conversation_id, "step", **kw)  # type: ignore[arg-type]


def on_compaction(repo: MemoryRepo | str | os.PathLike[str], agent_id: str, conversation_id: str,
                  **kw: object) -> EventResult:
    """The session calls this when it compacted the conversation's context."""
    return handle_event(repo, agent_id, conversation_id, "compaction", **kw)  # type: ignore[arg-type]


def dream_closed(repo: MemoryRepo | str | os.PathLike[str], agent_id: str, conversation_id: str,
                 **kw: object) -> EventResult:
    """The integrator (or session) calls this when a dream's pull request was merged or
    closed; a trigger remembered meanwhile runs now."""
    return handle_event(repo, agent_id, conversation_id, "closed", **kw)  # type: ignore[arg-type]
