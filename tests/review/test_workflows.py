"""The GitHub Actions memrepo ships (its own CI, its action) and the one `memrepo init` writes
into every memory repository: zizmor finds nothing at medium or above; every action is pinned by
commit; no `${{ }}` expression reaches a shell; the memory workflow runs this project's action at
a commit that exists and has it; and the action's validation step, run as the runner runs it,
accepts a good pull request, refuses a bad one and never executes what an input says."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot import ci_pin
from bot.memfs import create
from bot.memfs.store.checks import VALIDATE_NO_BASE
from tests.conftest import git

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
PROJECT_WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
MEMORY_WORKFLOW = ".github/workflows/memrepo-validate.yml"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def tool(name: str) -> str:
    """A console script of the test extra, next to this Python."""
    path = Path(sysconfig.get_path("scripts")) / name
    assert path.is_file(), f"{name} is missing: pip install -e '.[test]'"
    return str(path)


def zizmor(*paths: Path) -> list[dict[str, Any]]:
    """zizmor's findings at medium severity and above, offline (no audit asks GitHub)."""
    done = subprocess.run([tool("zizmor"), "--offline", "--strict-collection", "--min-severity=medium",
                           "--format=json", *map(str, paths)], capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, *range(10, 20)), done.stderr  # 10-14: findings, by highest severity
    findings = json.loads(done.stdout or "[]")
    assert (done.returncode == 0) == (findings == []), done.stderr
    return findings


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def steps_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every step of a workflow's jobs, or of a composite action."""
    if "runs" in document:
        return list(document["runs"].get("steps", []))
    return [step for job in document["jobs"].values() for step in job.get("steps", [])]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The validation workflow of a memory repository just made by `memrepo init`."""
    root = tmp_path_factory.mktemp("init") / "memory"
    done = subprocess.run([tool("memrepo"), "init", str(root), "--agent-id", "ada"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    return root / MEMORY_WORKFLOW


def every_file(written: Path) -> list[Path]:
    return [*PROJECT_WORKFLOWS, ACTION, written]


# ------------------------------------------------------------------------------- zizmor

def test_zizmor_finds_nothing_at_medium_or_above(written: Path) -> None:
    assert PROJECT_WORKFLOWS, "the project's CI workflow is missing"
    for path in every_file(written):
        assert zizmor(path) == [], path


def test_zizmor_as_run_here_does_flag_the_old_memory_workflow(tmp_path: Path) -> None:
    """The check above would pass on anything if zizmor were not looking: the workflow init used
    to write (a bare `pip install memrepo`, the base branch spliced into a shell line) fails it."""
    old = tmp_path / ".github" / "workflows" / "old.yml"
    old.parent.mkdir(parents=True)
    old.write_text(
        "on: pull_request\npermissions:\n  contents: read\njobs:\n  validate:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - uses: actions/checkout@v4\n      - run: pip install memrepo\n"
        '      - run: memrepo validate --base "origin/${{ github.base_ref }}"\n', encoding="utf-8")
    found = {(f["ident"], f["determinations"]["severity"]) for f in zizmor(old)}
    assert ("template-injection", "High") in found
    assert ("unpinned-uses", "High") in found
    assert ("artipacked", "Medium") in found


# ---------------------------------------------------------------- the rules, spelled out

def test_no_expression_reaches_a_shell(written: Path) -> None:
    for path in every_file(written):
        for step in steps_of(load(path)):
            assert "${{" not in step.get("run", ""), (path, step)


def test_every_action_is_pinned_by_commit_and_checkouts_keep_no_token(written: Path) -> None:
    for path in every_file(written):
        for step in steps_of(load(path)):
            uses = step.get("uses")
            if uses is None or uses.startswith("./"):
                continue
            assert PINNED.match(uses), (path, uses)
            if uses.startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False, path


def test_workflows_grant_nothing_but_reading_contents(written: Path) -> None:
    for path in [*PROJECT_WORKFLOWS, written]:
        workflow = load(path)
        assert workflow["permissions"] == {}, path
        for name, job in workflow["jobs"].items():
            assert job["permissions"] == {"contents": "read"}, (path, name)


# ------------------------------------------------------------- what init's workflow runs

def test_memory_workflow_runs_this_projects_action_at_the_pinned_commit(written: Path) -> None:
    workflow = load(written)
    assert set(workflow[True]) == {"pull_request", "push"}  # YAML 1.1 reads the key `on` as true
    steps = workflow["jobs"]["validate"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@")
    assert steps[0]["with"]["fetch-depth"] == 0  # the pull request's base commit is in the clone
    memrepo = [step for step in steps if step.get("uses", "").startswith(create.VALIDATE_ACTION + "@")]
    # the memrepo that wrote it: this checkout's commit (bot/ci_pin.py), which has the action too
    assert [step["uses"] for step in memrepo] == [f"{create.VALIDATE_ACTION}@{ci_pin.running_pin().commit}"]
    assert memrepo[0]["with"] == {"base": "${{ github.event.pull_request.base.sha }}"}
    assert not any("run" in step for step in steps)
    assert "pip install" not in written.read_text(encoding="utf-8")


def test_pinned_commit_is_this_projects_and_has_the_action() -> None:
    """The commit the memory workflow pins is in this repository's history, and its action.yml
    takes the input the workflow passes and installs memrepo from that same checkout."""
    for commit in (create.VALIDATE_ACTION_COMMIT, ci_pin.running_pin().commit):
        pinned_commit_has_the_action(commit)


def pinned_commit_has_the_action(commit: str) -> None:
    assert git(ROOT, "cat-file", "-t", commit).strip() == "commit"
    assert git(ROOT, "merge-base", "--is-ancestor", commit, "HEAD") == ""
    action = yaml.safe_load(git(ROOT, "show", f"{commit}:action.yml"))
    assert "base" in action["inputs"]
    assert action["runs"]["using"] == "composite"
    scripts = "\n".join(step.get("run", "") for step in action["runs"]["steps"])
    assert '"$GITHUB_ACTION_PATH"' in scripts
    assert "pip install memrepo" not in scripts


# ------------------------------------------------------ the action's steps, run for real

def action_step(name: str) -> dict[str, Any]:
    (step,) = [s for s in load(ACTION)["runs"]["steps"] if s.get("name") == name]
    return step


def run_step(step: dict[str, Any], inputs: dict[str, str], runner_temp: Path, cwd: Path
             ) -> subprocess.CompletedProcess[str]:
    """One `run:` step of the composite action under bash, as the runner runs it: its `env:`
    with `${{ inputs.NAME }}` filled in (the input's default when not given), RUNNER_TEMP set."""
    defaults = {name: spec.get("default", "") for name, spec in load(ACTION)["inputs"].items()}
    env = dict(os.environ, RUNNER_TEMP=str(runner_temp), GITHUB_ACTION_PATH=str(ROOT))
    for key, value in step.get("env", {}).items():
        expression = EXPRESSION.fullmatch(value)
        assert expression and expression.group(1).startswith("inputs."), value
        env[key] = {**defaults, **inputs}[expression.group(1).removeprefix("inputs.")]
    assert step["shell"] == "bash"
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


@pytest.fixture
def pull_request(tmp_path: Path) -> tuple[Path, Path, str]:
    """A memory repository whose main is `base`, with memrepo where the install step puts it."""
    memory = create.init_repository(tmp_path / "memory", "ada").root
    runner_temp = tmp_path / "runner"
    bin_dir = runner_temp / "memrepo-venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "memrepo").symlink_to(Path(sysconfig.get_path("scripts")) / "memrepo")
    return memory, runner_temp, git(memory, "rev-parse", "HEAD").strip()


def commit(memory: Path, path: str, text: str) -> None:
    (memory / path).write_text(text, encoding="utf-8")
    git(memory, "add", path)
    git(memory, "-c", "core.hooksPath=/dev/null", "-c", "user.name=P", "-c", "user.email=p@example.com",
        "commit", "-q", "-m", f"Change {path}")


VALIDATE = "Validate memory"


def test_action_accepts_a_valid_pull_request(pull_request: tuple[Path, Path, str]) -> None:
    memory, runner_temp, base = pull_request
    human = (memory / "system/human.md").read_text(encoding="utf-8")
    commit(memory, "system/human.md", human.replace("Nothing recorded yet.", "Prefers short answers."))
    done = run_step(action_step(VALIDATE), {"base": base, "path": str(memory)}, runner_temp, memory)
    assert done.returncode == 0, done.stdout + done.stderr


def test_action_refuses_a_pull_request_that_breaks_the_rules(pull_request: tuple[Path, Path, str]) -> None:
    memory, runner_temp, base = pull_request
    commit(memory, "system/notes.md", "no frontmatter at all\n")
    done = run_step(action_step(VALIDATE), {"base": base}, runner_temp, memory)  # path: the default "."
    assert done.returncode == 1
    assert "Frontmatter validation failed:" in done.stdout
    assert "system/notes.md" in done.stdout


def test_action_without_a_base_validates_the_whole_tree(pull_request: tuple[Path, Path, str]) -> None:
    memory, runner_temp, _ = pull_request
    commit(memory, "system/notes.md", "no frontmatter at all\n")
    assert run_step(action_step(VALIDATE), {}, runner_temp, memory).returncode == 1
    git(memory, "rm", "-q", "system/notes.md")
    git(memory, "-c", "core.hooksPath=/dev/null", "-c", "user.name=P", "-c", "user.email=p@example.com",
        "commit", "-q", "-m", "Remove it")
    done = run_step(action_step(VALIDATE), {}, runner_temp, memory)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("base", ["$(touch PWNED)", "`touch PWNED`", "x; touch PWNED", "--staged"])
def test_action_inputs_are_data_never_code(pull_request: tuple[Path, Path, str], base: str) -> None:
    memory, runner_temp, _ = pull_request
    done = run_step(action_step(VALIDATE), {"base": base}, runner_temp, memory)
    assert done.returncode == 1
    assert done.stderr.strip() == "memrepo: " + VALIDATE_NO_BASE.format(base=base)
    assert not (memory / "PWNED").exists()
    assert git(memory, "status", "--porcelain") == ""


def test_action_installs_memrepo_from_its_own_checkout() -> None:
    step = action_step("Install memrepo from this action's commit")
    assert "env" not in step or all("inputs." not in v for v in step["env"].values())
    assert re.search(r'pip install [^\n]*"\$GITHUB_ACTION_PATH"\s*$', step["run"], re.MULTILINE)
    python = action_step("Set up Python for memrepo")
    assert python["with"]["update-environment"] is False  # the caller's job keeps its own Python
