"""`memrepo demo`: the whole story runs and checks itself."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from bot import cli, messages
from tests.conftest import git


def test_demo_in_a_temporary_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    code = cli.main(["demo"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == ""
    assert out.splitlines()[-1] == "Every step did what it says." == messages.DEMO_DONE
    for step in range(1, 8):
        assert f"\n{step}. " in "\n" + out, step
    assert "[refused]" in out and "[ok ]" in out
    assert list(scratch.iterdir()) == []  # the temporary folder is gone


def test_demo_keeps_its_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "story"
    code = cli.main(["demo", "--dir", str(base)])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    assert out.rstrip().endswith(messages.DEMO_DONE)
    remote, memory = base / "remote.git", base / "agent-memory"
    assert remote.is_dir() and memory.is_dir()
    head = git(memory, "rev-parse", "HEAD").strip()
    assert head == git(remote, "rev-parse", "main").strip()
    assert git(memory, "status", "--porcelain") == ""
    emails = git(memory, "log", "--format=%ae").split()
    assert emails.count("ada@agents.memrepo") >= 3
    assert "sam@example.com" in emails

    # A second run in the same folder refuses in one line instead of mixing two stories.
    code = cli.main(["demo", "--dir", str(base)])
    out, err = capsys.readouterr()
    assert code == 1
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert git(memory, "rev-parse", "HEAD").strip() == head
