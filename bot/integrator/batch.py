"""Merging in batches, the pure part: which ready pull requests go into one push of the
default branch, in which order, and what to do when the push is refused.

GitHub marks a pull request merged when its head reaches the base branch by a push (with the
pusher as `merged_by` and the commit that brought it as `merge_commit_sha`), so one push of a
chain of merge commits merges many pull requests for one git request and no REST write. The
shell (`bot.integrator.jobs.merge_ready`) reads what the decision marked ready
(`Ready`: a number and the head sha the decision validated), the heads the forge has now and
the pull requests already merged, and asks `members` who goes in; it builds the chain and
pushes, and asks `after_push` what a refusal means. Nothing here talks to git, the forge or
Redis, so every rule is a row in a table test, and the invariants (never a double merge,
never a pull request marked merged without its change on the branch) are a hypothesis
property over whole runs (tests/integrator/test_integrator_batch.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

MAX_REBUILDS = 3  # pushes refused because the branch moved before the batch falls back


@dataclass(frozen=True)
class Ready:
    """A pull request the decision said may merge, with exactly the head it validated."""

    number: int
    sha: str


class LeftOut(Enum):
    """Why a ready pull request is not in this batch; each goes back to its own job."""

    HEAD_MOVED = "its head moved since it was validated"  # not said: logged, and the job re-decides
    GONE = "the forge no longer has its head"  # not said: logged
    MERGED = "already merged"  # not said: logged
    CONFLICT = "the rules could not resolve it with the batch before it"  # not said: logged
    INVALID = "what the batch makes of it does not validate"  # not said: logged


def members(ready: Iterable[Ready], heads: Mapping[int, str | None],
            merged: Iterable[int] = ()) -> tuple[list[Ready], dict[int, LeftOut]]:
    """Who goes into the batch, oldest pull request first (the order a person would merge
    them in, and a stable one, so a rebuild makes the same chain), and why each other is left
    out. A pull request goes in only with the head the decision validated, and only when the
    forge shows that head now: a head that moved is decided again, never merged by its old
    sha."""
    done = set(merged)
    chosen: dict[int, Ready] = {}
    left: dict[int, LeftOut] = {}
    for entry in ready:
        chosen[entry.number] = entry  # one entry per number: the latest the decision wrote
    taken: list[Ready] = []
    for number in sorted(chosen):
        entry = chosen[number]
        head = heads.get(number)
        if number in done:
            left[number] = LeftOut.MERGED
        elif head is None:
            left[number] = LeftOut.GONE
        elif head.lower() != entry.sha.lower():
            left[number] = LeftOut.HEAD_MOVED
        else:
            taken.append(entry)
    return taken, left


class PushAnswer(Enum):
    PUSHED = "pushed"  # not said: an Enum value, an identifier (only logged)
    MOVED = "moved"  # a fast-forward refused: someone else pushed first
    REFUSED = "refused"  # the forge does not let the integrator push there (branch protection)


class AfterPush(Enum):
    DONE = "done"  # every member is on the branch: the forge marks each merged
    REBUILD = "rebuild"  # fetch the branch again and build the chain on it
    ONE_BY_ONE = "one-by-one"  # merge each member through the forge's merge API, by its head sha


def after_push(answer: PushAnswer, rebuilds: int, max_rebuilds: int = MAX_REBUILDS) -> AfterPush:
    """What a push's answer means. Never a force push: a branch that moved is built on again,
    a few times, then the members go one by one (each merge then carries its head sha, which
    the forge checks); a push the forge refuses outright goes one by one at once."""
    if answer is PushAnswer.PUSHED:
        return AfterPush.DONE
    if answer is PushAnswer.MOVED and rebuilds < max_rebuilds:
        return AfterPush.REBUILD
    return AfterPush.ONE_BY_ONE


def merged_by_push(chain: Iterable[tuple[int, str, str]], pushed: str | None) -> dict[int, str]:
    """The pull requests a push merged and their merge commits: each member of the chain
    (number, head sha, merge commit) when the pushed tip is the chain's last commit; none when
    nothing was pushed. A member is only ever reported with the merge commit that brought its
    head, which the pushed branch holds."""
    links = list(chain)
    if pushed is None or not links or links[-1][2] != pushed:
        return {}
    return {number: commit for number, _, commit in links}
