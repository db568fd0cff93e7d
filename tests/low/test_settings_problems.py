"""Every start-up problem of a service's settings in one run (bot/settings.py `Problems`,
`combined`): `memrepo serve` and `memrepo worker` name every missing or bad variable at once,
in one line, instead of one per run."""

from __future__ import annotations

import pytest

from bot.errors import MemrepoError
from bot.settings import SERVICE_ENV, Problems, Settings, combined
from tests.conftest import run_cli

ALL = "REDIS_URL, MEMREPO_WEBHOOK_SECRET and MEMREPO_AGENT_TOKEN are not set"


def missing(name: str) -> MemrepoError:
    return MemrepoError(f"{name} is not set; the integrator's services read their configuration from the environment",
                        missing=name)


@pytest.mark.parametrize(("errors", "message"), [
    ([missing("A")], "A is not set; the integrator's services read their configuration from the environment"),
    ([missing("A"), missing("B")],
     "A and B are not set; the integrator's services read their configuration from the environment"),
    ([missing("A"), missing("B"), missing("C")],
     "A, B and C are not set; the integrator's services read their configuration from the environment"),
    ([MemrepoError("X must be a number")], "X must be a number"),
    ([missing("A"), MemrepoError("X must be a number"), MemrepoError("Y is bad")],
     "A is not set; the integrator's services read their configuration from the environment; "
     "X must be a number; Y is bad"),
    ([MemrepoError("X must be a number"), missing("A"), missing("A")],  # said once, missing names first
     "A is not set; the integrator's services read their configuration from the environment; X must be a number"),
])
def test_problems_combine_into_one_line(errors: list[MemrepoError], message: str) -> None:
    error = combined(errors)
    assert str(error) == message and "\n" not in str(error)
    assert error.details["problems"] == errors


def test_a_combined_problem_is_read_again_as_its_parts() -> None:
    problems = Problems()

    def fails(error: MemrepoError) -> str:
        raise error

    assert problems.read(lambda: fails(combined([missing("A"), MemrepoError("X is bad")])), "") == ""
    assert problems.read(lambda: fails(missing("B")), "") == ""
    assert problems.read(lambda: "fine", "") == "fine"
    with pytest.raises(MemrepoError) as caught:
        problems.check()
    assert str(caught.value).startswith("A and B are not set;") and str(caught.value).endswith("; X is bad")


def test_settings_name_every_missing_variable_at_once() -> None:
    with pytest.raises(MemrepoError, match=f"^{ALL};"):
        Settings.from_env({})
    with pytest.raises(MemrepoError, match=r"^MEMREPO_AGENT_TOKEN is not set; .*; MEMREPO_SSE_HEARTBEAT must be"):
        Settings.from_env({"REDIS_URL": "redis://127.0.0.1:1/0", "MEMREPO_WEBHOOK_SECRET": "s",
                           "MEMREPO_SSE_HEARTBEAT": "0"})


def clear(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*SERVICE_ENV, "MEMREPO_GITHUB_TOKEN", "MEMREPO_FORGE_TOKEN", "GITHUB_TOKEN", "MEMREPO_APP_ID",
                 "MEMREPO_APP_PRIVATE_KEY", "MEMREPO_APP_PRIVATE_KEY_FILE", "MEMREPO_ACCESS_TTL", "MEMREPO_LOCK_TTL"):
        monkeypatch.delenv(name, raising=False)


def test_serve_names_every_missing_setting_in_one_run(capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    clear(monkeypatch)
    monkeypatch.setenv("MEMREPO_ACCESS_TTL", "never")
    code, out, err = run_cli(capsys, "serve", "--port", "0")
    assert code == 1 and out == "" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and err.startswith(f"memrepo: {ALL};"), err
    assert "MEMREPO_ACCESS_TTL must be a positive number" in err


def test_worker_names_every_missing_setting_in_one_run(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    clear(monkeypatch)
    monkeypatch.setenv("MEMREPO_LOCK_TTL", "0")
    monkeypatch.setenv("MEMREPO_REPOS", "not a repository")
    code, out, err = run_cli(capsys, "worker", "--burst")
    assert code == 1 and out == "" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("memrepo: REDIS_URL is not set;"), err
    for words in ("the integrator needs forge credentials", "MEMREPO_LOCK_TTL must be a positive number",
                  "MEMREPO_REPOS must be *"):
        assert words in err, err
