"""How many memory pull requests wait, for `repository status --fetch` and `/doctor`: one list
call to the forge (its labels say what waits), counted by a pure function."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.contracts import LABEL_CONFLICT, LABEL_NEEDS_REVIEW
from bot.errors import MemrepoError
from bot.integrator.decide import is_memrepo_pull
from bot.review import texts
from bot.texts import Text

WAITING = Text("{count:|open memory pull request|open memory pull requests} in {repository}: {review} wait for "
               "review, {conflict} in conflict (`memrepo review list`)")


@dataclass(frozen=True)
class Counted:
    repository: str
    open: int
    review: int  # labelled memrepo:needs-review
    conflict: int  # labelled memrepo:conflict


def counted(repository: str, pulls: Iterable[Any]) -> Counted:
    """The open memory pull requests among `pulls` (the forge's list), and what waits."""
    memory = [p for p in pulls if is_memrepo_pull(p.head_ref, p.labels)]
    return Counted(repository, len(memory), sum(LABEL_NEEDS_REVIEW in p.labels for p in memory),
                   sum(LABEL_CONFLICT in p.labels for p in memory))


def said(found: Counted | None, reason: str | None) -> str:
    """The line a person reads."""
    if found is None:
        return f"not known: {reason}"
    if not found.open:
        return f"no memory pull request waits in {found.repository}"
    return WAITING.format(count=found.open, review=found.review, conflict=found.conflict,
                                repository=found.repository)


def count(repo: Any, environ: Mapping[str, str] | None = None) -> tuple[Counted | None, str | None]:
    """(what waits on the forge of `repo`'s origin, None) or (None, why it is not known). Read
    with the person's token where one is set, else the agent's: listing needs only reading."""
    from bot import settings
    from bot.forge.client import ForgeClient
    from bot.forge.credentials import TokenCredentials
    from bot.forge.retry import RetryPolicy
    from bot.memfs.sync import remote_url
    from bot.pullrequest.target import forge_target

    env = os.environ if environ is None else environ
    try:
        target = forge_target(remote_url(repo), env)
    except MemrepoError as exc:
        return None, str(exc)
    token = settings.first_value(settings.REVIEW_TOKENS, env) or target.token
    if not token:
        return None, texts.NO_TOKEN.format(repository=target.repository)
    client = ForgeClient(target.repository, TokenCredentials(token), base_url=target.api_url,
                         policy=RetryPolicy(max_total_seconds=10.0, max_attempts=2, backoff_base=0.2, backoff_cap=1.0),
                         timeout=10, min_write_interval=0.0)
    try:
        return counted(target.repository, client.list_open_pull_requests()), None
    except MemrepoError as exc:
        return None, str(exc)
    finally:
        client.close()
