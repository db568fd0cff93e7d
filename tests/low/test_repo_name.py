"""The repository-name rule every part reads `owner/name` by (bot/settings.py REPO_NAME,
is_repo_name): GitHub's, by table. An owner is 1-39 ASCII letters, digits and hyphens, neither
first nor last a hyphen; a name is 1-100 ASCII letters, digits, '.', '_' and '-'; the whole
is matched, so nothing may trail it (not even a newline)."""

from __future__ import annotations

import pytest

from bot.settings import REPO_NAME, is_repo_name

VALID = [
    "a/b",
    "octo-cat/memory.1",
    "Alice/Memory",
    "0/0",
    "a1-b2/x_y-z.w",
    "octo/.github",
    "o" * 39 + "/r",
    "a-b-c/" + "n" * 100,
    "owner/under_score",
    "owner/dot.ted",
    "owner/-leading-hyphen",
]

INVALID = [
    "",
    "a",
    "/b",
    "a/",
    "a//b",
    "a/b/c",
    "-a/b",  # an owner neither starts
    "a-/b",  # nor ends with a hyphen
    "o" * 40 + "/r",  # owners have at most 39 characters
    "o/" + "n" * 101,  # names at most 100
    "a_b/c",  # an owner has no underscore
    "a.b/c",  # nor a dot
    "a/b c",
    "a/b!",
    "a/b\n",
    " a/b",
    "a/b ",
    "é/b",
    "a/é",
    "a\\b",
]


@pytest.mark.parametrize("name", VALID)
def test_a_github_repository_name_is_accepted(name: str) -> None:
    assert is_repo_name(name)
    match = REPO_NAME.fullmatch(name)
    assert match is not None and f"{match['owner']}/{match['name']}" == name


@pytest.mark.parametrize("name", INVALID)
def test_anything_else_is_refused(name: str) -> None:
    assert not is_repo_name(name)


@pytest.mark.parametrize("value", [None, 12, b"a/b", ["a/b"]])
def test_only_text_is_a_name(value: object) -> None:
    assert not is_repo_name(value)
