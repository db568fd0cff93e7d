"""Letta Code's own code, run beside memrepo's on the same input.

memrepo promises that a memory one tool writes is valid for the other, so the checks here do
not restate Letta's rules: they take its published package (pinned to VERSION), pull its
pre-commit hook, its constraints validator and its memory tool's commands out of the bundle
with Letta's own installer (`letta.cjs`), and run them under node on real git repositories.
When Letta Code changes, these tests say what moved.

The package is fetched by the tests themselves the first time they run on a machine (`npm pack`:
the bundle needs none of its dependencies for this) into the folder named by MEMREPO_LETTA_CODE,
or the default below, and kept there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.npm_package import USER_HOME, NpmPackage

VERSION = "0.32.18"
ENV = "MEMREPO_LETTA_CODE"
DEFAULT_DIR = (Path(os.environ.get("XDG_CACHE_HOME") or USER_HOME / ".cache")
               / "memrepo" / f"letta-code-{VERSION}" / "package")
EXTRACT = Path(__file__).resolve().parent / "letta.cjs"
PACKAGE = f"@letta-ai/letta-code@{VERSION}"
FETCH_TIMEOUT = 600  # seconds for `npm pack`: one tarball of a few megabytes, on a slow registry mirror
INSTALL_HINT = (
    "mkdir -p {parent} && cd {parent} && npm pack {package} && tar xzf letta-ai-letta-code-{version}.tgz"
)

# Letta's layout policies (.git/letta-memory-layout-policy): what its harness installs for a
# local MemFS (legacy-only: v1 rules) and for an API-backed one (root-marker: v2 rules once
# the memory has a root MEMORY.md).
LEGACY, ROOT_MARKER = "legacy-only", "root-marker"
POLICY_FILE = "letta-memory-layout-policy"
HOOK_FILES = ("pre-commit", "letta-memory-constraints.cjs")


def package_dir() -> Path:
    """The unpacked @letta-ai/letta-code package of VERSION, fetched on first use; fails the
    test (never skips) saying what is missing, since a skipped conformance test proves nothing."""
    if shutil.which("node") is None:
        pytest.fail("node is not installed; the Letta Code conformance tests run Letta's own code under node "
                    "(Debian/Ubuntu: apt-get install nodejs npm)")
    folder = Path(os.environ.get(ENV) or DEFAULT_DIR)
    return npm_package(folder).ensure(folder)


def npm_package(folder: Path) -> NpmPackage:
    """The package as npm publishes it, to be unpacked into `folder`."""
    return NpmPackage("Letta Code", VERSION, PACKAGE, ENV, "letta.js",
                      INSTALL_HINT.format(parent=folder.parent, package=PACKAGE, version=VERSION),
                      timeout=FETCH_TIMEOUT)


def installed(folder: Path) -> bool:
    """Whether `folder` holds an unpacked package: its manifest and the bundle the tests read."""
    return npm_package(folder).installed(folder)


@dataclass(frozen=True)
class Verdict:
    """What a validator said of a staged change: its exit code and the problem lines it printed
    (each `path: message`, the two-space indent taken off), in its order."""

    code: int
    problems: tuple[str, ...]
    output: str

    @property
    def accepted(self) -> bool:
        return self.code == 0


def problem_lines(output: str) -> tuple[str, ...]:
    """The problem lines of a report: Letta's and memrepo's both indent each by two spaces."""
    return tuple(line[2:] for line in output.splitlines() if line.startswith("  ") and not line.startswith("   "))


class Letta:
    """Letta Code's hook, validator and memory tool, extracted once into `work`."""

    def __init__(self, package: Path, work: Path) -> None:
        self.package = package
        self.work = work
        done = subprocess.run(["node", str(EXTRACT), "extract", str(package), str(work)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            pytest.fail(f"could not take Letta Code {VERSION}'s hooks out of {package}: {done.stderr.strip()}")

    def install_hooks(self, repo: Path, policy: str) -> None:
        """What Letta's harness installs in a memory checkout: the pre-commit hook, the
        validator beside it and the layout policy (copied from Letta's own installer's output)."""
        source = self.work / policy / ".git"
        hooks = repo / ".git" / "hooks"
        hooks.mkdir(parents=True, exist_ok=True)
        for name in HOOK_FILES:
            shutil.copy2(source / "hooks" / name, hooks / name)
        shutil.copy2(source / POLICY_FILE, repo / ".git" / POLICY_FILE)

    def run_hook(self, repo: Path, env: dict[str, str] | None = None) -> Verdict:
        """Letta's pre-commit hook on what is staged in `repo`, as `git commit` runs it."""
        done = subprocess.run(["bash", str(repo / ".git" / "hooks" / "pre-commit")], cwd=repo,
                              capture_output=True, text=True, env={**os.environ, **(env or {})})
        output = done.stdout + done.stderr
        return Verdict(done.returncode, problem_lines(output), output)

    def end_turn(self, transcripts: Path, agent_id: str, conversation_id: str, lines: list[dict]) -> None:
        """Letta's end of a turn: the turn's lines appended to the conversation's transcript under
        `transcripts` (LETTA_TRANSCRIPT_ROOT) by Letta's own writer, every row stamped now."""
        env = {**os.environ, "LETTA_TRANSCRIPT_ROOT": str(transcripts)}
        done = subprocess.run(["node", str(self.work / "transcript.cjs"), agent_id, conversation_id, json.dumps(lines)],
                              capture_output=True, text=True, env=env)
        if done.returncode != 0 or not json.loads(done.stdout).get("ok"):
            pytest.fail(f"Letta's transcript writer did not run: {done.stderr.strip()}")

    def tool(self, memory_dir: Path, layout: str, args: dict) -> dict:
        """One call of Letta's memory tool on `memory_dir` (its file writes only: Letta's tool
        commits afterwards): {"ok": True, "paths": [...]} or {"ok": False, "error": ...}."""
        fmt = "memfs-v2" if layout == "v2" else "memfs-v1"
        done = subprocess.run(["node", str(self.work / "memory-tool.cjs"), str(memory_dir), fmt, json.dumps(args)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            pytest.fail(f"Letta's memory tool did not run: {done.stderr.strip()}")
        return json.loads(done.stdout)
