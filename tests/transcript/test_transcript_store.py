"""The transcript store: rows, validation, reading since a cursor, torn tails, concurrent
appenders, incremental indexing, rebuild and import."""

from __future__ import annotations

import json
import multiprocessing
import os
import warnings
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.errors import MemrepoError
from bot.transcript import MessageNotFoundError, TranscriptStore, TranscriptWarning
from bot.transcript import home as homes
from bot.transcript.model import format_time, parse_time, parse_time_bound, time_range
from tests.conftest import StoreClock


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    """A store whose clock moves one second per message, from 2024-05-01 12:00."""
    with TranscriptStore(tmp_path / "home", fsync=False, clock=StoreClock("2024-05-01T12:00:00Z")) as s:
        yield s


def log_of(store: TranscriptStore, agent: str, conversation: str) -> Path:
    return homes.log_path(store.home, agent, conversation)


# ----------------------------------------------------------------------------- rows

def test_append_writes_one_json_line_per_message(store: TranscriptStore) -> None:
    first = store.append("ada", "c1", "user", "hello there")
    second = store.append("ada", "c1", "tool_result", "42 files", source="tool:ls", at="2023-01-02T03:04:05+02:00")
    lines = log_of(store, "ada", "c1").read_text().splitlines()
    assert [json.loads(line)["message_id"] for line in lines] == [first.message_id, second.message_id]
    row = json.loads(lines[1])
    assert row == {"message_id": second.message_id, "agent_id": "ada", "conversation_id": "c1",
                   "kind": "tool_result", "source": "tool:ls", "captured_at": "2024-05-01T12:00:02.000000Z",
                   "stated_at": "2023-01-02T01:04:05.000000Z", "text": "42 files"}
    assert first.source == "user" and first.captured_at == "2024-05-01T12:00:01.000000Z"
    assert first.message_id.startswith("m_") and len(first.message_id) == 28


def test_default_sources_by_kind(store: TranscriptStore) -> None:
    assert store.append("ada", "c1", "assistant", "hi").source == "agent"
    assert store.append("ada", "c1", "system", "be brief").source == "human"
    assert store.append("ada", "c1", "compaction", "summary").source == "agent"


def test_ids_are_time_ordered_and_unique(store: TranscriptStore) -> None:
    ids = [store.append("ada", "c1", "user", f"m{i}").message_id for i in range(200)]
    assert len(set(ids)) == 200
    assert ids == sorted(ids)


@pytest.mark.parametrize(("args", "kwargs", "problem"), [
    (("ada", "c1", "shout", "x"), {}, "kind 'shout' is not one of"),
    (("ada", "c1", "user", "x"), {"source": "robot"}, "source 'robot' is not valid"),
    (("ada", "c1", "user", "x"), {"source": "tool:"}, "source 'tool:' is not valid"),
    (("ada", "c1", "user", "x"), {"source": "external:has space"}, "is not valid"),
    (("ada", "c1", "tool_result", "x"), {}, "needs a source: tool:<name>"),
    (("../x", "c1", "user", "x"), {}, "agent_id '../x' is not valid"),
    (("ada", ".hidden", "user", "x"), {}, "conversation_id '.hidden' is not valid"),
    (("ada", "a..b", "user", "x"), {}, "is not valid"),
    (("ada", "c/1", "user", "x"), {}, "is not valid"),
    (("ada", "", "user", "x"), {}, "is not valid"),
    (("a" * 65, "c1", "user", "x"), {}, "1-64 ASCII letters"),
    (("ada", 7, "user", "x"), {}, "conversation_id must be text, found int"),
    (("ada", "c1", "user", ""), {}, "text is empty"),
    (("ada", "c1", "user", " \n\t"), {}, "text is empty"),
    (("ada", "c1", "user", "a\x00b"), {}, "NUL"),
    (("ada", "c1", "user", "bad \ud800"), {}, "lone surrogate"),
    (("ada", "c1", "user", b"bytes"), {}, "text must be a string, found bytes"),
    (("ada", "c1", "user", "x"), {"at": "soon"}, "cannot read 'soon' as a date"),
])
def test_validation(store: TranscriptStore, args: tuple, kwargs: dict, problem: str) -> None:
    with pytest.raises(MemrepoError, match=problem.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        store.append(*args, **kwargs)
    assert store.agents() == []  # nothing written


def test_read_since_a_cursor(store: TranscriptStore) -> None:
    ids = [store.append("ada", "c1", "user", f"message {i}").message_id for i in range(5)]
    store.append("ada", "c2", "user", "elsewhere")
    assert [m.message_id for m in store.read("ada", "c1")] == ids
    assert [m.message_id for m in store.read("ada", "c1", after=ids[2])] == ids[3:]
    assert store.read("ada", "c1", after=ids[-1]) == []
    with pytest.raises(MessageNotFoundError, match="is not in conversation c1 of agent ada"):
        store.read("ada", "c1", after="m_NOPE")
    with pytest.raises(MemrepoError, match="agent ada has no conversation 'c3'; its conversations: c1, c2"):
        store.read("ada", "c3")
    with pytest.raises(MemrepoError, match="no transcripts for agent 'bob'; known agents: ada"):
        store.read("bob", "c1")
    assert store.conversations("ada") == ["c1", "c2"]
    assert store.agents() == ["ada"]


def test_search_agents_are_one_or_every_agent_narrowed_to_the_conversation(store: TranscriptStore) -> None:
    store.append("ada", "c1", "user", "hello")
    store.append("bob", "c2", "user", "hello")
    assert store.search_agents() == ["ada", "bob"]
    assert store.search_agents("bob") == ["bob"]
    assert store.search_agents(conversation="c2") == ["bob"]
    with pytest.raises(MemrepoError, match="no transcripts for agent 'eve'; known agents: ada, bob"):
        store.search_agents("eve")
    with pytest.raises(MemrepoError, match="no conversation 'c2' in the transcripts of ada"):
        store.search_agents("ada", "c2")
    with pytest.raises(MemrepoError, match="no conversation 'c3' in the transcripts of any agent"):
        store.search_agents(conversation="c3")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1))
def test_any_text_round_trips(store: TranscriptStore, text: str) -> None:
    if not text.strip():
        return
    message = store.append("ada", "prop", "user", text)
    assert store.read("ada", "prop")[-1] == message
    assert store.read("ada", "prop")[-1].text == text


# ------------------------------------------------------------------------ torn tails

def test_torn_last_line_is_set_aside(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with TranscriptStore(home) as first:
        kept = [first.append("ada", "c1", "user", f"row {i} about lighthouses") for i in range(3)]
    path = homes.log_path(home, "ada", "c1")
    half = b'{"message_id": "m_01HALFROW", "agent_id": "ada", "conver'
    with open(path, "ab") as f:
        f.write(half)
    with TranscriptStore(home) as second:
        with pytest.warns(TranscriptWarning, match="unfinished last line"):
            rows = second.read("ada", "c1")
        assert rows == kept
        assert path.with_name("c1.jsonl.torn").read_bytes() == half + b"\n"
        assert any("c1.jsonl.torn" in w for w in second.warnings)
        new = second.append("ada", "c1", "user", "after the crash, lighthouses again")
        assert [m.message_id for m in second.read("ada", "c1")] == [*(m.message_id for m in kept), new.message_id]
        assert new.message_id in {h.message_id for h in second.search("lighthouse", k=10)}
    assert path.read_bytes().endswith(b"\n")


def test_torn_tail_found_by_the_index_when_searching(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with TranscriptStore(home) as first:
        first.append("ada", "c1", "user", "the harbour lighthouse")
    with open(homes.log_path(home, "ada", "c1"), "ab") as f:
        f.write(b'{"message_id": "m_X", "te')
    with TranscriptStore(home) as second, pytest.warns(TranscriptWarning):
        assert len(second.search("lighthouse")) == 1


def test_damaged_middle_line_is_an_error_naming_the_line(store: TranscriptStore) -> None:
    store.append("ada", "c1", "user", "one")
    with open(log_of(store, "ada", "c1"), "ab") as f:
        f.write(b"this is not json\n")
    with pytest.raises(MemrepoError, match=r"c1\.jsonl, line 2: not valid JSON"):
        store.read("ada", "c1")


# --------------------------------------------------------------------- concurrency

def _append_many(home: str, worker: int, count: int) -> None:
    with TranscriptStore(home, fsync=False) as s:
        for i in range(count):
            s.append("ada", "shared", "user", f"worker {worker} row {i} concurrency")


def test_two_processes_append_concurrently(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(home, w, 300)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with TranscriptStore(home) as s:
        rows = s.read("ada", "shared")
        assert len(rows) == 600
        assert len({m.message_id for m in rows}) == 600
        for worker in range(2):  # each worker's rows stay in its own order
            mine = [m.text for m in rows if m.text.startswith(f"worker {worker} ")]
            assert mine == [f"worker {worker} row {i} concurrency" for i in range(300)]
        assert len(s.search("concurrency", k=1000)) == 600


def test_threads_share_a_store(tmp_path: Path) -> None:
    import threading

    with TranscriptStore(tmp_path / "home", fsync=False) as s:
        def work(n: int) -> None:
            for i in range(50):
                s.append("ada", f"t{n % 2}", "user", f"thread {n} row {i} weaving")
                s.search("weaving", agent="ada", k=3)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(s.search("weaving", k=1000)) == 200


def _append_one(home: str, text: str, index: bool) -> None:
    with TranscriptStore(home, fsync=False) as s:
        if index:
            s.append("ada", "c2", "user", text)
        else:  # write the row as a crashed appender would: logged, never indexed
            from bot.transcript import log
            from bot.transcript.model import build

            message = build("ada", "c2", "user", text, source=None, captured_at=format_time(datetime.now(UTC)))
            path = homes.log_path(Path(home), "ada", "c2")
            path.parent.mkdir(parents=True, exist_ok=True)
            with log.locked(path.parent):
                log.append(path, log.serialize(message))


def test_incremental_indexing_sees_other_processes(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    ctx = multiprocessing.get_context("spawn")
    with TranscriptStore(home, fsync=False) as s:
        s.append("ada", "c1", "user", "first about zeppelins")
        assert len(s.search("zeppelin")) == 1
        p = ctx.Process(target=_append_one, args=(home, "second about zeppelins", True))
        p.start()
        p.join(60)
        assert len(s.search("zeppelin")) == 2  # the other process indexed its own row
        p = ctx.Process(target=_append_one, args=(home, "third about zeppelins", False))
        p.start()
        p.join(60)
        assert len(s.search("zeppelin")) == 2  # logged but not indexed yet
        s.refresh()
        assert len(s.search("zeppelin")) == 3  # caught up from the byte offset
    with TranscriptStore(home) as fresh:
        assert len(fresh.search("zeppelin")) == 3


# -------------------------------------------------------------------- index repair

def corpus(store: TranscriptStore) -> None:
    texts = ["the deploy is on friday", "deploy schedule moved", "회사에서 메모리를 샀다", "記憶を失った",
             "we remember the deploy", "nothing relevant here", "friday friday friday", "the the the"]
    for i, text in enumerate(texts * 3):
        store.append("ada", f"c{i % 3}", "user" if i % 2 else "assistant", text)


QUERIES = ["deploy", "friday deploy", "the", '"deploy schedule"', "메모리", "記憶", "remembering the friday"]


def results(store: TranscriptStore) -> list[list[tuple[str, float]]]:
    return [[(h.message_id, h.score) for h in store.search(q, k=5)] for q in QUERIES]


def test_rebuild_gives_identical_results(store: TranscriptStore) -> None:
    corpus(store)
    before = results(store)
    assert store.rebuild() == {"ada": 24}
    assert results(store) == before
    with TranscriptStore(store.home) as other:
        assert other.rebuild("ada") == {"ada": 24}
        assert results(other) == before


def test_missing_or_outdated_index_is_rebuilt(store: TranscriptStore) -> None:
    corpus(store)
    before = results(store)
    store.close()
    path = homes.index_path(store.home, "ada")
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    with TranscriptStore(store.home) as again:
        assert results(again) == before
        again._index("ada").conn.execute("UPDATE meta SET value = 'old' WHERE key = 'tokenizer'")
    with TranscriptStore(store.home) as third:
        assert results(third) == before


def test_damaged_index_file_is_built_again(store: TranscriptStore) -> None:
    corpus(store)
    before = results(store)
    store.close()
    path = homes.index_path(store.home, "ada")
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    with TranscriptStore(store.home) as again, pytest.warns(TranscriptWarning, match="could not be read"):
        assert results(again) == before
        again.append("ada", "c1", "user", "still appending")


def test_deleted_log_rebuilds_with_a_warning(store: TranscriptStore) -> None:
    corpus(store)
    store.close()
    log_of(store, "ada", "c2").unlink()
    with TranscriptStore(store.home) as again, pytest.warns(TranscriptWarning, match="c2 is gone"):
        assert all(h.conversation_id != "c2" for h in again.search("deploy", k=50))


# ----------------------------------------------------------------------------- import

def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows))
    return path


def test_import_keeps_times_and_skips_duplicates(store: TranscriptStore, tmp_path: Path) -> None:
    existing = store.append("ada", "c1", "user", "already here")
    rows = [
        {"message_id": "imp-1", "agent_id": "ada", "conversation_id": "c1", "kind": "user", "text": "imported one",
         "captured_at": "2023-03-04T05:06:07+09:00"},
        {"message_id": "imp-1", "agent_id": "ada", "conversation_id": "c1", "kind": "user", "text": "again"},
        existing.to_row(),
        {"agent_id": "bob", "conversation_id": "x", "kind": "assistant", "text": "no id, no time"},
    ]
    report = store.import_file(write_jsonl(tmp_path / "in.jsonl", rows))
    assert (report.imported, report.duplicates, report.by_agent) == (2, 2, {"ada": 1, "bob": 1})
    imported = store.read("ada", "c1")[-1]
    assert imported.message_id == "imp-1"
    assert imported.captured_at == "2023-03-03T20:06:07.000000Z"
    assert imported.imported_at is not None and imported.imported_at.startswith("2024-05-01T12:00")
    bob = store.read("bob", "x")[0]
    assert bob.captured_at == bob.imported_at and bob.source == "agent" and bob.message_id.startswith("i_")
    assert [h.message_id for h in store.search("imported", agent="ada")] == ["imp-1"]
    again = store.import_file(tmp_path / "in.jsonl")
    assert (again.imported, again.duplicates) == (0, 4)  # a row without an id is known by what and where it is


def test_import_of_an_invalid_file_imports_nothing(store: TranscriptStore, tmp_path: Path) -> None:
    good = {"agent_id": "ada", "conversation_id": "c1", "kind": "user", "text": "fine"}
    rows = [good, "{not json", {**good, "kind": "yell"}, good, {**good, "extra": 1}, [1, 2], ""]
    with pytest.raises(MemrepoError) as info:
        store.import_file(write_jsonl(tmp_path / "bad.jsonl", rows))
    message = str(info.value)
    assert "4 invalid rows, so nothing was imported" in message
    assert "line 2: not valid JSON" in message
    assert "line 3: kind 'yell' is not one of" in message
    assert "line 5: not a field of a row: extra" in message
    assert "line 6: a row must be a JSON object, found list" in message
    assert store.agents() == []


def test_import_reports_progress(store: TranscriptStore, tmp_path: Path) -> None:
    rows = [{"agent_id": "ada", "conversation_id": f"c{i % 2}", "kind": "user", "text": f"row {i}"}
            for i in range(2500)]
    seen: list[tuple[int, int]] = []
    report = store.import_file(write_jsonl(tmp_path / "many.jsonl", rows), progress=lambda d, t: seen.append((d, t)))
    assert report.imported == 2500
    assert seen[-1] == (2500, 2500)
    assert len(store.read("ada", "c0")) == 1250


def test_import_unreadable_file(store: TranscriptStore, tmp_path: Path) -> None:
    with pytest.raises(MemrepoError, match="cannot read"):
        store.import_file(tmp_path / "missing.jsonl")


# ------------------------------------------------------------------------ home, times

def test_home_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMREPO_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert homes.resolve() == Path.home() / ".local" / "share" / "memrepo"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert homes.resolve() == tmp_path / "xdg" / "memrepo"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    assert homes.resolve() == Path.home() / ".local" / "share" / "memrepo"
    monkeypatch.setenv("MEMREPO_HOME", str(tmp_path / "env"))
    assert homes.resolve() == tmp_path / "env"
    assert homes.resolve(tmp_path / "flag") == tmp_path / "flag"
    (tmp_path / "file").write_text("x")
    with pytest.raises(MemrepoError, match="is a file"):
        homes.resolve(tmp_path / "file")


@pytest.mark.parametrize(("text", "iso", "date_only"), [
    ("2024-05-01", "2024-05-01T00:00:00.000000Z", True),
    ("20240501", "2024-05-01T00:00:00.000000Z", True),
    ("2024-05-01T14:30", "2024-05-01T14:30:00.000000Z", False),
    ("2024-05-01 14:30:00", "2024-05-01T14:30:00.000000Z", False),
    ("2024-05-01T14:30:00Z", "2024-05-01T14:30:00.000000Z", False),
    ("2024-05-01T14:30:00+09:00", "2024-05-01T05:30:00.000000Z", False),
    ("2024-05-01T14:30:00.123456-01:00", "2024-05-01T15:30:00.123456Z", False),
])
def test_parse_time(text: str, iso: str, date_only: bool) -> None:
    moment, only = parse_time_bound(text)
    assert (format_time(moment), only) == (iso, date_only)


@pytest.mark.parametrize("text", ["", "yesterday", "2024-13-01", "2024-05-01T25:00", "May 1", 17])
def test_parse_time_errors(text: object) -> None:
    with pytest.raises(MemrepoError, match="as a date"):
        parse_time(text)


def test_time_range_until_a_date_covers_the_day() -> None:
    lo, hi = time_range("2024-05-01", "2024-05-01")
    assert hi - lo == 86_400_000_000
    lo, hi = time_range("2024-05-01T10:00Z", "2024-05-01T10:00Z")
    assert hi - lo == 1
    with pytest.raises(MemrepoError, match="is not before"):
        time_range("2024-05-02", "2024-05-01T00:00Z")


def test_warnings_are_python_warnings_too(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with TranscriptStore(home) as s:
        s.append("ada", "c1", "user", "x")
    with open(homes.log_path(home, "ada", "c1"), "ab") as f:
        f.write(b"{")
    with warnings.catch_warnings(record=True) as caught, TranscriptStore(home) as s:
        warnings.simplefilter("always")
        s.read("ada", "c1")
    assert [w.category for w in caught] == [TranscriptWarning]
    assert os.path.getsize(homes.log_path(home, "ada", "c1").with_name("c1.jsonl.torn")) == 2


def test_a_failed_write_is_a_clear_error(store: TranscriptStore, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from bot.transcript import log

    def full(*args: object, **kwargs: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(log, "append", full)
    with pytest.raises(MemrepoError, match=r"cannot write to .*c1\.jsonl: No space left on device"):
        store.append("ada", "c1", "user", "hello")
