"""What MCP clients read about the server, pinned: the instructions of its initialize answer, its
resource, and every tool as the tools/list answer carries it (name, title, description, input
schema, annotations). `tests/fixtures/mcp/catalog.json` was saved once from the catalog as it
was; a change of wording, of a schema or of a hint shows up here as a diff to review, and the
fixture is updated on purpose, never regenerated blindly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.mcp import catalog
from bot.mcp.server import _tool

SAVED = Path(__file__).parent / "fixtures" / "mcp" / "catalog.json"


def current() -> dict[str, Any]:
    return {
        "instructions": catalog.SERVER_INSTRUCTIONS,
        "resources": [{"uri": catalog.CORE_MEMORY_URI, "name": catalog.CORE_MEMORY_NAME,
                       "title": catalog.CORE_MEMORY_TITLE, "description": catalog.CORE_MEMORY_DESCRIPTION}],
        "tools": [_tool(spec).model_dump(mode="json", by_alias=True, exclude_none=True)
                  for spec in catalog.tools(record=True)],
    }


@pytest.fixture(scope="module")
def saved() -> dict[str, Any]:
    return json.loads(SAVED.read_text(encoding="utf-8"))


def test_the_instructions_and_the_resource_read_as_saved(saved: dict[str, Any]) -> None:
    now = current()
    assert now["instructions"] == saved["instructions"]
    assert now["resources"] == saved["resources"]


def test_the_tools_are_the_saved_ones_in_the_saved_order(saved: dict[str, Any]) -> None:
    assert [tool["name"] for tool in current()["tools"]] == [tool["name"] for tool in saved["tools"]]


@pytest.mark.parametrize("name", [tool["name"] for tool in json.loads(SAVED.read_text(encoding="utf-8"))["tools"]])
def test_each_tool_reads_as_saved(saved: dict[str, Any], name: str) -> None:
    now = {tool["name"]: tool for tool in current()["tools"]}
    assert now[name] == next(tool for tool in saved["tools"] if tool["name"] == name)


def test_the_whole_answer_is_the_saved_one_byte_for_byte(saved: dict[str, Any]) -> None:
    assert json.dumps(current(), indent=2, ensure_ascii=False) + "\n" == SAVED.read_text(encoding="utf-8")
