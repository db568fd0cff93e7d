"""localhub answers git protocol v2's `ls-refs` itself: byte for byte what `git upload-pack`
answers, for every combination of arguments, on repositories with branches, tags (annotated,
nested, lightweight), pull request refs and an unborn HEAD. And real git fetches through it."""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

import pygit2
import pytest

from bot.forge.localhub import git_protocol


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def request(arguments: list[str]) -> bytes:
    lines = [git_protocol.pkt_line("command=ls-refs\n"), git_protocol.pkt_line("agent=test\n"),
             git_protocol.pkt_line("object-format=sha1\n"), git_protocol.DELIM]
    lines += [git_protocol.pkt_line(a + "\n") for a in arguments]
    return b"".join(lines) + git_protocol.FLUSH


def upload_pack(path: Path, body: bytes) -> bytes:
    env = {**os.environ, "GIT_PROTOCOL": "version=2"}
    return subprocess.run(["git", "upload-pack", "--stateless-rpc", str(path)], input=body, env=env,
                          capture_output=True, check=True).stdout


@pytest.fixture(scope="module")
def repos(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("protocol")
    work = root / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    for i in range(3):
        (work / "f.md").write_text(f"{i}\n")
        git(work, "add", "f.md")
        git(work, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", f"c{i}")
    git(work, "branch", "memrepo/dream/x", "HEAD~1")
    git(work, "tag", "light", "HEAD~2")
    git(work, "-c", "user.name=t", "-c", "user.email=t@e", "tag", "-a", "-m", "v1", "v1", "HEAD~1")
    git(work, "-c", "user.name=t", "-c", "user.email=t@e", "tag", "-a", "-m", "outer", "outer", "v1")
    full = root / "full.git"
    git(root, "clone", "-q", "--bare", str(work), str(full))
    git(full, "update-ref", "refs/pull/7/head", "main~1")
    empty = root / "empty.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(empty))
    return {"full": full, "empty": empty}


ARGUMENTS = [list(c) for n in range(4) for c in itertools.combinations(["symrefs", "peel", "unborn"], n)]
PREFIXES = [[], ["ref-prefix refs/heads/main"], ["ref-prefix HEAD", "ref-prefix refs/tags/"],
            ["ref-prefix refs/pull/7/head", "ref-prefix refs/heads/memrepo/"], ["ref-prefix refs/nothing"]]


@pytest.mark.parametrize("which", ["full", "empty"])
@pytest.mark.parametrize("arguments", ARGUMENTS, ids=lambda a: "+".join(a) or "plain")
@pytest.mark.parametrize("prefixes", PREFIXES, ids=lambda p: ",".join(x.split()[-1] for x in p) or "all")
def test_ls_refs_is_what_upload_pack_answers(repos, which: str, arguments: list[str], prefixes: list[str]) -> None:
    path = repos[which]
    body = request(arguments + prefixes)
    command, parsed = git_protocol.parse_command(body)
    assert command == "ls-refs" and parsed == arguments + prefixes
    assert git_protocol.ls_refs(pygit2.Repository(str(path)), parsed) == upload_pack(path, body)


@pytest.mark.parametrize("body", [b"", b"zzzz", b"0005", b"0009command", b"000ahello\n0000",
                                  git_protocol.pkt_line("command=fetch\n") + git_protocol.FLUSH])
def test_other_requests_are_left_to_git(body: bytes) -> None:
    command, _ = git_protocol.parse_command(body)
    assert command != "ls-refs"
