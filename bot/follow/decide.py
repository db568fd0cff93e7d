"""What `memrepo follow` does next, as functions of plain state: no git, no clock, no network.
The loop (bot/follow/run.py) reads the folder, asks these, and does what they say.

A pass is due when the harness committed since the last good pass, when a head event said the
forge's main moved, or when a poll is due (always without an event stream, and with one while it
is down); never before a failed pass's backoff is over. A due pass waits rather than touch a
working tree that is not at rest."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit

from bot.backoff import Backoff
from bot.memfs.sync import BRANCH, redact

FOLLOW_HOOK_HERE = ("Letta Code's post-commit hook pushes here too; a push of it that the forge refuses is replayed "
                    "and pushed by follow")
FOLLOW_HOOK_ELSEWHERE = ("Letta Code's post-commit hook pushes to {hook}, not to origin ({origin}): follow keeps "
                         "origin only; point both at one repository (`/memory-repository set` in Letta Code, or "
                         "`memrepo repository set`)")
FOLLOW_WAIT_DIRTY = ("waiting: {path} has uncommitted or staged changes ({paths}); nothing is touched until the "
                     "harness commits or discards them")
FOLLOW_WAIT_BRANCH = "waiting: {path} has {branch} checked out, not main; follow keeps main only"

RETRY = Backoff(1.0, cap=60.0, jitter=(0.5, 1.0))  # after a pass that could not sync
DIRTY_SHOWN = 5


@dataclass(frozen=True)
class State:
    """What the loop remembers between passes."""

    synced: str | None = None  # HEAD as the last good pass left it (None: no pass yet)
    announced: bool = True  # the forge's main may have moved since (a head event; nothing fetched yet)
    next_poll: float = 0.0  # when a poll is due
    failures: int = 0  # passes in a row that could not sync
    retry_at: float = 0.0  # no pass before this, after a failure


def due(state: State, head: str | None, now: float, polling: bool) -> bool:
    """Whether a pass is due at `now` for a folder whose HEAD is `head`."""
    if now < state.retry_at:
        return False
    return head != state.synced or state.announced or (polling and now >= state.next_poll)


def announce(state: State) -> State:
    """A head event (or a reconnected stream) says the forge's main may have moved."""
    return replace(state, announced=True)


def succeeded(state: State, head: str | None, now: float, poll: float) -> State:
    """After a pass that left the folder and the forge on one main at `head`."""
    return State(synced=head, announced=False, next_poll=now + poll)


def failed(state: State, now: float, draw: float) -> State:
    """After a pass that could not sync: the next one waits out a growing backoff."""
    return replace(state, failures=state.failures + 1, retry_at=now + RETRY.delay(state.failures, draw))


def wait_reason(path: Path, branch: str | None, dirty: Sequence[str], busy: bool) -> str | None:
    """Why a due pass must wait (the notice to say once), or None when it may sync now: a git
    command at work, a branch other than main, or changes not committed yet."""
    if busy:
        return f"waiting: a git command is at work in {path} (.git/index.lock exists)"
    if branch != BRANCH:
        return FOLLOW_WAIT_BRANCH.format(path=path, branch=branch or "a detached HEAD")
    if dirty:
        shown = ", ".join(dirty[:DIRTY_SHOWN]) + (" ..." if len(dirty) > DIRTY_SHOWN else "")
        return FOLLOW_WAIT_DIRTY.format(path=path, paths=shown)
    return None


def import_due(passed: bool, stamp: object, imported_stamp: object, now: float, next_import: float) -> bool:
    """Whether to import the harness's transcripts now: after a pass (the harness committed, or
    a head event came), when the transcripts changed since the last import (their stamp), and
    at each poll."""
    return passed or stamp != imported_stamp or now >= next_import


# How long a held commit's pull request waits for the transcript of the turn that made it (the
# harness writes a turn's rows when the turn ends, after its commits), when transcripts are imported.
TURN_GRACE = 120.0


def propose_held_now(made_at: float, turn_known: bool, now: float, grace: float = TURN_GRACE) -> bool:
    """Whether to open a held commit's pull request now: at once when the turn behind it is
    imported (its pull request quotes it), else once `grace` seconds passed since the commit
    (it then says the turn cannot be known rather than wait for ever)."""
    return turn_known or now - made_at >= grace


def say_once(said: str | None, notice: str | None) -> str | None:
    """The notice to print now: a new one, never the one printed last (a wait or a failure
    that lasts is said once)."""
    return notice if notice is not None and notice != said else None


def same_repository(a: str, b: str) -> bool:
    """Whether two git URLs name one repository, whatever their credentials, letter case of
    the host, trailing slash or `.git`."""
    def key(url: str) -> str:
        parts = urlsplit(url.strip())
        if parts.scheme and parts.hostname:
            url = f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}{parts.path}"
        return url.rstrip("/").removesuffix(".git").rstrip("/")

    return key(a) == key(b)


def hook_notice(hook_installed: bool, hook_url: str | None, origin: str) -> str | None:
    """What to say at start about Letta Code's post-commit hook: nothing when it is absent or
    pushes nowhere; that follow repairs its refused pushes when it pushes to origin; a warning
    when it pushes to another repository, which follow leaves alone."""
    if not hook_installed or not hook_url:
        return None
    if same_repository(hook_url, origin):
        return FOLLOW_HOOK_HERE
    return FOLLOW_HOOK_ELSEWHERE.format(hook=redact(hook_url), origin=redact(origin))
