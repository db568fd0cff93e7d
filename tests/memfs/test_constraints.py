"""Letta Code's `.memfs.config.json`, read as Letta reads it: its checks and messages, its globs,
the limits in force per layout, and the file `memrepo init` writes (tables, no git)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from bot.config import Limits
from bot.memfs.format import constraints
from bot.memfs.format.constraints import DEFAULTS, Constraints, ConstraintsError, glob_regex, in_force, parse

LIMIT = ".memfs.config.json"


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("reference/**", "reference/a.md", True),
    ("reference/**", "reference/a/b/c.md", True),
    ("reference/**", "reference", False),
    ("**/notes.md", "notes.md", True),
    ("**/notes.md", "a/b/notes.md", True),
    ("**/notes.md", "a/xnotes.md", False),
    ("*.md", "a.md", True),
    ("*.md", "a/b.md", False),
    ("a?.md", "ab.md", True),
    ("a?.md", "a/.md", False),
    ("a.md", "aXmd", False),  # the dot is a dot
    ("(x)+[y].md", "(x)+[y].md", True),  # regular-expression characters are literal
    ("a/**/b.md", "a/b.md", True),
    ("a/**/b.md", "a/x/y/b.md", True),
])
def test_glob(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).match(path)) is matches


def test_parse_keeps_what_the_file_sets_and_no_more() -> None:
    parsed = parse(json.dumps({"version": 1, "maxFileCharacters": 500.0,
                               "fileCharacterLimits": [{"pattern": "a/*", "maxCharacters": None}]}))
    assert (parsed.max_depth, parsed.max_file_chars, parsed.max_core_chars) == (None, 500, None)
    assert parsed.globs is not None and [(g.pattern, g.max_chars) for g in parsed.globs] == [("a/*", None)]
    assert parse('{"version": 1}') == Constraints()


@pytest.mark.parametrize(("text", "problems"), [
    ("{", None),  # invalid JSON: Letta quotes its JSON parser, memrepo Python's
    ("[]", ["expected a JSON object"]),
    ("null", ["expected a JSON object"]),
    ('{"version": 1, "version2": 1}', ["unknown field 'version2'"]),
    ('{}', ["version must be 1"]),
    ('{"version": true}', ["version must be 1"]),
    ('{"version": 1, "maxDepth": -1}', ["maxDepth must be a non-negative integer"]),
    ('{"version": 1, "maxDepth": 0}', []),
    ('{"version": 1, "maxDepth": 1.5}', ["maxDepth must be a non-negative integer"]),
    ('{"version": 1, "maxFileCharacters": 0}', ["maxFileCharacters must be a positive integer"]),
    ('{"version": 1, "maxCoreMemoryCharacters": "9"}', ["maxCoreMemoryCharacters must be a positive integer"]),
    ('{"version": 1, "maxFileCharacters": 9007199254740992}', ["maxFileCharacters must be a positive integer"]),
    ('{"version": 1, "maxFileCharacters": NaN}', None),  # not JSON
    ('{"version": 1, "fileCharacterLimits": {}}', ["fileCharacterLimits must be an array"]),
    ('{"version": 1, "fileCharacterLimits": [1]}', ["fileCharacterLimits[0] must be an object"]),
    ('{"version": 1, "fileCharacterLimits": [{"pattern": "a", "maxCharacters": 1, "x": 0}]}',
     ["fileCharacterLimits[0]: unknown field 'x'"]),
    ('{"version": 1, "fileCharacterLimits": [{"pattern": "a"}]}',
     ["fileCharacterLimits[0]: maxCharacters must be a positive integer or null"]),
    ('{"version": 1, "fileCharacterLimits": [{"pattern": "../a", "maxCharacters": null}]}',
     ["fileCharacterLimits[0]: pattern must be a non-empty repo-relative glob using '/'"]),
    ('{"version": 1, "fileCharacterLimits": [{"pattern": "a\\\\b", "maxCharacters": null}]}',
     ["fileCharacterLimits[0]: pattern must be a non-empty repo-relative glob using '/'"]),
    ('{"version": 1, "fileCharacterLimits": [{"pattern": "a/b**", "maxCharacters": null}]}',
     ["fileCharacterLimits[0]: '**' must be a complete path segment"]),
])
def test_parse_refuses_as_letta_does(text: str, problems: list[str] | None) -> None:
    if problems == []:
        parse(text)
        return
    with pytest.raises(ConstraintsError) as caught:
        parse(text)
    if problems is None:
        assert [p.split(" (")[0] for p in caught.value.problems] == ["invalid JSON"]
    else:
        assert caught.value.problems == problems


def test_limits_per_file() -> None:
    parsed = parse(json.dumps({"version": 1, "maxFileCharacters": 100, "fileCharacterLimits": [
        {"pattern": "reference/big/**", "maxCharacters": None}, {"pattern": "reference/**", "maxCharacters": 300}]}))
    assert parsed.file_limit("system/a.md") == (100, "maxFileCharacters")
    assert parsed.file_limit("reference/a.md") == (300, "glob 'reference/**'")
    assert parsed.file_limit("reference/big/a.md") == (None, "glob 'reference/big/**'")
    assert Constraints().file_limit("a.md") is None


def test_in_force_per_layout() -> None:
    parsed = parse('{"version": 1, "maxDepth": 4}')
    assert in_force(None, "v1") is None
    assert in_force(parsed, "v1") == parsed
    assert in_force(None, "v2") == DEFAULTS
    assert in_force(parsed, "v2") == replace(DEFAULTS, max_depth=4)


@pytest.mark.parametrize(("path", "layout", "counted"), [
    ("system/a.md", "v1", True),
    ("reference/x/a.md", "v1", True),
    ("memory/system/a.md", "v1", True),
    ("notes/a.md", "v1", False),
    ("system/a.txt", "v1", False),
    ("notes/a.md", "v2", True),
    ("a.md", "v2", True),
    ("skills/x/SKILL.md", "v2", False),
])
def test_which_files_letta_counts(path: str, layout: str, counted: bool) -> None:
    assert constraints.covers(path, layout) is counted


def test_render_is_lettas_format_with_memrepos_limits() -> None:
    limits = Limits(file_chars=30000, core_chars=50000, system_depth=1)
    assert constraints.render(limits, "v2") == (
        '{\n  "version": 1,\n  "maxDepth": 1,\n  "maxFileCharacters": 30000,\n  "maxCoreMemoryCharacters": 50000\n}\n')
    v1 = parse(constraints.render(limits, "v1"))
    assert v1.max_depth == 2  # Letta counts from the root, system_depth from system/
    # Letta's own default file, byte for byte.
    assert constraints.render(Limits(), "v2") == json.dumps(
        {"version": 1, "maxDepth": 2, "maxFileCharacters": 20000, "maxCoreMemoryCharacters": 65536}, indent=2) + "\n"
