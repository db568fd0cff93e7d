"""When a dream runs: pure decisions over a conversation's trigger state (table-tested).

Events: `step` (one assistant step), `compaction` (the harness compacted the context),
`manual` (on demand) and `closed` (the open dream's pull request was closed or merged).
The policy's `dream.trigger` names the automatic trigger: `step-count` (every `dream.steps`
assistant steps), `compaction`, or `off`; `manual` always asks for a dream.

At most one dream per conversation is open. A trigger that arrives while one is open is
remembered as `pending` and fires when that dream is closed (the `closed` event) or, if
nobody says so, at the next trigger, because every attempt asks the forge again whether a
dream is open (the state file may be stale: a person may have merged it on GitHub).
A failed attempt is remembered the same way, so no trigger is ever lost: when a dream is
decided, its trigger is written down as pending before the run starts (a crash leaves it
pending), and only an attempt that opened a pull request or found nothing clears it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from bot.config import Dream

# Programming errors of the trigger rules (triggers.py): an event or outcome no caller sends.
DREAM_UNKNOWN_EVENT = "unknown dream event {event!r}; expected one of {known}"
# Why a trigger event did or did not start a dream (triggers.py), as the session reports it.
TRIGGER_PENDING_FIRES = "the open dream was closed; its pending trigger fires"
TRIGGER_STEPS = "{steps} of {of} assistant steps"
TRIGGER_OTHER = "the policy's trigger is {trigger}"

EVENTS = ("step", "compaction", "manual", "closed")

# What an attempt ended with (the runner reports one of these).
OPENED = "opened"  # a pull request was opened
ALREADY_OPEN = "already-open"  # the forge has an open dream for the conversation: remembered
NOTHING = "nothing"  # nothing new since the cursor, or nothing to change
FAILED = "failed"  # the attempt failed before a pull request existed
OUTCOMES = (OPENED, ALREADY_OPEN, NOTHING, FAILED)


@dataclass(frozen=True)
class TriggerState:
    """Per agent and conversation; `steps` counts assistant steps since the last attempt."""

    steps: int = 0
    pending: str | None = None
    open_dream: str | None = None
    open_pr: int | None = None


@dataclass(frozen=True)
class Decision:
    run: bool
    trigger: str | None  # step-count, compaction or manual: what the provenance records
    state: TriggerState  # the state to keep whatever happens next
    reason: str


def decide(state: TriggerState, event: str, policy: Dream) -> Decision:
    """Should a dream run now, and as which trigger?"""
    if event not in EVENTS:
        raise ValueError(DREAM_UNKNOWN_EVENT.format(event=event, known=", ".join(EVENTS)))
    wanted: str | None = None
    new = state
    if event == "step":
        new = replace(state, steps=state.steps + 1)
        if policy.trigger == "step-count" and new.steps >= policy.steps:
            wanted = "step-count"
    elif event == "compaction":
        if policy.trigger == "compaction":
            wanted = "compaction"
    elif event == "manual":
        wanted = "manual"
    else:  # closed
        new = replace(state, open_dream=None, open_pr=None)
        if state.pending is not None:
            return Decision(True, state.pending, replace(new, steps=0),
                            TRIGGER_PENDING_FIRES)
        return Decision(False, None, new, "the open dream was closed; nothing is pending")
    if wanted is None:
        if event == "step" and policy.trigger == "step-count":
            return Decision(False, None, new, TRIGGER_STEPS.format(steps=new.steps, of=policy.steps))
        return Decision(False, None, new, TRIGGER_OTHER.format(trigger=policy.trigger))
    running = replace(new, steps=0, pending=wanted)
    if new.open_pr is not None:
        return Decision(True, wanted, running, "a dream is recorded as open: the forge is asked again before running")
    return Decision(True, wanted, running, f"trigger {wanted}")


def decide_all(state: TriggerState, events: Sequence[str], policy: Dream) -> Decision:
    """`decide` over several events that arrived together (the rows one import brought): the
    state after all of them, and one run when any of them asked for one, as the last that
    asked. Counting them one by one and running at most once is what a harness's import
    needs: its rows come in batches, and one dream covers them all."""
    decision = Decision(False, None, state, TRIGGER_OTHER.format(trigger=policy.trigger))
    wanted: Decision | None = None
    for event in events:
        decision = decide(decision.state, event, policy)
        if decision.run:
            wanted = decision
    if wanted is None:
        return decision
    return Decision(True, wanted.trigger, decision.state, wanted.reason)


def after(state: TriggerState, trigger: str, outcome: str, *, dream_id: str | None = None,
          pr: int | None = None) -> TriggerState:
    """The state after an attempt as `trigger` ended with `outcome`. `state` is the state as
    saved now (steps counted during the run are kept)."""
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown dream outcome {outcome!r}")
    if outcome == OPENED:
        return TriggerState(state.steps, None, dream_id, pr)
    if outcome == ALREADY_OPEN:
        return TriggerState(state.steps, state.pending or trigger, dream_id, pr)
    if outcome == NOTHING:
        return TriggerState(state.steps, None, None, None)
    return replace(state, pending=state.pending or trigger)
