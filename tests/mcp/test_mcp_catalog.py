"""What MCP clients read about the server, pinned: the instructions of its initialize answer, its
resource, and every tool as the tools/list answer carries it (name, title, description, input
schema, annotations). `tests/fixtures/mcp/catalog.json` was saved once from the catalog as it
was; a change of wording, of a schema or of a hint shows up here as a diff to review, and the
fixture is updated on purpose, never regenerated blindly. The words live in
templates/mcp/tools.yml.j2: it names no tool or argument the catalog lacks, holds each text as
one paragraph, and is read once, on first use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.mcp import catalog
from bot.mcp.server import _tool

SAVED = Path(__file__).parents[1] / "fixtures" / "mcp" / "catalog.json"


def current() -> dict[str, Any]:
    return {
        "instructions": catalog.instructions(),
        "resources": [{"uri": catalog.CORE_MEMORY_URI, "name": catalog.CORE_MEMORY_NAME,
                       "title": catalog.core_memory_title(), "description": catalog.core_memory_description()}],
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


def test_the_words_file_names_only_tools_and_arguments_the_catalog_has() -> None:
    words = catalog.words()
    specs = {spec.name: spec for spec in catalog.tools(record=True)}
    assert list(words["tools"]) == list(specs)
    stray = [f"{name}.{argument}" for name, entry in words["tools"].items()
             for argument in entry.get("arguments") or {} if argument not in specs[name].properties]
    assert stray == []
    redundant = [f"{name}.{argument}" for name, entry in words["tools"].items()
                 for argument, text in (entry.get("arguments") or {}).items()
                 if words["shared_arguments"].get(argument) == text]
    assert redundant == []
    used = {argument for spec in specs.values() for argument in spec.properties
            if argument not in (words["tools"][spec.name].get("arguments") or {})}
    assert sorted(set(words["shared_arguments"]) - used) == []


def test_every_word_is_one_paragraph_of_text() -> None:
    words = catalog.words()
    texts = [words["instructions"], words["route_note"], *words["resource"].values(),
             *words["shared_arguments"].values()]
    for entry in words["tools"].values():
        texts += [entry["title"], entry["description"], *(entry.get("arguments") or {}).values()]
    assert [text for text in texts if not isinstance(text, str) or not text or text != " ".join(text.split())] == []


def test_the_words_are_read_on_first_use_not_on_import() -> None:
    code = ("import sys\n"
            "from bot.mcp import catalog\n"
            "before = catalog.words.cache_info().currsize\n"
            "catalog.tools()[0].description, catalog.instructions(), catalog.tools()[1].input_schema\n"
            "print(before, catalog.words.cache_info().misses)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["0", "1"]
