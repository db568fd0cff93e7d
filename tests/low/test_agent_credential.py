"""The one order the agent's forge token is found in, and the rule an identity is recorded by:
tables over plain values (bot/agent_credential.py)."""

from __future__ import annotations

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
