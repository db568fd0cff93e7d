"""memrepo's path rules against git's own: for random names built from what git's checks look
for (dots, `git`, tildes, spaces, the code points HFS+ ignores, bidi and zero-width
characters, letter case), memrepo accepts nothing `git fsck --strict` flags, and a clone that
protects HFS+ and NTFS checks out every name memrepo accepts. Many names share one repository,
one fsck and one clone, so the property stays fast."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import pygit2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.memfs.format.paths import path_problem

PIECES = st.sampled_from([
    "a", "B", "x1", ".", "..", "git", "GIT", "Git", "gIT", "~", "~1", "1", "4", " ", "-", "_", "md", "txt",
    "\u200c", "\u200d", "\u200e", "\u200f", "\u202a", "\u202e", "\u206a", "\u206f", "\ufeff", "\u200b", "\u2060",
    "modules", "attributes", "ignore", "mailmap", "hub", ":", "$INDEX_ALLOCATION", "\\", "con", "nul",
    "\u00e9", "e\u0301", "\u0130", "\u212a",
])
NAME = st.lists(PIECES, min_size=1, max_size=6).map("".join)
PATH = st.lists(NAME, min_size=1, max_size=3).map("/".join)
PROTECTED_CLONE = ("-c", "core.protectHFS=true", "-c", "core.protectNTFS=true")
TREE = pygit2.enums.ObjectType.TREE


def _tree(odb: pygit2.Odb, entries: list[tuple[str, bytes, pygit2.Oid]]) -> pygit2.Oid:
    """A tree object written as it is, names unchecked (libgit2 would refuse some), in git's
    order (a folder sorts as if its name ended in `/`)."""
    def key(entry: tuple[str, bytes, pygit2.Oid]) -> bytes:
        mode, name, _ = entry
        return name + (b"/" if mode == "40000" else b"")

    body = b"".join(mode.encode() + b" " + name + b"\0" + oid.raw for mode, name, oid in sorted(entries, key=key))
    return odb.write(TREE, body)


def repository_of(root: Path, paths: list[str]) -> dict[str, list[str]]:
    """A repository at `root` whose one commit holds each path under its own folder `dNNN/`;
    returns each tree's id -> the paths that hold it, to read fsck's report by."""
    repo = pygit2.init_repository(str(root), bare=True)
    odb = repo.odb
    blob = odb.write(pygit2.enums.ObjectType.BLOB, b"x\n")
    holders: dict[str, list[str]] = {}
    top = []
    for number, path in enumerate(paths):
        names = path.split("/")
        oid, mode = blob, "100644"
        for name in reversed(names):
            oid, mode = _tree(odb, [(mode, name.encode(), oid)]), "40000"
            holders.setdefault(str(oid), []).append(path)
        top.append(("40000", f"d{number:03}".encode(), oid))
    signature = pygit2.Signature("t", "t@example.com", 0, 0)
    repo.create_commit("refs/heads/main", signature, signature, "names", _tree(odb, top), [])
    repo.set_head("refs/heads/main")
    return holders


def flagged_by_fsck(root: Path, holders: dict[str, list[str]]) -> set[str]:
    done = subprocess.run(["git", "fsck", "--strict", "--no-progress", "--no-dangling"], cwd=root,
                          capture_output=True, text=True)
    found = set()
    for sha in re.findall(r"\btree ([0-9a-f]{40})", done.stdout + done.stderr):
        found.update(holders.get(sha, [f"<tree {sha}>"]))
    assert found or done.returncode == 0, done.stdout + done.stderr
    return found


def test_the_harness_sees_what_fsck_flags() -> None:
    bad = [".GIT", "a/git~1/b", ".g\u200cit", "x/.git. ", ".git::$INDEX_ALLOCATION", "..", "a/./b"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "names.git"
        assert flagged_by_fsck(root, repository_of(root, [*bad, "fine/name.md"])) == set(bad)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PATH, min_size=20, max_size=60, unique=True))
def test_memrepo_accepts_nothing_git_flags_and_every_accepted_name_checks_out(paths: list[str]) -> None:
    accepted = [path for path in paths if path_problem(path) is None]
    with tempfile.TemporaryDirectory() as tmp:
        every = Path(tmp) / "every.git"
        assert flagged_by_fsck(every, repository_of(every, paths)).isdisjoint(accepted)
        root = Path(tmp) / "accepted.git"
        repository_of(root, accepted)
        clone = Path(tmp) / "clone"
        done = subprocess.run(["git", *PROTECTED_CLONE, "clone", "-q", str(root), str(clone)],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        missing = [path for number, path in enumerate(accepted) if not (clone / f"d{number:03}" / path).is_file()]
        assert not missing, done.stderr
