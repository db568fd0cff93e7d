"""Many writers, one remote: processes on their own clones edit overlapping files and push
after every edit. Every edit must reach the remote's main exactly once, no commit may be
lost, and no push may be forced (the remote refuses non-fast-forward updates outright, and
every tip a writer pushed must be an ancestor of the final main)."""

from __future__ import annotations

import multiprocessing
import subprocess
import time
from pathlib import Path

import pytest

from bot import identity
from bot.memfs import sync
from bot.memfs.store.repo import MemoryRepo

WRITERS = 4
EDITS = 50
SHARED = "system/shared.md"
NOTES = "reference/notes.md"
FILES = {
    "system/persona.md": "---\ndescription: who I am\n---\nI am a helpful agent.\n",
    "system/human.md": "---\ndescription: what I know about the person\n---\nName: Sam\n",
    SHARED: "---\ndescription: notes every agent adds to\n---\n# Shared\nstart\n",
    NOTES: "---\ndescription: longer notes\n---\n# Notes\n",
    ".memrepo/config.yml": "",
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _edit_of(writer: int, k: int) -> tuple[str, int, str]:
    """(path, insert_line, text) of edit k of a writer: appends and same-place inserts on
    two shared files, so writers keep colliding on the same lines."""
    text = f"- w{writer} edit {k:03d}"
    if k % 5 == 4:
        return NOTES, -1, text
    if k % 3 == 0:
        return SHARED, 4, text  # right after "# Shared": every writer inserts at the same place
    return SHARED, -1, text


def _writer(root: str, writer: int, mode: str, edits: int, barrier: object, results: object) -> None:
    pushed_tips: list[str] = []
    queued = 0
    failures: list[str] = []
    try:
        repo = MemoryRepo.open(root)
        tool = None
        if mode == "tool":
            from bot.memfs.tool.memory_tool import MemoryTool

            tool = MemoryTool(root, agent_id=f"w{writer}")
        barrier.wait()
        for k in range(edits):
            path, line, text = _edit_of(writer, k)
            if tool is not None:
                result = tool.call({"command": "insert", "path": path, "insert_line": line,
                                    "insert_text": text, "reason": f"w{writer} edit {k}"})
                if not result.ok:
                    failures.append(result.message)
                    continue
                pushed = bool(result.pushed)
            else:
                head = repo.head_sha()
                lines = repo.read(path, head).decode().splitlines(keepends=True)
                at = len(lines) if line == -1 else line
                new = "".join(lines[:at]) + text + "\n" + "".join(lines[at:])
                repo.commit({path: new.encode()}, f"w{writer} edit {k}", identity.agent(f"w{writer}"),
                            parent=head)
                pushed = sync.push(repo).pushed
            if pushed:
                pushed_tips.append(repo.head_sha())
            else:
                queued += 1
        for _ in range(20):  # a push that lost every retry stays queued: the next one sends it
            result = sync.push(repo)
            if result.pushed:
                pushed_tips.append(repo.head_sha())
                break
    except Exception as exc:  # report, don't hang the parent
        failures.append(f"{type(exc).__name__}: {exc}")
    results.put((writer, pushed_tips, queued, failures))


def _setup(tmp_path: Path) -> tuple[Path, list[Path]]:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(remote, "config", "receive.denyNonFastForwards", "true")
    git(remote, "config", "receive.denyDeletes", "true")
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    for path, text in FILES.items():
        (seed / path).parent.mkdir(parents=True, exist_ok=True)
        (seed / path).write_text(text)
    git(seed, "add", "-A")
    git(seed, "-c", "user.name=init", "-c", "user.email=init@example.com", "commit", "-q",
        "-m", "Initial memory")
    sync.set_remote(MemoryRepo.open(seed), str(remote))
    clones = []
    for writer in range(WRITERS):
        path = tmp_path / f"w{writer}"
        git(tmp_path, "clone", "-q", str(remote), str(path))
        clones.append(path)
    return remote, clones


# Through the memory tool as agents use it; and straight through MemoryRepo.commit + sync.push,
# which checks sync on its own (shorter: the tool run already covers the full load).
@pytest.mark.parametrize(("mode", "edits"), [("tool", EDITS), ("direct", 20)])
def test_concurrent_writers_lose_nothing(tmp_path: Path, mode: str, edits: int) -> None:
    remote, clones = _setup(tmp_path)
    initial = git(remote, "rev-parse", "main")
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(WRITERS)
    results = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(path), i, mode, edits, barrier, results))
             for i, path in enumerate(clones)]
    started = time.monotonic()
    for proc in procs:
        proc.start()
    reports = [results.get(timeout=240) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
    elapsed = time.monotonic() - started

    failures = [f for _, _, _, fs in reports for f in fs]
    assert failures == []
    final = git(remote, "rev-parse", "main")
    assert int(git(remote, "rev-list", "--count", "main")) == 1 + WRITERS * edits
    assert git(remote, "merge-base", "--is-ancestor", initial, final) == ""
    for _, tips, _, _ in reports:
        assert tips, "every writer pushed at least once"
        for tip in tips:
            subprocess.run(["git", "merge-base", "--is-ancestor", tip, final], cwd=remote, check=True)

    texts = {path: git(remote, "show", f"main:{path}").splitlines() for path in (SHARED, NOTES)}
    for writer in range(WRITERS):
        for k in range(edits):
            path, _, text = _edit_of(writer, k)
            assert texts[path].count(text) == 1, (path, text)
    assert texts[SHARED][:4] == ["---", "description: notes every agent adds to", "---", "# Shared"]
    authors = git(remote, "log", "--format=%ae", "main").splitlines()
    for writer in range(WRITERS):
        assert authors.count(f"w{writer}@agents.memrepo") == edits
    for writer, path in enumerate(clones):  # each clone can catch up and ends identical
        repo = MemoryRepo.open(path)
        assert sync.sync(repo).pushed
        assert repo.head_sha() == final, writer
        assert repo.dirty_paths() == []
    queued = sum(q for _, _, q, _ in reports)
    print(f"{mode}: {WRITERS}x{edits} edits in {elapsed:.1f}s, {queued} pushes queued for later")
