"""The receiver's settings (bot/settings.py's Settings): read from the environment, every missing
or malformed one a start-up error naming it, and create_app reading them."""

from __future__ import annotations

import pytest

from bot.errors import MemrepoError
from bot.settings import MAX_BODY_BYTES, Settings
from tests.webhooks.deliveries import (
    BOT,
)
from webhooks.intake import create_app

ENV = {"REDIS_URL": "redis://127.0.0.1:6379/0", "MEMREPO_WEBHOOK_SECRET": "s", "MEMREPO_AGENT_TOKEN": "t"}


def test_settings_come_from_the_environment() -> None:
    settings = Settings.from_env({**ENV, "MEMREPO_REPOS": " Alice/Memory, bob/notes ", "MEMREPO_BOT_LOGIN": BOT,
                                  "MEMREPO_SSE_HEARTBEAT": "2.5"})
    assert settings.repos == frozenset({"alice/memory", "bob/notes"})
    assert settings.accepts("alice/MEMORY") and not settings.accepts("carol/memory")
    assert settings.is_bot("Memrepo-Integrator[bot]") and not settings.is_bot("alice")
    assert settings.heartbeat_seconds == 2.5
    assert settings.max_body_bytes == MAX_BODY_BYTES == 25 * 1024 * 1024
    plain = Settings.from_env(ENV)
    assert plain.repos is None and plain.accepts("anyone/anything")  # any installed repository
    assert plain.bot_login is None and not plain.is_bot("anyone")
    assert plain.heartbeat_seconds == 15
    assert Settings.from_env({**ENV, "MEMREPO_REPOS": "*"}).repos is None


@pytest.mark.parametrize("name", ["REDIS_URL", "MEMREPO_WEBHOOK_SECRET", "MEMREPO_AGENT_TOKEN"])
def test_a_missing_setting_is_a_start_up_error_naming_it(name: str) -> None:
    env = {k: v for k, v in ENV.items() if k != name}
    with pytest.raises(MemrepoError, match=f"^{name} is not set"):
        Settings.from_env(env)
    with pytest.raises(MemrepoError, match=f"^{name} is not set"):
        Settings.from_env({**env, name: "  "})


def test_create_app_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ENV:
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(MemrepoError, match=r"^REDIS_URL, MEMREPO_WEBHOOK_SECRET and MEMREPO_AGENT_TOKEN are not set"):
        create_app()
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    assert create_app().extensions["memrepo.webhooks"].settings.agent_token == "t"


@pytest.mark.parametrize(("changes", "words"), [
    ({"REDIS_URL": "localhost:6379"}, "REDIS_URL must be a Redis URL"),
    ({"MEMREPO_REPOS": "alice"}, "MEMREPO_REPOS must be * (any installed repository) or a comma-separated list"),
    ({"MEMREPO_REPOS": "alice/memory,a b/c"}, "found 'a b/c'"),
    ({"MEMREPO_SSE_HEARTBEAT": "0"}, "MEMREPO_SSE_HEARTBEAT must be a positive number"),
    ({"MEMREPO_SSE_HEARTBEAT": "soon"}, "MEMREPO_SSE_HEARTBEAT must be a positive number"),
    ({"MEMREPO_SSE_HEARTBEAT": "nan"}, "MEMREPO_SSE_HEARTBEAT must be a positive number"),
])
def test_bad_settings_are_start_up_errors(changes: dict[str, str], words: str) -> None:
    with pytest.raises(MemrepoError) as refused:
        Settings.from_env({**ENV, **changes})
    assert words in str(refused.value)
