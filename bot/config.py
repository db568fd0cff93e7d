"""The policy of a memory repository (`.memrepo/config.yml`), parsed into plain data.

The policy is reviewed like any other memory change, so parsing is strict: an unknown key or
a value of the wrong type is an error that names the key, not a silent default.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field, fields, replace
from fnmatch import fnmatchcase
from typing import Any

import yaml

# The policy file (.memrepo/config.yml); shown after "path: ".
POLICY_NOT_POSITIVE = "'{key}' must be a positive whole number, found {value!r}"
POLICY_NOT_CHOICE = "'{key}' must be one of {choices}, found {value!r}"
POLICY_NOT_TEXT = "'{key}' must be text, found {kind}"
POLICY_UNKNOWN_KEY = "unknown key '{key}' (allowed: {allowed})"
POLICY_TRUSTED_SOURCES = (
    "trusted_sources must be a list of tool sources such as 'tool:calculator' (tool results the agent may "
    "act on without a person's review; external:... sources are never trusted)"
)

# Characters a reader cannot see, by Unicode data: Default_Ignorable_Code_Point (zero-width
# joiners, variation selectors, U+034F, the Hangul fillers, the tag block), the general
# categories format (Cf), line and paragraph separators and lone surrogates, and every space
# but U+0020 (U+00A0, U+2007, U+3000 look like it; U+200A is near nothing). Python's unicodedata
# has no Default_Ignorable property; the regex package carries it. Compiled on first use: ASCII
# names never need it.
_INVISIBLE_SET = r"[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Zs}--\x20]"
# Characters the Unicode names call blank or a filler: U+2800 BRAILLE PATTERN BLANK, which is
# neither ignorable nor White_Space, draws nothing; the gap fillers draw nearly nothing.
_BLANK_WORDS = frozenset(("BLANK", "FILLER"))
_invisible_pattern: Any = None


def invisible(char: str) -> bool:
    """Whether `char` shows nothing (or a space that is not the space) where it stands: a name
    holding one looks like another name, so names refuse them and `fold` drops them."""
    if char.isascii():
        return False
    global _invisible_pattern
    if _invisible_pattern is None:
        import regex

        _invisible_pattern = regex.compile(_INVISIBLE_SET, regex.V1)
    return (_invisible_pattern.match(char) is not None
            or not _BLANK_WORDS.isdisjoint(unicodedata.name(char, "").split()))


def fold(path: str) -> str:
    """The spelling a case-insensitive, normalising file system (APFS, HFS+, NTFS) gives
    `path`: letter case folded, Unicode composed (NFC), invisible characters (`invisible`)
    dropped. Two paths that fold alike are one file there, so protection and collisions
    compare these."""
    visible = path if path.isascii() else "".join(char for char in path if not invisible(char))
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", visible).casefold())

CONFIG_PATH = ".memrepo/config.yml"
LETTA_RULES_PATH = ".memfs.config.json"  # Letta Code's limits (bot/memfs/format/constraints.py reads them)
# The shared memories attached to the memory (bot/memfs/shared/record.py): what they hold reaches
# the agent's prompt, so attaching one is a rule change too.
SHARED_PATH = ".memrepo/shared.yml"
RULE_FILES = frozenset({CONFIG_PATH.casefold(), LETTA_RULES_PATH.casefold(), SHARED_PATH.casefold()})

MERGE_MODES = ("auto", "explicit", "review")
DREAM_TRIGGERS = ("step-count", "compaction", "off")
DREAM_STRATEGIES = ("verbatim", "llm", "anthropic")

# Tool results trusted when `trusted_sources` is not set: tools that read the user's own
# workspace, as the harnesses name them. Claude Code: Read, Grep, Glob, LS, NotebookRead.
# Letta Code: its Read, Grep, Glob and ListDir families (src/tools/canonical.ts). Not in it:
# what reaches outside the machine (WebFetch, WebSearch, MCP tools of other servers) and any
# shell (Bash, exec_command, ...): a command can fetch anything, so its output is outside content.
WORKSPACE_READ_TOOLS = tuple(f"tool:{name}" for name in (
    "Read", "Grep", "Glob", "LS", "NotebookRead",
    "read_file", "ReadFile", "grep_files", "GrepFiles", "list_dir", "ListDir",
))


# memrepo's own memory view and edit tools, served as the MCP server `memrepo` (the name
# `claude-code install` registers). Their results are the memory itself or memrepo's report of
# a write, so they make no turn untrusted, or every write after a session's first would become
# a pull request. Its searches, `memory_why`, `memory_at` and `memory_record` are not among
# them: they quote transcripts and past memory, which may hold what came from outside.
OWN_MEMORY_TOOLS = ("memory_view", "memory_create", "memory_str_replace", "memory_insert", "memory_delete",
                    "memory_rename", "memory_update_description", "memory_apply_patch", "core_memory_append",
                    "core_memory_replace", "archival_memory_insert")
OWN_SERVER = "memrepo"


def own_tool_sources(server: str = OWN_SERVER) -> tuple[str, ...]:
    """The transcript sources of OWN_MEMORY_TOOLS' results as an MCP client names a server's
    tools (`tool:mcp__<server>__<tool>`)."""
    return tuple(f"tool:mcp__{server}__{name}" for name in OWN_MEMORY_TOOLS)


class PolicyError(ValueError):
    """The policy file is not valid; the message names the key and what is wrong."""


@dataclass(frozen=True)
class Limits:
    file_chars: int = 20000
    core_chars: int = 65536
    system_depth: int = 2
    tree_lines: int = 500
    tree_chars: int = 20000
    tree_children: int = 50


@dataclass(frozen=True)
class DirectCommit:
    max_changed_lines: int = 40


@dataclass(frozen=True)
class Dream:
    trigger: str = "step-count"
    steps: int = 25
    strategy: str = "verbatim"


@dataclass(frozen=True)
class ReviewRules:
    """Who may stand in for a review. `allow_author_merge`: a person who merges, on the forge
    or with `memrepo review merge`, a pull request their own account opened (one account for
    the person and their agents: the forge lets nobody approve their own pull request) is
    taken as that pull request's review. Off by default: then only someone other than the
    author approves."""

    allow_author_merge: bool = False


@dataclass(frozen=True)
class Policy:
    merge: str = "explicit"
    merge_instructions: str = ""
    # Letta Code's constraints file is one too: Letta's hook asks a person to approve a change of it.
    protected: tuple[str, ...] = ("system/persona.md", ".memfs.config.json")
    # Tool results (`tool:<name>`) whose content is not untrusted; a list in config.yml replaces it.
    trusted_sources: tuple[str, ...] = WORKSPACE_READ_TOOLS
    direct_commit: DirectCommit = field(default_factory=DirectCommit)
    dream: Dream = field(default_factory=Dream)
    limits: Limits = field(default_factory=Limits)
    review: ReviewRules = field(default_factory=ReviewRules)


DEFAULT_POLICY = Policy()


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping names one key twice. YAML readers disagree on which value counts (PyYAML keeps
    the last, Letta's parser refuses the file), so memrepo refuses it too."""

    def __init__(self, key: object, mark: yaml.Mark) -> None:
        super().__init__(None, None, f"the key '{key}' appears more than once (keep one)", mark)
        self.key = key


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader, through libyaml when PyYAML has it, refusing repeated keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *defaults` may override keys on purpose
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, Hashable):
                if key in seen:
                    raise DuplicateKeyError(key, key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """yaml.safe_load through libyaml when PyYAML has it (about 10x faster: the memory tool
    parses frontmatter and policy on every call), with a repeated key an error
    (DuplicateKeyError)."""
    return yaml.load(text, Loader=_Loader)


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__


def _positive_int(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PolicyError(POLICY_NOT_POSITIVE.format(key=key, value=value))
    return value


def _bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise PolicyError(f"'{key}' must be true or false, found {value!r}")
    return value


def _choice(key: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise PolicyError(POLICY_NOT_CHOICE.format(key=key, choices=", ".join(choices), value=value))
    return value


def _section(cls: type, key: str, raw: Any, check: dict[str, Any]) -> Any:
    if raw is None:
        return cls()
    if not isinstance(raw, dict):
        raise PolicyError(f"'{key}' must be a mapping, found {_kind(raw)}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(str(name) for name in raw if name not in known)
    if unknown:
        raise PolicyError(POLICY_UNKNOWN_KEY.format(
            key=f"{key}.{unknown[0]}", allowed=", ".join(sorted(known))))
    values = {name: check[name](f"{key}.{name}", value) for name, value in raw.items()}
    return replace(cls(), **values)


def parse_policy(text: str | None) -> Policy:
    """Parse the text of `.memrepo/config.yml`; absent or empty text gives the defaults."""
    if text is None or not text.strip():
        return DEFAULT_POLICY
    try:
        raw = load_yaml(text)
    except yaml.YAMLError as exc:
        raise PolicyError(f"not valid YAML: {yaml_problem(exc)}") from None
    if raw is None:
        return DEFAULT_POLICY
    if not isinstance(raw, dict):
        raise PolicyError(f"must be a mapping of keys to values, found {_kind(raw)}")
    known = {f.name for f in fields(Policy)}
    unknown = sorted(set(map(str, raw)) - known)
    if unknown:
        raise PolicyError(POLICY_UNKNOWN_KEY.format(key=unknown[0], allowed=", ".join(sorted(known))))

    values: dict[str, Any] = {}
    if "merge" in raw:
        values["merge"] = _choice("merge", raw["merge"], MERGE_MODES)
    if "merge_instructions" in raw:
        text_value = raw["merge_instructions"]
        if text_value is not None and not isinstance(text_value, str):
            raise PolicyError(POLICY_NOT_TEXT.format(key="merge_instructions", kind=_kind(text_value)))
        values["merge_instructions"] = text_value or ""
    if "protected" in raw:
        globs = [] if raw["protected"] is None else raw["protected"]
        if not isinstance(globs, list) or not all(isinstance(g, str) and g for g in globs):
            raise PolicyError("'protected' must be a list of path patterns such as system/persona.md")
        values["protected"] = tuple(globs)
    if "trusted_sources" in raw:
        sources = [] if raw["trusted_sources"] is None else raw["trusted_sources"]
        if not isinstance(sources, list) or not all(isinstance(s, str) and s.startswith("tool:") and len(s) > 5
                                                     for s in sources):
            raise PolicyError(POLICY_TRUSTED_SOURCES)
        values["trusted_sources"] = tuple(sources)
    values["direct_commit"] = _section(
        DirectCommit, "direct_commit", raw.get("direct_commit"),
        {"max_changed_lines": _positive_int},
    )
    values["dream"] = _section(
        Dream, "dream", raw.get("dream"),
        {
            "trigger": lambda k, v: _choice(k, v, DREAM_TRIGGERS),
            "steps": _positive_int,
            "strategy": lambda k, v: _choice(k, v, DREAM_STRATEGIES),
        },
    )
    values["limits"] = _section(
        Limits, "limits", raw.get("limits"),
        {f.name: _positive_int for f in fields(Limits)},
    )
    values["review"] = _section(ReviewRules, "review", raw.get("review"), {"allow_author_merge": _bool})
    return replace(DEFAULT_POLICY, **values)


def protected_paths(paths: Iterable[str], globs: Iterable[str]) -> list[str]:
    """Changed paths a protected pattern matches. Patterns are fnmatch globs on the whole
    path (`*` also crosses `/`); a pattern ending in `/` protects everything under it. Both
    are compared folded (`fold`: any letter case, Unicode composed), since on a
    case-insensitive clone `system/PERSONA.md` is `system/persona.md`. Here, beside the
    policy, so that routing an agent's edit does not load the integrator."""
    patterns = [fold(g) for g in globs if g]
    found = []
    for path in paths:
        key = fold(path)
        for pattern in patterns:
            if (pattern.endswith("/") and key.startswith(pattern)) or fnmatchcase(key, pattern):
                found.append(path)
                break
    return found


def rule_files(paths: Iterable[str]) -> list[str]:
    """The files that hold the rules a change is judged by (memrepo's policy, Letta's limits),
    in any letter case: a change to them is always a person's decision, whatever the policy at
    the base or the one the change brings says. Here, beside the policy, so the integrator and
    the routing of an agent's edit or a harness's commit read one list."""
    return [path for path in paths if path.casefold() in RULE_FILES]


def yaml_problem(exc: yaml.YAMLError, first_line: int = 1) -> str:
    """One line from a PyYAML error: what is wrong and where, counting lines of the file
    from `first_line` (frontmatter starts on the file's second line)."""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return f"{problem} (line {mark.line + first_line}, column {mark.column + 1})"
    return problem

