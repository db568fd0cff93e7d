"""Which tool results a memory trusts by default: reading the user's own workspace is trusted,
what reaches outside the machine (the web, a shell, another MCP server) is not.

The names are the harnesses' own: Claude Code's tools as its published CLI names them, Letta
Code's as its published bundle groups them (`src/tools/canonical.ts`: the Read, Glob, Grep and
ListDir families are files on this machine; the shell family runs anything)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.agent import doctor
from bot.config import DEFAULT_POLICY, WORKSPACE_READ_TOOLS, Limits, parse_policy
from bot.memfs import MemoryRepo
from bot.trailers import untrusted_source
from tests.conftest import git, run_cli
from tests.letta_conformance.letta import package_dir

TRUSTED, UNTRUSTED = True, False

# source as the harness records it -> trusted by default?
TABLE = [
    # Claude Code's tools that read the workspace
    ("tool:Read", TRUSTED), ("tool:Grep", TRUSTED), ("tool:Glob", TRUSTED), ("tool:LS", TRUSTED),
    ("tool:NotebookRead", TRUSTED),
    # Letta Code's equivalents (its Read, Grep, Glob and ListDir families)
    ("tool:read_file", TRUSTED), ("tool:ReadFile", TRUSTED), ("tool:grep_files", TRUSTED),
    ("tool:GrepFiles", TRUSTED), ("tool:list_dir", TRUSTED), ("tool:ListDir", TRUSTED),
    # what reaches outside the machine, or can
    ("tool:WebFetch", UNTRUSTED), ("tool:WebSearch", UNTRUSTED), ("tool:web_search", UNTRUSTED),
    ("tool:Bash", UNTRUSTED), ("tool:exec_command", UNTRUSTED), ("tool:shell", UNTRUSTED),
    ("tool:Monitor", UNTRUSTED), ("tool:local-command", UNTRUSTED), ("tool:Task", UNTRUSTED),
    ("tool:mcp__github__get_issue", UNTRUSTED), ("tool:mcp__fetch__fetch", UNTRUSTED),
    ("tool:read", UNTRUSTED),  # names are compared exactly, as the harness spells them
    ("external:https://example.com/page", UNTRUSTED),
    # not tool results at all
    ("user", TRUSTED), ("agent", TRUSTED), ("human", TRUSTED),
]


@pytest.mark.parametrize(("source", "trusted"), TABLE)
def test_the_default_policy_trusts_reading_the_workspace_only(source: str, trusted: bool) -> None:
    assert (untrusted_source(source, DEFAULT_POLICY.trusted_sources) is None) is trusted


@pytest.mark.parametrize(("text", "source", "trusted"), [
    ("", "tool:Read", TRUSTED),  # no config.yml: the defaults
    ("merge: auto", "tool:Read", TRUSTED),  # trusted_sources not said: the defaults
    ("trusted_sources: []", "tool:Read", UNTRUSTED),  # trust nothing
    ("trusted_sources:", "tool:Grep", UNTRUSTED),
    ("trusted_sources: [tool:calculator]", "tool:Read", UNTRUSTED),  # the list replaces the defaults
    ("trusted_sources: [tool:calculator]", "tool:calculator", TRUSTED),
    ("trusted_sources: [tool:Read, tool:Bash]", "tool:Bash", TRUSTED),  # a person may trust the shell
])
def test_trusted_sources_in_config_replaces_the_default(text: str, source: str, trusted: bool) -> None:
    policy = parse_policy(text)
    assert (untrusted_source(source, policy.trusted_sources) is None) is trusted


def test_bash_and_the_web_are_never_in_the_default() -> None:
    """A shell can fetch anything (curl), so its output is outside content like a web page."""
    assert not {"tool:Bash", "tool:WebFetch", "tool:WebSearch"} & set(WORKSPACE_READ_TOOLS)
    assert DEFAULT_POLICY.trusted_sources == WORKSPACE_READ_TOOLS


def _letta_set(bundle: str, name: str) -> set[str]:
    found = re.search(rf"{name} = new Set\(\[([^\]]*)\]\)", bundle)
    assert found is not None, f"Letta Code's bundle no longer defines {name}"
    return set(re.findall(r'"([^"]+)"', found.group(1)))


def test_letta_codes_own_reading_tools_are_trusted_and_its_shell_is_not() -> None:
    bundle = (package_dir() / "letta.js").read_text(encoding="utf-8")
    reading = set().union(*(_letta_set(bundle, name) for name in
                            ("READ_TOOL_NAMES", "GLOB_TOOL_NAMES", "GREP_TOOL_NAMES", "LIST_TOOL_NAMES")))
    shell = _letta_set(bundle, "SHELL_TOOL_NAMES")
    assert reading and shell
    assert {f"tool:{name}" for name in reading} <= set(WORKSPACE_READ_TOOLS)
    assert not {f"tool:{name}" for name in shell} & set(WORKSPACE_READ_TOOLS)


def test_claude_codes_reading_tools_are_names_its_cli_knows() -> None:
    """Each Claude Code name in the default is one the pinned CLI binary holds."""
    from tests.claude_code_conformance.claude import binary as claude_binary

    binary = claude_binary().read_bytes()
    for name in ("Read", "Grep", "Glob", "LS", "NotebookRead"):
        assert f'"{name}"'.encode() in binary, name


# ------------------------------------------------------------ what install says about it

def test_install_says_what_the_memory_trusts_and_where_to_change_it(
        memory: MemoryRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for _ in range(2):  # a second install changes nothing, and says it all the same
        code, out, _ = run_cli(capsys, "claude-code", "install", "--repo", str(memory.root),
                               "--project", str(tmp_path))
        assert code == 0
        said = out.splitlines()[-1]
        assert "Read, Grep, Glob, LS, NotebookRead" in said and "straight to main" in said
        assert "Bash" in said and "pull request" in said
        assert f"trusted_sources in {memory.root / '.memrepo/config.yml'}" in said


def test_install_says_when_the_memory_trusts_no_tool(memory: MemoryRepo, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    config = memory.root / ".memrepo/config.yml"
    config.write_text(re.sub(r"^trusted_sources:\n(?:  - .*\n)*", "trusted_sources: []\n", config.read_text(),
                             flags=re.M))
    git(memory.root, "commit", "-qam", "Trust no tool")
    code, out, _ = run_cli(capsys, "claude-code", "install", "--repo", str(memory.root), "--project", str(tmp_path))
    assert code == 0 and "trusts no tool's result" in out.splitlines()[-1]
    assert "tool:Read" in out.splitlines()[-1]


# ------------------------------------------------------------------------ /doctor

DESCRIBED = b"---\ndescription: who I am\n---\nI help.\n"


@pytest.mark.parametrize(("files", "undescribed"), [
    # Claude Code's auto memory: an index without frontmatter, topic files with it
    ({"system/persona.md": DESCRIBED, "auto-memory/MEMORY.md": b"- [Tabs](tabs.md): tabs, not spaces\n",
      "auto-memory/tabs.md": b"---\nname: tabs\ndescription: indentation\n---\nTabs.\n"}, ()),
    ({"system/persona.md": DESCRIBED, "notes/MEMORY.md": b"- [a](a.md)\n"}, ()),
    # a topic file without a description is still flagged
    ({"system/persona.md": DESCRIBED, "auto-memory/MEMORY.md": b"- x\n", "auto-memory/x.md": b"just text\n"},
     ("auto-memory/x.md",)),
    # core memory is the prompt: its files need descriptions, whatever their name
    ({"system/persona.md": DESCRIBED, "system/MEMORY.md": b"no frontmatter\n"}, ("system/MEMORY.md",)),
    ({"system/persona.md": DESCRIBED, "notes/memory-notes.md": b"plain\n"}, ("notes/memory-notes.md",)),
])
def test_doctor_does_not_ask_an_index_for_a_description(files: dict[str, bytes], undescribed: tuple[str, ...]
                                                        ) -> None:
    report = doctor.diagnose(files, Limits())
    assert report.undescribed == undescribed
