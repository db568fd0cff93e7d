"""`memrepo at`, `compile --at` and `log --since/--until` on real repositories whose commit
times are set by hand: boundaries (exactly at a commit, before the first, after the last),
non-monotone commit times, merges (first-parent history only) and the cached index."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.memfs.create import init_repository
from bot.memfs.history.travel import (
    EXIT_BAD_DATE,
    EXIT_BEFORE_HISTORY,
    EXIT_NOT_IN_MEMORY,
    BeforeHistoryError,
    PathNotInMemoryError,
    at,
    compile_at,
    parse_when,
    timeline,
)
from bot.memfs.store.repo import MemoryRepo
from tests.conftest import git, run_cli

T0 = datetime(2024, 5, 6, 12, 0, 0, tzinfo=UTC)


def commit_at(root: Path, when: datetime, files: dict[str, str], message: str, *, committer: datetime | None = None,
              author: tuple[str, str] = ("Pat Person", "pat@example.com")) -> str:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
        git(root, "add", name)
    env = {**os.environ, "GIT_AUTHOR_DATE": when.isoformat(), "GIT_COMMITTER_DATE": (committer or when).isoformat(),
           "GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1]}
    done = subprocess.run(["git", "commit", "-q", "--no-verify", "-m", message], cwd=root, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return git(root, "rev-parse", "HEAD").strip()


def note(text: str, description: str = "Notes") -> str:
    return f"---\ndescription: {description}\n---\n{text}\n"


@pytest.fixture
def history(tmp_path: Path) -> tuple[MemoryRepo, list[str], datetime]:
    """A memory repository whose first commit is rewritten to T0, then one commit an hour."""
    env = {**os.environ, "GIT_AUTHOR_DATE": T0.isoformat(), "GIT_COMMITTER_DATE": T0.isoformat()}
    repo = init_repository(tmp_path / "memory", "a1", "Ada")
    subprocess.run(["git", "commit", "-q", "--amend", "--no-edit", "--no-verify"], cwd=repo.root, env=env, check=True)
    shas = [git(repo.root, "rev-parse", "HEAD").strip()]
    for hour in (1, 2, 3):
        shas.append(commit_at(repo.root, T0 + timedelta(hours=hour), {"reference/notes.md": note(f"version {hour}")},
                              f"Version {hour}"))
    return MemoryRepo.open(repo.root), shas, T0


# ------------------------------------------------------------------------------ the pure core
@pytest.mark.parametrize(("times", "when", "expected"), [
    ([], 5, None),
    ([10], 9, None), ([10], 10, 0), ([10], 11, 0),
    ([10, 20, 30], 19, 0), ([10, 20, 30], 20, 1), ([10, 20, 30], 100, 2),
    ([10, 30, 20], 25, 2), ([10, 30, 20], 20, 2), ([10, 30, 20], 19, 0), ([10, 30, 20], 30, 2),
    ([30, 10, 20], 15, 1), ([30, 10, 20], 9, None), ([20, 20, 20], 20, 2),
])
def test_position_at_is_git_rev_list_before(times: list[int], when: int, expected: int | None) -> None:
    assert timeline.position_at(timeline.suffix_minima(times), when) == expected


@given(st.lists(st.integers(-10, 10), max_size=30), st.integers(-12, 12))
def test_position_at_matches_the_newest_commit_at_or_before(times: list[int], when: int) -> None:
    naive = max((i for i, t in enumerate(times) if t <= when), default=None)
    assert timeline.position_at(timeline.suffix_minima(times), when) == naive


# ------------------------------------------------------------------------------------- at
def test_at_exactly_a_commit_time_includes_that_commit(history: tuple[MemoryRepo, list[str], datetime]) -> None:
    repo, shas, t0 = history
    report = at(repo.root, t0 + timedelta(hours=2), "reference/notes.md")
    assert report["commit"] == shas[2] and report["text"] == note("version 2")
    assert report["committed_at"] == "2024-05-06T14:00:00Z" and report["latest"] is False
    just_before = at(repo.root, t0 + timedelta(hours=2) - timedelta(microseconds=1))
    assert just_before["commit"] == shas[1]
    assert at(repo.root, t0 + timedelta(hours=2, microseconds=500))["commit"] == shas[2]


def test_at_before_the_first_commit_is_a_clear_error(history: tuple[MemoryRepo, list[str], datetime]) -> None:
    repo, shas, t0 = history
    assert at(repo.root, t0)["commit"] == shas[0]
    with pytest.raises(BeforeHistoryError) as caught:
        at(repo.root, t0 - timedelta(seconds=1))
    assert caught.value.details["exit_code"] == EXIT_BEFORE_HISTORY
    assert "2024-05-06T12:00:00Z" in str(caught.value)


def test_at_after_the_last_commit_is_main(history: tuple[MemoryRepo, list[str], datetime]) -> None:
    repo, shas, _ = history
    report = at(repo.root, datetime(2999, 1, 1, tzinfo=UTC))
    assert report["commit"] == shas[-1] and report["latest"] is True
    files = {f["path"]: f for f in report["files"]}
    assert files["reference/notes.md"] == {"path": "reference/notes.md", "size": len(note("version 3").encode()),
                                           "description": "Notes"}
    assert files["system/human.md"]["description"]
    assert ".memrepo/config.yml" in files


def test_at_a_zone_and_a_naive_moment(history: tuple[MemoryRepo, list[str], datetime]) -> None:
    repo, shas, _ = history
    assert at(repo.root, parse_when("2024-05-06T15:30+02:00"))["commit"] == shas[1]  # 13:30 UTC
    assert at(repo.root, datetime(2024, 5, 6, 13, 30))["commit"] == shas[1]  # naive: UTC
    with pytest.raises(BeforeHistoryError):
        at(repo.root, parse_when("2024-05-06"))  # a date alone is 00:00 UTC, before the first commit


def test_a_path_not_in_memory_then(history: tuple[MemoryRepo, list[str], datetime]) -> None:
    repo, shas, t0 = history
    with pytest.raises(PathNotInMemoryError) as caught:
        at(repo.root, t0, "reference/notes.md")  # created an hour later
    assert caught.value.details["exit_code"] == EXIT_NOT_IN_MEMORY
    assert "reference/notes.md" in str(caught.value) and shas[0][:10] in str(caught.value)
    assert at(repo.root, t0 + timedelta(hours=1), "reference/notes")["path"] == "reference/notes.md"
    with pytest.raises(PathNotInMemoryError, match="folder"):
        at(repo.root, t0, "system")
    for bad in ("../etc/passwd", "/etc/passwd", ".git/config", ""):
        with pytest.raises(PathNotInMemoryError):
            at(repo.root, t0, bad)


def test_first_parent_history_only_and_non_monotone_times(tmp_path: Path) -> None:
    repo = init_repository(tmp_path / "memory", "a1", "Ada")
    root = repo.root
    env = {**os.environ, "GIT_AUTHOR_DATE": T0.isoformat(), "GIT_COMMITTER_DATE": T0.isoformat()}
    subprocess.run(["git", "commit", "-q", "--amend", "--no-edit", "--no-verify"], cwd=root, env=env, check=True)
    git(root, "checkout", "-q", "-b", "side")
    side = commit_at(root, T0 + timedelta(hours=1), {"reference/side.md": note("side")}, "Side")
    git(root, "checkout", "-q", "main")
    late = commit_at(root, T0 + timedelta(hours=5), {"reference/main.md": note("main")}, "Late clock")
    skewed = commit_at(root, T0 + timedelta(hours=3), {"reference/main.md": note("main 2")}, "Skewed clock")
    env = {**os.environ, "GIT_AUTHOR_DATE": (T0 + timedelta(hours=6)).isoformat(),
           "GIT_COMMITTER_DATE": (T0 + timedelta(hours=6)).isoformat()}
    subprocess.run(["git", "merge", "-q", "--no-ff", "--no-verify", "-m", "Merge side", "side"], cwd=root, env=env,
                   check=True)
    merge = git(root, "rev-parse", "HEAD").strip()

    def rev_list(moment: datetime) -> str:
        return git(root, "rev-list", "--first-parent", f"--before={int(moment.timestamp())}", "-1", "main").strip()

    for hours in (0, 1, 2, 3, 4, 5, 6, 7):
        moment = T0 + timedelta(hours=hours)
        expected = rev_list(moment)
        assert at(root, moment)["commit"] == expected, hours
    assert at(root, T0 + timedelta(hours=1))["commit"] != side  # never a commit off main's first parents
    assert at(root, T0 + timedelta(hours=4))["commit"] == skewed
    assert at(root, T0 + timedelta(hours=5))["commit"] == skewed
    assert at(root, T0 + timedelta(hours=6))["commit"] == merge
    assert late != skewed


def test_the_index_follows_main_forward_and_survives_a_rewrite(history: tuple[MemoryRepo, list[str], datetime]) -> None:
    repo, shas, t0 = history
    at(repo.root, t0)
    cache = repo.root / ".git" / "memrepo" / "first-parent-refs-heads-main.bin"
    assert cache.is_file()
    new = commit_at(repo.root, t0 + timedelta(hours=4), {"reference/notes.md": note("version 4")}, "Version 4")
    assert at(repo.root, t0 + timedelta(hours=9))["commit"] == new
    assert at(repo.root, t0 + timedelta(hours=1))["commit"] == shas[1]
    # main rewritten (reset to an older commit, then a different commit): rebuilt, not trusted
    git(repo.root, "reset", "-q", "--hard", shas[1])
    other = commit_at(repo.root, t0 + timedelta(hours=2, minutes=30), {"reference/other.md": note("x")}, "Other")
    assert at(repo.root, t0 + timedelta(hours=9))["commit"] == other
    assert at(repo.root, t0 + timedelta(hours=2))["commit"] == shas[1]
    # a damaged index is only a slower answer
    cache.write_bytes(b"garbage")
    assert at(repo.root, t0 + timedelta(hours=9))["commit"] == other
    cache.write_bytes(cache.read_bytes()[:-3])
    assert at(repo.root, t0 + timedelta(hours=9))["commit"] == other
    # damage that keeps the file's length: the suffix minima (the last 8 bytes of each) made huge
    whole = cache.read_bytes()
    count = int(whole.split(b"\n")[1].split()[1])
    minima = len(whole) - 4 - 8 * count
    cache.write_bytes(whole[:minima] + (2 ** 62).to_bytes(8, "little") * count + whole[-4:])
    assert at(repo.root, t0 + timedelta(hours=9))["commit"] == other


# ------------------------------------------------------------------------------ compile --at
def test_compile_at_is_the_prompt_memory_gave_then(history: tuple[MemoryRepo, list[str], datetime],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    repo, _, t0 = history
    commit_at(repo.root, t0 + timedelta(hours=4), {"system/human.md": note("Likes tea.", "About the person")},
              "Tea")
    code, now, err = run_cli(capsys, "compile", "--repo", str(repo.root))
    assert code == 0, err
    code, later, err = run_cli(capsys, "compile", "--repo", str(repo.root), "--at", "2999-01-01")
    assert code == 0 and later == now
    code, then, err = run_cli(capsys, "compile", "--repo", str(repo.root), "--at", "2024-05-06T15:00Z")
    assert code == 0, err
    assert "Likes tea." in now and "Likes tea." not in then
    assert then.rstrip("\n") == compile_at(repo.root, t0 + timedelta(hours=3))["text"]
    code, out, err = run_cli(capsys, "compile", "--repo", str(repo.root), "--at", "2024-05-06T11:00Z")
    assert code == EXIT_BEFORE_HISTORY and out == "" and err.count("\n") == 1
    code, out, err = run_cli(capsys, "compile", "--repo", str(repo.root), "--at", "last tuesday")
    assert code == EXIT_BAD_DATE and "YYYY-MM-DD" in err


# ---------------------------------------------------------------------------------- log
def test_log_since_and_until(history: tuple[MemoryRepo, list[str], datetime],
                             capsys: pytest.CaptureFixture[str]) -> None:
    repo = history[0]

    def log(*args: str) -> list[str]:
        code, out, err = run_cli(capsys, "log", "--repo", str(repo.root), *args)
        assert code == 0, err
        return [line.split()[-1] for line in out.splitlines()]

    assert log() == ["3", "2", "1", "repository"]
    assert log("--since", "2024-05-06T13:00Z") == ["3", "2", "1"]  # exactly at a commit: included
    assert log("--until", "2024-05-06T13:00Z") == ["1", "repository"]
    assert log("--since", "2024-05-06T13:00:01Z", "--until", "2024-05-06T14:00Z") == ["2"]
    assert log("--until", "2024-05-06") == ["3", "2", "1", "repository"]  # a date alone: the whole day
    code, out, err = run_cli(capsys, "log", "--repo", str(repo.root), "--since", "2024-05-07")
    assert (code, out) == (0, "no commits touch memory between 2024-05-07 and now\n")
    assert log("--since", "2024-05-06T14:30+02:00") == ["3", "2", "1"]
    assert log("reference/notes.md", "--until", "2024-05-06T14:00Z") == ["2", "1"]
    code, out, err = run_cli(capsys, "log", "--repo", str(repo.root), "--since", "2024-05-07", "--until",
                             "2024-05-06")
    assert code == EXIT_BAD_DATE and "nothing can be in between" in err
    code, out, err = run_cli(capsys, "log", "--repo", str(repo.root), "--since", "06/05/2024")
    assert code == EXIT_BAD_DATE and err.startswith("memrepo: cannot read '06/05/2024' as a date")


# ----------------------------------------------------------------------------------- CLI
def test_at_cli(history: tuple[MemoryRepo, list[str], datetime], capsys: pytest.CaptureFixture[str]) -> None:
    repo, shas, _ = history
    code, out, err = run_cli(capsys, "at", "2024-05-06T14:00:00Z", "reference/notes.md", "--repo", str(repo.root))
    assert (code, out, err) == (0, note("version 2"), "")
    code, out, err = run_cli(capsys, "at", "2024-05-06T14:00:00Z", "--repo", str(repo.root))
    assert code == 0 and out.startswith(f"memory at 2024-05-06T14:00:00Z: commit {shas[2][:10]} on main")
    assert "reference/notes.md  — Notes" in out
    code, out, err = run_cli(capsys, "at", "2024-05-06T14:00:00Z", "--repo", str(repo.root), "--json")
    data = json.loads(out)
    assert code == 0 and data["commit"] == shas[2] and data["version"] == 1
    before = git(repo.root, "status", "--porcelain") + git(repo.root, "rev-parse", "HEAD")
    for args, expected in [
        (["at", "2024-05-06T11:59:59Z"], EXIT_BEFORE_HISTORY),
        (["at", "2024-13-45"], EXIT_BAD_DATE),
        (["at", "tomorrow"], EXIT_BAD_DATE),
        (["at", "2024-05-06T14:00Z", "reference/nothing.md"], EXIT_NOT_IN_MEMORY),
        (["at", "2024-05-06T12:00Z", "reference/notes.md"], EXIT_NOT_IN_MEMORY),
    ]:
        code, out, err = run_cli(capsys, *args, "--repo", str(repo.root))
        assert code == expected, (args, err)
        assert out == "" and err.startswith("memrepo: ") and err.count("\n") == 1, (args, err)
    assert git(repo.root, "status", "--porcelain") + git(repo.root, "rev-parse", "HEAD") == before
    code, out, err = run_cli(capsys, "at", "--help")
    assert code == 0 and "exit codes" in out and "4 a date before" in out
