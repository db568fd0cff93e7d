"""`memrepo init`: the files, first commit, configuration and pre-commit hook of a new memory
repository; refusals that leave everything as it was; the hook really validating."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot import ci_pin, config
from bot.config import DEFAULT_POLICY, Policy, parse_policy
from bot.errors import MemrepoError
from bot.memfs import create
from bot.memfs.create import INIT_COMMIT
from bot.memfs.format import document, validate
from bot.memfs.sync.connect import REMOTE_SET_PUSHED
from bot.templating import templates_root
from tests.conftest import PERSON_EMAIL, git
from tests.conftest import run_cli as run

TEMPLATE_CONFIG = templates_root() / "memory" / ".memrepo" / "config.yml"
FILES = {"system/persona.md", "system/human.md", ".memrepo/config.yml", ".github/workflows/memrepo-validate.yml",
         ".memfs.config.json"}


def snapshot(base: Path) -> dict[str, bytes | None]:
    """Every path under `base` (folders as None), .git internals included."""
    return {p.relative_to(base).as_posix(): (p.read_bytes() if p.is_file() else None)
            for p in sorted(base.rglob("*"))}


def working_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(root).parts}


# -------------------------------------------------------------------- a new repository


def test_init_creates_the_template_files(created: Path) -> None:
    assert working_files(created) == FILES
    assert set(git(created, "ls-files").split()) == FILES
    for path in ("system/persona.md", "system/human.md"):
        data = (created / path).read_bytes()
        assert validate.validate_changes({path: (data, None)}, DEFAULT_POLICY) == []
        doc = document.parse(data.decode())
        assert doc.description, path
        assert doc.body.strip(), path
    assert "I am Ada," in (created / "system/persona.md").read_text()
    assert "{{" not in (created / "system/persona.md").read_text()


def test_init_config_is_the_documented_defaults(created: Path) -> None:
    policy = parse_policy((created / ".memrepo/config.yml").read_text())
    assert policy.merge_instructions.strip()
    assert dataclasses.replace(policy, merge_instructions="") == DEFAULT_POLICY
    assert policy.merge == "explicit"
    assert policy.protected == ("system/persona.md", ".memfs.config.json")
    assert policy.direct_commit.max_changed_lines == 40
    assert (policy.dream.trigger, policy.dream.steps, policy.dream.strategy) == ("step-count", 25, "verbatim")
    assert dataclasses.astuple(policy.limits) == (20000, 65536, 2, 500, 20000, 50)


def test_init_workflow_validates_pull_requests(created: Path) -> None:
    workflow = yaml.safe_load((created / ".github/workflows/memrepo-validate.yml").read_text())
    assert "pull_request" in workflow[True]  # YAML 1.1 reads the key `on` as true
    steps = workflow["jobs"]["validate"]["steps"]
    [validate_step] = [s for s in steps if s.get("uses", "").startswith(create.VALIDATE_ACTION + "@")]
    assert validate_step["uses"] == f"{create.VALIDATE_ACTION}@{ci_pin.running_pin().commit}"
    assert validate_step["with"] == {"base": "${{ github.event.pull_request.base.sha }}"}


def test_init_git_state(created: Path) -> None:
    assert git(created, "rev-list", "--count", "HEAD").strip() == "1"
    assert git(created, "status", "--porcelain", "--ignored") == ""
    assert git(created, "symbolic-ref", "--short", "HEAD").strip() == "main"
    assert git(created, "config", "memrepo.agentId").strip() == "a1"
    assert git(created, "config", "memrepo.agentName").strip() == "Ada"
    assert git(created, "log", "-1", "--format=%s").strip() == INIT_COMMIT
    hook = created / ".git" / "hooks" / "pre-commit"
    assert hook.is_file() and os.access(hook, os.X_OK)
    assert "validate --staged" in hook.read_text()
    assert git(created, "remote") == ""


def test_init_commit_by_the_agent_when_git_knows_nobody(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("[init]\n\tdefaultBranch = master\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("EMAIL", "")
    root = tmp_path / "mem"
    assert run(capsys, "init", str(root), "--agent-id", "a1", "--agent-name", "Ada")[0] == 0
    assert git(root, "log", "-1", "--format=%an <%ae>").strip() == "Ada <a1@agents.memrepo>"
    # main regardless of init.defaultBranch.
    assert git(root, "symbolic-ref", "--short", "HEAD").strip() == "main"


def test_init_commit_is_the_agents_whoever_git_names(created: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The person's git configuration (here Pat's, PERSON_NAME) names who runs init, not whose
    memory it is: the first commit is the agent's, author and committer, and `memrepo log`
    shows memory's history starting with the agent."""
    who = git(created, "log", "-1", "--format=%an <%ae>|%cn <%ce>").strip()
    assert who == "Ada <a1@agents.memrepo>|Ada <a1@agents.memrepo>"
    assert PERSON_EMAIL not in git(created, "log", "--format=%ae %ce")
    code, out, _ = run(capsys, "log", "--repo", str(created))
    assert code == 0 and " agent " in out.splitlines()[-1] and "Ada" in out.splitlines()[-1]


def test_init_in_an_existing_empty_folder_and_defaults(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "here"
    root.mkdir()
    monkeypatch.chdir(root)
    code, _, _ = run(capsys, "init")
    assert code == 0
    assert working_files(root) == FILES
    assert git(root, "config", "memrepo.agentId").strip() == "agent"
    assert git(root, "config", "memrepo.agentName").strip() == "agent"
    assert run(capsys, "validate")[0] == 0


def test_template_config_spells_out_every_default() -> None:
    """The template states every setting, each equal to DEFAULT_POLICY (merge_instructions
    apart), so the documented defaults and a new repository's policy cannot drift."""
    text = TEMPLATE_CONFIG.read_text()
    raw = yaml.safe_load(text)
    assert set(raw) == {f.name for f in dataclasses.fields(Policy)}
    for section in ("direct_commit", "dream", "limits"):
        assert set(raw[section]) == {f.name for f in dataclasses.fields(getattr(DEFAULT_POLICY, section))}
    policy = parse_policy(text)
    for field in dataclasses.fields(Policy):
        if field.name != "merge_instructions":
            assert getattr(policy, field.name) == getattr(DEFAULT_POLICY, field.name), field.name
    assert policy.merge_instructions.strip()
    assert config.CONFIG_PATH == ".memrepo/config.yml"


# ---------------------------------------------------------------------------- refusals

def _non_empty(tmp: Path) -> Path:
    (tmp / "target").mkdir()
    (tmp / "target" / "notes.txt").write_text("mine\n")
    return tmp / "target"


def _git_repo(tmp: Path) -> Path:
    git(tmp, "init", "-q", str(tmp / "target"))
    return tmp / "target"


def _git_repo_with_commit(tmp: Path) -> Path:
    target = _non_empty(tmp)
    git(target, "init", "-q")
    git(target, "add", "notes.txt")
    git(target, "commit", "-qm", "Mine")
    return target


def _a_file(tmp: Path) -> Path:
    (tmp / "target").write_text("a file\n")
    return tmp / "target"


@pytest.mark.parametrize(("setup", "says"), [
    (_non_empty, "not empty"),
    (_git_repo, "a git repository"),
    (_git_repo_with_commit, "a git repository"),
    (_a_file, "is a file"),
], ids=["non-empty", "git-repository", "git-repository-with-commit", "file"])
def test_init_refuses_what_is_not_a_new_or_empty_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setup, says: str
) -> None:
    target = setup(tmp_path)
    before = snapshot(tmp_path)
    code, out, err = run(capsys, "init", str(target), "--agent-id", "a1")
    assert code == 1 and out == ""
    assert len(err.splitlines()) == 1 and says in err and "Traceback" not in err
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("agent_id", ["a b", "../x", "", "-a", "x/y", "a" * 65])
@pytest.mark.parametrize("exists", [False, True], ids=["new-folder", "empty-folder"])
def test_init_refuses_a_bad_agent_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent_id: str, exists: bool
) -> None:
    target = tmp_path / "new" / "mem"
    if exists:
        target.mkdir(parents=True)
    before = snapshot(tmp_path)
    code, out, err = run(capsys, "init", str(target), f"--agent-id={agent_id}")
    assert code == 1 and out == ""
    assert len(err.splitlines()) == 1 and "agent_id" in err and "Traceback" not in err
    assert snapshot(tmp_path) == before
    assert (tmp_path / "new").exists() == exists


@pytest.mark.parametrize("exists", [False, True], ids=["new-folder", "empty-folder"])
def test_init_cleans_up_after_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, exists: bool
) -> None:
    def broken_hook(repo: object) -> Path:
        raise MemrepoError("cannot write the hook")

    monkeypatch.setattr(create, "install_hook", broken_hook)
    target = tmp_path / "mem"
    if exists:
        target.mkdir()
    code, _, err = run(capsys, "init", str(target))
    assert code == 1 and err == "memrepo: cannot write the hook\n"
    assert target.exists() == exists
    if exists:
        assert list(target.iterdir()) == []


def test_init_failure_removes_every_folder_it_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_hook(repo: object) -> Path:
        raise MemrepoError("cannot write the hook")

    monkeypatch.setattr(create, "install_hook", broken_hook)
    code, _, _ = run(capsys, "init", str(tmp_path / "a" / "b" / "mem"))
    assert code == 1
    assert not (tmp_path / "a").exists()


def test_init_with_an_unreachable_remote_keeps_the_repository_and_says_how_to_connect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "mem"
    missing = tmp_path / "no-such-remote.git"
    code, _, err = run(capsys, "init", str(root), "--remote", str(missing))
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err
    assert "was created, but connecting it failed" in err
    assert f"memrepo repository set {missing} --repo {root.resolve()}" in err
    assert git(root, "remote") == "" and git(root, "status", "--porcelain") == ""
    assert run(capsys, "repository", "set", str(tmp_path / "still-missing.git"), "--repo", str(root))[0] == 1


# ------------------------------------------------------------------------------ remote

def test_init_with_remote_pushes_main(
    tmp_path: Path, bare_remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "mem"
    code, out, err = run(capsys, "init", str(root), "--agent-id", "a1", "--remote", str(bare_remote))
    assert (code, err) == (0, ""), err
    head = git(root, "rev-parse", "HEAD").strip()
    assert git(bare_remote, "rev-parse", "main").strip() == head
    assert git(root, "remote", "get-url", "origin").strip() == str(bare_remote)
    assert out.splitlines()[1] == REMOTE_SET_PUSHED.format(url=bare_remote, count=1)
    assert git(root, "status", "--porcelain") == ""


# -------------------------------------------------------------------------------- hook

def hook_env(folder: Path, with_memrepo: bool) -> dict[str, str]:
    """PATH for the hook: the virtualenv's bin (memrepo on PATH) and a folder holding only git,
    or only that folder (the hook falls back to the interpreter that ran init). git's own folder
    would not do: memrepo may be installed there too."""
    only_git = folder / "only-git"
    only_git.mkdir(exist_ok=True)
    if not (only_git / "git").exists():
        (only_git / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    path = os.pathsep.join([str(Path(sys.executable).parent), str(only_git)]) if with_memrepo else str(only_git)
    return {**os.environ, "PATH": path}


def commit(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "commit", *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("with_memrepo", [True, False], ids=["memrepo-on-path", "python-fallback"])
def test_pre_commit_hook_runs_the_validator(created: Path, tmp_path: Path, with_memrepo: bool) -> None:
    env = hook_env(tmp_path, with_memrepo)
    assert bool(shutil.which("memrepo", path=env["PATH"])) == with_memrepo
    head = git(created, "rev-parse", "HEAD")
    (created / "system/x.md").write_text("No frontmatter.\n")
    git(created, "add", "system/x.md")
    done = commit(created, env, "-m", "Add a broken file")
    assert done.returncode != 0
    assert "Frontmatter validation failed:" in done.stdout + done.stderr
    assert "system/x.md: missing frontmatter (must start with ---)" in done.stdout + done.stderr
    assert git(created, "rev-parse", "HEAD") == head

    (created / "system/x.md").write_text("---\ndescription: X\n---\nFixed.\n")
    git(created, "add", "system/x.md")
    done = commit(created, env, "-m", "Add a valid file")
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(created, "rev-parse", "HEAD") != head
    assert git(created, "status", "--porcelain") == ""


def test_pre_commit_hook_checks_commit_all_and_commit_path(created: Path, tmp_path: Path) -> None:
    """`git commit -a` and `git commit PATH` stage into another index file (GIT_INDEX_FILE);
    the hook must check that one, not .git/index."""
    env = hook_env(tmp_path, True)
    head = git(created, "rev-parse", "HEAD")
    (created / "system/human.md").write_text("Lost its frontmatter.\n")
    for args in (["-am", "Break it"], ["-m", "Break it", "system/human.md"]):
        done = commit(created, env, *args)
        assert done.returncode != 0, args
        assert "system/human.md: missing frontmatter (must start with ---)" in done.stdout + done.stderr
        assert git(created, "rev-parse", "HEAD") == head
    done = commit(created, env, "--no-verify", "-am", "Bypass once")
    assert done.returncode == 0
    assert git(created, "rev-parse", "HEAD") != head


def test_init_under_a_file_is_refused_in_one_line_and_makes_nothing(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("mine\n")
    code, _, err = run(capsys, "init", str(tmp_path / "file" / "memory"), "--agent-id", "a1")
    assert code == 1 and "cannot make the folder" in err and "internal error" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"] and (tmp_path / "file").read_text() == "mine\n"
