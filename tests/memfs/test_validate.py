"""Every validation rule and its exact message, by table (no git needed: inputs are bytes)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import yaml

from bot.config import DEFAULT_POLICY, Limits, Policy, load_yaml
from bot.memfs import texts
from bot.memfs.format import validate
from bot.memfs.format.validate import (
    MISSING_DESCRIPTION,
    READ_ONLY_CHANGED,
    READ_ONLY_REMOVED,
    READ_ONLY_SET,
    UNKNOWN_KEY,
    VALIDATION_HEADER,
    Problem,
    core_size,
    format_problems,
    validate_changes,
    validate_core,
    validate_file,
)
from bot.memfs.texts import UNCLOSED_FRONTMATTER

P = DEFAULT_POLICY
SMALL = replace(P, limits=Limits(file_chars=40, core_chars=100, system_depth=1))

OK = b"---\ndescription: fine\n---\nbody\n"
RO = b"---\ndescription: fine\nread_only: true\n---\nbody\n"
RO_FALSE = b"---\ndescription: fine\nread_only: false\n---\nbody\n"
BOM = "\ufeff".encode()

# Letta's messages, verbatim from memfs-format.md (not read from bot/memfs/texts.py, so a typo there fails).
MISSING_FRONTMATTER = "missing frontmatter (must start with ---)"
UNCLOSED = "frontmatter opened but never closed (missing closing ---)"
READ_ONLY_FILE = "file is read_only and cannot be modified"
UNKNOWN = "unknown frontmatter key '{}' (allowed: description read_only limit)"
RO_CHANGED = "'read_only' is a protected field and cannot be changed by the agent"
RO_SET = "'read_only' is a protected field and cannot be set by the agent"
RO_REMOVED = "'read_only' is a protected field and cannot be removed by the agent"
EMPTY_DESCRIPTION = "'description' must not be empty"
NO_DESCRIPTION = "missing required field 'description'"
FLAT_SKILL = "invalid skill path (skills must be folders). Use skills/<name>/SKILL.md"
DUPLICATE = "frontmatter has the key '{}' more than once; keep one"

# memrepo's own.
BINARY = "contains a NUL byte; memory files must be text, not binary data"
TOO_LARGE = (
    "file has {} characters, over the limit of 40 (limits.file_chars in .memrepo/config.yml); "
    "split it or move detail to external memory"
)
TOO_LARGE_41 = TOO_LARGE.format(41)


def yaml_says(text: str) -> str:
    """PyYAML's own wording of the error in `text`: it differs between libyaml and pure Python,
    so rows assert memrepo's framing and the line and column, not PyYAML's words."""
    try:
        load_yaml(text)
    except yaml.YAMLError as exc:
        return str(getattr(exc, "problem", ""))
    raise AssertionError(f"{text!r} is valid YAML")


def doc(*frontmatter: str, body: str = "body\n") -> bytes:
    return ("---\n" + "".join(line + "\n" for line in frontmatter) + "---\n" + body).encode()


def sized(n: int) -> bytes:
    """A valid document of exactly n characters."""
    base = doc("description: d", body="")
    return base + b"x" * (n - len(base))


CASES: list[tuple[str, str, bytes | None, bytes | None, Policy, list[str]]] = [
    # id, path, staged, head, policy, expected messages (all for `path`)
    ("valid new", "system/a.md", OK, None, P, []),
    ("valid change", "system/a.md", doc("description: new"), OK, P, []),
    ("valid limit", "system/a.md", doc("description: d", "limit: 5000"), None, P, []),
    ("memory/ prefix checked too", "memory/system/a.md", b"no frontmatter\n", None, P, [MISSING_FRONTMATTER]),
    # --- Letta's frontmatter rules.
    ("missing frontmatter", "system/a.md", b"just text\n", None, P, [MISSING_FRONTMATTER]),
    ("empty file", "reference/a.md", b"", None, P, [MISSING_FRONTMATTER]),
    ("leading blank line", "system/a.md", b"\n---\ndescription: d\n---\n", None, P, [MISSING_FRONTMATTER]),
    ("never closed", "system/a.md", b"---\ndescription: d\nbody\n", None, P, [UNCLOSED]),
    ("only opening", "system/a.md", b"---", None, P, [UNCLOSED]),
    ("unknown key", "system/a.md", doc("description: d", "tags: [x]"), None, P, [UNKNOWN.format("tags")]),
    (
        "two unknown keys, in order",
        "reference/a.md",
        doc("zeta: 1", "description: d", "alpha: 2"),
        None,
        P,
        [UNKNOWN.format("zeta"), UNKNOWN.format("alpha")],
    ),
    ("non-text key", "system/a.md", doc("description: d", "1: x"), None, P, [UNKNOWN.format("1")]),
    ("read_only set on new file", "system/a.md", RO, None, P, [RO_SET]),
    ("read_only false set on new file", "system/a.md", RO_FALSE, None, P, [RO_SET]),
    ("read_only added to existing file", "system/a.md", RO_FALSE, OK, P, [RO_CHANGED]),
    ("read_only false -> true", "system/a.md", RO, RO_FALSE, P, [RO_CHANGED]),
    ("read_only false removed", "system/a.md", OK, RO_FALSE, P, [RO_REMOVED]),
    ("read_only false kept", "system/a.md", doc("description: new", "read_only: false"), RO_FALSE, P, []),
    ("read_only true file changed", "system/a.md", doc("description: new", "read_only: true"), RO, P,
     [READ_ONLY_FILE]),
    ("read_only true file: true removed", "system/a.md", OK, RO, P, [READ_ONLY_FILE]),
    ("read_only true file: invalid edit still one message", "system/a.md", b"junk", RO, P, [READ_ONLY_FILE]),
    ("read_only true file unchanged", "system/a.md", RO, RO, P, []),
    ("read_only true in reference/", "reference/a.md", OK, RO, P, [READ_ONLY_FILE]),
    ("read_only true outside frontmatter paths", "notes/a.md", OK, RO, P, [READ_ONLY_FILE]),
    ("empty description", "system/a.md", doc("description: ''"), None, P, [EMPTY_DESCRIPTION]),
    ("blank description", "system/a.md", doc("description: '   '"), None, P, [EMPTY_DESCRIPTION]),
    ("null description", "system/a.md", doc("description:"), None, P, [EMPTY_DESCRIPTION]),
    ("no description", "system/a.md", doc("limit: 10"), None, P, [NO_DESCRIPTION]),
    ("empty frontmatter", "system/a.md", b"---\n---\nbody\n", None, P, [NO_DESCRIPTION]),
    ("flat skill", "skills/foo.md", OK, None, P, [FLAT_SKILL]),
    ("flat skill with memory/", "memory/skills/foo.md", OK, None, P, [FLAT_SKILL]),
    ("flat skill anywhere", "reference/skills/foo.md", OK, None, P, [FLAT_SKILL]),
    ("flat skill, even binary", "skills/foo.md", b"\0", None, P, [FLAT_SKILL]),
    ("flat SKILL.md", "skills/SKILL.md", OK, None, P, [FLAT_SKILL]),
    ("skill folder is fine", "skills/foo/SKILL.md", b"no frontmatter needed\n", None, P, []),
    ("skills word in a name is fine", "system/skills.md", OK, None, P, []),
    # --- Paths outside system/ and reference/ need no frontmatter.
    ("top-level file", "ARCHIVE.md", b"no frontmatter\n", None, P, []),
    ("other folder", "notes/today.md", b"---\nunclosed\n", None, P, []),
    ("system-like name", "systems/a.md", b"plain\n", None, P, []),
    ("not markdown under system/", "system/a.txt", b"plain\0", None, P, []),
    ("git's files", ".github/workflows/x.md", b"\0", None, P, []),
    ("memrepo's state", ".memrepo/notes.md", b"\0", None, P, []),
    # --- memrepo's own rules.
    ("NUL byte", "system/a.md", OK + b"\0", None, P, [BINARY]),
    ("NUL byte outside frontmatter paths", "notes/a.md", b"\0", None, P, [BINARY]),
    (
        "not UTF-8",
        "system/a.md",
        b"---\ndescription: ok\n---\nbody \xe9x",
        None,
        P,
        ["not valid UTF-8 (first bad byte 0xe9 at offset 29); memory files must be UTF-8 text"],
    ),
    (
        "not UTF-8 outside frontmatter paths",
        "notes/a.md",
        b"\xff",
        None,
        P,
        ["not valid UTF-8 (first bad byte 0xff at offset 0); memory files must be UTF-8 text"],
    ),
    (
        # Letta's words first (it reads a line without a colon as a key), then YAML's.
        "frontmatter not a mapping (list)",
        "system/a.md",
        b"---\n- a\n---\n",
        None,
        P,
        [UNKNOWN.format("-a"), NO_DESCRIPTION, "frontmatter must be a YAML mapping of keys to values, found list"],
    ),
    (
        "frontmatter not a mapping (text)",
        "reference/a.md",
        b"---\njust words\n---\n",
        None,
        P,
        [UNKNOWN.format("justwords"), NO_DESCRIPTION,
         "frontmatter must be a YAML mapping of keys to values, found str"],
    ),
    (
        "description not text",
        "system/a.md",
        doc("description: [x]"),
        None,
        P,
        ["'description' must be text, found list"],
    ),
    ("description number", "system/a.md", doc("description: 3"), None, P,
     ["'description' must be text, found int"]),
    (
        "read_only not bool (kept from HEAD)",
        "system/a.md",
        doc("description: new", "read_only: 1"),
        doc("description: d", "read_only: 1"),
        P,
        ["'read_only' must be true or false, found int"],
    ),
    ("limit zero", "system/a.md", doc("description: d", "limit: 0"), None, P,
     ["'limit' must be a positive whole number, found 0"]),
    ("limit text", "system/a.md", doc("description: d", "limit: '10'"), None, P,
     ["'limit' must be a positive whole number, found '10'"]),
    ("limit bool", "system/a.md", doc("description: d", "limit: true"), None, P,
     ["'limit' must be a positive whole number, found True"]),
    ("limit float", "system/a.md", doc("description: d", "limit: 1.5"), None, P,
     ["'limit' must be a positive whole number, found 1.5"]),
    (
        "several problems, in rule order",
        "system/a.md",
        doc("x: 1", "read_only: true", "limit: -1"),
        None,
        P,
        [UNKNOWN.format("x"), RO_SET, NO_DESCRIPTION, "'limit' must be a positive whole number, found -1"],
    ),
    # --- limits.file_chars: growth refused, shrinking (or keeping) an over-limit file passes.
    ("at the file limit", "system/a.md", sized(40), None, SMALL, []),
    ("new file over the limit", "system/a.md", sized(41), None, SMALL, [TOO_LARGE_41]),
    ("grows over the limit", "system/a.md", sized(41), sized(30), SMALL, [TOO_LARGE_41]),
    ("grows while over the limit", "system/a.md", sized(42), sized(41), SMALL, [TOO_LARGE.format(42)]),
    ("shrinks while over the limit", "system/a.md", sized(41), sized(50), SMALL, []),
    ("same size while over the limit", "system/a.md", sized(41), sized(41)[:-1] + b"y", SMALL, []),
    ("limit applies outside system/", "notes/a.md", b"y" * 41, None, SMALL,
     [TOO_LARGE_41]),
    ("limit counts characters, not bytes", "notes/a.md", "é".encode() * 40, None, SMALL, []),
    (
        "default limit, thousands separators",
        "notes/a.md",
        b"y" * 20001,
        None,
        P,
        [
            "file has 20,001 characters, over the limit of 20,000 (limits.file_chars in "
            ".memrepo/config.yml); split it or move detail to external memory"
        ],
    ),
    # --- limits.system_depth.
    ("depth 2 is the default limit", "system/a/b/c.md", OK, None, P, []),
    (
        "depth 3 over the default",
        "system/a/b/c/d.md",
        OK,
        None,
        P,
        [
            "3 folders deep under system/, over the limit of 2 (limits.system_depth in "
            ".memrepo/config.yml); use a flatter path"
        ],
    ),
    (
        "depth with memory/ prefix",
        "memory/system/a/b.md",
        OK,
        None,
        SMALL,
        [],
    ),
    (
        "depth over a lowered limit",
        "memory/system/a/b/c.md",
        OK,
        None,
        SMALL,
        [
            "2 folders deep under system/, over the limit of 1 (limits.system_depth in "
            ".memrepo/config.yml); use a flatter path"
        ],
    ),
    ("depth only counts in system/", "reference/a/b/c/d/e.md", OK, None, SMALL, []),
    (
        "frontmatter, size and depth problems together",
        "system/a/b/c.md",
        b"z" * 41,
        None,
        SMALL,
        [
            MISSING_FRONTMATTER,
            TOO_LARGE_41,
            "2 folders deep under system/, over the limit of 1 (limits.system_depth in "
            ".memrepo/config.yml); use a flatter path",
        ],
    ),
    # --- Frontmatter that is not YAML: read line by line, as Letta Code writes and reads it.
    ("a colon in a description, as Letta's tool writes it", "system/a.md", b"---\ndescription: a: b\n---\n",
     None, P, []),
    ("a colon in a description, read_only kept", "system/a.md", doc("description: Tea: green", "read_only: false"),
     doc("description: Tea: black", "read_only: false"), P, []),
    ("an indented first line continues nothing", "reference/a.md", b"---\n\tdescription: d\n---\n", None, P,
     [NO_DESCRIPTION]),
    (
        # Line numbers count the file's lines, not the frontmatter's (the opening --- is line 1).
        "bad YAML that no line reading saves (line numbers of the file)",
        "system/a.md",
        b"---\ndescription: d\nfoo\n---\n",
        None,
        P,
        [UNKNOWN.format("foo"), f"frontmatter is not valid YAML: {yaml_says('description: d' + chr(10) + 'foo')} "
                                "(line 4, column 1)"],
    ),
    # --- .memrepo/config.yml is validated as policy.
    ("valid config", ".memrepo/config.yml", b"merge: auto\nlimits:\n  file_chars: 100\n", None, P, []),
    ("empty config", ".memrepo/config.yml", b"", None, P, []),
    (
        "config unknown key",
        ".memrepo/config.yml",
        b"merj: auto\n",
        None,
        P,
        ["unknown key 'merj' (allowed: direct_commit, dream, limits, merge, merge_instructions, protected, "
         "review, trusted_sources)"],
    ),
    (
        "config bad value",
        ".memrepo/config.yml",
        b"limits:\n  file_chars: 0\n",
        None,
        P,
        ["'limits.file_chars' must be a positive whole number, found 0"],
    ),
    (
        "config bad YAML",
        ".memrepo/config.yml",
        b"merge: [\n",
        None,
        P,
        [f"not valid YAML: {yaml_says('merge: [')} (line 2, column 1)"],
    ),
    ("config NUL", ".memrepo/config.yml", b"merge: auto\0", None, P, [BINARY]),
    (
        "config not UTF-8",
        ".memrepo/config.yml",
        b"merge: \xff",
        None,
        P,
        ["not valid UTF-8 (first bad byte 0xff at offset 7); memory files must be UTF-8 text"],
    ),
    (
        # Unknown nested keys of mixed types are reported, not a crash.
        "config unknown nested keys of mixed types",
        ".memrepo/config.yml",
        b"limits:\n  1: 2\n  x: 3\n",
        None,
        P,
        ["unknown key 'limits.1' (allowed: core_chars, file_chars, system_depth, tree_chars, "
         "tree_children, tree_lines)"],
    ),
    # --- Frontmatter is read one way: after a byte-order mark too, and a key written twice is refused.
    ("BOM: read_only true file changed", "notes/a.md", OK, BOM + RO, P, [READ_ONLY_FILE]),
    ("BOM: read_only true file changed in system/", "system/a.md", BOM + OK, BOM + RO, P, [READ_ONLY_FILE]),
    ("BOM: read_only set outside frontmatter paths", "notes/a.md", BOM + RO, None, P, [RO_SET]),
    ("BOM: Letta's hook sees no frontmatter in system/", "system/a.md", BOM + OK, None, P, [MISSING_FRONTMATTER]),
    ("duplicate key outside frontmatter paths", "notes/a.md", doc("description: a", "description: b"), None, P,
     [DUPLICATE.format("description")]),
    ("duplicate key in system/", "system/a.md", doc("description: a", "description: b"), None, P,
     [DUPLICATE.format("description")]),
    ("duplicate read_only: true then false", "notes/a.md",
     doc("description: a", "read_only: true", "read_only: false"), RO_FALSE, P, [DUPLICATE.format("read_only")]),
    ("duplicate key where YAML fails too", "notes/a.md", doc("description: Notes: tea", "description: b"), None, P,
     [DUPLICATE.format("description")]),
    ("duplicate key, quoted", "notes/a.md", doc("description: a", "'description': b"), None, P,
     [DUPLICATE.format("description")]),
    ("read_only true twice, then false: still read_only", "notes/a.md", OK,
     doc("description: a", "read_only: true", "read_only: false"), P, [READ_ONLY_FILE]),
    # --- A deletion has nothing to check but read_only.
    ("deletion", "system/a.md", None, OK, P, []),
    ("deletion of a read_only file", "system/a.md", None, RO, P, ["file is read_only and cannot be deleted or moved"]),
    ("deletion of a flat skill", "skills/foo.md", None, OK, P, []),
    ("deletion of the config", ".memrepo/config.yml", None, b"merge: auto\n", P, []),
]


@pytest.mark.parametrize(
    ("path", "staged", "head", "policy", "expected"),
    [pytest.param(*row[1:], id=row[0]) for row in CASES],
)
def test_validate_file(path, staged, head, policy, expected):
    assert validate_file(path, staged, head, policy) == [Problem(path, message) for message in expected]


def test_letta_messages_in_messages_py_are_verbatim():
    assert [
        texts.MISSING_FRONTMATTER,
        UNCLOSED_FRONTMATTER,
        texts.READ_ONLY_FILE,
        UNKNOWN_KEY.format(key="k"),
        READ_ONLY_CHANGED,
        READ_ONLY_SET,
        READ_ONLY_REMOVED,
        validate.EMPTY_DESCRIPTION,
        MISSING_DESCRIPTION,
        validate.FLAT_SKILL,
        VALIDATION_HEADER,
    ] == [
        MISSING_FRONTMATTER,
        UNCLOSED,
        READ_ONLY_FILE,
        UNKNOWN.format("k"),
        RO_CHANGED,
        RO_SET,
        RO_REMOVED,
        EMPTY_DESCRIPTION,
        NO_DESCRIPTION,
        FLAT_SKILL,
        "Frontmatter validation failed:",
    ]


# ---------------------------------------------------------------------- limits.core_chars

CORE_OVER = (
    "system/ holds {size} characters in all, over the limit of 100 (limits.core_chars in "
    ".memrepo/config.yml); move detail out of system/ into external memory"
)


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (0, 100, []),  # at the limit
        (50, 101, [CORE_OVER.format(size=101)]),  # grows over it
        (101, 102, [CORE_OVER.format(size=102)]),  # grows while over it
        (150, 120, []),  # shrinks while over it
        (120, 120, []),  # unchanged while over it
        (150, 90, []),
    ],
)
def test_validate_core(before, after, expected):
    assert validate_core(before, after, SMALL) == [Problem("system/", m) for m in expected]


def test_validate_core_default_limit_message():
    assert validate_core(0, 70000, P) == [Problem(
        "system/",
        "system/ holds 70,000 characters in all, over the limit of 65,536 (limits.core_chars in "
        ".memrepo/config.yml); move detail out of system/ into external memory",
    )]


@pytest.mark.parametrize(
    ("files", "size"),
    [
        ({}, 0),
        ({"system/a.md": b"abc", "system/x/b.md": b"de"}, 5),
        ({"memory/system/a.md": b"abc"}, 3),
        ({"system/a.md": "é".encode()}, 1),  # characters, not bytes
        ({"system/a.md": b"\xff\xfe"}, 2),  # undecodable: bytes
        ({"system/a.md": b"a\0b"}, 3),  # binary: bytes
        ({"reference/a.md": b"abc", "notes.md": b"abc", "system/a.txt": b"abc", "systems/a.md": b"a"}, 0),
    ],
)
def test_core_size(files, size):
    assert core_size(files) == size


# ------------------------------------------------------------------- validate_changes


def test_validate_changes_sorted_by_path_with_core():
    changes = {
        "system/b.md": (b"no frontmatter", None),
        "reference/a.md": (doc("description: d", "x: 1"), None),
        "skills/s.md": (OK, None),
        "system/gone.md": (None, OK),
        "notes.md": (b"fine", None),
    }
    assert validate_changes(changes, SMALL, core=(10, 101)) == [
        Problem("reference/a.md", UNKNOWN.format("x")),
        Problem("skills/s.md", FLAT_SKILL),
        Problem("system/", CORE_OVER.format(size=101)),
        Problem("system/b.md", MISSING_FRONTMATTER),
    ]


def test_validate_changes_keeps_message_order_within_a_path():
    changes = {"system/a.md": (doc("b: 1", "a: 2"), None)}
    assert validate_changes(changes, P) == [
        Problem("system/a.md", UNKNOWN.format("b")),
        Problem("system/a.md", UNKNOWN.format("a")),
        Problem("system/a.md", NO_DESCRIPTION),
    ]


def test_validate_changes_without_core_size_skips_the_core_rule():
    assert validate_changes({"system/a.md": (OK, None)}, SMALL) == []
    assert validate_changes({}, SMALL, core=(0, 100)) == []


# --------------------------------------------------------------------- format_problems


def test_format_problems():
    problems = [Problem("system/a.md", NO_DESCRIPTION), Problem("skills/x.md", FLAT_SKILL)]
    assert format_problems(problems) == (
        "Frontmatter validation failed:\n"
        "  system/a.md: missing required field 'description'\n"
        "  skills/x.md: invalid skill path (skills must be folders). Use skills/<name>/SKILL.md"
    )
    assert str(problems[0]) == "  system/a.md: missing required field 'description'"
