"""GitHub's events that say someone's access changed (`member`, `membership`, `organization`,
`team`; shapes as in octokit's webhook schemas) drop the integrator's cached permissions: for
the repository the event names, else for every repository of its organisation, and no other."""

from __future__ import annotations

from typing import Any

import pytest

from bot.integrator.permissions import forget
from bot.redis_keys import permission_key
from bot.settings import Settings
from webhooks.intake.routing import BadPayload, ForgetPermissions, route

SETTINGS = Settings(redis_url="redis://unused", webhook_secret="s" * 16, agent_token="t" * 16)
REPOSITORY = {"id": 1, "full_name": "acme/memory", "name": "memory", "owner": {"login": "acme"}}
ORG = {"login": "acme", "id": 9}
USER = {"login": "wes", "id": 5}

ROWS: list[tuple[str, str, dict[str, Any], ForgetPermissions]] = [
    ("member-removed", "member", {"action": "removed", "member": USER, "repository": REPOSITORY},
     ForgetPermissions("acme", "memory")),
    ("member-edited", "member", {"action": "edited", "member": USER, "repository": REPOSITORY,
                                 "changes": {"old_permission": {"from": "write"}}},
     ForgetPermissions("acme", "memory")),
    ("membership-removed", "membership", {"action": "removed", "scope": "team", "member": USER, "team": {"id": 3},
                                          "organization": ORG}, ForgetPermissions("acme")),
    ("organization-member-removed", "organization", {"action": "member_removed", "membership": {"user": USER},
                                                     "organization": ORG}, ForgetPermissions("acme")),
    ("team-removed-from-repository", "team", {"action": "removed_from_repository", "team": {"id": 3},
                                              "repository": REPOSITORY, "organization": ORG},
     ForgetPermissions("acme", "memory")),
    ("team-edited", "team", {"action": "edited", "team": {"id": 3}, "organization": ORG,
                             "changes": {"permission": {"from": "push"}}}, ForgetPermissions("acme")),
]


@pytest.mark.parametrize(("event", "payload", "action"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_an_access_event_forgets_the_cached_permissions(event: str, payload: dict[str, Any],
                                                        action: ForgetPermissions) -> None:
    assert route(event, {**payload, "sender": {"login": "sam"}}, SETTINGS).actions == (action,)


def test_an_access_event_naming_no_organisation_or_repository_is_refused() -> None:
    with pytest.raises(BadPayload):
        route("organization", {"action": "member_removed", "organization": {"login": "bad login"}}, SETTINGS)


def test_forgetting_drops_the_repository_or_the_organisation_and_nothing_else(rclient) -> None:  # type: ignore[no-untyped-def]
    keys = {repo: permission_key(repo, "wes") for repo in ("acme/memory", "acme/other", "acme-x/memory", "zed/memory")}
    for key in keys.values():
        rclient.set(key, "write")
    assert forget(rclient, "Acme", "Memory") == 1
    assert [repo for repo, key in keys.items() if rclient.get(key)] == ["acme/other", "acme-x/memory", "zed/memory"]
    assert forget(rclient, "acme") == 1
    assert [repo for repo, key in keys.items() if rclient.get(key)] == ["acme-x/memory", "zed/memory"]
