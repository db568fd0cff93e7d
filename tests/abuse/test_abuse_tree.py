"""A writer against the tree itself: modes, attributes and settings that would make a clone
check out other bytes than the commit's, or leave its index differing from HEAD, and so stop
every agent ("uncommitted changes"); and the checkers that must give one answer about a tree
(the memory tool, the pre-commit hook, `validate` with and without --base, the integrator).

Memory files are regular files (mode 100644): an executable bit, a symbolic link or a
submodule is refused wherever a change is checked. Whatever a writer pushes straight to
`main` anyway, memrepo's clones check out the bytes as committed and `sync` leaves the index
as HEAD says.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import parse_policy
from bot.errors import MemrepoError
from bot.memfs import sync
from bot.memfs.clone import clone_repository
from bot.memfs.create import init_repository
from bot.memfs.format import paths, validate
from bot.memfs.format.paths import PATH_BAD_MODE, PATH_EXECUTABLE, PATH_IS_LINK, PATH_IS_SUBMODULE
from bot.memfs.store import checks
from bot.memfs.store.repo import (
    ATTRIBUTES_LINE,
    ATTRIBUTES_MARK,
    MemoryRepo,
    attributes_text,
    settings_to_change,
)
from bot.memfs.tool.memory_tool import MemoryTool
from tests.conftest import git, run_cli

HUMAN = "system/human.md"
NOTE = "reference/note.md"
NOTE_TEXT = b"---\r\ndescription: A note.\r\n---\r\nline one\r\nline two\r\n"
BLOCK = f"{ATTRIBUTES_MARK}\n{ATTRIBUTES_LINE}\n"


# ------------------------------------------------------------------------------ the pure rules
@pytest.mark.parametrize(("mode", "problem"), [
    (0o100644, None),
    (0o100755, PATH_EXECUTABLE),
    (0o120000, PATH_IS_LINK),
    (0o160000, PATH_IS_SUBMODULE),
    (0o100600, PATH_BAD_MODE.format(mode="100600")),
])
def test_a_written_path_is_judged_by_its_mode(mode: int, problem: str | None) -> None:
    data = b"---\ndescription: Who the person is.\n---\nPat.\n"
    found = validate.validate_changes({HUMAN: (data, data)}, parse_policy(None), modes={HUMAN: mode})
    assert [p.message for p in found] == ([] if problem is None else [problem])


@pytest.mark.parametrize(("existing", "expected"), [
    (None, BLOCK),
    ("", BLOCK),
    (BLOCK, None),
    ("*.md diff=markdown\n", "*.md diff=markdown\n" + BLOCK),
    ("*.md diff=markdown", "*.md diff=markdown\n" + BLOCK),
    (BLOCK + "* text=auto\n", "* text=auto\n" + BLOCK),  # memrepo's line last again: a later line wins
])
def test_info_attributes_end_with_memrepos_line(existing: str | None, expected: str | None) -> None:
    assert attributes_text(existing) == expected
    if expected is not None:
        assert attributes_text(expected) is None


@pytest.mark.parametrize(("current", "expected"), [
    ({}, {"core.autocrlf": "false", "core.filemode": "false"}),
    ({"core.autocrlf": "true", "core.filemode": "false"}, {"core.autocrlf": "false"}),
    ({"core.autocrlf": "FALSE", "core.filemode": "false"}, {}),
    ({"core.autocrlf": "input", "core.filemode": "true"}, {"core.autocrlf": "false", "core.filemode": "false"}),
])
def test_clone_settings_to_change(current: dict[str, str | None], expected: dict[str, str]) -> None:
    assert settings_to_change(current) == expected


# ------------------------------------------------------------------------------ helpers
@pytest.fixture
def pair(tmp_path: Path, bare_remote: Path) -> Iterator[tuple[MemoryRepo, Path]]:
    """An agent's memory clone synced with a bare remote, and a writer's plain git clone of it
    (no hook: a writer with push access pushes what git lets them)."""
    memory = init_repository(tmp_path / "memory", "a1", "Ada")
    sync.set_remote(memory, str(bare_remote))
    assert sync.sync(memory).pushed
    writer = tmp_path / "writer"
    git(tmp_path, "clone", "-q", str(bare_remote), str(writer))
    yield memory, writer


def push_commit(writer: Path, message: str = "a writer's push") -> None:
    git(writer, "commit", "-q", "--no-verify", "-m", message)
    git(writer, "push", "-q", "origin", "HEAD:main")


def stage_raw(writer: Path, path: str, data: bytes, mode: str = "100644") -> None:
    """Put `data` in the index at `path` exactly (no attribute or line-ending conversion)."""
    done = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=writer, input=data, capture_output=True,
                          check=True)
    git(writer, "update-index", "--add", "--cacheinfo", f"{mode},{done.stdout.decode().strip()},{path}")


def tree_entry(repo: Path, path: str, rev: str = "HEAD") -> str:
    return git(repo, "ls-tree", rev, "--", path).split("\t")[0]


def index_matches_head(repo: Path) -> bool:
    return git(repo, "diff", "--cached", "--name-only").strip() == "" and \
        git(repo, "status", "--porcelain", "--untracked-files=no").strip() == ""


def edit_works(memory: MemoryRepo) -> None:
    result = MemoryTool(memory.root, push=False).call(
        {"command": "insert", "path": HUMAN, "insert_line": -1, "insert_text": "- likes tea"})
    assert result.ok and result.commit, result.message


# ------------------------------------------------------------------------------ a mode on main
def test_an_executable_bit_pushed_to_main_leaves_a_synced_clone_clean(pair: tuple[MemoryRepo, Path]) -> None:
    memory, writer = pair
    git(writer, "update-index", "--chmod=+x", HUMAN)
    push_commit(writer, "chmod +x system/human.md")
    result = sync.sync(MemoryRepo.open(memory.root))
    assert result.pushed and result.pulled == 1, result.summary
    assert tree_entry(memory.root, HUMAN).startswith("100755")
    assert git(memory.root, "ls-files", "-s", HUMAN).startswith("100755")
    assert index_matches_head(memory.root)
    assert MemoryRepo.open(memory.root).settle() == []
    edit_works(MemoryRepo.open(memory.root))
    # The tool's commit writes a regular file: the bit is gone, and the clone is still clean.
    assert tree_entry(memory.root, HUMAN).startswith("100644")
    assert index_matches_head(memory.root)
    assert sync.sync(MemoryRepo.open(memory.root)).pushed


@pytest.mark.parametrize("attributes", [
    b"* text=auto\n",
    b"* text eol=lf\n",
    b"*.md text eol=crlf\n",
    b"* crlf\n",
    b"* text=auto working-tree-encoding=UTF-16\n",
])
def test_gitattributes_pushed_to_main_leave_the_bytes_as_committed(
        pair: tuple[MemoryRepo, Path], attributes: bytes) -> None:
    memory, writer = pair
    stage_raw(writer, ".gitattributes", attributes)
    stage_raw(writer, NOTE, NOTE_TEXT)
    push_commit(writer, "attributes and a CRLF note")
    result = sync.sync(MemoryRepo.open(memory.root))
    assert result.pushed, result.summary
    assert (memory.root / NOTE).read_bytes() == NOTE_TEXT
    assert index_matches_head(memory.root)
    edit_works(MemoryRepo.open(memory.root))
    assert index_matches_head(memory.root)


def test_ident_and_filter_attributes_change_nothing_a_clone_checks_out(tmp_path: Path, bare_remote: Path) -> None:
    memory = init_repository(tmp_path / "memory", "a1", "Ada")
    sync.set_remote(memory, str(bare_remote))
    sync.sync(memory)
    writer = tmp_path / "writer"
    git(tmp_path, "clone", "-q", str(bare_remote), str(writer))
    stage_raw(writer, ".gitattributes", b"* ident eol=crlf\n*.md filter=lfs\n")
    body = b"---\ndescription: A note.\n---\n$Id$\nline\n"
    stage_raw(writer, NOTE, body)
    push_commit(writer)
    copy = clone_repository(str(bare_remote), tmp_path / "copy", "a2")
    assert (copy.root / NOTE).read_bytes() == body
    assert index_matches_head(copy.root)
    assert (copy.root / ".git" / "info" / "attributes").read_text().endswith(BLOCK)
    assert git(copy.root, "config", "core.autocrlf").strip() == "false"


def test_a_clone_wedged_before_is_repaired_by_its_next_sync_and_keeps_real_work(
        pair: tuple[MemoryRepo, Path]) -> None:
    """What a clone looked like after such a push synced by an earlier memrepo: git staged its
    own conversion of the CRLF note and the old mode of the executable one. The next sync puts
    the index back to HEAD; a file someone really changed still stops it, and is kept."""
    memory, writer = pair
    stage_raw(writer, ".gitattributes", b"* text=auto\n")
    stage_raw(writer, NOTE, NOTE_TEXT)
    git(writer, "update-index", "--chmod=+x", HUMAN)
    push_commit(writer)
    root = memory.root
    git(root, "fetch", "-q", "origin")
    git(root, "-c", "core.autocrlf=false", "reset", "-q", "--hard", "origin/main")
    git(root, "add", "--renormalize", NOTE)  # git's own line-ending conversion, staged
    git(root, "update-index", "--chmod=-x", HUMAN)
    assert not index_matches_head(root)
    assert sync.sync(MemoryRepo.open(root)).pushed
    assert index_matches_head(root)
    assert (root / NOTE).read_bytes() == NOTE_TEXT
    # Real work is never dropped: a changed file still stops sync, and stays as it was.
    (root / HUMAN).write_text("---\ndescription: Who the person is.\n---\nmy unsaved words\n")
    with pytest.raises(MemrepoError, match="uncommitted changes"):
        sync.sync(MemoryRepo.open(root))
    assert "my unsaved words" in (root / HUMAN).read_text()


# ------------------------------------------------------------------------------ every checker refuses the mode
def test_the_hook_refuses_an_executable_bit(memory: MemoryRepo) -> None:
    git(memory.root, "update-index", "--chmod=+x", HUMAN)
    done = subprocess.run(["git", "commit", "-qm", "chmod"], cwd=memory.root, capture_output=True, text=True)
    assert done.returncode != 0
    assert HUMAN in done.stdout + done.stderr and "executable" in done.stdout + done.stderr
    assert tree_entry(memory.root, HUMAN).startswith("100644")


def test_validate_base_and_whole_tree_refuse_an_executable_bit(memory: MemoryRepo, capsys) -> None:  # type: ignore[no-untyped-def]
    base = memory.head_sha()
    assert base is not None
    git(memory.root, "update-index", "--chmod=+x", HUMAN)
    git(memory.root, "commit", "-q", "--no-verify", "-m", "chmod")
    code, out, err = run_cli(capsys, "validate", "--repo", str(memory.root), "--base", base)
    assert code == 1 and f"{HUMAN} {PATH_EXECUTABLE}" in out, out + err
    code, out, err = run_cli(capsys, "validate", "--repo", str(memory.root))
    assert code == 1 and f"{HUMAN} {PATH_EXECUTABLE}" in out, out + err


@pytest.mark.parametrize(("make", "problem"), [
    (lambda root: (root / "reference").mkdir() or (root / "reference/passwd.md").symlink_to("/etc/passwd")
     or git(root, "add", "-A"), PATH_IS_LINK),
    (lambda root: git(root, "update-index", "--add", "--cacheinfo",
                      f"160000,{git(root, 'rev-parse', 'HEAD').strip()},reference/other"), PATH_IS_SUBMODULE),
])
def test_validate_base_refuses_links_and_gitlinks(memory: MemoryRepo, capsys, make, problem: str) -> None:  # type: ignore[no-untyped-def]
    base = memory.head_sha()
    assert base is not None
    make(memory.root)
    git(memory.root, "commit", "-q", "--no-verify", "-m", "a link")
    code, out, _ = run_cli(capsys, "validate", "--repo", str(memory.root), "--base", base)
    assert code == 1 and problem in out


def test_checks_between_sees_a_mode_only_change(memory: MemoryRepo) -> None:
    base = memory.head_sha()
    assert base is not None
    git(memory.root, "update-index", "--chmod=+x", HUMAN)
    git(memory.root, "commit", "-q", "--no-verify", "-m", "chmod")
    changes = checks.between(memory, base, "HEAD")
    assert changes.modes == {HUMAN: paths.EXECUTABLE_MODE}
    assert [p.message for p in checks.check(memory, changes, base)] == [PATH_EXECUTABLE]


# ------------------------------------------------------------------------------ one answer about the config
def test_the_tool_refuses_while_letta_constraints_are_broken_as_validate_does(memory: MemoryRepo, capsys) -> None:  # type: ignore[no-untyped-def]
    (memory.root / ".memfs.config.json").write_text("{not json")
    git(memory.root, "commit", "-q", "--no-verify", "-am", "broken constraints")
    head = memory.head_sha()
    code, validate_out, _ = run_cli(capsys, "validate", "--repo", str(memory.root))
    assert code == 1 and ".memfs.config.json" in validate_out
    result = MemoryTool(memory.root, push=False).call(
        {"command": "create", "path": "reference/b.md", "file_text": "---\ndescription: B.\n---\nb\n"})
    assert not result.ok and ".memfs.config.json: invalid JSON" in result.message
    assert MemoryRepo.open(memory.root).head_sha() == head
    assert not (memory.root / "reference/b.md").exists()
    # The change that repairs it is judged on what it writes (a person's, approved).
    (memory.root / ".memfs.config.json").write_text('{"version": 1}\n')
    done = subprocess.run(["git", "commit", "-qam", "repair"], cwd=memory.root, capture_output=True, text=True,
                          env={**_env(), "LETTA_MEMORY_CONSTRAINTS_UPDATE": "1"})
    assert done.returncode == 0, done.stdout + done.stderr


def test_validate_base_refuses_a_change_on_top_of_broken_constraints(memory: MemoryRepo, capsys) -> None:  # type: ignore[no-untyped-def]
    (memory.root / ".memfs.config.json").write_text('{"version": 2}\n')
    git(memory.root, "commit", "-q", "--no-verify", "-am", "broken constraints")
    base = memory.head_sha()
    assert base is not None
    (memory.root / "reference").mkdir()
    (memory.root / "reference/c.md").write_text("---\ndescription: C.\n---\nc\n")
    git(memory.root, "add", "-A")
    git(memory.root, "commit", "-q", "--no-verify", "-m", "a note")
    code, out, _ = run_cli(capsys, "validate", "--repo", str(memory.root), "--base", base)
    assert code == 1 and ".memfs.config.json" in out


def test_the_tool_refuses_while_the_policy_is_broken(memory: MemoryRepo) -> None:
    (memory.root / ".memrepo/config.yml").write_text("limits: [1,\n")
    git(memory.root, "commit", "-q", "--no-verify", "-am", "broken policy")
    result = MemoryTool(memory.root, push=False).call(
        {"command": "create", "path": "reference/b.md", "file_text": "---\ndescription: B.\n---\nb\n"})
    assert not result.ok and result.message.startswith(".memrepo/config.yml: not valid YAML"), result.message
    assert "\n" not in result.message and not (memory.root / "reference/b.md").exists()


def test_whole_tree_validate_holds_every_file_to_its_limits(memory: MemoryRepo, capsys) -> None:  # type: ignore[no-untyped-def]
    big = "---\ndescription: Who the person is.\n---\n" + "y" * 30000 + "\n"
    (memory.root / HUMAN).write_text(big)
    git(memory.root, "commit", "-q", "--no-verify", "-am", "too large")
    code, out, _ = run_cli(capsys, "validate", "--repo", str(memory.root))
    assert code == 1 and HUMAN in out and "20000" in out, out
    code, out, _ = run_cli(capsys, "validate", "--repo", str(memory.root), HUMAN)
    assert code == 1 and HUMAN in out


def test_whole_tree_validate_holds_core_memory_to_its_limit(memory: MemoryRepo, capsys) -> None:  # type: ignore[no-untyped-def]
    (memory.root / ".memrepo/config.yml").write_text(
        (memory.root / ".memrepo/config.yml").read_text().replace("core_chars: 65536", "core_chars: 300"))
    git(memory.root, "commit", "-q", "--no-verify", "-am", "a small core")
    code, out, _ = run_cli(capsys, "validate", "--repo", str(memory.root))
    assert code == 1 and "system/" in out and "300" in out, out


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}


# ------------------------------------------------------------------------------ the integrator
@pytest.fixture
def forge_world(localhub, tmp_path: Path, redis_url: str):  # type: ignore[no-untyped-def]
    from tests.integrator.test_integrator_jobs import built_world

    with built_world(localhub, tmp_path, redis_url) as world:
        yield world


def _edit_pull(world, branch: str, stage) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    """An agent's edit pull request whose only commit is what `stage` does in the writer's clone."""
    from bot.contracts import LABEL_AGENT_EDIT
    from bot.forge.shapes import NewPullRequest

    clone = world.clone
    git(clone, "fetch", "-q", "origin")
    git(clone, "checkout", "-q", "-B", branch, "origin/main")
    stage(clone)
    git(clone, "-c", "user.email=a1@agents.memrepo", "-c", "user.name=Ada", "commit", "-q", "--no-verify",
        "-m", "Edit\n\nAgent-ID: a1\n")
    git(clone, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
    pr = world.client().open_pull_request(NewPullRequest(head=branch, base="main", title="Agent edit",
                                                         labels=(LABEL_AGENT_EDIT,)))
    return pr.number, git(clone, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize(("stage", "problem"), [
    (lambda clone: git(clone, "update-index", "--chmod=+x", HUMAN), PATH_EXECUTABLE),
    (lambda clone: (clone / "reference").mkdir(exist_ok=True) or (clone / "reference/p.md").symlink_to(
        "/etc/passwd") or git(clone, "add", "-A"), PATH_IS_LINK),
    (lambda clone: git(clone, "update-index", "--add", "--cacheinfo",
                       f"160000,{git(clone, 'rev-parse', 'HEAD').strip()},reference/sub"), PATH_IS_SUBMODULE),
])
def test_the_integrator_never_merges_a_mode_memory_may_not_hold(forge_world, stage, problem: str) -> None:  # type: ignore[no-untyped-def]
    before = forge_world.main_sha()
    number, head = _edit_pull(forge_world, "memrepo/edit/a1/mode", stage)
    forge_world.integrate(number)
    assert not forge_world.pull(number).merged
    state, description = forge_world.status(head)
    assert state == "failure", description
    assert any(problem in comment for comment in forge_world.comments(number))
    assert forge_world.main_sha() == before
