"""The memory tool: each successful call is one commit by the agent; each refusal changes
nothing and says what to do."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bot.memfs.store.repo import MemoryRepo
from bot.memfs.texts import READ_ONLY_FILE
from bot.memfs.tool.memory_tool import MemoryTool
from tests.conftest import git

HUMAN = "system/human.md"


def snapshot(repo: MemoryRepo) -> tuple[str | None, str, dict[str, bytes]]:
    """HEAD, git status and every working-tree file: what a refused call must not change."""
    files = {
        p.relative_to(repo.root).as_posix(): p.read_bytes()
        for p in repo.root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(repo.root).parts
    }
    return repo.head_sha(), git(repo.root, "status", "--porcelain", "--ignored"), files


def commits(repo: MemoryRepo) -> int:
    return int(git(repo.root, "rev-list", "--count", "HEAD"))


@pytest.fixture
def tool(memory: MemoryRepo) -> MemoryTool:
    return MemoryTool(memory)


def read(repo: MemoryRepo, path: str) -> str:
    data = repo.read(path)
    assert data is not None, f"{path} missing at HEAD"
    return data.decode()


# ----------------------------------------------------------------- successful calls

SUCCESSES = [
    pytest.param(
        {"command": "str_replace", "path": HUMAN, "old_str": "Nothing recorded yet.",
         "new_str": "Prefers tea.", "reason": "Note tea"},
        {HUMAN: "Prefers tea."}, "Note tea", id="anthropic-str_replace"),
    pytest.param(
        {"command": "str_replace", "file_path": "memory/system/human", "old_string": "Nothing recorded yet.",
         "new_string": "Prefers tea."},
        {HUMAN: "Prefers tea."}, "Edit system/human.md", id="letta-str_replace-default-reason"),
    pytest.param(
        {"command": "create", "file_path": "reference/projects", "description": "Projects",
         "file_text": "- memrepo\n", "reason": "Track projects"},
        {"reference/projects.md": "description: Projects"}, "Track projects", id="letta-create"),
    pytest.param(
        {"command": "create", "path": "/memories/reference/a.md",
         "file_text": "---\ndescription: A\n---\nbody\n"},
        {"reference/a.md": "body"}, "Create reference/a.md", id="anthropic-create"),
    pytest.param(
        {"command": "insert", "path": HUMAN, "insert_line": -1, "insert_text": "Lives in Seoul."},
        {HUMAN: "Nothing recorded yet.\nLives in Seoul.\n"}, "Add to system/human.md", id="insert-end"),
    pytest.param(
        {"command": "insert", "path": HUMAN, "insert_line": 3, "insert_text": "First line."},
        {HUMAN: "---\nFirst line.\nNothing recorded yet."}, "Add to system/human.md", id="insert-after-3"),
    pytest.param(
        {"command": "update_description", "path": HUMAN, "description": "The user"},
        {HUMAN: "description: The user\n"}, "Update the description of system/human.md",
        id="update_description"),
    pytest.param(
        {"command": "core_memory_append", "label": "human", "content": "Likes hiking."},
        {HUMAN: "Nothing recorded yet.\nLikes hiking.\n"}, "Append to system/human.md",
        id="memgpt-append"),
    pytest.param(
        {"command": "core_memory_replace", "label": "human", "old_content": "Nothing recorded yet.",
         "new_content": "Name: Kim."},
        {HUMAN: "Name: Kim."}, "Edit system/human.md", id="memgpt-replace"),
    pytest.param(
        {"name": "memory", "arguments": {"command": "str_replace", "path": HUMAN,
                                          "old_str": "Nothing", "new_str": "Something"}},
        {HUMAN: "Something recorded yet."}, "Edit system/human.md", id="nested-arguments"),
    pytest.param(
        {"command": "apply_patch", "input": "*** Begin Patch\n*** Update File: system/human.md\n"
         "@@\n-Nothing recorded yet.\n+Prefers green tea.\n*** Add File: reference/tea.md\n"
         "+---\n+description: Tea notes\n+---\n+Green.\n*** End Patch\n", "reason": "Tea"},
        {HUMAN: "Prefers green tea.", "reference/tea.md": "Green."}, "Tea", id="apply_patch"),
]


@pytest.mark.parametrize(("call", "expect", "message"), SUCCESSES)
def test_successful_call_is_one_commit_by_the_agent(
    memory: MemoryRepo, tool: MemoryTool, call: dict, expect: dict[str, str], message: str
) -> None:
    before = commits(memory)
    result = tool.call(call)
    assert result.ok, result.message
    assert commits(memory) == before + 1
    assert result.commit == memory.head_sha() == result.revision
    info = memory.commit_info("HEAD")
    assert info is not None
    assert (info.author_name, info.author_email) == ("Ada", "a1@agents.memrepo")
    assert info.message == message
    for path, fragment in expect.items():
        assert fragment in read(memory, path)
        assert (memory.root / path).read_text() == read(memory, path)
    assert git(memory.root, "status", "--porcelain") == ""
    assert result.pushed is None  # no remote connected
    assert message in result.message


def test_delete_and_rename_folders(memory: MemoryRepo, tool: MemoryTool) -> None:
    for name in ("a", "b"):
        assert tool.call({"command": "create", "path": f"reference/notes/{name}.md",
                          "description": name, "file_text": name}).ok
    moved = tool.call({"command": "rename", "old_path": "reference/notes", "new_path": "archive/notes"})
    assert moved.ok, moved.message
    assert memory.read("archive/notes/a.md") is not None and memory.read("reference/notes/a.md") is None
    gone = tool.call({"command": "delete", "path": "archive"})
    assert gone.ok, gone.message
    assert memory.paths("HEAD", "archive") == {}
    assert not (memory.root / "archive").exists()


def test_rename_keeps_md_suffix(memory: MemoryRepo, tool: MemoryTool) -> None:
    assert tool.call({"command": "rename", "old_path": "system/human", "new_path": "system/user"}).ok
    assert memory.read("system/user.md") is not None and memory.read(HUMAN) is None


def test_view_reads_committed_memory_with_line_numbers(memory: MemoryRepo, tool: MemoryTool) -> None:
    (memory.root / HUMAN).write_text("uncommitted scribble")
    result = tool.call({"command": "view", "path": "/memories/system/human.md", "view_range": [4, -1]})
    assert result.ok
    assert result.content == "     4\tNothing recorded yet."
    listing = tool.call({"command": "view"})
    assert "system/persona.md" in listing.message and ".github" not in listing.message
    assert result.revision == memory.head_sha()


# ------------------------------------------------------------------------ refusals

REFUSALS = [
    pytest.param({"command": "bogus"}, "unknown memory command 'bogus'", id="unknown-command"),
    pytest.param({"path": HUMAN}, "has no 'command'", id="no-command"),
    pytest.param("{not json", "not valid JSON", id="not-json"),
    pytest.param(["view"], "must be a JSON object", id="not-object"),
    pytest.param({"command": "str_replace", "path": HUMAN, "old_str": "x"}, "needs the parameter 'new_str",
                 id="missing-param"),
    pytest.param({"command": "str_replace", "path": HUMAN, "old_str": 3, "new_str": "x"},
                 "'old' must be text, found int", id="wrong-type"),
    pytest.param({"command": "delete", "path": HUMAN, "force": True}, "does not take the parameter 'force'",
                 id="unknown-param"),
    pytest.param({"command": "insert", "path": HUMAN, "insert_line": 1.5, "insert_text": "x"},
                 "'insert_line' must be a whole number", id="insert-line-float"),
    pytest.param({"command": "str_replace", "path": "../etc/passwd", "old_str": "a", "new_str": "b"},
                 "contains '..'", id="dotdot"),
    pytest.param({"command": "create", "path": "/etc/x.md", "file_text": "x"}, "is absolute", id="absolute"),
    pytest.param({"command": "create", "path": "~/x.md", "file_text": "x"}, "home folder", id="home"),
    pytest.param({"command": "create", "path": "system/a\0b.md", "file_text": "x"}, "NUL", id="nul-path"),
    pytest.param({"command": "create", "path": ".git/config", "file_text": "x"}, "(.git/)", id="git-dir"),
    pytest.param({"command": "create", "path": ".memrepo/config.yml", "file_text": "x"}, "(.memrepo/)",
                 id="memrepo-dir"),
    pytest.param({"command": "create", "path": ".github/workflows/x.yml", "file_text": "x"}, "(.github/)",
                 id="github-dir"),
    pytest.param({"command": "str_replace", "path": HUMAN, "old_str": "absent", "new_str": "b"},
                 "(0 matches)", id="replace-zero"),
    pytest.param({"command": "str_replace", "path": HUMAN, "old_str": "e", "new_str": "E"},
                 "places in system/human.md; include more surrounding text", id="replace-many"),
    pytest.param({"command": "insert", "path": HUMAN, "insert_line": 99, "insert_text": "x"},
                 "insert_line 99 is outside", id="insert-range"),
    pytest.param({"command": "create", "path": HUMAN, "file_text": "x"}, "already exists", id="create-exists"),
    pytest.param({"command": "create", "path": "system/new.md", "file_text": "no frontmatter"},
                 "system/new.md: missing frontmatter (must start with ---)", id="no-frontmatter"),
    pytest.param({"command": "create", "path": "system/new.md", "file_text": "---\ndescription: x\n"},
                 "frontmatter opened but never closed", id="unclosed-frontmatter"),
    pytest.param({"command": "create", "path": "system/new.md", "file_text": "---\ndescription: ''\n---\n"},
                 "'description' must not be empty", id="empty-description"),
    pytest.param({"command": "create", "path": "system/new.md", "file_text": "---\nread_only: true\n"
                  "description: x\n---\n"}, "cannot be set by the agent", id="set-read-only"),
    pytest.param({"command": "create", "path": "reference/big.md", "description": "big",
                  "file_text": "x" * 20001}, "exceeds 20000 from maxFileCharacters", id="oversized"),
    pytest.param({"command": "create", "path": "reference/bin.md", "description": "bin", "file_text": "a\0b"},
                 "NUL byte", id="binary-text"),
    pytest.param({"command": "create", "path": "skills/flat.md", "file_text": "x"}, "skills must be folders",
                 id="flat-skill"),
    pytest.param({"command": "create", "path": "system/a/b/c/deep.md", "description": "d", "file_text": "x"},
                 "depth 4 exceeds maxDepth 3", id="too-deep"),  # .memfs.config.json's, from init
    pytest.param({"command": "str_replace", "path": HUMAN, "old_str": "Nothing", "new_str": "Nothing"},
                 "no change", id="no-op"),
    pytest.param({"command": "delete", "path": "reference/none.md"}, "does not exist", id="delete-missing"),
    pytest.param({"command": "update_description", "path": HUMAN, "description": "  "}, "must not be empty",
                 id="blank-description-arg"),
    pytest.param({"command": "view", "path": HUMAN, "view_range": [9, 10]}, "outside the file's 4 lines",
                 id="view-range"),
    pytest.param({"command": "delete", "path": HUMAN, "expected_revision": "f" * 40}, "is not a commit",
                 id="unknown-revision"),
    pytest.param({"command": "create", "path": "reference/x.md", "description": "x", "file_text": "a\udcffb"},
                 "'file_text' is not valid Unicode: character 2 is U+DCFF, a lone surrogate", id="surrogate-text"),
    pytest.param({"command": "str_replace", "file_path": HUMAN, "old_string": "Nothing", "new_string": "\ud800"},
                 "'new_string' is not valid Unicode: character 1 is U+D800", id="surrogate-letta-spelling"),
    pytest.param({"command": "create", "path": "reference/\udcff.md", "description": "x", "file_text": "x"},
                 "'path' is not valid Unicode: character 11 is U+DCFF", id="surrogate-path"),
    pytest.param({"command": "view", "path": "system/\udcff"}, "'path' is not valid Unicode", id="surrogate-view"),
    pytest.param({"command": "update_description", "path": HUMAN, "description": "x\udcff"},
                 "'description' is not valid Unicode", id="surrogate-description"),
    pytest.param({"command": "core_memory_append", "label": "human", "content": "x", "reason": "r\udfff"},
                 "'reason' is not valid Unicode", id="surrogate-reason"),
    pytest.param({"command": "vi\udcffew"}, "'command' is not valid Unicode", id="surrogate-command"),
    pytest.param({"command": "view", "pa\udcffth": "x"}, "'pa\\udcffth' is not valid Unicode",
                 id="surrogate-param-name"),
    pytest.param('{"command": "create", "path": "reference/x.md", "file_text": "\\udcff"}',
                 "'file_text' is not valid Unicode", id="surrogate-json-escape"),
    pytest.param({"name": "memory", "arguments": '{"command": "insert", "path": "system/human.md", '
                  '"insert_line": 1, "insert_text": "\\udcff"}'}, "'insert_text' is not valid Unicode",
                 id="surrogate-nested-arguments"),
]


@pytest.mark.parametrize(("call", "fragment"), REFUSALS)
def test_refused_call_changes_nothing_and_says_why(
    memory: MemoryRepo, tool: MemoryTool, call: object, fragment: str
) -> None:
    before = snapshot(memory)
    result = tool.call(call)
    assert not result.ok
    assert fragment in result.message
    assert "Traceback" not in result.message
    assert json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")  # printable as it is
    assert snapshot(memory) == before


def test_replace_with_several_matches_names_the_count(memory: MemoryRepo, tool: MemoryTool) -> None:
    count = read(memory, HUMAN).count("e")
    result = tool.call({"command": "str_replace", "path": HUMAN, "old_str": "e", "new_str": "E"})
    assert not result.ok and f"old_str matches {count} places" in result.message


def test_read_only_files_cannot_be_changed_moved_or_deleted(memory: MemoryRepo, tool: MemoryTool) -> None:
    (memory.root / "system/rules.md").write_text("---\ndescription: Rules\nread_only: true\n---\nBe kind.\n")
    git(memory.root, "add", "-A")
    git(memory.root, "commit", "-qm", "A person adds rules", "--no-verify")
    before = snapshot(memory)
    for call in (
        {"command": "str_replace", "path": "system/rules.md", "old_str": "kind", "new_str": "rude"},
        {"command": "delete", "path": "system/rules.md"},
        {"command": "rename", "old_path": "system/rules.md", "new_path": "system/other.md"},
        {"command": "update_description", "path": "system/rules.md", "description": "x"},
    ):
        result = tool.call(call)
        assert not result.ok and READ_ONLY_FILE in result.message, result.message
    assert snapshot(memory) == before


def test_symlink_pointing_outside_is_refused(memory: MemoryRepo, tool: MemoryTool, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, memory.root / "reference")
    before = snapshot(memory)
    result = tool.call({"command": "create", "path": "reference/x.md", "description": "x", "file_text": "x"})
    assert not result.ok and "symbolic link" in result.message
    assert snapshot(memory) == before
    assert list(outside.iterdir()) == []


def test_dirty_tree_is_refused(memory: MemoryRepo, tool: MemoryTool) -> None:
    (memory.root / "system/persona.md").write_text("hand edit in progress")
    before = snapshot(memory)
    result = tool.call({"command": "core_memory_append", "label": "human", "content": "x"})
    assert not result.ok
    assert "uncommitted changes (system/persona.md)" in result.message
    assert snapshot(memory) == before


def test_expected_revision_refuses_a_stale_edit_and_returns_current_content(
    memory: MemoryRepo, tool: MemoryTool
) -> None:
    seen = memory.head_sha()
    first = tool.call({"command": "str_replace", "path": HUMAN, "old_str": "Nothing recorded yet.",
                       "new_str": "Prefers tea.", "expected_revision": seen})
    assert first.ok
    # A second turn that also saw `seen` races on the same block: refused, not overwritten.
    before = snapshot(memory)
    second = tool.call({"command": "create", "path": HUMAN, "file_text": "---\ndescription: h\n---\nCoffee.\n",
                        "expected_revision": seen})
    assert not second.ok
    assert "changed since revision" in second.message and first.commit[:12] in second.message
    assert second.content is not None and "Prefers tea." in second.content
    assert snapshot(memory) == before
    # An edit of another file with the same stale revision is fine.
    other = tool.call({"command": "core_memory_append", "label": "persona", "content": "x",
                       "expected_revision": seen})
    assert other.ok, other.message
    # Redone against the current revision, the whole-file replacement goes through.
    redo = tool.call({"command": "create", "path": HUMAN, "file_text": "---\ndescription: h\n---\nCoffee.\n",
                      "expected_revision": other.revision})
    assert redo.ok, redo.message
    assert read(memory, HUMAN).endswith("Coffee.\n")


def test_core_limit_refuses_growth_but_allows_shrinking(memory: MemoryRepo) -> None:
    config = memory.root / ".memrepo/config.yml"
    config.write_text("limits:\n  core_chars: 600\n")
    git(memory.root, "commit", "-qam", "Lower the core limit", "--no-verify")
    tool = MemoryTool(memory, push=False)
    grow = tool.call({"command": "core_memory_append", "label": "human", "content": "x" * 300})
    assert not grow.ok and "system/ holds" in grow.message and "over the limit of 600" in grow.message
    shrink = tool.call({"command": "str_replace", "path": "system/persona.md",
                        "old_str": "I write down what I learn so that I can use it later, and ",
                        "new_str": ""})
    assert shrink.ok, shrink.message


def test_only_the_touched_paths_are_committed(memory: MemoryRepo, tool: MemoryTool) -> None:
    (memory.root / "scratch.txt").write_text("untracked and unrelated")
    result = tool.call({"command": "core_memory_append", "label": "human", "content": "x"})
    assert result.ok and result.paths == [HUMAN]
    assert git(memory.root, "show", "--name-only", "--format=", "HEAD").split() == [HUMAN]
    assert (memory.root / "scratch.txt").exists()


def test_agent_id_comes_from_the_repository(memory: MemoryRepo) -> None:
    assert MemoryTool(memory.root, push=False).identity.email == "a1@agents.memrepo"
    assert MemoryTool(memory.root, "b2", "Bo", push=False).identity.email == "b2@agents.memrepo"


@pytest.mark.parametrize("description", ["#1 facts", "yes", "12", "null", "Notes: tea", "'Tea: notes'", "Plain words"])
def test_a_description_reads_back_as_the_text_given_whatever_yaml_would_make_of_it(memory: MemoryRepo,
                                                                                    description: str) -> None:
    """Letta writes a v1 description bare; memrepo does too unless its own reader would then see
    no text (a comment, a boolean, a number, null), where it writes the text double-quoted."""
    from bot.memfs.format.document import parse

    meant = description[1:-1] if description.startswith("'") else description  # a YAML-quoted text's inside
    path = memory.root / "reference/x.md"
    tool = MemoryTool(memory, push=False)
    created = tool.call({"command": "create", "path": "reference/x.md", "description": description,
                         "file_text": "Body.\n"})
    assert created.ok, created.message
    assert parse(path.read_text()).frontmatter["description"] == meant
    assert tool.call({"command": "update_description", "path": "reference/x.md", "description": "Other"}).ok
    updated = tool.call({"command": "update_description", "path": "reference/x.md", "description": description})
    assert updated.ok, updated.message
    assert parse(path.read_text()).frontmatter["description"] == meant
