"""`read_only` holds for every markdown file of memory, wherever it is: the memory tool, the
pre-commit hook (a real `git commit` in a repository made by `memrepo init`) and the
pull-request check (`memrepo validate --base`) refuse to change, move or delete it. And git's
own configuration files (`.gitattributes`, `.gitmodules`, `.gitignore`, any dotfile at the top
of the repository) are not memory: the tool refuses them as it refuses `.git/`."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import DEFAULT_POLICY
from bot.errors import MemrepoError
from bot.memfs.format import paths, validate
from bot.memfs.format.paths import PATH_GIT_CONFIG, PATH_HIDDEN_TOP, PATH_REFUSED
from bot.memfs.format.validate import (
    READ_ONLY_CHANGED,
    READ_ONLY_DELETED,
    READ_ONLY_NOT_BOOL,
    READ_ONLY_REMOVED,
    READ_ONLY_SET,
    VALIDATION_HEADER,
)
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.texts import READ_ONLY_FILE
from bot.memfs.tool.memory_tool import MemoryTool
from tests.conftest import git
from tests.conftest import run_cli as run
from tests.memfs.test_init import commit, hook_env
from tests.memfs.test_tool import snapshot

LOCKED = "---\ndescription: Rules a person owns\nread_only: true\n---\nBe kind.\n"
WHERE = ["notes.md", "projects/notes.md", "system/rules.md", "reference/rules.md", "skills/tea/SKILL.md"]


def lock(root: Path, path: str) -> None:
    """A person commits a read_only file (past the hook, as a person may)."""
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(LOCKED)
    git(root, "add", path)
    git(root, "commit", "-qm", f"A person adds {path}", "--no-verify")


# -------------------------------------------------------------------------------- the tool

def _calls(path: str) -> list[dict[str, object]]:
    return [
        {"command": "str_replace", "path": path, "old_str": "kind", "new_str": "rude"},
        {"command": "insert", "path": path, "insert_line": -1, "insert_text": "More."},
        {"command": "update_description", "path": path, "description": "x"},
        {"command": "create", "path": path, "file_text": "Replaced.\n", "description": "x",
         "expected_revision": "HEAD"},
        {"command": "delete", "path": path},
        {"command": "delete", "path": path.rpartition("/")[0] or path},
        {"command": "rename", "old_path": path, "new_path": "moved/" + path},
        {"command": "apply_patch", "patch": f"*** Begin Patch\n*** Update File: {path}\n@@\n-Be kind.\n+Be rude.\n"
                                            "*** End Patch\n"},
        {"command": "apply_patch", "patch": f"*** Begin Patch\n*** Delete File: {path}\n*** End Patch\n"},
    ]


@pytest.mark.parametrize("path", WHERE)
def test_the_tool_refuses_to_change_move_or_delete_a_read_only_file(memory: MemoryRepo, path: str) -> None:
    lock(memory.root, path)
    tool = MemoryTool(memory)
    before = snapshot(memory)
    for call in _calls(path):
        result = tool.call(call)
        assert not result.ok, call
        assert READ_ONLY_FILE in result.message, (call, result.message)
    assert snapshot(memory) == before


@pytest.mark.parametrize("path", ["notes.md", "projects/notes.md"])
def test_the_tool_may_not_mark_a_file_read_only_anywhere(memory: MemoryRepo, path: str) -> None:
    tool = MemoryTool(memory)
    before = snapshot(memory)
    result = tool.call({"command": "create", "path": path, "file_text": LOCKED})
    assert not result.ok and READ_ONLY_SET in result.message, result.message
    assert snapshot(memory) == before


def test_files_next_to_a_read_only_one_stay_writable(memory: MemoryRepo) -> None:
    lock(memory.root, "notes.md")
    result = MemoryTool(memory).call({"command": "create", "path": "notes-2.md", "file_text": "Free.\n"})
    assert result.ok, result.message


# -------------------------------------------------------------------------------- the hook


HOOK_EDITS = {
    "change": lambda root, path: ((root / path).write_text(LOCKED.replace("kind", "rude")),
                                  git(root, "add", path)),
    "delete": lambda root, path: git(root, "rm", "-q", path),
    "move": lambda root, path: git(root, "mv", path, "moved.md"),
}


@pytest.mark.parametrize("edit", sorted(HOOK_EDITS))
@pytest.mark.parametrize("path", ["notes.md", "projects/notes.md", "system/rules.md"])
def test_the_hook_refuses_a_commit_that_changes_a_read_only_file(created: Path, tmp_path: Path, path: str,
                                                                edit: str) -> None:
    env = hook_env(tmp_path, True)
    lock(created, path)
    head = git(created, "rev-parse", "HEAD")
    HOOK_EDITS[edit](created, path)
    done = commit(created, env, "-m", f"{edit} {path}")
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert VALIDATION_HEADER in output
    assert f"{path}: file is read_only" in output, output
    assert git(created, "rev-parse", "HEAD") == head


def test_the_hook_still_lets_other_files_through(created: Path, tmp_path: Path) -> None:
    env = hook_env(tmp_path, True)
    lock(created, "notes.md")
    (created / "other.md").write_text("Plain notes.\n")
    git(created, "add", "other.md")
    done = commit(created, env, "-m", "Add other notes")
    assert done.returncode == 0, done.stdout + done.stderr


# ----------------------------------------------------------------- the pull-request check

@pytest.mark.parametrize("edit", sorted(HOOK_EDITS))
def test_validate_base_refuses_a_branch_that_changes_a_read_only_file(created: Path, edit: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    lock(created, "notes.md")
    git(created, "checkout", "-qb", "memrepo/edit/a1/x")
    HOOK_EDITS[edit](created, "notes.md")
    git(created, "commit", "-qm", f"{edit} notes.md", "--no-verify")
    code, out, _ = run(capsys, "validate", "--repo", str(created), "--base", "main")
    assert code == 1, out
    assert "notes.md: file is read_only" in out


@pytest.mark.parametrize("edit", sorted(HOOK_EDITS))
def test_the_integrators_validation_refuses_it_too(created: Path, tmp_path: Path, edit: str) -> None:
    from bot.integrator.context import Remote
    from bot.integrator.workspace import Workspace

    lock(created, "notes.md")
    base = git(created, "rev-parse", "HEAD").strip()
    git(created, "checkout", "-qb", "memrepo/edit/a1/x")
    HOOK_EDITS[edit](created, "notes.md")
    git(created, "commit", "-qm", f"{edit} notes.md", "--no-verify")
    head = git(created, "rev-parse", "HEAD").strip()
    workspace = Workspace(tmp_path / "work", "alice/memory", Remote("unused"))
    workspace.path.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(created), str(workspace.path))
    verdict = workspace.validate(base, head)
    assert not verdict.valid
    assert any(problem.startswith("notes.md: file is read_only") for problem in verdict.problems), verdict


# -------------------------------------------------------------------- the rule, by table

RO = LOCKED.encode()
RO_FALSE = RO.replace(b"read_only: true", b"read_only: false")
PLAIN = b"Plain notes.\n"

RULES: list[tuple[str, str, bytes | None, bytes | None, list[str]]] = [
    # id, path, staged, head, expected messages
    ("root file changed", "notes.md", PLAIN, RO, [READ_ONLY_FILE]),
    ("root file deleted", "notes.md", None, RO, [READ_ONLY_DELETED]),
    ("folder file changed", "a/b/notes.md", PLAIN, RO, [READ_ONLY_FILE]),
    ("system file deleted", "system/rules.md", None, RO, [READ_ONLY_DELETED]),
    ("reference file deleted", "reference/rules.md", None, RO, [READ_ONLY_DELETED]),
    ("skill deleted", "skills/tea/SKILL.md", None, RO, [READ_ONLY_DELETED]),
    ("root file unchanged", "notes.md", RO, RO, []),
    ("root read_only false: changed", "notes.md", RO_FALSE.replace(b"kind", b"fair"), RO_FALSE, []),
    ("root read_only false: deleted", "notes.md", None, RO_FALSE, []),
    ("plain root file deleted", "notes.md", None, PLAIN, []),
    ("root file set read_only", "notes.md", RO, None, [READ_ONLY_SET]),
    ("root file: false -> true", "notes.md", RO, RO_FALSE, [READ_ONLY_CHANGED]),
    ("root file: false removed", "notes.md", RO_FALSE.replace(b"read_only: false\n", b""), RO_FALSE,
     [READ_ONLY_REMOVED]),
    ("root file: not a boolean", "notes.md", RO.replace(b"true", b"maybe"), RO.replace(b"true", b"maybe"),
     [READ_ONLY_NOT_BOOL.format(kind="str")]),
    ("root file without frontmatter needs none", "notes.md", PLAIN, None, []),
    ("root file with a broken frontmatter is not judged", "notes.md", b"---\nunclosed\n", None, []),
    ("not markdown", "notes.txt", PLAIN, RO, []),
    ("memrepo's own state is not memory", ".memrepo/notes.md", None, RO, []),
    ("CI's files are not memory", ".github/notes.md", PLAIN, RO, []),
]


@pytest.mark.parametrize(("path", "staged", "head", "expected"), [c[1:] for c in RULES], ids=[c[0] for c in RULES])
def test_read_only_rule(path: str, staged: bytes | None, head: bytes | None, expected: list[str]) -> None:
    problems = validate.validate_file(path, staged, head, DEFAULT_POLICY)
    assert [p.message for p in problems] == expected
    assert all(p.path == path for p in problems)


@pytest.mark.parametrize(("data", "locked"), [
    (RO, True), (RO_FALSE, False), (PLAIN, False), (None, False), (b"---\nread_only: [\n---\n", False),
    (b"\xff", False), (RO + b"\xff", True),  # a stray byte in the body does not unlock the file
    (RO.replace(b"true", b"'true'"), False),
    ("\ufeff".encode() + RO, True),  # saved with a byte-order mark: still the person's
    (RO.replace(b"read_only: true", b"read_only: true\nread_only: false"), True),  # any reader's value counts
    (RO.replace(b"read_only: true", b"read_only: false\nread_only: true"), True),
    (RO.replace(b"read_only: true", b"read_only: false\nread_only: false"), False),
])
def test_is_read_only(data: bytes | None, locked: bool) -> None:
    assert validate.is_read_only(data) is locked


# ---------------------------------------------------------------- git's configuration files

GIT_CONFIG = [".gitattributes", ".gitmodules", ".gitignore", "system/.gitignore", "notes/.gitattributes",
              ".GitAttributes", "reference/deep/.gitmodules", ".git-blame-ignore-revs"]
TOP_DOTFILES = [".mailmap", ".editorconfig", ".vscode/settings.json", ".hidden/notes.md", ".env"]


@pytest.mark.parametrize("path", GIT_CONFIG)
def test_git_configuration_paths_are_refused(path: str) -> None:
    with pytest.raises(MemrepoError) as refused:
        paths.normalize(path)
    name = path.rpartition("/")[2]
    assert refused.value.message == PATH_REFUSED.format(path=path, problem=PATH_GIT_CONFIG.format(name=name))


@pytest.mark.parametrize("path", TOP_DOTFILES)
def test_hidden_files_at_the_top_are_refused(path: str) -> None:
    with pytest.raises(MemrepoError) as refused:
        paths.normalize(path)
    problem = PATH_HIDDEN_TOP.format(name=path.partition("/")[0])
    assert refused.value.message == PATH_REFUSED.format(path=path, problem=problem)


@pytest.mark.parametrize(("path", "area"), [(".memrepo/config.yml", ".memrepo/"), (".github/workflows/x.yml",
                                                                                 ".github/"), (".git/config", ".git/"),
                                            ("notes/.git/config", ".git/")])
def test_memrepo_and_ci_folders_keep_their_own_message(path: str, area: str) -> None:
    with pytest.raises(MemrepoError) as refused:
        paths.normalize(path)
    assert refused.value.message.startswith(f"path '{path}' is inside ")
    assert area in refused.value.message


@pytest.mark.parametrize("path", ["notes/.hidden.md", "system/.draft.md", "reference/.x/y.md", "gitattributes.md",
                                  "notes.gitignore.md", "a.b/c.md"])
def test_dotted_names_inside_memory_folders_are_fine(path: str) -> None:
    assert paths.normalize(path) == path


@pytest.mark.parametrize("call", [
    {"command": "create", "path": ".gitattributes", "file_text": "*.md merge=ours\n"},
    {"command": "create", "path": ".gitmodules",
     "file_text": "[submodule \"x\"]\n\tpath = x\n\turl = https://example.com/x.git\n"},
    {"command": "create", "path": ".gitignore", "file_text": "system/\n"},
    {"command": "create", "path": "system/.gitattributes", "file_text": "* -text\n"},
    {"command": "create", "path": ".mailmap", "file_text": "Pat <pat@example.com> <a1@agents.memrepo>\n"},
    {"command": "rename", "old_path": "system/human.md", "new_path": ".gitignore"},
    {"command": "apply_patch", "patch": "*** Begin Patch\n*** Add File: .gitattributes\n+* merge=ours\n"
                                        "*** End Patch\n"},
    {"command": "view", "path": ".gitattributes"},
], ids=lambda call: f"{call['command']}-{call.get('path') or call.get('new_path') or 'patch'}")
def test_the_tool_refuses_git_configuration(memory: MemoryRepo, call: dict[str, object]) -> None:
    before = snapshot(memory)
    result = MemoryTool(memory).call(call)
    assert not result.ok
    assert "git's own configuration" in result.message or "hidden" in result.message, result.message
    assert snapshot(memory) == before


def test_what_init_writes_stays_out_of_the_tools_reach(memory: MemoryRepo) -> None:
    tool = MemoryTool(memory)
    for path in (".memrepo/config.yml", ".github/workflows/memrepo-validate.yml"):
        assert memory.read(path) is not None
        result = tool.call({"command": "create", "path": path, "file_text": "x\n", "expected_revision": "HEAD"})
        assert not result.ok and "memrepo refuses every change that writes there" in result.message, result.message
