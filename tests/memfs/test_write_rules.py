"""One set of rules for what memory may hold, through every way a change arrives: the memory
tool, the pre-commit hook (`memrepo validate --staged`), the pull-request check (`memrepo
validate --base`, which reads the checked-out working tree) and the integrator's check
(`checks.check` over `checks.between` two commits). Each row is a change memrepo refuses and
the problem line every entry point prints for it; the rules themselves are tabled in
test_paths.py and test_validate.py."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.memfs.format.document import DUPLICATE_KEY
from bot.memfs.format.paths import (
    PATH_GIT_CONFIG,
    PATH_HIDDEN_TOP,
    PATH_INVISIBLE_CHAR,
    PATH_IS_LINK,
    PATH_IS_SUBMODULE,
    PATH_NAME_TOO_LONG,
    PATH_REFUSED,
    PATH_RESERVED,
    PATH_SHORT_NAME,
    PATH_TRAILING_DOT,
    PATH_WINDOWS_CHAR,
    PATH_WINDOWS_DEVICE,
    shown,
)
from bot.memfs.format.validate import PATH_COLLIDES
from bot.memfs.store import checks
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.texts import READ_ONLY_FILE
from bot.memfs.tool.memory_tool import READ_ONLY_REFUSED, MemoryTool
from tests.conftest import git
from tests.conftest import run_cli as run
from tests.memfs.test_init import hook_env

# git itself refuses some of these names; a person's git (or a forge) may not.
UNGUARDED = ("-c", "core.protectNTFS=false", "-c", "core.protectHFS=false")
LINK, SUBMODULE = 0o120000, 0o160000
GIT_DATA = PATH_RESERVED.format(area="git's own data (.git/)")
CI = "the repository's CI configuration (.github/)"
LOCKED = "---\ndescription: Rules a person owns\nread_only: true\n---\nBe kind.\n"
OPEN = "---\ndescription: Open notes\nread_only: false\n---\nBe kind.\n"
REPEATED = OPEN.replace("read_only: false", "read_only: true\nread_only: false")
BOM = "\ufeff"


@dataclass(frozen=True)
class Entry:
    """One path a change writes: a file's bytes, a symbolic link's target or (SUBMODULE) none."""

    path: str
    data: bytes = b"x\n"
    mode: int = 0o100644
    on_disk: bool = True  # False: no file system holds the name (over 255 bytes)


@dataclass(frozen=True)
class Row:
    id: str
    entries: tuple[Entry, ...]
    line: str  # the problem line validate prints (without its indent)
    head: dict[str, str] = field(default_factory=dict)  # committed by a person first
    tool: dict[str, object] | None = None  # the memory tool's call making the change
    tool_says: str | None = None  # what the tool's refusal contains (default: `line`)


def path_row(path: str, problem: str, *, on_disk: bool = True, data: bytes = b"x\n") -> Row:
    tool_says = PATH_REFUSED.format(path=shown(path), problem=problem)
    return Row(f"path {shown(path)}", (Entry(path, data, on_disk=on_disk),), f"{shown(path)} {problem}",
               tool={"command": "create", "path": path, "file_text": data.decode()}, tool_says=tool_says)


LONG = "notes/" + "x" * 300 + ".md"
ROWS = [
    # --- Paths.
    path_row(".github/workflows/evil.yml", PATH_RESERVED.format(area=CI), data=b"on: push\njobs: {}\n"),
    path_row(".gitattributes", PATH_GIT_CONFIG.format(name=".gitattributes"), data=b"* merge=ours\n"),
    path_row("notes/.gitmodules", PATH_GIT_CONFIG.format(name=".gitmodules")),
    path_row(".mailmap", PATH_HIDDEN_TOP.format(name=".mailmap")),
    path_row("notes/.g\u200cit/config", GIT_DATA),
    path_row("notes/.git./config", GIT_DATA),
    path_row("notes/.git::$INDEX_ALLOCATION/config", GIT_DATA),
    path_row("notes/git~1/config", GIT_DATA),
    path_row("notes/GIT~1/x.md", GIT_DATA),
    path_row("notes/PERSON~1.MD", PATH_SHORT_NAME.format(name="PERSON~1.MD")),
    path_row("notes/con.md", PATH_WINDOWS_DEVICE.format(name="con.md")),
    path_row("notes/trailing.", PATH_TRAILING_DOT.format(name="trailing.")),
    path_row("notes/why?.md", PATH_WINDOWS_CHAR.format(char="?")),
    path_row("notes/evil\u202etxt.md", PATH_INVISIBLE_CHAR.format(code="U+202E RIGHT-TO-LEFT OVERRIDE")),
    path_row("notes/zero\u200bwidth.md", PATH_INVISIBLE_CHAR.format(code="U+200B ZERO WIDTH SPACE")),
    path_row(LONG, PATH_NAME_TOO_LONG.format(name="x" * 24, size=303, limit=255), on_disk=False),
    # --- Modes: memory is regular files.
    Row("symlink to git's config", (Entry("notes/link.md", b"../.git/config", LINK),),
        f"notes/link.md {PATH_IS_LINK}"),
    Row("symlink inside memory", (Entry("notes/human.md", b"../system/human.md", LINK),),
        f"notes/human.md {PATH_IS_LINK}"),
    Row("submodule", (Entry("vendor/lib", mode=SUBMODULE),), f"vendor/lib {PATH_IS_SUBMODULE}"),
    # --- Names one file shares with another on a case-insensitive clone.
    Row("case of a file", (Entry("system/Human.md", b"---\ndescription: d\n---\nx\n"),),
        "system/Human.md " + PATH_COLLIDES.format(other="system/human.md"),
        tool={"command": "create", "path": "system/Human.md", "description": "d", "file_text": "x\n"}),
    Row("case of a folder", (Entry("System/new.md", b"---\ndescription: d\n---\nx\n"),),
        "System/new.md " + PATH_COLLIDES.format(other="system"),
        tool={"command": "create", "path": "System/new.md", "description": "d", "file_text": "x\n"}),
    Row("Unicode normalisation", (Entry("notes/cafe\u0301.md", b"x\n"),),
        "notes/cafe\u0301.md " + PATH_COLLIDES.format(other="notes/caf\u00e9.md"),
        head={"notes/caf\u00e9.md": "Coffee.\n"},
        tool={"command": "create", "path": "notes/cafe\u0301.md", "file_text": "x\n"}),
    # --- Frontmatter read one way.
    Row("read_only file saved with a byte-order mark", (Entry("notes/fixed.md", (BOM + LOCKED.replace(
        "kind", "rude")).encode()),), "notes/fixed.md: " + READ_ONLY_FILE,
        head={"notes/fixed.md": BOM + LOCKED},
        tool={"command": "str_replace", "path": "notes/fixed.md", "old_str": "kind", "new_str": "rude"},
        tool_says=READ_ONLY_FILE),
    Row("duplicate description", (Entry("notes/dup.md", b"---\ndescription: a\ndescription: b\n---\nx\n"),),
        "notes/dup.md: " + DUPLICATE_KEY.format(key="description"),
        tool={"command": "create", "path": "notes/dup.md", "file_text": "---\ndescription: a\ndescription: b\n---\n"}),
    Row("read_only true then false", (Entry("notes/open.md", REPEATED.encode()),),
        "notes/open.md: " + DUPLICATE_KEY.format(key="read_only"), head={"notes/open.md": OPEN},
        tool={"command": "create", "path": "notes/open.md", "file_text": REPEATED, "expected_revision": "HEAD"}),
]


def ids(rows: list[Row]) -> list[str]:
    return [row.id for row in rows]


def person_commits(root: Path, files: dict[str, str]) -> None:
    """What a person committed before the change (past the hook, as a person may)."""
    if not files:
        return
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(text.encode())
        git(root, "add", path)
    git(root, "commit", "-qm", "A person's notes", "--no-verify")


def stage(root: Path, entry: Entry, *, on_disk: bool) -> None:
    """Stage `entry` as git records it, with git's own name checks off; `on_disk`: the working
    tree holds it too."""
    if entry.mode == SUBMODULE:
        oid = git(root, "rev-parse", "HEAD").strip()
    else:
        oid = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=entry.data,
                             capture_output=True, check=True).stdout.decode().strip()
    git(root, *UNGUARDED, "update-index", "--add", "--cacheinfo", f"{entry.mode:o},{oid},{entry.path}")
    if not on_disk:
        return
    target = root / entry.path
    target.parent.mkdir(parents=True, exist_ok=True)
    if entry.mode == LINK:
        os.symlink(entry.data, target)
    elif entry.mode == SUBMODULE:
        target.mkdir()
    else:
        target.write_bytes(entry.data)


def problem_lines(output: str) -> list[str]:
    return [line[2:] for line in output.splitlines() if line.startswith("  ")]


# ------------------------------------------------------------------------ the memory tool

TOOL_ROWS = [row for row in ROWS if row.tool is not None]


@pytest.mark.parametrize("row", TOOL_ROWS, ids=ids(TOOL_ROWS))
def test_the_memory_tool_refuses(memory: MemoryRepo, row: Row) -> None:
    person_commits(memory.root, row.head)
    head = memory.head_sha()
    result = MemoryTool(memory).call(row.tool)
    assert not result.ok
    assert (row.tool_says or row.line) in result.message, result.message
    assert memory.head_sha() == head


def test_a_new_spelling_of_a_read_only_file_is_that_file(memory: MemoryRepo) -> None:
    """On a case-insensitive clone `system/PERSONA.md` is the person's `system/persona.md`."""
    person_commits(memory.root, {"system/persona.md": LOCKED})
    result = MemoryTool(memory).call({"command": "create", "path": "system/PERSONA.md", "file_text": "Mine.\n"})
    assert not result.ok
    assert result.message == READ_ONLY_REFUSED.format(path="system/persona.md")


@pytest.mark.parametrize("path", ["notes/GIT~1/x", LONG])
def test_memrepo_tool_refuses_cleanly_where_it_failed_inside(memory: MemoryRepo, path: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    call = json.dumps({"command": "create", "path": path, "file_text": "x\n"})
    code, _, err = run(capsys, "tool", call, "--repo", str(memory.root), "--no-push")
    assert code == 1, err
    assert err.startswith(f"path '{path}' "), err


# ------------------------------------------------------------------ the pre-commit hook

@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_validate_staged_refuses(created: Path, row: Row, capsys: pytest.CaptureFixture[str]) -> None:
    person_commits(created, row.head)
    for entry in row.entries:
        stage(created, entry, on_disk=False)
    code, out, _ = run(capsys, "validate", "--staged", "--repo", str(created))
    assert code == 1, out
    assert row.line in problem_lines(out), out


HOOK_ROWS = [row for row in ROWS if row.id in ("path notes/GIT~1/x.md", "symlink to git's config", "submodule")]


@pytest.mark.parametrize("row", HOOK_ROWS, ids=ids(HOOK_ROWS))
def test_the_pre_commit_hook_refuses(created: Path, tmp_path: Path, row: Row) -> None:
    head = git(created, "rev-parse", "HEAD")
    for entry in row.entries:
        stage(created, entry, on_disk=True)
    done = subprocess.run(["git", *UNGUARDED, "commit", "-m", row.id], cwd=created, env=hook_env(tmp_path, True),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert row.line in problem_lines(done.stdout + done.stderr), done.stdout + done.stderr
    assert git(created, "rev-parse", "HEAD") == head


# ------------------------------------------------------------- the pull-request check

def pull_request(root: Path, row: Row, *, on_disk: bool) -> tuple[str, str]:
    """(base, head): `row`'s change committed on a branch, checked out when `on_disk`."""
    person_commits(root, row.head)
    base = git(root, "rev-parse", "HEAD").strip()
    git(root, "checkout", "-qb", "memrepo/edit/a1/x")
    for entry in row.entries:
        stage(root, entry, on_disk=on_disk and entry.on_disk)
    git(root, *UNGUARDED, "commit", "-qm", row.id, "--no-verify")
    return base, git(root, "rev-parse", "HEAD").strip()


BASE_ROWS = [row for row in ROWS if all(entry.on_disk for entry in row.entries)]


@pytest.mark.parametrize("row", BASE_ROWS, ids=ids(BASE_ROWS))
def test_validate_base_refuses(created: Path, row: Row, capsys: pytest.CaptureFixture[str]) -> None:
    pull_request(created, row, on_disk=True)
    code, out, _ = run(capsys, "validate", "--repo", str(created), "--base", "main")
    assert code == 1, out
    assert row.line in problem_lines(out), out


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_the_integrators_check_refuses(created: Path, row: Row) -> None:
    base, head = pull_request(created, row, on_disk=False)
    repo = MemoryRepo.open(created)
    problems = checks.check(repo, checks.between(repo, base, head), base)
    assert row.line in [str(problem)[2:] for problem in problems], problems


# ------------------------------------------------------------------ the whole working tree

def outside_notes(tmp_path: Path) -> Path:
    """A folder outside memory whose file, were it read through a link, would be a problem of
    its own (its frontmatter does not parse)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text("---\ndescription: [unclosed\n---\nsecret\n")
    return outside


def test_validate_of_the_whole_tree_reports_links_and_never_reads_through_them(
        created: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = outside_notes(tmp_path)
    (created / "system" / "linked.md").symlink_to(outside / "notes.md")
    (created / "ext").symlink_to(outside)
    (created / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    code, out, _ = run(capsys, "validate", "--repo", str(created))
    assert code == 1, out
    assert problem_lines(out) == [f"{path} {PATH_IS_LINK}" for path in ("dangling.md", "ext", "system/linked.md")]
    code, out, _ = run(capsys, "validate", "--repo", str(created), "--json")
    found = json.loads(out)
    assert found["valid"] is False and "secret" not in out and "unclosed" not in out


@pytest.mark.parametrize("given", ["ext", "ext/", "ext/notes.md", "ext/nothing.md"])
def test_a_path_given_at_or_under_a_linked_folder_is_that_link(created: Path, tmp_path: Path, given: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`memrepo validate ext/notes.md` with ext a link to a folder elsewhere: the link is the
    problem (it was "does not exist" before, as if the path were simply wrong)."""
    (created / "ext").symlink_to(outside_notes(tmp_path))
    code, out, err = run(capsys, "validate", "--repo", str(created), given)
    assert (code, err) == (1, ""), err
    assert problem_lines(out) == [f"ext {PATH_IS_LINK}"]
