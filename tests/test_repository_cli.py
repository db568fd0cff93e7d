"""`memrepo repository set|status|unset|sync` through bot.cli.main: output, exit codes, and
errors as one line without a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot import cli, identity
from bot.memfs import sync
from bot.memfs.repo import MemoryRepo
from tests.conftest import run_cli

HUMAN = "---\ndescription: what I know about the person\n---\nName: Sam\n"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def new_memory(path: Path) -> MemoryRepo:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "system").mkdir()
    (path / "system/persona.md").write_text("---\ndescription: who I am\n---\nAgent.\n")
    (path / "system/human.md").write_text(HUMAN)
    (path / ".memrepo").mkdir()
    (path / ".memrepo/config.yml").write_text("")
    git(path, "add", "-A")
    git(path, "-c", "user.name=init", "-c", "user.email=init@example.com", "commit", "-q",
        "-m", f"Initial memory ({path.name})")
    return MemoryRepo.open(path)


def new_bare(path: Path) -> Path:
    git(path.parent, "init", "-q", "--bare", "-b", "main", str(path))
    git(path, "config", "receive.denyNonFastForwards", "true")
    return path


def append(repo: MemoryRepo, line: str, path: str = "system/human.md") -> str:
    head = repo.head_sha()
    text = repo.read(path, head).decode() + line + "\n"
    return repo.commit({path: text.encode()}, f"add {line}", identity.agent("a1"), parent=head)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return run_cli(capsys, "repository", *argv)


def assert_one_line_error(err: str) -> None:
    assert err.startswith("memrepo: ")
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_set_status_sync_unset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    remote = new_bare(tmp_path / "r.git")
    a = new_memory(tmp_path / "a")
    code, out, err = run(capsys, "set", str(remote), "--repo", str(a.root))
    assert code == 0 and err == ""
    assert out == f"connected to {remote}: pushed main (1 commit) to the empty remote\n"

    code, out, _ = run(capsys, "status", "--repo", str(a.root))
    assert code == 0
    lines = out.splitlines()
    labels = [line.split(":", 1)[0] for line in lines]
    assert labels == ["remote", "head", "ahead", "behind", "last sync", "backups"]
    starts = {len(line) - len(line.split(":", 1)[1].lstrip()) for line in lines}
    assert len(starts) == 1  # values aligned in one column
    assert lines[0].endswith(str(remote))
    assert "0 commits not pushed" in lines[2]

    code, out, _ = run(capsys, "sync", "--repo", str(a.root))
    assert code == 0 and out.startswith("in sync with") and out.count("\n") == 1

    b_root = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(remote), str(b_root))
    append(MemoryRepo.open(b_root), "from B")
    code, out, _ = run(capsys, "sync", "--repo", str(b_root))
    assert code == 0 and out.startswith("pushed 1 commit ")
    code, out, _ = run(capsys, "sync", "--repo", str(a.root))
    assert code == 0 and out.startswith("fast-forwarded main by 1 commit ")
    assert "from B" in (a.root / "system/human.md").read_text()

    code, out, _ = run(capsys, "unset", "--repo", str(a.root))
    assert code == 0 and out == f"disconnected from {remote}\n"
    code, out, _ = run(capsys, "status", "--repo", str(a.root))
    assert code == 0 and "none (connect one with" in out.splitlines()[0]
    code, out, err = run(capsys, "sync", "--repo", str(a.root))
    assert code == 1 and out == ""
    assert_one_line_error(err)
    assert "not connected to a remote" in err


def test_sync_unreachable_and_conflict_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    remote = new_bare(tmp_path / "r.git")
    a = new_memory(tmp_path / "a")
    assert run(capsys, "set", str(remote), "--repo", str(a.root))[0] == 0
    b_root = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(remote), str(b_root))
    b = MemoryRepo.open(b_root)

    append(a, "queued")
    remote.rename(tmp_path / "away.git")
    code, out, err = run(capsys, "sync", "--repo", str(a.root))
    assert code == 1 and out == ""
    assert_one_line_error(err)
    assert "not synced (remote unreachable:" in err
    (tmp_path / "away.git").rename(remote)
    assert run(capsys, "sync", "--repo", str(a.root))[0] == 0

    head = b.head_sha()
    b.commit({"system/human.md": HUMAN.replace("Sam", "Samuel").encode()}, "rename", identity.agent("b1"),
             parent=head)
    code, out, err = run(capsys, "sync", "--repo", str(b_root))
    assert code == 1
    assert_one_line_error(err)
    assert "system/human.md" in err and "refs/memrepo/backup/" in err
    code, out, _ = run(capsys, "status", "--repo", str(b_root))
    assert "refs/memrepo/backup/" in out.splitlines()[-1]


def test_set_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = new_memory(tmp_path / "m")
    code, _, err = run(capsys, "set", str(tmp_path / "missing.git"), "--repo", str(repo.root))
    assert code == 1
    assert_one_line_error(err)
    assert "cannot reach" in err
    code, _, err = run(capsys, "set", "has space", "--repo", str(repo.root))
    assert code == 1
    assert_one_line_error(err)
    code, _, err = run(capsys, "status", "--repo", str(tmp_path / "nowhere"))
    assert code == 1
    assert_one_line_error(err)
    with pytest.raises(SystemExit) as caught:
        cli.main(["repository"])
    assert caught.value.code == 2


def test_status_redacts_token(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = new_memory(tmp_path / "m")
    secret = "ghp_abcdefghijklmnopqrstuvwxyz0123"
    repo.git.remotes.create("origin", f"https://x-access-token:{secret}@127.0.0.1:9/o/memory.git")
    code, out, err = run(capsys, "status", "--fetch", "--repo", str(repo.root))
    assert code == 0
    assert secret not in out + err
    assert "https://***@127.0.0.1:9/o/memory.git" in out.splitlines()[0]
    assert "fetch failed" in out
    code, out, err = run(capsys, "sync", "--repo", str(repo.root))
    assert code == 1 and secret not in out + err
    code, out, err = run(capsys, "unset", "--repo", str(repo.root))
    assert code == 0 and secret not in out and "***@" in out
    assert sync.remote_url(repo) is None
