"""The integrator's workspace answers whether a head merges into its base cleanly, from git
alone (it stands in for GitHub's `mergeable` while GitHub is still computing it)."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from bot.integrator.context import Remote
from bot.integrator.workspace import Workspace, WorkspaceError
from tests.conftest import git


def _commit(clone: Path, name: str, text: str, message: str) -> str:
    (clone / name).write_text(text)
    git(clone, "add", name)
    git(clone, "commit", "-q", "-m", message)
    return git(clone, "rev-parse", "HEAD").strip()


def test_merges_cleanly_says_what_a_trial_merge_says(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "work", "alice/memory", Remote("unused"))
    workspace.path.parent.mkdir(parents=True)
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(workspace.path))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(workspace.path), str(clone))
    root = _commit(clone, "facts.md", "- one\n- two\n- three\n", "root")
    base = _commit(clone, "facts.md", "- one\n- two\n- three\n- from main\n", "main adds a line")
    git(clone, "checkout", "-q", "-b", "other", root)
    other_file = _commit(clone, "notes.md", "elsewhere\n", "another file")
    same_line = _commit(clone, "facts.md", "- one\n- two\n- three\n- from the branch\n", "same place")
    git(clone, "push", "-q", "origin", "main", "other", f"{other_file}:refs/heads/clean")

    assert workspace.merges_cleanly(base, other_file) is True
    assert workspace.merges_cleanly(base, same_line) is False
    assert workspace.merges_cleanly(base, base) is True
    assert workspace.merges_cleanly(base, "0" * 40) is None  # not fetched here: unknown, not "clean"


def _remote_and_clone(tmp_path: Path) -> tuple[Path, Path, str]:
    """A bare remote and a clone of it, with one root commit (its sha returned)."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    return remote, clone, _commit(clone, "facts.md", "- one\n", "root")


def test_fetch_brings_the_base_and_the_pull_head_and_says_none_for_a_ref_gone(tmp_path: Path) -> None:
    remote, clone, base = _remote_and_clone(tmp_path)
    head = _commit(clone, "facts.md", "- one\n- two\n", "the pull request")
    git(clone, "push", "-q", "origin", f"{base}:refs/heads/main", f"{head}:refs/pull/3/head")
    workspace = Workspace(tmp_path / "work", "alice/memory", Remote(str(remote)))

    fetched = workspace.fetch("main", 3)
    assert (fetched.base_sha, fetched.head_sha) == (base, head)
    assert workspace.has(head) and workspace.merges_cleanly(base, head) is True

    git(clone, "push", "-q", "origin", ":refs/pull/3/head")
    assert workspace.fetch("main", 3) == type(fetched)(base, None)
    assert workspace.fetch("gone", None).base_sha is None


def test_fetch_failure_is_a_workspace_error_without_the_token(tmp_path: Path) -> None:
    secret = "ghs_NotARealTokenButSecret123"
    workspace = Workspace(tmp_path / "work", "alice/memory", Remote("http://127.0.0.1:9/alice/memory.git",
                                                                    lambda: secret))
    with pytest.raises(WorkspaceError) as caught:
        workspace.fetch("main", 1)
    assert "fetch" in str(caught.value) and secret not in str(caught.value)


def test_push_fast_forwards_and_says_false_when_the_branch_moved(tmp_path: Path) -> None:
    remote, clone, base = _remote_and_clone(tmp_path)
    git(clone, "push", "-q", "origin", f"{base}:refs/heads/main", f"{base}:refs/heads/dream",
        f"{base}:refs/pull/1/head")
    workspace = Workspace(tmp_path / "work", "alice/memory", Remote(str(remote)))
    workspace.fetch("main", 1)
    git_dir = workspace.memory().git
    tree = git_dir[base].peel(pygit2.Commit).tree.id
    who = pygit2.Signature("t", "t@example.com")
    ahead = str(git_dir.create_commit(None, who, who, "ahead", tree, [git_dir[base].id]))

    assert workspace.push(ahead, "dream") is True
    assert git(remote, "rev-parse", "refs/heads/dream").strip() == ahead

    elsewhere = _commit(clone, "facts.md", "- one\n- elsewhere\n", "someone else")  # not in the mirror
    git(clone, "push", "-q", "-f", "origin", f"{elsewhere}:refs/heads/dream")
    again = str(git_dir.create_commit(None, who, who, "again", tree, [git_dir[ahead].id]))
    assert workspace.push(again, "dream") is False
    assert git(remote, "rev-parse", "refs/heads/dream").strip() == elsewhere  # never forced

    sideways = str(git_dir.create_commit(None, who, who, "sideways", tree, [git_dir[base].id]))
    git(remote, "update-ref", "refs/heads/dream", ahead)  # back to one the mirror has
    assert workspace.push(sideways, "dream") is False
    assert git(remote, "rev-parse", "refs/heads/dream").strip() == ahead


def test_push_failure_is_a_workspace_error_without_the_token(tmp_path: Path) -> None:
    secret = "ghs_NotARealTokenButSecret123"
    workspace = Workspace(tmp_path / "work", "alice/memory", Remote("http://127.0.0.1:9/alice/memory.git",
                                                                    lambda: secret))
    workspace.path.parent.mkdir(parents=True)
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(workspace.path))
    with pytest.raises(WorkspaceError) as caught:
        workspace.push("0" * 40, "dream")
    assert "push" in str(caught.value) and secret not in str(caught.value)
