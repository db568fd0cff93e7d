"""The memrepo a memory repository's CI runs: `memrepo init` pins the memrepo that wrote the
workflow (its commit, version and source), `memrepo validate` warns when the workflow pins an
older one, and `memrepo ci update` rewrites that one line. Real git, the real CLI."""

from __future__ import annotations

import difflib
import subprocess
from pathlib import Path

import pytest

from bot import __version__, ci_pin
from tests.conftest import git, run_cli

ROOT = Path(__file__).resolve().parents[2]
HEAD = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                      check=True).stdout.strip()
OLD_LINE = f"      - uses: memrepo/memrepo@{ci_pin.RELEASE_COMMIT} # memrepo's action, pinned by commit\n"
A, B = "a" * 40, "b" * 40


# ------------------------------------------------------------------------------- pure
@pytest.mark.parametrize(("text", "pin"), [
    (f"  - uses: memrepo/memrepo@{A} # memrepo 0.1.0 (git)\n", ci_pin.Pin(A, "0.1.0", "git")),
    (f"      - uses: memrepo/memrepo@{A} # memrepo 1.2.3 (release)", ci_pin.Pin(A, "1.2.3", "release")),
    (OLD_LINE, ci_pin.Pin(ci_pin.RELEASE_COMMIT, None, None)),
    (f"  - uses: actions/checkout@{A}\n  - uses: memrepo/memrepo@{B}\n", ci_pin.Pin(B)),
    ("  - uses: memrepo/memrepo@v1 # memrepo 0.1.0 (git)\n", None),
    (f"  - uses: someone/memrepo@{A}\n", None),
    ("", None),
])
def test_read_pin(text: str, pin: ci_pin.Pin | None) -> None:
    assert ci_pin.read_pin(text) == pin


@pytest.mark.parametrize(("pinned", "running", "ancestor", "age"), [
    (ci_pin.Pin(A, "0.1.0", "git"), ci_pin.Pin(A, "0.1.0", "git"), None, "current"),
    (ci_pin.Pin(A, "0.1.0", "release"), ci_pin.Pin(B, "0.2.0", "release"), None, "older"),
    (ci_pin.Pin(A, "0.3.0", "release"), ci_pin.Pin(B, "0.2.0", "git"), True, "newer"),  # versions first
    (ci_pin.Pin(A, None, None), ci_pin.Pin(B, "0.1.0", "git"), True, "older"),  # the history tells
    (ci_pin.Pin(A, "0.1.0", "git"), ci_pin.Pin(B, "0.1.0", "git"), True, "older"),
    (ci_pin.Pin(A, "0.1.0", "git"), ci_pin.Pin(B, "0.1.0", "git"), False, "unknown"),
    (ci_pin.Pin(A, None, None), ci_pin.Pin(B, "0.1.0", "release"), None, "unknown"),
])
def test_age(pinned: ci_pin.Pin, running: ci_pin.Pin, ancestor: bool | None, age: str) -> None:
    assert ci_pin.age(pinned, running, ancestor) == age


def test_rewrite_changes_that_one_line_only() -> None:
    text = f"name: x\n# memrepo/memrepo@{A} in a comment stays\nsteps:\n{OLD_LINE}        with:\n          base: y\n"
    new = ci_pin.rewrite(text, ci_pin.Pin(B, "0.2.0", "git"))
    changed = [d for d in difflib.ndiff(text.splitlines(), new.splitlines()) if d[:1] in "+-"]
    assert changed == ["- " + OLD_LINE.rstrip("\n"), f"+       - uses: memrepo/memrepo@{B} # memrepo 0.2.0 (git)"]
    assert ci_pin.read_pin(new) == ci_pin.Pin(B, "0.2.0", "git")


# ------------------------------------------------------------------------------- the commands
def commit(root: Path, message: str) -> None:
    """A person's commit of the workflow, past the pre-commit hook (memory's rules refuse .github/)."""
    git(root, "add", ci_pin.WORKFLOW)
    git(root, "commit", "-q", "--no-verify", "-m", message)


def test_init_pins_the_memrepo_that_wrote_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "init", str(tmp_path / "m"), "--agent-id", "ada")
    assert code == 0, err
    text = (tmp_path / "m" / ci_pin.WORKFLOW).read_text()
    assert ci_pin.read_pin(text) == ci_pin.Pin(HEAD, __version__, "git")
    assert f"uses: memrepo/memrepo@{HEAD} # memrepo {__version__} (git)\n" in text


def test_validate_warns_of_an_older_pin_and_ci_update_rewrites_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "m"
    assert run_cli(capsys, "init", str(root), "--agent-id", "ada")[0] == 0
    workflow = root / ci_pin.WORKFLOW
    current = workflow.read_text()
    code, out, err = run_cli(capsys, "validate", "--repo", str(root))
    assert code == 0 and err == "", err

    old = ci_pin.rewrite(current, ci_pin.Pin(ci_pin.RELEASE_COMMIT, None, None)).replace(
        f"@{ci_pin.RELEASE_COMMIT}", f"@{ci_pin.RELEASE_COMMIT} # memrepo's action, pinned by commit").replace(
        " # memrepo None (None)", "")
    assert OLD_LINE in old
    workflow.write_text(old)
    commit(root, "ci: the pin of an older memrepo")
    code, out, err = run_cli(capsys, "validate", "--repo", str(root))
    assert code == 0 and len(err.splitlines()) == 1, (out, err)
    assert "warning" in err and ci_pin.RELEASE_COMMIT[:12] in err and "memrepo ci update" in err
    assert run_cli(capsys, "validate", "--repo", str(root), "-q")[2] == ""

    code, out, err = run_cli(capsys, "ci", "update", "--repo", str(root))
    assert code == 0 and len(out.splitlines()) == 1 and err == "", err
    assert workflow.read_text() == current
    assert ".github/" in out and "--no-verify" in out
    code, out, err = run_cli(capsys, "validate", "--repo", str(root))
    assert code == 1 and ".github/" in out, "memory's rules still refuse the change: a person commits it"
    commit(root, "ci: pin this memrepo")
    changed = [d for d in difflib.ndiff(old.splitlines(), current.splitlines()) if d[:1] in "+-"]
    assert len(changed) == 2
    assert run_cli(capsys, "validate", "--repo", str(root))[2] == ""
    code, out, _ = run_cli(capsys, "ci", "update", "--repo", str(root))
    assert code == 0 and "already" in out


def test_ci_update_refusals_are_one_line_and_change_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "m"
    assert run_cli(capsys, "init", str(root), "--agent-id", "ada")[0] == 0
    workflow = root / ci_pin.WORKFLOW
    newer = ci_pin.rewrite(workflow.read_text(), ci_pin.Pin(A, "99.0.0", "release"))
    workflow.write_text(newer)
    code, out, err = run_cli(capsys, "ci", "update", "--repo", str(root))
    assert code == 1 and out == "" and len(err.splitlines()) == 1 and "newer" in err, err
    assert workflow.read_text() == newer
    assert run_cli(capsys, "ci", "update", "--repo", str(root), "--older")[0] == 0
    assert ci_pin.read_pin(workflow.read_text()) == ci_pin.running_pin()

    workflow.unlink()
    code, out, err = run_cli(capsys, "ci", "update", "--repo", str(root))
    assert code == 1 and out == "" and len(err.splitlines()) == 1 and "missing" in err, err
    assert not workflow.exists()
