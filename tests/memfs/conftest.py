"""Fixtures the memory core's tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.commands.init import INIT_DONE
from tests.conftest import git
from tests.conftest import run_cli as run


@pytest.fixture
def created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A memory `memrepo init` made for agent a1 (Ada), having said so and nothing else."""
    root = tmp_path / "mem"
    code, out, err = run(capsys, "init", str(root), "--agent-id", "a1", "--agent-name", "Ada")
    assert (code, err) == (0, ""), err
    head = git(root, "rev-parse", "HEAD").strip()
    assert out == INIT_DONE.format(path=root.resolve(), agent_id="a1", commit=head[:12]) + "\n"
    return root
