"""The git command's view of a commit (bot/memfs/store/git_command.py) is MemoryRepo's: the same
paths and blobs, so a hook's compile is `memrepo compile`'s."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.errors import MemrepoError
from bot.memfs.prompt.compiler import PromptCompiler
from bot.memfs.store.git_command import CommandSnapshot
from bot.memfs.store.repo import MemoryRepo
from tests.conftest import git


def test_the_commands_view_of_a_commit_is_memory_repos(memory: MemoryRepo) -> None:
    odd = memory.root / "notes" / "a file, with spaces é.md"
    odd.parent.mkdir()
    odd.write_text("---\ndescription: odd name\n---\nbody\n")
    os.symlink("../system/human.md", memory.root / "notes" / "link.md")
    (memory.root / "system" / "human.md").write_text("---\ndescription: who\n---\n" + "x" * 70_000 + "\n")
    git(memory.root, "add", "-A")
    git(memory.root, "commit", "-qm", "odd files", "--no-verify")  # whatever a commit holds
    head = memory.head_sha()
    assert head is not None
    snapshot = CommandSnapshot(memory.root)
    assert snapshot.resolve("HEAD") == head and snapshot.resolve("no-such-branch") is None
    paths = snapshot.paths(head)
    assert paths == memory.paths(head)
    assert all(snapshot.blob(oid) == memory.blob(oid) for oid in paths.values())
    assert snapshot.git_dir.rstrip("/") == memory.git_dir.rstrip("/")
    for path in ("system/human.md", "notes/a file, with spaces é.md", ".memrepo/config.yml", "no/such.md"):
        assert snapshot.read(path, head) == memory.read(path, head)
    with pytest.raises(MemrepoError, match="no object"):
        snapshot.blob("0" * 40)
    by_command = PromptCompiler(memory.root, repo=CommandSnapshot(memory.root)).compile("You are Ada.")
    assert by_command.text == PromptCompiler(memory.root, repo=memory).compile("You are Ada.").text


def test_a_folder_that_is_no_repository_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MemrepoError, match="not a git repository"):
        CommandSnapshot(tmp_path)
