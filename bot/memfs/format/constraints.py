"""Letta Code's memory constraints: `.memfs.config.json` at the memory's root, read as Letta
reads it (the same keys, checks, glob syntax and messages). Pure.

    {"version": 1, "maxDepth": 2, "maxFileCharacters": 20000, "maxCoreMemoryCharacters": 65536,
     "fileCharacterLimits": [{"pattern": "reference/**", "maxCharacters": 40000}]}

- `maxDepth`: folders between the root and a memory file (`system/a.md` is 1).
- `maxFileCharacters`: characters (code points) of one whole file, frontmatter included;
  `fileCharacterLimits` overrides it by glob (`**` a whole segment, `*`, `?`), the first
  match winning, and a `null` limit leaves the matching files uncapped.
- `maxCoreMemoryCharacters`: all root Markdown together, counted in a v2 memory only.

Where Letta applies them: to `system/` and `reference/` Markdown in a v1 memory with the file,
and to all Markdown but `skills/` in a v2 memory, where Letta's defaults fill in what the
file leaves out (or all of it, without the file). memrepo's own limits (`.memrepo/config.yml`)
cover what these do not.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from bot.bounded_json import loads_bounded
from bot.config import Limits
from bot.memfs.format.layout import SKILLS, V2

# Its config parser, verbatim (after `.memfs.config.json: `).
CONFIG_BAD_JSON = "invalid JSON ({error})"
CONFIG_LIMIT_PATTERN = "fileCharacterLimits[{index}]: pattern must be a non-empty repo-relative glob using '/'"
CONFIG_LIMIT_MAX = "fileCharacterLimits[{index}]: maxCharacters must be a positive integer or null"

CONFIG_FILE = ".memfs.config.json"
UPDATE_ENV = "LETTA_MEMORY_CONSTRAINTS_UPDATE"  # Letta's: a person's approval of a change to it
VERSION = 1
_KEYS = ("version", "maxDepth", "maxFileCharacters", "maxCoreMemoryCharacters", "fileCharacterLimits")
_LEGACY_PATH = re.compile(r"(?:memory/)?(?:system|reference)/.*\.md")
_SAFE = 2**53 - 1
_SPECIAL = set("^$.*+?()[]{}|\\")


class ConstraintsError(ValueError):
    """The file is not a valid constraints config; `problems` are Letta's messages."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class GlobLimit:
    pattern: str
    max_chars: int | None  # None: uncapped
    regex: re.Pattern[str]


@dataclass(frozen=True)
class Constraints:
    """The limits in force (None: the key is not set)."""

    max_depth: int | None = None
    max_file_chars: int | None = None
    max_core_chars: int | None = None
    globs: tuple[GlobLimit, ...] | None = None

    def file_limit(self, path: str) -> tuple[int | None, str] | None:
        """(limit, where it comes from) for one file: a glob's (limit None: uncapped) or
        maxFileCharacters; None when neither sets one."""
        for glob in self.globs or ():
            if glob.regex.match(path):
                return glob.max_chars, f"glob '{glob.pattern}'"
        if self.max_file_chars is not None:
            return self.max_file_chars, "maxFileCharacters"
        return None


DEFAULTS = Constraints(max_depth=2, max_file_chars=20000, max_core_chars=65536)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Letta's glob: `**/` any folders (or none), `**` anything, `*` and `?` within a name."""
    source = "^"
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "*":
            if pattern[index + 1:index + 2] == "*":
                if pattern[index + 2:index + 3] == "/":
                    source += "(?:.*/)?"
                    index += 2
                else:
                    source += ".*"
                    index += 1
            else:
                source += "[^/]*"
        elif char == "?":
            source += "[^/]"
        else:
            source += "\\" + char if char in _SPECIAL else char
        index += 1
    return re.compile(source + r"\Z")


def _integer(value: object) -> int | None:
    """A JSON number JavaScript calls a safe integer (5.0 is one), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and -_SAFE <= value <= _SAFE:
        return value
    return None


def _no_constants(name: str) -> Any:
    raise ValueError(f"Unexpected token {name}")


def parse(text: str) -> Constraints:
    """The constraints in the file's text, or ConstraintsError with every problem, in Letta's
    words and order."""
    try:
        value = loads_bounded(text, what="the config", parse_constant=_no_constants)
    except ValueError as exc:
        raise ConstraintsError([CONFIG_BAD_JSON.format(error=exc)]) from None
    if not isinstance(value, dict):
        raise ConstraintsError(["expected a JSON object"])
    problems = [f"unknown field '{key}'" for key in value if key not in _KEYS]
    if _integer(value.get("version")) != VERSION:
        problems.append("version must be 1")
    depth = _integer(value["maxDepth"]) if "maxDepth" in value else None
    if "maxDepth" in value and (depth is None or depth < 0):
        problems.append("maxDepth must be a non-negative integer")
    sizes: dict[str, int | None] = {}
    for key in ("maxFileCharacters", "maxCoreMemoryCharacters"):
        sizes[key] = _integer(value[key]) if key in value else None
        if key in value and (sizes[key] is None or sizes[key] < 1):  # type: ignore[operator]
            problems.append(f"{key} must be a positive integer")
    globs: list[GlobLimit] = []
    overrides = value.get("fileCharacterLimits")
    if "fileCharacterLimits" in value and not isinstance(overrides, list):
        problems.append("fileCharacterLimits must be an array")
    for index, item in enumerate(overrides if isinstance(overrides, list) else []):
        glob = _glob_limit(index, item, problems)
        if glob is not None:
            globs.append(glob)
    if problems:
        raise ConstraintsError(problems)
    return Constraints(depth, sizes["maxFileCharacters"], sizes["maxCoreMemoryCharacters"],
                       tuple(globs) if "fileCharacterLimits" in value else None)


def _glob_limit(index: int, item: object, problems: list[str]) -> GlobLimit | None:
    if not isinstance(item, dict):
        problems.append(f"fileCharacterLimits[{index}] must be an object")
        return None
    before = len(problems)
    problems += [f"fileCharacterLimits[{index}]: unknown field '{key}'"
                 for key in item if key not in ("pattern", "maxCharacters")]
    pattern = item.get("pattern")
    if (not isinstance(pattern, str) or not pattern or pattern.startswith("/") or "\\" in pattern
            or ".." in pattern.split("/")):
        problems.append(CONFIG_LIMIT_PATTERN.format(index=index))
    elif any("**" in segment and segment != "**" for segment in pattern.split("/")):
        problems.append(f"fileCharacterLimits[{index}]: '**' must be a complete path segment")
    limit = item.get("maxCharacters")
    size = _integer(limit)
    if limit is not None and (size is None or size < 1):
        # Letta reads a missing maxCharacters as `undefined`, which is not null: refused too.
        problems.append(CONFIG_LIMIT_MAX.format(index=index))
    elif "maxCharacters" not in item:
        problems.append(CONFIG_LIMIT_MAX.format(index=index))
    if len(problems) > before:
        return None
    assert isinstance(pattern, str)
    return GlobLimit(pattern, size, glob_regex(pattern))


def in_force(parsed: Constraints | None, layout: str) -> Constraints | None:
    """The constraints Letta enforces: a v2 memory's start from Letta's defaults (the file's
    keys replacing them); a v1 memory has only what its file sets, or none without one."""
    if layout != V2:
        return parsed
    if parsed is None:
        return DEFAULTS
    return replace(DEFAULTS, **{f.name: getattr(parsed, f.name) for f in fields(Constraints)
                                if getattr(parsed, f.name) is not None})


def covers(path: str, layout: str) -> bool:
    """Whether Letta's constraints count this file: system/ and reference/ Markdown in v1,
    all Markdown but skills/ in v2."""
    if path.startswith(SKILLS):
        return False
    if layout == V2:
        return path.endswith(".md")
    return bool(_LEGACY_PATH.fullmatch(path))


def depth(path: str) -> int:
    """Folders between the root and the file, as Letta counts them."""
    return path.count("/")


def render(limits: Limits, layout: str) -> str:
    """The `.memfs.config.json` that holds memrepo's limits as Letta's keys, as Letta writes
    it (two-space JSON and a newline). Letta counts depth from the root, memrepo's
    system_depth in v1 from system/, hence one more folder there."""
    config: Mapping[str, int] = {
        "version": VERSION,
        "maxDepth": limits.system_depth + (0 if layout == V2 else 1),
        "maxFileCharacters": limits.file_chars,
        "maxCoreMemoryCharacters": limits.core_chars,
    }
    return json.dumps(config, indent=2) + "\n"
