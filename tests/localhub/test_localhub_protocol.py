"""localhub answers git protocol v2's `ls-refs` itself: byte for byte what `git upload-pack`
answers, for every combination of arguments, on repositories with branches, tags (annotated,
nested, lightweight), pull request refs and an unborn HEAD. And real git fetches through it."""

from __future__ import annotations

import itertools
import os
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pygit2
import pytest
import requests

from localhub import git_http, git_protocol
from tests.waiting import wait_until

DELIM = b"0001"  # pkt-line delim: ends a v2 request's capabilities (git sends it; localhub never does)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def request(arguments: list[str]) -> bytes:
    lines = [git_protocol.pkt_line("command=ls-refs\n"), git_protocol.pkt_line("agent=test\n"),
             git_protocol.pkt_line("object-format=sha1\n"), DELIM]
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


# ---------------------------------------------------------------------------- the pack cache
def test_identical_requests_are_answered_once_even_at_the_same_moment() -> None:
    cache = git_http.PackCache(ttl=30)
    calls: list[bytes] = []
    gate = threading.Event()

    def compute(body: bytes):  # type: ignore[no-untyped-def]
        def run() -> bytes:
            calls.append(body)
            gate.wait(5)
            return b"pack for " + body
        return run

    with ThreadPoolExecutor(8) as pool:
        same = [pool.submit(cache.answer, "repo", b"want a", compute(b"want a")) for _ in range(6)]
        other = pool.submit(cache.answer, "repo", b"want b", compute(b"want b"))
        elsewhere = pool.submit(cache.answer, "other repo", b"want a", compute(b"want a"))
        wait_until(lambda: len(calls) == 3, 5, "the first request of each kind computing its answer")
        gate.set()
        assert {f.result(5) for f in same} == {b"pack for want a"}
        assert other.result(5) == b"pack for want b" and elsewhere.result(5) == b"pack for want a"
    assert sorted(calls) == [b"want a", b"want a", b"want b"]  # one per repository and request
    assert cache.answer("repo", b"want a", compute(b"never")) == b"pack for want a"  # kept


def test_failures_are_not_kept_and_answers_expire() -> None:
    cache = git_http.PackCache(ttl=0.2)
    with pytest.raises(RuntimeError):
        cache.answer("repo", b"x", lambda: (_ for _ in ()).throw(RuntimeError("upload-pack failed")))
    assert cache.answer("repo", b"x", lambda: b"first") == b"first"
    assert cache.answer("repo", b"x", lambda: b"second") == b"first"
    time.sleep(0.3)  # the answer's life (0.2 s) runs out: PackCache reads time.monotonic itself
    assert cache.answer("repo", b"x", lambda: b"third") == b"third"
    small = git_http.PackCache(max_bytes=40)
    assert small.answer("repo", b"big", lambda: b"y" * 20) == b"y" * 20  # over a quarter: not kept
    assert small.answer("repo", b"big", lambda: b"z") == b"z"


def test_agents_fetching_the_same_move_start_one_upload_pack(localhub, tmp_path: Path, monkeypatch) -> None:
    from bot.memfs.store.repo import MemoryRepo
    from bot.memfs.sync import transport
    from tests.conftest import localhub_token

    token = localhub_token(localhub, "alice")
    requests.post(f"{localhub.api_url}/user/repos", json={"name": "memory", "auto_init": True},
                  headers={"Authorization": f"token {token}"}, timeout=10).raise_for_status()
    url = localhub.url.replace("http://", f"http://x-access-token:{token}@") + "/alice/memory.git"
    author, *agents = (tmp_path / name for name in ("author", "a1", "a2", "a3"))
    for path in (author, *agents):
        git(tmp_path, "clone", "-q", url, str(path))
    (author / "note.md").write_text("new\n")
    git(author, "add", "note.md")
    git(author, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "a move")
    git(author, "push", "-q", "origin", "HEAD:main")
    moved = git(author, "rev-parse", "HEAD").strip()

    runs: list[list[str]] = []
    real = git_http._run
    monkeypatch.setattr(git_http, "_run", lambda args, *rest: runs.append(args) or real(args, *rest))
    for agent in agents:  # the same state, so the same ask: libgit2 in-process, as agents fetch
        repo = MemoryRepo(agent, pygit2.Repository(str(agent)))
        repo.git.remotes["origin"].fetch(["+refs/heads/main:refs/remotes/origin/main"],
                                         callbacks=transport.HeaderCallbacks(transport.basic_auth_header(url)))
        assert repo.resolve("refs/remotes/origin/main") == moved
    packs = [args for args in runs if "--advertise-refs" not in args]
    assert len(packs) == 1, runs
