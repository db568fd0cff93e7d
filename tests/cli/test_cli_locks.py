"""A lock file a killed git process left behind (a crash, a SIGKILL during a write) is named in one
line with what to do, never reported as an internal error; and a sync writes no git setting, so
the follower's every pass takes no `.git/config.lock` that a kill could leave behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import lock_left
from bot.memfs import init_repository
from tests.conftest import git, run_cli

NOTE = {"command": "create", "path": "notes/a.md", "file_text": "---\ndescription: a\n---\nx\n"}


@pytest.mark.parametrize(("problem", "lock"), [
    ("failed to lock file '/m/.git/config.lock' for writing: ", "/m/.git/config.lock"),
    ("failed to lock file '/m/.git/refs/heads/main.lock' for writing: File exists", "/m/.git/refs/heads/main.lock"),
    ("the index is locked; this might be due to a concurrent or crashed process", ".git/index.lock"),
    ("reference 'refs/heads/main' not found", None),
    ("failed to lock file '/m/.git/config' for writing", None),  # not a lock file's name
])
def test_the_lock_is_read_from_libgit2s_words(problem: str, lock: str | None) -> None:
    assert lock_left(problem) == lock


def test_an_index_lock_left_behind_stops_a_tool_call_in_one_line_with_nothing_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = init_repository(tmp_path / "memory")
    head = git(repo.root, "rev-parse", "HEAD")
    (repo.root / ".git" / "index.lock").touch()
    code, out, err = run_cli(capsys, "tool", json.dumps(NOTE), "--repo", str(repo.root))
    assert code == 75 and out == ""
    assert err.count("\n") == 1 and "index.lock exists" in err and "remove that file" in err, err
    assert "internal error" not in err and "Traceback" not in err
    assert git(repo.root, "rev-parse", "HEAD") == head and not (repo.root / "notes").exists()


def test_a_config_lock_left_behind_is_named_with_its_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = init_repository(tmp_path / "memory")
    git(tmp_path, "init", "-q", "--bare", "remote.git")
    lock = repo.root / ".git" / "config.lock"
    lock.touch()
    code, _out, err = run_cli(capsys, "repository", "set", str(tmp_path / "remote.git"), "--repo", str(repo.root))
    assert code == 75 and err.count("\n") == 1 and f"{lock} exists" in err, err


def test_a_sync_writes_no_git_setting_and_status_still_says_when_it_synced(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = init_repository(tmp_path / "memory")
    git(tmp_path, "init", "-q", "--bare", "remote.git")
    assert run_cli(capsys, "repository", "set", str(tmp_path / "remote.git"), "--repo", str(repo.root))[0] == 0
    config = repo.root / ".git" / "config"
    before = (config.stat().st_ino, config.read_bytes())  # git writes a config whole: a new file, a new inode
    (repo.root / "notes.md").write_text("---\ndescription: notes\n---\nx\n")
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-qm", "a harness's commit")
    code, out, _err = run_cli(capsys, "repository", "sync", "--repo", str(repo.root))
    assert code == 0 and "pushed 1 commit" in out, out
    assert (config.stat().st_ino, config.read_bytes()) == before
    code, out, _err = run_cli(capsys, "repository", "status", "--json", "--repo", str(repo.root))
    assert code == 0 and json.loads(out)["last_sync"].endswith("Z")
    assert run_cli(capsys, "repository", "unset", "--repo", str(repo.root))[0] == 0
    code, out, _err = run_cli(capsys, "repository", "status", "--json", "--repo", str(repo.root))
    assert json.loads(out)["last_sync"] is None
