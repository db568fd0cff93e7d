"""`memrepo tool` acts as an agent, so it writes under the agent's rules: a protected path, an
edit over `direct_commit.max_changed_lines`, a delete that would empty core memory and an edit
made with untrusted content in context become pull requests where there is a forge, and are
refused with a clear message where there is none. Before, the CLI called the memory tool
directly and all of these went straight to the remote's main."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.memfs.store.repo import MemoryRepo
from bot.trailers import trailer_map
from tests.conftest import git, run_cli


@pytest.fixture
def connected(tmp_path: Path) -> tuple[MemoryRepo, Path]:
    """A memory connected to a bare remote: a remote, but no forge to open pull requests on."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    memory = init_repository(tmp_path / "memory", "ada", "Ada")
    sync.set_remote(memory, str(remote))
    return memory, remote


def tool(capsys: pytest.CaptureFixture[str], memory: MemoryRepo, call: dict[str, object], *extra: str
         ) -> tuple[int, str, str]:
    return run_cli(capsys, "tool", "--repo", str(memory.root), *extra, json.dumps(call))


PROTECTED = {"command": "str_replace", "path": "system/persona.md", "old_str": "I am Ada", "new_str": "I am Eve"}
LARGE = {"command": "create", "path": "reference/big.md", "description": "Big",
         "file_text": "".join(f"line {i}\n" for i in range(100))}
EMPTY_CORE = {"command": "delete", "path": "system"}
SMALL = {"command": "str_replace", "path": "system/human.md", "old_str": "Nothing recorded yet.",
         "new_str": "Likes trains."}


@pytest.mark.parametrize(("call", "why"), [
    (PROTECTED, "protected memory: system/persona.md"),
    (LARGE, "direct_commit.max_changed_lines"),
    (EMPTY_CORE, "last file of core memory"),
])
def test_what_needs_a_pull_request_is_refused_without_a_forge(capsys: pytest.CaptureFixture[str],
                                                              connected: tuple[MemoryRepo, Path],
                                                              call: dict[str, object], why: str) -> None:
    memory, remote = connected
    before = git(remote, "rev-parse", "main").strip()
    head = memory.head_sha()
    code, out, err = tool(capsys, memory, call)
    assert code == 1 and out == ""
    assert "This edit was not made" in err and why in err
    assert "internal error" not in err
    assert git(remote, "rev-parse", "main").strip() == before and memory.head_sha() == head
    assert memory.dirty_paths() == []


def test_without_a_remote_the_refusal_says_how_to_connect_one(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    memory = init_repository(tmp_path / "memory", "ada", "Ada")
    head = memory.head_sha()
    code, _, err = tool(capsys, memory, PROTECTED)
    assert code == 1 and "memory has no remote" in err and "memrepo repository set <url>" in err
    assert memory.head_sha() == head


def test_an_untrusted_source_sends_even_a_small_edit_to_review(capsys: pytest.CaptureFixture[str],
                                                               connected: tuple[MemoryRepo, Path]) -> None:
    memory, remote = connected
    before = git(remote, "rev-parse", "main").strip()
    code, _, err = tool(capsys, memory, SMALL, "--source", "external:https://example.com/page")
    assert code == 1 and "external:https://example.com/page" in err
    assert git(remote, "rev-parse", "main").strip() == before
    code, _, err = tool(capsys, memory, SMALL, "--source", "a web page")
    assert code == 2 and "--source takes an external:<what> source" in err


def test_a_small_edit_goes_straight_to_main_with_its_provenance(capsys: pytest.CaptureFixture[str],
                                                                connected: tuple[MemoryRepo, Path]) -> None:
    memory, remote = connected
    code, out, err = tool(capsys, memory, SMALL, "--conversation", "c7")
    assert code == 0, err
    assert "pushed to origin/main" in out
    main = git(remote, "rev-parse", "main").strip()
    assert main == memory.head_sha()
    assert dict(trailer_map(git(remote, "log", "-1", "--format=%B", main))) == {"Agent-ID": "ada",
                                                                               "Conversation-ID": "c7"}
