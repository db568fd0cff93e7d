"""The installation token a GitHub App identity's git pushes and fetches go with.

When `memrepo identity set` recorded a GitHub App for a clone, the agent's pull requests are
opened as the App; its pushes must be the App's too, or the person whose token would push
instead counts as a pusher of the branch and cannot approve it (docs/architecture.md §6.3).
git cannot mint an installation token and the memory core may not import the forge client, so
this agent-side layer mints one (bot.forge's InstallationToken, through the client's retried
transport) and keeps it beside the record with its expiry (bot.agent_credential.keep), where
the core's git requests find it. `ensure` runs before every agent-side push or fetch: a kept
token with more than five minutes left costs two small file reads, no forge call and no import
of the forge client; a git credential helper would start a Python process per git command.

A shared memory's projection writes as the memory it is attached to (bot.agent_credential.read
follows it there); an installation token is good for its installation's repositories only, so
the projection's is minted for the installation that holds the shared repository, found from it,
and kept in the projection's own git directory. An App not installed there is refused in one line.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

from bot import agent_credential
from bot.errors import MemrepoError
from bot.memfs import MemoryRepo

REFUSED = ("the forge refused GitHub App {app_id}'s installation {installation} a token for {repository} "
           "({problem}); nothing was written: check the App's key and installation, then `memrepo identity set` "
           "again")
NOT_INSTALLED = ("GitHub App {app_id}, the agent identity recorded for {memory}, is not installed on {repository}, "
                 "so nothing is written there as the App: install the App on {account}'s account with access to "
                 "{repository}, or record an account's token with `memrepo identity set --repo {memory}`")
UNREACHABLE = ("the forge could not be asked for GitHub App {app_id}'s installation token for {repository} "
               "({problem}); try again when it answers")


class Unreachable(MemrepoError):
    """The forge did not answer (down, or this machine offline): unlike a refusal, nothing is
    wrong with the identity, so a direct commit may still be saved locally for the next sync."""


def ensure(repo: MemoryRepo, env: Mapping[str, str] | None = None) -> None:
    """Have a kept installation token that outlives agent_credential.REFRESH_MARGIN when the
    clone's recorded identity is a GitHub App (nothing to do otherwise); a MemrepoError in one
    line, with nothing kept, when the forge refuses one (Unreachable when it does not answer)."""
    recorded = agent_credential.read(repo.root)
    if recorded is None or recorded.kind != "app":
        return
    now = time.time()
    if agent_credential.kept_for(recorded, agent_credential.read_kept(repo.root), now,
                                 agent_credential.REFRESH_MARGIN):
        return
    from bot.forge.errors import ForgeConfigError, ForgeError, NotFound, Unavailable
    from bot.pullrequest.target import clone_target, make_client

    target = clone_target(repo, os.environ if env is None else env)
    try:
        client = make_client(target)
        try:
            minted = client.installation_token()
        finally:
            client.close()
    except Unavailable as exc:
        raise Unreachable(UNREACHABLE.format(app_id=recorded.app_id, repository=target.repository,
                                             problem=" ".join(str(exc).split())[:300])) from None
    except (ForgeError, ForgeConfigError) as exc:
        owner = agent_credential.owner_of(repo.root)
        if isinstance(exc, NotFound) and recorded.installation_id is None and owner is not None:
            raise MemrepoError(NOT_INSTALLED.format(  # no installation of the App holds the shared repository
                app_id=recorded.app_id, memory=owner, repository=target.repository,
                account=target.repository.partition("/")[0])) from None
        raise MemrepoError(REFUSED.format(app_id=recorded.app_id, installation=recorded.installation_id,
                                          repository=target.repository,
                                          problem=" ".join(str(exc).split())[:300])) from None
    assert minted is not None  # an App's client
    token, expires_at = minted
    agent_credential.keep(repo.root, agent_credential.Kept(token, expires_at, str(recorded.app_id),
                                                           recorded.installation_id))
