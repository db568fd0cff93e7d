"""Several agents, one remote, all at once: writer processes, each with its own clone of one bare
remote, make their edits through `AgentSession` (appends to their own file, bullets appended to
one shared core file, one shared `counter:` line replaced; tests/writers_work.py). Afterwards
every accepted edit is on the remote's main exactly once, or is kept on a set-aside commit of
its writer's clone that a result of that writer reported; none is lost, and only the counter,
the one line everyone replaces, is ever set aside."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from bot.memfs import sync
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.tool.memory_tool import PUSHED
from tests import writers_work as work
from tests.conftest import git, run_cli

WRITERS = 4
EDITS = 15


def test_concurrent_agent_sessions_lose_no_accepted_edit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    remote, clones = work.make_remote(tmp_path, WRITERS)
    initial = git(remote, "rev-parse", "main").strip()
    reports = work.run_writers(tmp_path, clones, EDITS, timeout=240)
    assert [r.error for r in reports] == [None] * WRITERS
    assert [len(r.edits) for r in reports] == [EDITS] * WRITERS

    syncs = work.final_syncs(clones)
    assert all(s.pushed for s in syncs), [s.summary for s in syncs]
    found = work.audit(remote, clones, reports, syncs)

    assert found.refused == []
    assert found.accepted == WRITERS * EDITS
    assert found.lost == []
    assert found.wrong == []
    assert found.on_main + found.set_aside == found.accepted
    assert set(found.set_aside_by_kind) <= {"counter"}  # appends never conflict

    final = git(remote, "rev-parse", "main").strip()
    git(remote, "merge-base", "--is-ancestor", initial, final)  # nothing was forced over the remote
    assert git(remote, "rev-list", "--merges", "main").strip() == ""
    for path, report in zip(clones, reports, strict=True):
        repo = MemoryRepo.open(path)
        kept_before = sync.set_aside_commits(repo)
        again = sync.sync(repo)  # set-aside commits stay set aside; the clone catches up
        assert again.pushed and again.set_aside == ()
        assert repo.head_sha() == final and repo.dirty_paths() == []
        assert sync.set_aside_commits(repo) == kept_before
        code, out, _ = run_cli(capsys, "repository", "status", "--json", "--repo", str(path))
        assert code == 0
        listed = json.loads(out)["set_aside"]
        assert listed == [e.as_data() for e in kept_before]
        assert {t for e in listed for t in work.TOKEN.findall(e["message"])} <= {e.token for e in report.edits}


def test_an_edit_set_aside_on_a_second_replay_is_not_reported_pushed(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """One push meets the remote's main moving twice: first by an append (the counter edit is
    replayed onto it cleanly), then, before that replay is pushed, by another writer's counter
    (the replayed commit now conflicts and is set aside). The edit is not on main, so its
    result must not say it was pushed."""
    from bot.memfs.tool.memory_tool import MemoryTool
    from bot.transcript import TranscriptStore

    push_module = importlib.import_module("bot.memfs.sync.push")  # the package's `push` is the function
    remote, (mine, theirs) = work.make_remote(tmp_path, 2)
    rival = MemoryTool(theirs, agent_id=work.agent_id(1))

    def rival_edit(k: int) -> None:
        assert rival.call(work.call_for(rival.repo, 1, k)).pushed is True

    rival_edit(0)  # an append to the rival's own file: main moved, nothing to conflict with
    real_fetch = push_module.fetch
    fetched: list[str | None] = []

    def fetch_then_rival_counter(repo: MemoryRepo) -> tuple[str | None, str | None]:
        found = real_fetch(repo)
        if repo.root == mine.resolve() and not fetched:
            fetched.append(found[0])
            rival_edit(2)  # the rival replaces the counter right after this clone fetched
        return found

    monkeypatch.setattr(push_module, "fetch", fetch_then_rival_counter)
    store = TranscriptStore(tmp_path / "home", fsync=False)
    with work.open_session(mine, 0, store) as session:
        result = session.handle_tool_call(work.call_for(session.repo, 0, 2))
    store.close()

    named, added = work.main_history(remote)
    assert named[work.token(1, 2)] == added[work.token(1, 2)] == 1
    assert named[work.token(0, 2)] == added[work.token(0, 2)] == 0  # the edit is not on main
    [kept] = sync.set_aside_commits(MemoryRepo.open(mine))
    assert work.token(0, 2) in kept.message
    assert sync.set_aside_note((kept,)) in result.message
    assert result.ok and result.pushed is not True, result.message
    assert PUSHED not in result.message
