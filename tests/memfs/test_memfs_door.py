"""The memory core's front door (bot/memfs/__init__.py): every name it offers is there, is used by
another package, and opening it loads nothing until a name is asked for."""

from __future__ import annotations

import ast
import subprocess
import sys
import types
from pathlib import Path

import pytest

import bot.memfs

ROOT = Path(__file__).resolve().parents[2]


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


def test_every_name_the_door_offers_is_used_by_another_package() -> None:
    """The door is what the rest of memrepo needs, not a list of all there is: a name nobody
    outside the core imports is read from its own module behind the door."""
    used = set()
    for top in ("bot", "receiver", "localhub", "bench"):
        for path in (ROOT / top).rglob("*.py"):
            if path.is_relative_to(ROOT / "bot" / "memfs"):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module == "bot.memfs":
                    used |= {alias.name for alias in node.names}
    assert sorted(set(bot.memfs.__all__) - used) == []
