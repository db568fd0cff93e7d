"""parse_policy: defaults, every key, and the exact error for each kind of mistake."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from bot.config import (
    DEFAULT_POLICY,
    DirectCommit,
    Dream,
    Limits,
    Policy,
    PolicyError,
    load_yaml,
    parse_policy,
)

PROTECTED = "'protected' must be a list of path patterns such as system/persona.md"
TOP_KEYS = "direct_commit, dream, limits, merge, merge_instructions, protected, review, trusted_sources"
LIMIT_KEYS = "core_chars, file_chars, system_depth, tree_chars, tree_children, tree_lines"


def yaml_says(text: str) -> str:
    """PyYAML's own wording (libyaml and pure Python differ); rows pin memrepo's framing."""
    try:
        load_yaml(text)
    except yaml.YAMLError as exc:
        return str(getattr(exc, "problem", ""))
    raise AssertionError(f"{text!r} is valid YAML")


def test_default_values():
    expected = Policy(
        merge="explicit",
        merge_instructions="",
        protected=("system/persona.md", ".memfs.config.json"),
        direct_commit=DirectCommit(max_changed_lines=40),
        dream=Dream(trigger="step-count", steps=25, strategy="verbatim"),
        limits=Limits(
            file_chars=20000, core_chars=65536, system_depth=2, tree_lines=500, tree_chars=20000,
            tree_children=50,
        ),
    )
    assert expected == DEFAULT_POLICY


@pytest.mark.parametrize(
    "text",
    [None, "", "   \n\n", "# only a comment\n", "~\n", "null", "---\n", "{}"],
)
def test_empty_gives_defaults(text):
    assert parse_policy(text) == DEFAULT_POLICY


def policy(**changes) -> Policy:
    return replace(DEFAULT_POLICY, **changes)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("merge: auto", policy(merge="auto")),
        ("merge: explicit", policy(merge="explicit")),
        ("merge: review", policy(merge="review")),
        ("merge_instructions: Keep it short.", policy(merge_instructions="Keep it short.")),
        ("merge_instructions: |\n  one\n  two\n", policy(merge_instructions="one\ntwo\n")),
        ("merge_instructions:", policy(merge_instructions="")),
        ("protected: [system/a.md, 'reference/*']", policy(protected=("system/a.md", "reference/*"))),
        ("protected:\n  - system/a.md\n", policy(protected=("system/a.md",))),
        ("protected: []", policy(protected=())),
        ("protected:", policy(protected=())),  # explicitly nothing protected
        ("direct_commit: {max_changed_lines: 7}", policy(direct_commit=DirectCommit(7))),
        ("direct_commit:", policy()),
        ("direct_commit: {}", policy()),
        ("dream: {trigger: compaction}", policy(dream=Dream(trigger="compaction"))),
        ("dream: {trigger: 'off'}", policy(dream=Dream(trigger="off"))),
        ("dream: {steps: 3}", policy(dream=Dream(steps=3))),
        ("dream: {strategy: llm}", policy(dream=Dream(strategy="llm"))),
        (
            "dream:\n  trigger: step-count\n  steps: 10\n  strategy: verbatim\n",
            policy(dream=Dream("step-count", 10, "verbatim")),
        ),
        ("limits: {file_chars: 5}", policy(limits=Limits(file_chars=5))),
        ("limits: {core_chars: 5}", policy(limits=Limits(core_chars=5))),
        ("limits: {system_depth: 1}", policy(limits=Limits(system_depth=1))),
        ("limits: {tree_lines: 5}", policy(limits=Limits(tree_lines=5))),
        ("limits: {tree_chars: 5}", policy(limits=Limits(tree_chars=5))),
        ("limits: {tree_children: 5}", policy(limits=Limits(tree_children=5))),
        ("limits: {file_chars: 0x10}", policy(limits=Limits(file_chars=16))),  # YAML 1.1 ints
        (
            "merge: auto\nlimits:\n  file_chars: 100\n  core_chars: 1000\n# trailing comment\n",
            policy(merge="auto", limits=Limits(file_chars=100, core_chars=1000)),
        ),
    ],
)
def test_every_key(text, expected):
    assert parse_policy(text) == expected


def test_the_shipped_template_parses():
    template = Path(__file__).parents[2] / "templates" / "memory" / ".memrepo" / "config.yml"
    assert isinstance(parse_policy(template.read_text()), Policy)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # Unknown keys: top level (also keys that are not text) and in each section.
        ("merj: auto", f"unknown key 'merj' (allowed: {TOP_KEYS})"),
        ("merge: auto\nzzz: 1\naaa: 2", f"unknown key 'aaa' (allowed: {TOP_KEYS})"),
        ("1: 2", f"unknown key '1' (allowed: {TOP_KEYS})"),
        ("1: 2\nx: 3", f"unknown key '1' (allowed: {TOP_KEYS})"),
        ("Merge: auto", f"unknown key 'Merge' (allowed: {TOP_KEYS})"),
        ("limits: {file_char: 5}", f"unknown key 'limits.file_char' (allowed: {LIMIT_KEYS})"),
        ("limits: {1: 5}", f"unknown key 'limits.1' (allowed: {LIMIT_KEYS})"),
        (
            "dream: {trigger: 'off', every: 3}",
            "unknown key 'dream.every' (allowed: steps, strategy, trigger)",
        ),
        (
            "direct_commit: {max_lines: 3}",
            "unknown key 'direct_commit.max_lines' (allowed: max_changed_lines)",
        ),
        # The whole file is not a mapping.
        ("- merge: auto", "must be a mapping of keys to values, found list"),
        ("auto", "must be a mapping of keys to values, found str"),
        ("42", "must be a mapping of keys to values, found int"),
        # Choices.
        ("merge: automatic", "'merge' must be one of auto, explicit, review, found 'automatic'"),
        ("merge:", "'merge' must be one of auto, explicit, review, found None"),
        ("merge: [auto]", "'merge' must be one of auto, explicit, review, found ['auto']"),
        ("merge: true", "'merge' must be one of auto, explicit, review, found True"),
        (
            "dream: {trigger: off}",  # YAML 1.1: unquoted off is false
            "'dream.trigger' must be one of step-count, compaction, off, found False",
        ),
        ("dream: {strategy: smart}", "'dream.strategy' must be one of verbatim, llm, anthropic, found 'smart'"),
        # Text.
        ("merge_instructions: 5", "'merge_instructions' must be text, found int"),
        ("merge_instructions: [a]", "'merge_instructions' must be text, found list"),
        # Path patterns.
        ("protected: system/persona.md", PROTECTED),
        ("protected: [1]", PROTECTED),
        ("protected: ['']", PROTECTED),
        ("protected: [a, null]", PROTECTED),
        ("protected: {a: b}", PROTECTED),
        # Sections that are not mappings.
        ("limits: [1]", "'limits' must be a mapping, found list"),
        ("limits: 5", "'limits' must be a mapping, found int"),
        ("dream: 'off'", "'dream' must be a mapping, found str"),
        ("direct_commit: true", "'direct_commit' must be a mapping, found bool"),
        # Positive whole numbers.
        ("limits: {file_chars: 0}", "'limits.file_chars' must be a positive whole number, found 0"),
        ("limits: {core_chars: -5}", "'limits.core_chars' must be a positive whole number, found -5"),
        ("limits: {system_depth: 1.5}", "'limits.system_depth' must be a positive whole number, found 1.5"),
        ("limits: {tree_lines: '5'}", "'limits.tree_lines' must be a positive whole number, found '5'"),
        ("limits: {tree_chars: true}", "'limits.tree_chars' must be a positive whole number, found True"),
        ("limits:\n  tree_children:\n", "'limits.tree_children' must be a positive whole number, found None"),
        ("dream: {steps: 0}", "'dream.steps' must be a positive whole number, found 0"),
        (
            "direct_commit: {max_changed_lines: many}",
            "'direct_commit.max_changed_lines' must be a positive whole number, found 'many'",
        ),
    ],
)
def test_errors(text, message):
    with pytest.raises(PolicyError) as info:
        parse_policy(text)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("merge: [auto", "(line 2, column 1)"),
        ("merge: auto\n\tlimits: {}", "(line 2, column 1)"),
        ("a: b: c", "(line 1, column 5)"),
        ("limits: {file_chars: 5", "(line 2, column 1)"),
        ("!!python/object:os.system x: 1", "(line 1, column 1)"),
    ],
)
def test_bad_yaml(text, where):
    with pytest.raises(PolicyError) as info:
        parse_policy(text)
    assert str(info.value) == f"not valid YAML: {yaml_says(text)} {where}"


@pytest.mark.parametrize(
    "text",
    [
        # Keys of different types: still a PolicyError naming the key, never a crash.
        "limits:\n  1: 2\n  x: 3\n",
    ],
)
def test_unknown_nested_keys_of_mixed_types_are_a_policy_error(text):
    with pytest.raises(PolicyError) as info:
        parse_policy(text)
    assert str(info.value).startswith("unknown key '")


@pytest.mark.parametrize("text", ["protected: false", "protected: {}"])
def test_protected_of_the_wrong_type_is_an_error(text):
    # A falsy value of the wrong type must not silently drop the default protection.
    with pytest.raises(PolicyError) as info:
        parse_policy(text)
    assert str(info.value) == PROTECTED


def test_policy_error_is_a_value_error():
    assert issubclass(PolicyError, ValueError)


@pytest.mark.parametrize(("text", "expected"), [
    ("trusted_sources: [tool:calculator, tool:memory]", ("tool:calculator", "tool:memory")),
    ("trusted_sources:", ()),
])
def test_trusted_sources(text: str, expected: tuple[str, ...]) -> None:
    assert parse_policy(text).trusted_sources == expected


@pytest.mark.parametrize("text", ["trusted_sources: tool:calculator", "trusted_sources: [external:https://x]",
                                  "trusted_sources: [user]", "trusted_sources: ['tool:']"])
def test_trusted_sources_are_tools_only(text: str) -> None:
    with pytest.raises(PolicyError, match="trusted_sources must be a list of tool sources"):
        parse_policy(text)
