"""Dreams for the conversations memrepo imports from another harness (Letta Code's
transcripts): the rows an import brought make the trigger events memrepo's own sessions make,
each assistant message a `step` and each compaction summary a `compaction`, and
`.memrepo/config.yml`'s dream settings decide, as for any agent, whether a dream runs
(bot/dream/events.py). `memrepo follow --transcripts` and `memrepo dream` import through here,
so a harness's conversation dreams without another command.

Only the memory's own agent dreams into it (`memrepo.agentId`, or the agent Letta Code keeps
the folder for, `letta.agentId`): Letta's transcript folder holds every agent of the machine.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.dream import texts
from bot.dream.events import EventResult, handle_events
from bot.errors import MemrepoError
from bot.memfs import MemoryRepo, configured_agent_id
from bot.transcript.model import Message

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
            imported.failures.append(texts.HARNESS_DREAM_FAILED.format(conversation=conversation, problem=exc))
            imported.lines.append(imported.failures[-1])
            continue
        imported.outcomes[(agent, conversation)] = outcome
        if outcome.ran:
            imported.lines.append(outcome.message)
    return imported
