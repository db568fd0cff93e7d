"""A memory tool call is parsed once, where it enters (the agent session, the MCP server's
writes, `memrepo tool`, MemoryTool.call), and the parsed call is what the preview, the refusal
and the commit take. Counted through the real parse_call, wrapped, on a real repository made by
`memrepo init`, with no remote (edits that would need a pull request are not made here)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.agent import AgentSession
from bot.mcp.writes import Writes
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.tool import calls
from bot.memfs.tool.calls import parse_call
from bot.memfs.tool.memory_tool import MemoryTool
from tests.conftest import run_cli

HUMAN = "system/human.md"
TEA = {"command": "str_replace", "path": HUMAN, "old_str": "Nothing recorded yet.", "new_str": "Prefers tea.",
       "reason": "Note tea"}


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every raw call parse_call is given from now on, in order: the real function, wrapped
    wherever it was imported by name, so a module that parses again is counted too."""
    seen: list[object] = []
    real = calls.parse_call

    def counting(raw: object) -> calls.Call:
        seen.append(raw)
        return real(raw)

    for module in list(sys.modules.values()):
        if getattr(module, "parse_call", None) is real:
            monkeypatch.setattr(module, "parse_call", counting)
    return seen


@pytest.fixture
def session(memory: MemoryRepo, tmp_path: Path) -> Iterator[AgentSession]:
    with AgentSession(memory.root, "c1", home=tmp_path / "home", env={}, push=False,
                      background_dreams=False) as s:
        yield s


CALLS = [
    pytest.param({"command": "view", "path": HUMAN}, "view", id="view"),
    pytest.param(TEA, "direct", id="direct-edit"),
    pytest.param(json.dumps(TEA), "direct", id="json-text"),
    pytest.param({"name": "memory", "arguments": json.dumps(TEA)}, "direct", id="nested-arguments"),
    pytest.param("{not json", "refused", id="refused-by-the-parse"),
    pytest.param({**TEA, "old_str": "not in the file"}, "refused", id="refused-by-the-checks"),
    pytest.param({**TEA, "expected_revision": "f" * 40}, "refused", id="refused-by-the-revision"),
]


@pytest.mark.parametrize(("call", "route"), CALLS)
def test_the_session_parses_each_call_once(session: AgentSession, parses: list[object], call: object,
                                           route: str) -> None:
    result = session.handle_tool_call(call)
    assert result.route == route, result.message
    assert parses == [call]


def test_remember_parses_its_call_once(session: AgentSession, parses: list[object]) -> None:
    result = session.remember("Prefers tea.")
    assert result.ok and result.route == "direct", result.message
    assert len(parses) == 1


def test_the_mcp_writes_parse_each_call_once(session: AgentSession, parses: list[object]) -> None:
    result = Writes(session).perform(dict(TEA))
    assert result.ok and result.route == "direct", result.message
    assert len(parses) == 1


def test_memory_tool_call_parses_once_and_apply_takes_the_parsed_call(memory: MemoryRepo,
                                                                      parses: list[object]) -> None:
    tool = MemoryTool(memory, push=False)
    assert tool.call({"command": "view", "path": HUMAN}).ok
    assert len(parses) == 1
    call = parse_call(TEA)
    parses.clear()
    result = tool.apply(call)
    assert result.ok and result.command == "str_replace", result.message
    assert parses == []
    assert b"Prefers tea." in (memory.read(HUMAN) or b"")


def test_memrepo_tool_parses_the_call_once(memory: MemoryRepo, parses: list[object],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "tool", "--no-push", "--repo", str(memory.root), json.dumps(TEA))
    assert code == 0, out
    assert len(parses) == 1


def test_a_refusal_names_the_command_of_a_call_that_did_not_parse(session: AgentSession) -> None:
    """As before the parse moved out of the tool: the command named, else `?`."""
    named: dict[str, Any] = {"command": "str_replace", "path": HUMAN}
    assert session.handle_tool_call(named).command == "str_replace"
    assert session.handle_tool_call({"path": HUMAN}).command == "?"
    assert session.handle_tool_call('{"command": "bogus"}').command == "?"


# ------------------------------------------------------------------ text that is not valid Unicode
SURROGATES = [
    pytest.param({**TEA, "new_str": "Prefers \udcff tea."}, "new_str", id="edit-text"),
    pytest.param({**TEA, "reason": "Note \ud800 tea"}, "reason", id="reason"),
    pytest.param({"command": "view", "path": "system/\udcff"}, "path", id="view-path"),
    pytest.param(json.dumps({**TEA, "new_str": "\udcff"}), "new_str", id="json-escape"),
]


@pytest.mark.parametrize(("call", "param"), SURROGATES)
def test_the_session_refuses_a_lone_surrogate_by_name_and_changes_nothing(
        session: AgentSession, memory: MemoryRepo, parses: list[object], call: object, param: str) -> None:
    head, human = memory.head_sha(), memory.read(HUMAN)
    result = session.handle_tool_call(call)
    assert not result.ok and result.route == "refused"
    assert result.message.startswith(f"'{param}' is not valid Unicode: character "), result.message
    assert json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")  # printable as it is
    assert len(parses) == 1
    assert (memory.head_sha(), memory.read(HUMAN)) == (head, human)
    assert memory.dirty_paths() == []
