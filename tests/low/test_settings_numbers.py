"""The numbers read from the environment (bot/settings.py): a positive number of seconds and a
positive whole number, each with the caller's own error text, in one table each."""

from __future__ import annotations

import pytest

from bot.errors import MemrepoError
from bot.settings import positive_number, positive_whole_number

NAME = "MEMREPO_SOME_SETTING"
ERROR = "{name} is not right: {value!r}"


@pytest.mark.parametrize(("raw", "expected"), [
    (None, 7.5),  # unset: the default
    ("", 7.5),
    ("   ", 7.5),
    ("3", 3.0),
    (" 0.25 ", 0.25),
    ("1e3", 1000.0),
    ("0", None),
    ("-1", None),
    ("soon", None),
    ("nan", None),
    ("inf", None),
])
def test_a_positive_number(raw: str | None, expected: float | None) -> None:
    env = {} if raw is None else {NAME: raw}
    if expected is not None:
        assert positive_number(NAME, env, default=7.5, error=ERROR) == expected
        return
    with pytest.raises(MemrepoError) as info:
        positive_number(NAME, env, default=7.5, error=ERROR)
    assert str(info.value) == ERROR.format(name=NAME, value=raw.strip())


@pytest.mark.parametrize(("raw", "expected"), [
    (None, 20),
    (" ", 20),
    ("1", 1),
    (" 400000 ", 400_000),
    ("05", 5),
    ("0", None),
    ("-3", None),
    ("+3", None),
    ("2.5", None),
    ("1e3", None),
    ("²", None),  # a digit to str.isdigit, not a number to int()
    ("many", None),
])
def test_a_positive_whole_number(raw: str | None, expected: int | None) -> None:
    env = {} if raw is None else {NAME: raw}
    if expected is not None:
        assert positive_whole_number(NAME, env, default=20, error=ERROR) == expected
        return
    with pytest.raises(MemrepoError) as info:
        positive_whole_number(NAME, env, default=20, error=ERROR)
    assert str(info.value) == ERROR.format(name=NAME, value=raw.strip())


def test_the_process_environment_is_read_when_none_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NAME, "12")
    assert positive_number(NAME, default=1.0, error=ERROR) == 12.0
    assert positive_whole_number(NAME, default=1, error=ERROR) == 12
