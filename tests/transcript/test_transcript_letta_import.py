"""`memrepo transcript import --from letta` and `import_letta` on transcripts that Letta Code's
own writer made (tests/letta_writer.py): Letta's ids kept, a re-run imports nothing twice, a
transcript that grew gives only its new lines, one that was cut is reported, and bad input is
one error that names every bad line and imports nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bot.transcript import TranscriptStore
from bot.transcript import home as homes
from bot.transcript.letta_import import import_letta
from tests.conftest import StoreClock, run_cli
from tests.letta_writer import AGENT, CONVERSATION, Turn, assistant, error, reasoning, tool, user, write

FIRST = Turn([user("I moved to Lyon last week.", "o1", "message-u1"),
              reasoning("The user moved; worth remembering.", "message-a1"),
              assistant("Noted: you live in Lyon now.", "message-a1"),
              tool("toolu_01", "Bash", '{"command":"date"}', "Sat Mar 14"),
              error("Stream error: 529 overloaded", "err-1")])
FIRST_IDS = ["message-u1", "message-a1", "message-a1.2", "toolu_01", "toolu_01.2"]
SECOND = Turn([user("My sister Ines visits in May.", "o2", "message-u2"),
               assistant("I'll remember Ines's visit.", "message-a2", after_reasoning=False)],
              at="2026-03-14T09:05:00.000Z")


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    with TranscriptStore(tmp_path / "home", fsync=False, clock=StoreClock()) as s:
        yield s


def ids(store: TranscriptStore, conversation: str = CONVERSATION) -> list[str]:
    return [m.message_id for m in store.read(AGENT, conversation)]


def transcript(root: Path) -> Path:
    return root / AGENT / CONVERSATION / "transcript.jsonl"


# --------------------------------------------------------------------- incremental

def test_a_rerun_imports_nothing_twice_and_a_grown_transcript_only_its_new_lines(
        tmp_path: Path, store: TranscriptStore) -> None:
    root = tmp_path / "letta"
    write(root, [FIRST])
    report = import_letta(store, root)
    assert (report.conversations, report.imported, report.duplicates) == (1, 5, 0)
    assert report.skipped == {"error": 1} and report.notes == []
    assert ids(store) == FIRST_IDS
    sources = [(m.kind, m.source) for m in store.read(AGENT, CONVERSATION)]
    assert sources == [("user", "user"), ("reasoning", "agent"), ("assistant", "agent"), ("tool_call", "agent"),
                       ("tool_result", "tool:Bash")]

    again = import_letta(store, root)
    assert (again.imported, again.duplicates, again.skipped) == (0, 0, {})

    write(root, [SECOND])
    grown = import_letta(store, root)
    assert (grown.imported, grown.duplicates, grown.skipped) == (2, 0, {})
    assert ids(store) == [*FIRST_IDS, "message-u2", "message-a2"]
    assert store.read(AGENT, CONVERSATION)[-1].captured_at == "2026-03-14T09:05:00.000000Z"


def test_a_cut_transcript_is_reported_and_what_grows_on_it_is_imported(tmp_path: Path, store: TranscriptStore) -> None:
    root = tmp_path / "letta"
    write(root, [FIRST, SECOND])
    import_letta(store, root)
    path = transcript(root)
    full = path.read_bytes()
    path.write_bytes(b"".join(full.splitlines(keepends=True)[:2]))

    cut = import_letta(store, root)
    assert (cut.imported, cut.duplicates) == (0, 2)
    assert cut.notes == [f"{path} changed since the last import (it is shorter than the {len(full)} bytes "
                         "imported before): it was read again from the start, and only messages memrepo did not "
                         "have were imported"]
    write(root, [Turn([user("Ines arrives on the 3rd.", "o3", "message-u3")], at="2026-03-15T08:00:00.000Z")])
    grown = import_letta(store, root)
    assert (grown.imported, grown.duplicates, grown.notes) == (1, 0, [])
    assert ids(store) == [*FIRST_IDS, "message-u2", "message-a2", "message-u3"]


def test_an_unfinished_last_line_waits_for_the_next_import(tmp_path: Path, store: TranscriptStore) -> None:
    root = tmp_path / "letta"
    write(root, [FIRST])
    path = transcript(root)
    with path.open("ab") as f:
        f.write(b'{"kind":"user","text":"half')
    report = import_letta(store, root)
    assert report.imported == 5
    assert report.notes == [f"{path} ends with an unfinished line (27 bytes); it is imported once Letta Code ends it"]
    with path.open("ab") as f:
        f.write(b' a line","captured_at":"2026-03-14T09:01:00Z","source_line_id":"user-o9"}\n')
    finished = import_letta(store, root)
    assert (finished.imported, finished.notes) == (1, [])
    assert store.read(AGENT, CONVERSATION)[-1].text == "half a line"


def test_every_agent_and_conversation_under_the_root_is_imported(tmp_path: Path, store: TranscriptStore) -> None:
    root = tmp_path / "letta"
    write(root, [FIRST, Turn([user("other chat", "o4", "message-u4")], conversation="default"),
                 Turn([user("another agent", "o5", "message-u5")], agent="agent-local-2", conversation="local-conv-1")])
    report = import_letta(store, root)
    assert (report.conversations, report.imported) == (3, 7)
    assert store.agents() == [AGENT, "agent-local-2"]
    assert store.conversations(AGENT) == [CONVERSATION, "default"]
    assert import_letta(store, root / AGENT / "default").imported == 0


# ------------------------------------------------------------------------------ CLI

def cli(capsys: pytest.CaptureFixture[str], home: Path, *args: str) -> tuple[int, str, str]:
    return run_cli(capsys, "transcript", "import", "--from", "letta", *args, "--home", str(home))


def test_the_cli_reads_letta_codes_own_root_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "letta"
    write(root, [FIRST])
    monkeypatch.setenv("LETTA_TRANSCRIPT_ROOT", str(root))
    code, out, err = cli(capsys, tmp_path / "home")
    assert (code, err) == (0, "")
    assert out == (f"imported 5 messages from 1 Letta conversation in {root}; 0 messages memrepo already had "
                   "skipped; rows skipped: 1 error row (Letta Code's own errors)\n")
    code, out, err = cli(capsys, tmp_path / "home", str(root / AGENT))
    assert (code, err) == (0, "") and out.startswith("imported 0 messages from 1 Letta conversation")


def assert_refused(code: int, out: str, err: str, home: Path, *problems: str) -> None:
    """Exit 1, nothing on standard output, no traceback, each problem said, nothing imported."""
    assert code == 1 and out == "" and "Traceback" not in err and err.startswith("memrepo: ")
    for problem in problems:
        assert problem in err
    assert not homes.transcripts(home).exists() or not any(homes.transcripts(home).rglob("*.jsonl"))
    assert not any(homes.letta_cursors(home).rglob("*.json"))


def missing(root: Path) -> Path:
    return root / "nope"


def a_file(root: Path) -> Path:
    root.mkdir()
    (root / "file").write_text("x")
    return root / "file"


def empty(root: Path) -> Path:
    (root / AGENT / "multi-reflection-payloads").mkdir(parents=True)
    return root


@pytest.mark.parametrize("make, problem", [
    (missing, "nope does not exist; name Letta Code's transcripts folder, an agent's folder or a conversation's"),
    (a_file, "file is a file; name Letta Code's transcripts folder"),
    (empty, "letta: no transcript.jsonl in it, in its folders (one agent's conversations) or in theirs"),
])
def test_a_path_without_transcripts_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           make: Callable[[Path], Path], problem: str) -> None:
    code, out, err = cli(capsys, tmp_path / "home", str(make(tmp_path / "letta")))
    assert_refused(code, out, err, tmp_path / "home", problem)
    assert err.count("\n") == 1


def test_one_bad_line_imports_nothing_from_any_conversation(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "letta"
    write(root, [FIRST, Turn([user("fine", "o6", "message-u6")], conversation="default")])
    with transcript(root).open("ab") as f:
        f.write(b'{"kind": "user", "text": "no id", "captured_at": "2026-03-14T09:00:00Z"}\n[1]\n')
    code, out, err = cli(capsys, tmp_path / "home", str(root))
    assert_refused(code, out, err, tmp_path / "home", f"{root}: 2 problems, so nothing was imported:",
                   f"{transcript(root)} line 6: the row has no source_line_id",
                   f"{transcript(root)} line 7: a row must be a JSON object, found list")


def test_a_folder_name_no_id_can_keep_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "letta"
    write(root, [Turn([user("hi", "o7", "message-u7")], agent="a" * 70)])
    code, out, err = cli(capsys, tmp_path / "home", str(root))
    long = "a" * 70
    assert_refused(code, out, err, tmp_path / "home",
                   f"{root / long / CONVERSATION}: Letta's agent_id '{long}' is longer than the 64 characters")


def test_an_escaped_folder_name_is_kept_reversibly(tmp_path: Path, store: TranscriptStore) -> None:
    root = tmp_path / "letta"
    write(root, [Turn([user("hi", "o8", "message-u8")], conversation="_scratch")])
    import_letta(store, root)
    assert store.conversations(AGENT) == ["x._5Fscratch"]


def test_memrepos_own_import_still_needs_its_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "transcript", "import", "--home", str(tmp_path / "home"))
    assert code == 1 and out == ""
    assert err == ("memrepo: name the JSON Lines file to import ('-' for standard input), or import Letta Code's "
                   "or Claude Code's transcripts with --from letta or --from claude-code\n")
