"""Several agents writing one memory at once, each in its own process with its own clone of one
bare remote, each edit through `AgentSession` (so through its routing, commit and push), and the
audit of what became of every edit. Shared by tests/memfs/test_writers.py (a small run, asserted) and
bench/writers.py (the big runs, measured).

The edits of writer w, in turn (k = 0, 1, 2, ...):
    k % 3 == 0   a bullet appended to its own file, reference/agents/w<w>.md (no other writer touches it)
    k % 3 == 1   a bullet appended to system/team.md (core memory every writer appends to)
    k % 3 == 2   the `counter:` line of system/progress.md replaced (str_replace; every writer does it)
Each edit's text and reason carry a token, `tok-w<w>-e<kkk>`, found again on main or on a
set-aside commit. Only the counter can conflict: own files are nobody else's and appended list
items merge as a union.
"""

from __future__ import annotations

import multiprocessing
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot import identity
from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.sync import SetAside, SyncResult
from tests.conftest import git

TEAM = "system/team.md"
PROGRESS = "system/progress.md"
KINDS = ("own", "team", "counter")
TOKEN = re.compile(r"tok-w\d+-e\d{3}")
COUNTER_LINE = re.compile(r"(?m)^counter: (\d+).*$")
START_TIMEOUT = 120.0  # seconds a writer waits for the others to be ready (a crashed one breaks the barrier)


def agent_id(writer: int) -> str:
    return f"w{writer}"


def own_path(writer: int) -> str:
    return f"reference/agents/{agent_id(writer)}.md"


def token(writer: int, k: int) -> str:
    return f"tok-w{writer}-e{k:03d}"


def kind_of(k: int) -> str:
    return KINDS[k % len(KINDS)]


def seed_files(writers: int) -> dict[str, str]:
    files = {
        TEAM: "---\ndescription: what the team of agents has learned\n---\n# Team\n\n- agents share this file\n",
        PROGRESS: "---\ndescription: how far the shared work has got\n---\n# Progress\n\ncounter: 0\n",
    }
    for w in range(writers):
        files[own_path(w)] = f"---\ndescription: notes of agent {agent_id(w)}\n---\n# Notes of {agent_id(w)}\n"
    return files


def make_remote(folder: Path, writers: int) -> tuple[Path, list[Path]]:
    """A bare remote that refuses forced updates, holding a memory made by `memrepo init` plus
    the shared files, and one clone of it per writer, connected with `sync.set_remote`."""
    folder.mkdir(parents=True, exist_ok=True)
    remote = folder / "remote.git"
    git(folder, "init", "-q", "--bare", "-b", "main", str(remote))
    git(remote, "config", "receive.denyNonFastForwards", "true")
    git(remote, "config", "receive.denyDeletes", "true")
    seed = init_repository(folder / "seed", "seed", "Seed")
    head = seed.head_sha()
    assert head is not None
    seed.commit({p: t.encode() for p, t in seed_files(writers).items()}, "Shared files of the writers",
                identity.agent("seed"), parent=head)
    sync.set_remote(seed, str(remote))
    clones = []
    for w in range(writers):
        path = folder / agent_id(w)
        git(folder, "clone", "-q", str(remote), str(path))
        sync.set_remote(MemoryRepo.open(path), str(remote))
        clones.append(path)
    return remote, clones


# ------------------------------------------------------------------------------------- one writer
@dataclass(frozen=True)
class Edit:
    """One edit as its writer saw it: the tool result (ok, route, commit, pushed, the message)
    and how long the call took."""

    writer: int
    k: int
    kind: str
    token: str
    ok: bool
    route: str
    commit: str | None
    pushed: bool | None
    message: str
    ms: float
    at: float  # time.time() when the call began


@dataclass
class WriterReport:
    writer: int
    edits: list[Edit] = field(default_factory=list)
    error: str | None = None


def call_for(repo: MemoryRepo, writer: int, k: int) -> dict[str, Any]:
    """The tool call of edit k of `writer`, made against the clone's HEAD."""
    tok, kind = token(writer, k), kind_of(k)
    reason = f"{kind} {tok}"
    if kind == "own":
        return {"command": "insert", "path": own_path(writer), "insert_line": -1,
                "insert_text": f"- {tok}: a note only {agent_id(writer)} keeps", "reason": reason}
    if kind == "team":
        return {"command": "insert", "path": TEAM, "insert_line": -1,
                "insert_text": f"- {tok}: something {agent_id(writer)} learned", "reason": reason}
    text = (repo.read(PROGRESS) or b"").decode()
    line = COUNTER_LINE.search(text)
    assert line is not None, text
    return {"command": "str_replace", "path": PROGRESS, "old_str": line.group(0),
            "new_str": f"counter: {int(line.group(1)) + 1} ({tok})", "reason": reason}


def open_session(root: str | Path, writer: int, store: Any) -> Any:
    """The AgentSession of `writer` on its clone: no forge, no event stream, dreams inline."""
    from bot.agent import AgentSession

    return AgentSession(root, f"conv-{agent_id(writer)}", agent_id=agent_id(writer), agent_name=f"Writer {writer}",
                        store=store, env={}, background_dreams=False)


def run_writer(root: str, writer: int, edits: int, home: str, start: Callable[[], object]) -> WriterReport:
    """Open an AgentSession on the clone at `root`, wait for `start`, then make the edits one
    after another, each in a turn of its own, recording every result."""
    from bot.transcript import TranscriptStore

    report = WriterReport(writer)
    try:
        store = TranscriptStore(home, fsync=False)
        with open_session(root, writer, store) as session:
            start()
            for k in range(edits):
                session.record("user", f"Please remember {token(writer, k)}.")
                call = call_for(session.repo, writer, k)
                at, began = time.time(), time.perf_counter()
                result = session.handle_tool_call(call)
                ms = (time.perf_counter() - began) * 1000
                report.edits.append(Edit(writer, k, kind_of(k), token(writer, k), result.ok, result.route,
                                         result.commit, result.pushed, result.message, ms, at))
        store.close()
    except Exception as exc:  # reported to the parent, which fails: a writer must not hang it
        report.error = f"{type(exc).__name__}: {exc}"
    return report


def writer_process(root: str, writer: int, edits: int, home: str, barrier: Any, results: Any) -> None:
    """The body of one writer process: all writers start their first edit together."""
    results.put(run_writer(root, writer, edits, home, lambda: barrier.wait(START_TIMEOUT)))


def run_writers(folder: Path, clones: list[Path], edits: int, timeout: float = 600.0) -> list[WriterReport]:
    """One spawned process per clone, started together on a barrier; their reports, by writer."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(len(clones))
    results = ctx.Queue()
    procs = [ctx.Process(target=writer_process,
                         args=(str(path), w, edits, str(folder / f"home-{agent_id(w)}"), barrier, results))
             for w, path in enumerate(clones)]
    for proc in procs:
        proc.start()
    try:
        reports = [results.get(timeout=timeout) for _ in procs]
    finally:
        for proc in procs:
            proc.join(timeout=30)
    return sorted(reports, key=lambda r: r.writer)


def final_syncs(clones: list[Path]) -> list[SyncResult]:
    """`sync` in each clone, one after another: what any writer still has queued is sent."""
    return [sync.sync(MemoryRepo.open(path)) for path in clones]


# -------------------------------------------------------------------------------------------- audit
@dataclass
class Audit:
    """What became of every edit. `lost`: accepted, not on main, not kept as set aside.
    `wrong`: (token, what) for an edit on main more than once, on main and set aside as well,
    set aside without any result of its writer saying so, or reported pushed yet not on main."""

    accepted: int = 0
    on_main: int = 0
    set_aside: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    wrong: list[tuple[str, str]] = field(default_factory=list)
    set_aside_by_kind: Counter[str] = field(default_factory=Counter)
    queued: int = 0  # accepted edits whose own result said they were not pushed yet

    def as_data(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "on_main": self.on_main, "set_aside": self.set_aside,
                "lost": len(self.lost), "wrong": len(self.wrong), "refused": len(self.refused),
                "queued": self.queued, "set_aside_by_kind": dict(sorted(self.set_aside_by_kind.items()))}


def main_history(remote: Path) -> tuple[Counter[str], Counter[str]]:
    """(token -> commits of main whose subject names it, token -> commits of main adding a line
    with it), read with git itself."""
    out = git(remote, "log", "-p", "-U0", "--no-color", "--format=%x00%s", "main")
    named: Counter[str] = Counter()
    added: Counter[str] = Counter()
    for chunk in out.split("\x00")[1:]:
        subject, _, diff = chunk.partition("\n")
        named.update(set(TOKEN.findall(subject)))
        plus = "\n".join(line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))
        added.update(set(TOKEN.findall(plus)))
    return named, added


def adds_token(repo: MemoryRepo, sha: str, tok: str) -> bool:
    """Whether commit `sha` itself adds a line holding `tok` (a set-aside commit keeps the change)."""
    commit = repo.git[sha]
    diff = repo.git.diff(commit.parents[0], commit, context_lines=0)
    return any(tok in line.content for patch in diff for hunk in patch.hunks for line in hunk.lines
               if line.origin == "+")


def audit(remote: Path, clones: list[Path], reports: list[WriterReport], syncs: list[SyncResult]) -> Audit:
    """Judge every edit against the remote's main (its files and `git log`) and each clone's
    set-aside commits; the final sync's summary counts as a later result of its writer."""
    named, added = main_history(remote)
    files = {p: git(remote, "show", f"main:{p}") for p in (TEAM, PROGRESS, *map(own_path, range(len(clones))))}
    result = Audit()
    for report, clone, final in zip(reports, clones, syncs, strict=True):
        repo = MemoryRepo.open(clone)
        kept: dict[str, list[SetAside]] = {}
        for entry in sync.set_aside_commits(repo):
            for tok in TOKEN.findall(entry.message):
                kept.setdefault(tok, []).append(entry)
        for i, edit in enumerate(report.edits):
            if not (edit.ok and edit.route == "direct"):
                result.refused.append((edit.token, edit.message))
                continue
            result.accepted += 1
            result.queued += edit.pushed is False
            path = own_path(edit.writer) if edit.kind == "own" else TEAM if edit.kind == "team" else PROGRESS
            in_file = files[path].count(edit.token)
            if named[edit.token] > 1 or added[edit.token] > 1 or in_file > 1:
                result.wrong.append((edit.token, "on main more than once"))
                continue
            on_main = named[edit.token] == 1 and added[edit.token] == 1 and (edit.kind == "counter" or in_file == 1)
            later = [e.message for e in report.edits[i:]] + [final.summary]
            entries = [e for e in kept.get(edit.token, []) if adds_token(repo, e.commit, edit.token)]
            told = [e for e in entries if any(sync.set_aside_note((e,)) in text for text in later)]
            if on_main and entries:
                result.wrong.append((edit.token, "on main and set aside"))
            elif on_main:
                result.on_main += 1
            elif told:
                result.set_aside += 1
                result.set_aside_by_kind[edit.kind] += 1
            elif entries:
                result.wrong.append((edit.token, "set aside, and no result of its writer said so"))
            else:
                result.lost.append(edit.token)
            if edit.pushed and not on_main:
                result.wrong.append((edit.token, "reported pushed, not on main"))
    return result
