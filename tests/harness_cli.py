"""What the Claude Code and Codex CLI tests (tests/claude_code_conformance,
tests/codex_conformance) both do around the harness: run memrepo's CLI, read the compiled core
memory, set a localhub memory to dream after every step, and wait for the dream's pull request."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import github
import pytest
from github.PullRequest import PullRequest

from tests.conftest import LocalhubMemory, git, memory_on_localhub
from tests.waiting import wait_until

MEMREPO = [sys.executable, "-m", "bot.cli"]
DREAM_WAIT = 60  # seconds for the session's dream to open its pull request


def compiled(root: Path) -> str:
    """The core memory as `memrepo compile` prints it."""
    done = subprocess.run([*MEMREPO, "compile", "--repo", str(root)], capture_output=True, text=True, check=True)
    return done.stdout.rstrip("\n")


def dreaming_memory(localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                    monkeypatch: pytest.MonkeyPatch) -> LocalhubMemory:
    """alice/memory on localhub, cloned, whose config dreams after every step."""
    world = memory_on_localhub(localhub, tmp_path, monkeypatch, LocalhubMemory)
    world.store.close()
    config = world.memory.root / ".memrepo" / "config.yml"
    config.write_text(config.read_text().replace("steps: 25", "steps: 1"))
    git(world.memory.root, "commit", "-qam", "Dream after every step")
    git(world.memory.root, "push", "-q", "origin", "main")
    return world


def the_dream_pull(world: LocalhubMemory, localhub, log: Path) -> PullRequest:  # type: ignore[no-untyped-def]
    """The one open pull request on alice/memory, awaited; failing, the triggers' `log` says why."""
    repo = github.Github(auth=github.Auth.Token(world.token), base_url=localhub.api_url, retry=None) \
        .get_repo("alice/memory")
    pulls = wait_until(lambda: list(repo.get_pulls(state="open")), DREAM_WAIT,
                       lambda: f"a dream pull request; the triggers' log: "
                               f"{log.read_text() if log.exists() else 'none'}")
    (pull,) = pulls
    return pull
