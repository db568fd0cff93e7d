"""The memory core's front door (bot/memfs/__init__.py): every name it offers is there, and
opening it loads nothing until a name is asked for."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

import bot.memfs


@pytest.mark.parametrize("name", bot.memfs.__all__)
def test_every_name_the_door_offers_is_behind_it(name: str) -> None:
    assert getattr(bot.memfs, name) is not None
    assert name in dir(bot.memfs)


def test_a_namespace_is_the_module_behind_the_door() -> None:
    from bot.memfs.format import layout

    assert bot.memfs.layout is layout
    assert isinstance(bot.memfs.refs, types.ModuleType)


def test_a_name_the_door_does_not_offer_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        bot.memfs.nothing_here  # noqa: B018


def test_the_door_loads_only_what_is_asked_for() -> None:
    """A hook that reads one ref goes through the door; it must not load libgit2 on the way."""
    probe = ("import sys; from bot.memfs import refs; "
             "print(sorted(m for m in sys.modules if m.startswith(('bot.memfs', 'pygit2'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['bot.memfs', 'bot.memfs.store', 'bot.memfs.store.refs']"
