"""Whether a pull request's commits show what its branch claims (pure).

A branch name and a label are words anyone who may open a pull request can write. What the
integrator grants a dream or an agent's edit (a dream is closed and dreamt again; either
merges without a person where the policy allows) therefore needs more than the words: the
commits it brings must be that writer's own, as memrepo writes them.

- `memrepo/dream/<dream-id>`: every commit is authored `<dream-id>@dreams.memrepo` and
  carries `Dream-ID: <dream-id>`;
- `memrepo/edit/<agent-id>/<x>`: every commit is authored `<agent-id>@agents.memrepo`, and an
  `Agent-ID` trailer, when there is one, names the same agent;
- a merge the integrator made to resolve a conflict with the base (authored by its identity,
  with two parents) is allowed on either: its content is validated like the rest.

Who opened the pull request is checked apart, against the forge (`decide.authority_problem`):
only someone who may write gets anything done, and that person could have pushed the same
commits. So a claim that holds says the commits are the writer's; one that does not is a
person's pull request, which needs a person's review.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.contracts import AGENT_ID, DREAM_BRANCH_PREFIX, DREAM_ID, EDIT_BRANCH_PREFIX, dream_id_of_branch
from bot.errors import MemrepoError
from bot.identity import AGENT_DOMAIN, DREAM_DOMAIN, INTEGRATOR, check_agent_id
from bot.trailers import parse_trailers


@dataclass(frozen=True)
class Brought:
    """One commit a pull request brings, as the claim check reads it."""

    author_email: str
    message: str
    parents: int = 1


def _edit_agent(branch: str) -> str | None:
    rest = branch.removeprefix(EDIT_BRANCH_PREFIX)
    agent, _, short = rest.partition("/")
    if not short or "/" in short:
        return None
    try:
        return check_agent_id(agent)
    except MemrepoError:
        return None


def _resolution(commit: Brought) -> bool:
    return commit.parents > 1 and commit.author_email.lower() == INTEGRATOR.email


def _values(commit: Brought, key: str) -> list[str]:
    return [value for token, value in parse_trailers(commit.message) if token.lower() == key.lower()]


def _dreams(commit: Brought, dream_id: str) -> bool:
    return (commit.author_email.lower() == f"{dream_id}@{DREAM_DOMAIN}".lower()
            and _values(commit, DREAM_ID) == [dream_id])


def _agents(commit: Brought, agent_id: str) -> bool:
    named = _values(commit, AGENT_ID)
    return (commit.author_email.lower() == f"{agent_id}@{AGENT_DOMAIN}".lower()
            and all(value == agent_id for value in named))


def claim_shown(head_ref: str, commits: Sequence[Brought]) -> bool:
    """Whether `commits` (what the pull request brings) are the writer's its branch names."""
    branch = head_ref.removeprefix("refs/heads/")
    own = [commit for commit in commits if not _resolution(commit)]
    if not own:
        return False
    if branch.startswith(DREAM_BRANCH_PREFIX):
        dream_id = dream_id_of_branch(branch)
        return dream_id is not None and all(_dreams(commit, dream_id) for commit in own)
    if branch.startswith(EDIT_BRANCH_PREFIX):
        agent_id = _edit_agent(branch)
        return agent_id is not None and all(_agents(commit, agent_id) for commit in own)
    return False
