"""The one order the agent's forge token is found in, and the rule an identity is recorded by:
tables over plain values (bot/agent_credential.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bot import agent_credential
from bot.agent_credential import Recorded
from bot.errors import MemrepoError

URL = "https://x-access-token:from-url@github.com/alice/memory.git"
AGENT = Recorded("ada-bot", token="recorded")
APP = Recorded("ada-app[bot]", app_id="901", private_key="KEY", installation_id=7)


@pytest.mark.parametrize(("recorded", "env", "url", "expected"), [
    (AGENT, {"MEMREPO_FORGE_TOKEN": "mine", "GITHUB_TOKEN": "gh"}, URL, "recorded"),  # the record comes first
    (None, {"MEMREPO_FORGE_TOKEN": "mine", "GITHUB_TOKEN": "gh"}, URL, "mine"),
    (None, {"GITHUB_TOKEN": "gh"}, URL, "gh"),
    (None, {"GITHUB_TOKEN": "  "}, URL, "from-url"),
    (None, {}, "git@github.com:alice/memory.git", None),
    (APP, {"GITHUB_TOKEN": "gh"}, URL, "gh"),  # an App has no standing token: git goes on down the order
])
def test_the_agents_token_is_found_in_one_order(recorded: Recorded | None, env: dict[str, str], url: str,
                                                expected: str | None) -> None:
    assert agent_credential.resolve(recorded, env, url) == expected


@pytest.mark.parametrize(("login", "permission", "person", "expected"), [
    ("ada-bot", "write", "alice", None),
    ("ada-bot", "admin", None, None),  # no person's token: nothing to compare with
    ("Alice", "admin", "alice", "same"),  # logins are compared as the forge compares them
    ("ada-bot", "read", "alice", "cannot-write"),
    ("ada-bot", "triage", "alice", "cannot-write"),
    ("ada-bot", "none", "alice", "cannot-write"),
    ("ada-app[bot]", None, "alice", None),  # an App's installation is checked on the repository itself
])
def test_an_identity_is_refused_when_it_is_the_person_or_cannot_write(
        login: str, permission: str | None, person: str | None, expected: str | None) -> None:
    assert agent_credential.refusal(login, permission, person) == expected


def test_the_record_is_the_owners_only_and_never_shows_its_secret(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    path = agent_credential.write(tmp_path, AGENT)
    assert path.stat().st_mode & 0o077 == 0 and "recorded" not in repr(agent_credential.read(tmp_path))
    assert agent_credential.read(tmp_path) == AGENT
    path.write_text("{not json")
    with pytest.raises(MemrepoError, match=r"cannot be read .*memrepo identity clear"):
        agent_credential.read(tmp_path)
    assert agent_credential.clear(tmp_path) and not agent_credential.clear(tmp_path)
    assert agent_credential.read(tmp_path) is None


NOW = 1_000_000.0
KEPT = agent_credential.Kept("ghs_kept", NOW + 3600, "901", 7)


@pytest.mark.parametrize(("recorded", "kept", "margin", "expected"), [
    (APP, KEPT, 0.0, "ghs_kept"),
    (APP, KEPT, 300.0, "ghs_kept"),  # an hour left: kept
    (APP, replace(KEPT, expires_at=NOW + 200), 0.0, "ghs_kept"),  # not expired: git may use it
    (APP, replace(KEPT, expires_at=NOW + 200), 300.0, None),  # less than five minutes left: minted anew
    (APP, replace(KEPT, expires_at=NOW - 1), 0.0, None),  # expired
    (APP, replace(KEPT, expires_at=NOW), 0.0, None),
    (APP, replace(KEPT, app_id="902"), 0.0, None),  # kept for another App
    (APP, replace(KEPT, installation_id=8), 0.0, None),  # or another installation
    (APP, None, 0.0, None),
    (replace(APP, installation_id=None), replace(KEPT, installation_id=8), 0.0, "ghs_kept"),  # a projection's:
    (replace(APP, installation_id=None), replace(KEPT, app_id="902"), 0.0, None),  # the shared repository's
    (AGENT, KEPT, 0.0, None),  # an account's token needs no installation token
    (None, KEPT, 0.0, None),
])
def test_a_kept_installation_token_is_used_while_it_is_the_apps_and_outlives_the_margin(
        recorded: Recorded | None, kept: agent_credential.Kept | None, margin: float, expected: str | None) -> None:
    assert agent_credential.kept_for(recorded, kept, NOW, margin) == expected


def test_git_sends_the_recorded_token_or_the_apps_kept_one_and_clear_forgets_both(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    assert agent_credential.git_token(tmp_path, NOW) is None  # nothing recorded: origin's URL
    agent_credential.write(tmp_path, AGENT)
    assert agent_credential.git_token(tmp_path, NOW) == "recorded"
    agent_credential.write(tmp_path, APP)
    assert agent_credential.git_token(tmp_path, NOW) is None  # no token kept yet
    kept = agent_credential.keep(tmp_path, KEPT)
    assert kept.stat().st_mode & 0o077 == 0 and "ghs_kept" not in repr(agent_credential.read_kept(tmp_path))
    assert agent_credential.git_token(tmp_path, NOW) == "ghs_kept"
    assert agent_credential.git_token(tmp_path, NOW + 3600) is None  # expired: origin's URL again
    kept.write_text("{not json")
    assert agent_credential.git_token(tmp_path, NOW) is None  # a cache that cannot be read is minted anew
    agent_credential.keep(tmp_path, KEPT)
    agent_credential.write(tmp_path, APP)  # a new identity: the token kept for the old one goes
    assert not kept.exists()
    agent_credential.keep(tmp_path, KEPT)
    assert agent_credential.clear(tmp_path)
    assert not kept.exists() and agent_credential.read(tmp_path) is None


def test_a_projection_writes_as_its_owner_with_its_own_kept_installation_token(tmp_path: Path) -> None:
    """A shared memory's projection reads its owning memory's record (an App's installation left
    to be found from the shared repository) and keeps its installation token in its own git
    directory; a projection whose owner records nothing writes with nothing recorded."""
    memory, projection = tmp_path / "memory", tmp_path / "memory.shared" / "team"
    for root in (memory, projection):
        (root / ".git").mkdir(parents=True)
    agent_credential.write(memory, APP)
    assert agent_credential.read(projection) is None  # not marked yet: a memory of its own
    agent_credential.mark_owner(projection, memory)
    assert agent_credential.owner_of(projection) == memory
    assert agent_credential.read(projection) == replace(APP, installation_id=None)
    assert agent_credential.git_token(projection, NOW) is None  # the owner's kept token is its installation's
    agent_credential.keep(memory, KEPT)
    assert agent_credential.git_token(projection, NOW) is None
    agent_credential.keep(projection, replace(KEPT, token="ghs_team", installation_id=8))
    assert agent_credential.git_token(projection, NOW) == "ghs_team"
    agent_credential.write(memory, AGENT)
    assert agent_credential.git_token(projection, NOW) == "recorded"
    agent_credential.clear(memory)
    assert agent_credential.read(projection) is None and agent_credential.git_token(projection, NOW) is None


@pytest.mark.parametrize("recorded", [APP, AGENT, None])
def test_a_projections_identity_is_the_owners_with_the_installation_left_open(recorded: Recorded | None) -> None:
    found = agent_credential.for_projection(recorded)
    assert found == (None if recorded is None else replace(recorded, installation_id=None))
