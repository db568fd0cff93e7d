"""Which account the agent writes as and which the person reviews with, for `repository status`
and `/doctor`: when they are one account, nothing the agent proposes can be approved (no forge
lets an author approve their own pull request), and the person is told so and how out."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.errors import MemrepoError

NO_TOKEN = "no token (set MEMREPO_FORGE_TOKEN, or `memrepo identity set`)"
SAME_ACCOUNT = ("warning: the agent writes as {agent}, the account you review with: you cannot approve what it "
                "proposes; `memrepo identity set` gives the agent an account of its own")


@dataclass(frozen=True)
class Accounts:
    agent: str | None  # the login the agent writes as (None: not known without asking the forge)
    source: str  # where its credential comes from: "recorded identity", a variable's name, origin's URL
    reviewer: str | None  # the login of the person's own token (None: no token, or not asked)

    @property
    def same(self) -> bool:
        return bool(self.agent and self.reviewer and self.agent.lower() == self.reviewer.lower())


def said(found: Accounts | None, reason: str | None) -> str:
    """The line a person reads."""
    if found is None:
        return f"not known: {reason}"
    if found.same:
        return SAME_ACCOUNT.format(agent=found.agent)
    agent = f"as {found.agent} ({found.source})" if found.agent else f"with {found.source}"
    reviewer = f"; you review as {found.reviewer}" if found.reviewer else ""
    return f"the agent writes {agent}{reviewer}"


def source(repo: Any, env: Mapping[str, str]) -> tuple[str | None, str]:
    """(the recorded login or None, where the agent's credential comes from), without the forge."""
    from bot import agent_credential, settings
    from bot.memfs.sync import remote_url

    recorded = agent_credential.read(repo.root)
    if recorded is not None:
        return recorded.login, "recorded identity"
    name = next((n for n in settings.AGENT_FORGE_TOKENS if settings.value(n, env)), None)
    if name:
        return None, name
    return None, "the token in origin's URL" if agent_credential.url_token(remote_url(repo)) else NO_TOKEN


def find(repo: Any, environ: Mapping[str, str] | None = None, *, ask: bool = True
         ) -> tuple[Accounts | None, str | None]:
    """(the two accounts, None), (None, why they are not known), or (None, None) when origin is
    no forge (a bare repository's path: no account writes there). `ask`: False reads only the
    record and the environment (no forge call)."""
    from bot.memfs.sync import remote_url
    from bot.pullrequest.target import forge_target

    env = os.environ if environ is None else environ
    try:
        forge_target(remote_url(repo), {})
    except MemrepoError:
        return None, None
    try:
        login, where = source(repo, env)
    except MemrepoError as exc:
        return None, str(exc)
    if not ask:
        return Accounts(login, where, None), None
    from bot import settings
    from bot.forge.client import ForgeClient
    from bot.forge.credentials import TokenCredentials
    from bot.forge.retry import RetryPolicy
    from bot.pullrequest.target import clone_target, credentials

    policy = RetryPolicy(max_total_seconds=10.0, max_attempts=2, backoff_base=0.2, backoff_cap=1.0)
    try:
        target = clone_target(repo, env)
        agent = _login(ForgeClient(target.repository, credentials(target), base_url=target.api_url, policy=policy,
                                   timeout=10, min_write_interval=0.0))
        token = settings.first_value(settings.REVIEW_TOKENS, env)
        reviewer = _login(ForgeClient(target.repository, TokenCredentials(token), base_url=target.api_url,
                                      policy=policy, timeout=10, min_write_interval=0.0)) if token else None
    except MemrepoError as exc:
        return None, str(exc)
    return Accounts(agent, where, reviewer), None


def _login(client: Any) -> str:
    try:
        return str(client.own_login())
    finally:
        client.close()
