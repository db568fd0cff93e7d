"""What starts a dream: the session's trigger events (`step`, `compaction`, `manual`, and
`closed` when a dream's pull request was merged or closed), counted per conversation by
`triggers.decide`, and the per-conversation run lock that keeps two runs of one conversation
from dreaming at once (the second is told the first is running).

The conversations memrepo imports from another harness (Letta Code's transcripts) dream the
same way (`import_letta`, `fire`): the rows an import brought make the trigger events memrepo's
own sessions make, each assistant message a `step` and each compaction summary a `compaction`
(`events_by_conversation`), and `.memrepo/config.yml`'s dream settings decide, as for any agent,
whether a dream runs. `memrepo follow --transcripts` and `memrepo dream` import through here,
so a harness's conversation dreams without another command.

Only the memory's own agent dreams into it (`memrepo.agentId`, or the agent Letta Code keeps
the folder for, `letta.agentId`): Letta's transcript folder holds every agent of the machine.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.config import Dream
from bot.dream import triggers
from bot.dream.runner import DreamResult, run_dream
from bot.dream.state import TriggerStates
from bot.errors import MemrepoError
from bot.file_lock import file_lock
from bot.memfs import MemoryRepo, configured_agent_id
from bot.transcript.model import Message

DREAM_REMEMBERED = "The {trigger} trigger is remembered and fires when it is merged or closed."
DREAM_RUNNING = "a dream for conversation {conversation} is running now; this trigger is folded into it"
# bot/dream/events.py: a dream an imported conversation's triggers asked for did not run.
HARNESS_DREAM_FAILED = ("the dream of conversation {conversation} did not run (it is tried again at its next "
                        "trigger): {problem}")


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
            return EventResult(False, DREAM_RUNNING.format(conversation=conversation_id), trigger)
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
        message += " " + DREAM_REMEMBERED.format(trigger=trigger)
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


# ------------------------------------------------------------------- harnesses
EVENT_OF_KIND = {"assistant": "step", "compaction": "compaction"}


def events_by_conversation(messages: Iterable[Message], agents: Collection[str]
                           ) -> dict[tuple[str, str], list[str]]:
    """The trigger events of new rows, per (agent, conversation) of `agents`, in order (pure).
    A conversation whose new rows make no event is not in it."""
    found: dict[tuple[str, str], list[str]] = {}
    for message in messages:
        event = EVENT_OF_KIND.get(message.kind)
        if event is not None and message.agent_id in agents:
            found.setdefault((message.agent_id, message.conversation_id), []).append(event)
    return found


def memory_agents(repo: MemoryRepo) -> frozenset[str]:
    """The agents whose conversations dream into this memory."""
    return frozenset(a for a in (configured_agent_id(repo), repo.letta_agent_id()) if a)


@dataclass
class Imported:
    """What an import and its triggers did: the lines to say, the messages new to the store,
    each handled conversation's outcome, and the dreams that failed (said among the lines too)."""

    lines: list[str] = field(default_factory=list)
    written: list[Message] = field(default_factory=list)
    outcomes: dict[tuple[str, str], EventResult] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def import_letta(home: str | os.PathLike[str] | None, root: str | os.PathLike[str] | None) -> Imported:
    """Letta Code's transcripts under `root` (None: Letta's own) into the store at `home`; a
    root that does not exist imports nothing when it is Letta's default (no Letta here)."""
    from bot.transcript import TranscriptStore, TranscriptWarning
    from bot.transcript.letta_import import default_root
    from bot.transcript.letta_import import import_letta as letta_import

    path = Path(root).expanduser() if root else default_root()
    if not root and not path.is_dir():
        return Imported()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranscriptWarning)
        with TranscriptStore(home) as store:
            report = letta_import(store, path)
    lines = [*store.warnings, *report.notes]
    if report.imported:
        lines.append(report.describe(path))
    return Imported(lines, report.written)


def fire(repo: MemoryRepo, imported: Imported, home: str | os.PathLike[str] | None,
         extra: Mapping[tuple[str, str], Sequence[str]] | None = None, **run: object) -> Imported:
    """Hand the trigger events of what `imported` brought (and `extra` events, such as a
    `manual` request) to each conversation of the memory's agents; a dream that ran or failed
    is said. A failure in one conversation does not stop the others (its trigger stays pending)."""
    events = events_by_conversation(imported.written, memory_agents(repo))
    for key, more in (extra or {}).items():
        events.setdefault(key, []).extend(more)
    for (agent, conversation), wanted in events.items():
        try:
            outcome = handle_events(repo, agent, conversation, wanted, home=home, **run)
        except MemrepoError as exc:
            imported.failures.append(HARNESS_DREAM_FAILED.format(conversation=conversation, problem=exc))
            imported.lines.append(imported.failures[-1])
            continue
        imported.outcomes[(agent, conversation)] = outcome
        if outcome.ran:
            imported.lines.append(outcome.message)
    return imported
