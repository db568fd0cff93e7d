"""`memrepo clone URL [DIR]` through bot.cli.main, against localhub over real HTTP and a plain
bare repository: the clone is ready to use as `init` + `repository set` leave one (main tracking
origin, the agent named, the pre-commit hook validating), and every refusal is one line that
leaves no folder behind."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.memfs.store.repo import MemoryRepo
from tests.conftest import git, localhub_token, run_cli


def hub_repository(localhub, name: str) -> str:  # type: ignore[no-untyped-def]
    """An empty repository of alice's on localhub: its git URL, with her token in it."""
    import requests

    token = localhub_token(localhub, "alice")
    requests.post(f"{localhub.api_url}/user/repos", json={"name": name},
                  headers={"Authorization": f"token {token}"}, timeout=10).raise_for_status()
    return localhub.url.replace("http://", f"http://x-access-token:{token}@") + f"/alice/{name}.git"


def local_config(root: Path) -> dict[str, str]:
    """The clone's own git settings (memrepo's and the remote's), without git's core ones."""
    lines = git(root, "config", "--local", "--list").splitlines()
    pairs = dict(line.split("=", 1) for line in lines)
    return {k: v for k, v in pairs.items() if not k.startswith("core.")}


def assert_one_line_error(code: int, out: str, err: str) -> None:
    assert code == 1 and out == ""
    assert err.startswith("memrepo: ") and err.count("\n") == 1 and "Traceback" not in err


def test_a_teammate_joins_a_memory_on_localhub_in_one_step(localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    url = hub_repository(localhub, "memory")
    ada = init_repository(tmp_path / "ada", "ada", "Ada")
    sync.set_remote(ada, url)
    token = url.split("x-access-token:")[1].split("@")[0]

    code, out, err = run_cli(capsys, "clone", url, str(tmp_path / "ben"), "--agent-id", "ben", "--agent-name", "Ben")
    assert (code, err) == (0, "")
    ben = MemoryRepo.open(tmp_path / "ben")
    assert out == (f"Cloned {sync.redact(url)} into {ben.root} for agent ben: main at {ada.head_sha()[:12]}, "
                   "connected as origin, pre-commit hook installed.\n")
    assert token not in out

    # the clone itself: main checked out at the remote's main, nothing left to commit
    assert ben.head_sha() == ada.head_sha() and ben.branch() == "main"
    assert git(ben.root, "status", "--porcelain") == ""
    assert (ben.root / "system" / "human.md").read_bytes() == (ada.root / "system" / "human.md").read_bytes()
    # origin connected as `repository set` leaves it, and the agent named as `init` names it
    config, ada_config = local_config(ben.root), local_config(ada.root)
    assert config.keys() == ada_config.keys()
    assert config["remote.origin.url"] == url
    assert (config["branch.main.remote"], config["branch.main.merge"]) == ("origin", "refs/heads/main")
    assert (config["memrepo.agentid"], config["memrepo.agentname"]) == ("ben", "Ben")
    assert "0 commits not pushed" in sync.status_lines(sync.status(ben, fetch=True), ())[2]
    # memrepo's hook, as init installs it
    hook = Path(ben.git.path) / "hooks" / "pre-commit"
    assert hook.read_bytes() == (Path(ada.git.path) / "hooks" / "pre-commit").read_bytes()
    assert hook.stat().st_mode & stat.S_IXUSR

    # Ben's agent writes at once: committed as Ben and pushed to localhub over HTTP
    code, out, err = run_cli(capsys, "tool", "--repo", str(ben.root), '{"command": "str_replace", '
                             '"path": "system/human.md", "old_str": "Nothing recorded yet.", '
                             '"new_str": "Prefers short answers.", "reason": "Record how the user likes answers"}')
    assert (code, err) == (0, "") and "pushed" in out
    assert git(ben.root, "log", "-1", "--format=%an <%ae>").strip() == "Ben <ben@agents.memrepo>"
    assert git(tmp_path, "ls-remote", url, "refs/heads/main").split()[0] == ben.head_sha()

    # and a person's commit in the clone is validated by the hook
    (ben.root / "system" / "x.md").write_text("No frontmatter.\n")
    git(ben.root, "add", "system/x.md")
    done = subprocess.run(["git", "commit", "-q", "-m", "break it"], cwd=ben.root, capture_output=True, text=True)
    assert done.returncode != 0
    assert "system/x.md: missing frontmatter (must start with ---)" in done.stdout + done.stderr
    assert git(ben.root, "rev-parse", "HEAD").strip() == ben.head_sha()


def test_refusals_on_localhub_are_one_line_and_leave_no_folder(localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    empty = hub_repository(localhub, "empty")
    token = empty.split("x-access-token:")[1].split("@")[0]
    missing = empty.replace("/alice/empty.git", "/alice/nothing-here.git")
    target = tmp_path / "new" / "ben"

    code, out, err = run_cli(capsys, "clone", missing, str(target))
    assert_one_line_error(code, out, err)
    assert err.startswith(f"memrepo: cannot reach {sync.redact(missing)} (") and token not in err
    assert not (tmp_path / "new").exists()  # not even the parent it made

    code, out, err = run_cli(capsys, "clone", empty, str(target))
    assert_one_line_error(code, out, err)
    assert "has no commits, so it holds no memory yet" in err and token not in err
    assert not (tmp_path / "new").exists()

    code, out, err = run_cli(capsys, "clone", localhub.url.replace(":" + localhub.url.rsplit(":", 1)[1], ":9")
                             + "/alice/empty.git", str(target))
    assert_one_line_error(code, out, err)
    assert err.startswith("memrepo: cannot reach ")
    assert not (tmp_path / "new").exists()


def test_a_plain_bare_repository_clones_by_a_relative_path_into_its_own_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    ada = init_repository(tmp_path / "ada", "ada", "Ada")
    git(tmp_path, "init", "-q", "--bare", "-b", "main", "team-memory.git")
    sync.set_remote(ada, str(tmp_path / "team-memory.git"))
    monkeypatch.chdir(tmp_path)

    code, out, err = run_cli(capsys, "clone", "team-memory.git")
    assert (code, err) == (0, "")
    clone = MemoryRepo.open(tmp_path / "team-memory")
    assert out.startswith(f"Cloned {tmp_path / 'team-memory.git'} into {clone.root} for agent agent: ")
    assert clone.head_sha() == ada.head_sha()
    assert sync.remote_url(clone) == str(tmp_path / "team-memory.git")  # absolute: it works from anywhere
    assert local_config(clone.root)["memrepo.agentid"] == "agent"
    assert os.access(Path(clone.git.path) / "hooks" / "pre-commit", os.X_OK)
    result = sync.sync(clone)
    assert result.pushed and not result.set_aside


def test_refusals_on_a_bare_repository_change_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a repository that is not a memory: a project's code
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    (project / "main.py").write_text("print('hi')\n")
    git(project, "add", "main.py")
    git(project, "commit", "-q", "-m", "code")
    git(tmp_path, "clone", "-q", "--bare", str(project), "project.git")
    code, out, err = run_cli(capsys, "clone", str(tmp_path / "project.git"), str(tmp_path / "a"))
    assert_one_line_error(code, out, err)
    assert err == (f"memrepo: {tmp_path / 'project.git'} is a git repository but not a memory repository (its main "
                   "has no system/, root MEMORY.md or .memrepo/); nothing was cloned\n")
    assert not (tmp_path / "a").exists()

    # a memory whose remote has no main
    ada = init_repository(tmp_path / "ada", "ada", "Ada")
    git(tmp_path, "init", "-q", "--bare", "-b", "main", "trunk.git")
    git(ada.root, "push", "-q", str(tmp_path / "trunk.git"), "main:trunk")
    code, out, err = run_cli(capsys, "clone", str(tmp_path / "trunk.git"), str(tmp_path / "a"))
    assert_one_line_error(code, out, err)
    assert "has branches (trunk) but no main" in err and not (tmp_path / "a").exists()

    # a good memory, but the folder is in use: a file in it, a file in its place
    git(ada.root, "push", "-q", str(tmp_path / "trunk.git"), "main:main")
    used = tmp_path / "used"
    used.mkdir()
    (used / "notes.txt").write_text("mine\n")
    code, out, err = run_cli(capsys, "clone", str(tmp_path / "trunk.git"), str(used))
    assert_one_line_error(code, out, err)
    assert err == f"memrepo: {used} is not empty; memrepo clone only clones into a new or empty folder, " \
                  "so nothing was changed\n"
    assert sorted(p.name for p in used.iterdir()) == ["notes.txt"]
    code, out, err = run_cli(capsys, "clone", str(tmp_path / "trunk.git"), str(used / "notes.txt"))
    assert_one_line_error(code, out, err)
    assert (used / "notes.txt").read_text() == "mine\n"

    # an empty folder that is there is used, and emptied again when the clone is refused
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run_cli(capsys, "clone", str(tmp_path / "project.git"), str(empty))
    assert_one_line_error(code, out, err)
    assert empty.is_dir() and list(empty.iterdir()) == []
    code, out, err = run_cli(capsys, "clone", str(tmp_path / "trunk.git"), str(empty))
    assert (code, err) == (0, "") and MemoryRepo.open(empty).head_sha() == ada.head_sha()


def test_bad_arguments_are_refused_before_anything_is_made(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "clone", "--", "-upload-pack=evil", str(tmp_path / "a"))
    assert_one_line_error(code, out, err)
    code, out, err = run_cli(capsys, "clone", str(tmp_path), str(tmp_path / "a"), "--agent-id", "bad id")
    assert_one_line_error(code, out, err)
    code, out, err = run_cli(capsys, "clone", "/")  # no name to make a folder of
    assert_one_line_error(code, out, err)
    assert not (tmp_path / "a").exists()
