"""Letta Code's transcript rows as memrepo messages (bot.transcript.letta), by table: the rows
are the ones Letta Code 0.32's writer makes (tests/letta_writer.py runs it; the rows here are
written as it writes them, so these tests need no node), plus the ones it never writes (an
unknown kind, bad input)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.contracts import check_id
from bot.errors import MemrepoError
from bot.transcript.incremental import CHANGED, GREW, NEW, SHRANK, UNCHANGED, Cursor, change, complete_lines
from bot.transcript.letta import (
    EMPTY,
    ERROR,
    NO_KIND,
    REPEATED,
    UNKNOWN,
    Row,
    Said,
    part_id,
    read_conversation,
    read_row,
    to_letta_id,
    to_memrepo_id,
)
from bot.transcript.letta_import import conversation_folders, default_root, skipped_text

AT = "2026-03-14T09:00:00.000Z"
STORED_AT = "2026-03-14T09:00:00.000000Z"
IMPORTED = "2026-04-01T00:00:00.000000Z"
BASE = {"captured_at": AT, "source_line_id": "L1"}


def said(kind: str, source: str, text: str) -> tuple[Said, ...]:
    return (Said(kind, source, text),)


# ------------------------------------------------------------------------------ rows

@pytest.mark.parametrize("row, expected", [
    ({**BASE, "kind": "user", "text": "I moved to Lyon.", "source_message_id": "message-1"},
     Row("L1", "message-1", STORED_AT, said("user", "user", "I moved to Lyon."))),
    ({**BASE, "kind": "user", "text": "hi"}, Row("L1", "L1", STORED_AT, said("user", "user", "hi"))),
    ({**BASE, "kind": "assistant", "text": "Noted.", "source_message_id": "message-2"},
     Row("L1", "message-2", STORED_AT, said("assistant", "agent", "Noted."))),
    ({**BASE, "kind": "reasoning", "text": "The user moved.", "source_message_id": ""},
     Row("L1", "L1", STORED_AT, said("reasoning", "agent", "The user moved."))),
    ({**BASE, "kind": "tool_call", "name": "Bash", "argsText": '{"command":"ls"}', "resultText": "a b",
      "resultOk": True},
     Row("L1", "L1", STORED_AT, (Said("tool_call", "agent", 'Bash({"command":"ls"})'),
                                 Said("tool_result", "tool:Bash", "a b")))),
    ({**BASE, "kind": "tool_call", "name": "Bash", "argsText": "{}", "resultText": "exit 1", "resultOk": False},
     Row("L1", "L1", STORED_AT, (Said("tool_call", "agent", "Bash({})"),
                                 Said("tool_result", "tool:Bash", "Error: exit 1")))),
    ({**BASE, "kind": "tool_call", "name": "Read", "resultText": "Error reading", "resultOk": False},
     Row("L1", "L1", STORED_AT, (Said("tool_call", "agent", "Read()"),
                                 Said("tool_result", "tool:Read", "Error reading")))),
    ({**BASE, "kind": "tool_call", "name": "web_search", "argsText": '{"q":"x"}'},
     Row("L1", "L1", STORED_AT, said("tool_call", "agent", 'web_search({"q":"x"})'))),
    ({**BASE, "kind": "tool_call", "resultText": "42"},
     Row("L1", "L1", STORED_AT, (Said("tool_call", "agent", "unknown()"),
                                 Said("tool_result", "tool:unknown", "42")))),
    ({**BASE, "kind": "error", "text": "Stream error"}, ERROR),
    ({**BASE, "kind": "event", "eventType": "compaction"}, UNKNOWN + "event"),
    ({**BASE, "text": "no kind"}, NO_KIND),
    ({**BASE, "kind": 3}, NO_KIND),
    ({**BASE, "kind": "assistant", "text": "  \n"}, EMPTY),
    ({**BASE, "kind": "user"}, EMPTY),
], ids=["user", "user-no-message-id", "assistant", "reasoning-empty-message-id", "tool", "tool-failed",
        "tool-failed-says-so", "tool-no-result", "tool-no-name", "error", "unknown-kind", "no-kind",
        "kind-not-text", "blank", "no-text"])
def test_a_row_becomes_messages_or_a_reason_to_skip_it(row: dict[str, object], expected: Row | str) -> None:
    assert read_row(row) == expected


@pytest.mark.parametrize("row, problem", [
    (["user", "hi"], "a row must be a JSON object, found list"),
    ({"kind": "user", "text": "hi", "captured_at": AT}, "the row has no source_line_id"),
    ({**BASE, "kind": "user", "text": 5}, "text must be text, found int"),
    ({**BASE, "kind": "user", "text": "hi", "source_message_id": 7}, "source_message_id must be text, found int"),
    ({**BASE, "kind": "user", "text": "hi", "captured_at": "soon"}, "captured_at: cannot read 'soon' as a date"),
    ({**BASE, "kind": "user", "text": "hi", "captured_at": None}, "captured_at: "),
    ({**BASE, "kind": "tool_call", "name": "my tool"}, "tool name 'my tool' cannot name a source"),
])
def test_a_row_letta_would_not_write_is_an_error_that_says_why(row: object, problem: str) -> None:
    with pytest.raises(MemrepoError) as caught:
        read_row(row)
    assert str(caught.value).startswith(problem)


# ------------------------------------------------------------------------------- ids

@pytest.mark.parametrize("letta, memrepo", [
    ("message-1d2e3f40-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "message-1d2e3f40-5a6b-4c7d-8e9f-0a1b2c3d4e5f"),
    ("toolu_01AbC.x", "toolu_01AbC.x"),
    ("user-mb2k9x-4f8a1c", "user-mb2k9x-4f8a1c"),
    ("assistant:message-1", "x.assistant_3Amessage-1"),
    ("_hidden", "x._5Fhidden"),
    ("a..b", "x.a_2E_2Eb"),
    ("x.looks-escaped", "x.x_2Elooks-escaped"),
    ("ends.", "x.ends_2E"),
    ("café", "x.caf_C3_A9"),
])
def test_letta_ids_are_kept_and_escaped_only_where_memrepo_refuses_them(letta: str, memrepo: str) -> None:
    assert to_memrepo_id(letta, "message_id") == memrepo
    assert to_letta_id(memrepo) == letta


@given(st.text(max_size=10))  # at most 4 bytes a character, 3 characters a byte: within 128
def test_every_letta_id_maps_to_a_memrepo_id_and_back(letta: str) -> None:
    memrepo = to_memrepo_id(letta, "conversation_id")
    assert check_id(memrepo, "conversation_id") == memrepo
    assert to_letta_id(memrepo) == letta


def test_an_id_too_long_for_memrepo_is_refused_saying_so() -> None:
    with pytest.raises(MemrepoError, match=r"Letta's agent_id 'a{65}' is longer than the 64 characters"):
        to_memrepo_id("a" * 65, "agent_id")


def test_later_messages_of_one_letta_id_are_numbered() -> None:
    assert [part_id("toolu_1", n) for n in (1, 2, 3)] == ["toolu_1", "toolu_1.2", "toolu_1.3"]
    assert part_id("assistant:m", 2) == "x.assistant_3Am.2" and to_letta_id("x.assistant_3Am.2") == "assistant:m.2"


# --------------------------------------------------------------------- conversations

def lines(*rows: object) -> list[bytes]:
    return [(row if isinstance(row, str) else json.dumps(row)).encode() + b"\n" for row in rows]


def row(kind: str, line_id: str, message_id: str | None = None, **fields: object) -> dict[str, object]:
    found = {"kind": kind, "captured_at": AT, "source_line_id": line_id, **fields}
    return {**found, "source_message_id": message_id} if message_id else found


TURN = lines(
    row("user", "user-o1", "message-u1", text="I moved to Lyon."),
    row("reasoning", "message-a1", "message-a1", text="They moved."),
    row("assistant", "assistant:message-a1", "message-a1", text="Noted."),
    row("tool_call", "toolu_1", name="Bash", argsText="{}", resultText="ok", resultOk=True),
    row("error", "err-1", text="Stream error"),
    "",
    row("user", "user-o1", "message-u1", text="I moved to Lyon."),
    row("event", "e-1"),
)


def ids_of(reading: object) -> list[tuple[str, str, str]]:
    return [(m.message_id, m.kind, m.source) for m in reading.messages]  # type: ignore[attr-defined]


def test_a_conversation_keeps_letta_ids_in_order_and_counts_what_it_skips() -> None:
    reading = read_conversation("agent-1", "conv-1", TURN, IMPORTED)
    assert ids_of(reading) == [("message-u1", "user", "user"), ("message-a1", "reasoning", "agent"),
                               ("message-a1.2", "assistant", "agent"), ("toolu_1", "tool_call", "agent"),
                               ("toolu_1.2", "tool_result", "tool:Bash")]
    assert reading.skipped == {ERROR: 1, REPEATED: 1, UNKNOWN + "event": 1} and reading.problems == []
    first = reading.messages[0]
    assert (first.agent_id, first.conversation_id, first.captured_at, first.imported_at, first.text) == \
        ("agent-1", "conv-1", STORED_AT, IMPORTED, "I moved to Lyon.")


def test_only_lines_after_start_give_messages_but_ids_count_from_the_first() -> None:
    start = sum(len(line) for line in TURN[:2])
    reading = read_conversation("agent-1", "conv-1", TURN, IMPORTED, start)
    assert [m.message_id for m in reading.messages] == ["message-a1.2", "toolu_1", "toolu_1.2"]
    assert reading.skipped == {ERROR: 1, REPEATED: 1, UNKNOWN + "event": 1}


def test_every_bad_line_is_a_problem_naming_its_line() -> None:
    rows = lines(row("user", "a", text="fine"), "{not json", row("user", "b", text="nul \x00 inside"),
                 row("user", "d", "a", text="a's second message: a.2"), row("user", "e", "a.2", text="a.2 again"))
    reading = read_conversation("agent-1", "conv-1", [*rows, b"\xff\n"], IMPORTED)
    assert reading.problems == [
        "line 2: not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
        "line 3: text contains a NUL character; transcripts hold text, not binary data",
        "line 5: message id a.2 is already an earlier message's in this conversation",
        "line 6: not valid UTF-8",
    ]


def test_skipped_rows_are_listed_by_why() -> None:
    assert skipped_text({}) == ""
    assert skipped_text({ERROR: 2, EMPTY: 1, UNKNOWN + "event": 1, NO_KIND: 1}) == \
        "; rows skipped: 2 error rows (Letta Code's own errors), 1 row without text, 1 row without a kind, " \
        "1 row of unknown kind 'event'"


# ---------------------------------------------------------------------- what changed

PREFIX = b'{"kind":"user"}\n'


@pytest.mark.parametrize("cursor, data, expected", [
    (None, PREFIX, (NEW, 0)),
    (Cursor(len(PREFIX), "0" * 64), PREFIX, (CHANGED, 0)),
    (Cursor(len(PREFIX) + 1, "0" * 64), PREFIX, (SHRANK, 0)),
])
def test_a_transcript_that_is_new_cut_or_rewritten_is_read_from_the_start(
        cursor: Cursor | None, data: bytes, expected: tuple[str, int]) -> None:
    assert change(cursor, data) == expected


def test_a_transcript_that_only_grew_is_read_from_where_the_last_import_stopped() -> None:
    import hashlib

    cursor = Cursor(len(PREFIX), hashlib.sha256(PREFIX).hexdigest())
    assert change(cursor, PREFIX) == (UNCHANGED, len(PREFIX))
    assert change(cursor, PREFIX + PREFIX) == (GREW, len(PREFIX))


def test_only_lines_ending_in_a_newline_are_complete() -> None:
    assert complete_lines(b'{"a":1}\n\n{"b":2}\n{"c"') == [b'{"a":1}\n', b"\n", b'{"b":2}\n']
    assert complete_lines(b"") == []


# --------------------------------------------------------------------------- folders

def test_path_may_be_the_root_an_agent_or_a_conversation(tmp_path: Path) -> None:
    for folder in ("agent-a/conv-1", "agent-a/conv-2", "agent-b/default"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "transcript.jsonl").write_text("")
    (tmp_path / "agent-a/multi-reflection-payloads").mkdir()
    (tmp_path / "agent-a/conv-3").mkdir()  # no transcript yet
    everything = [tmp_path / "agent-a/conv-1", tmp_path / "agent-a/conv-2", tmp_path / "agent-b/default"]
    assert conversation_folders(tmp_path) == everything
    assert conversation_folders(tmp_path / "agent-a") == everything[:2]
    assert conversation_folders(tmp_path / "agent-a/conv-2") == [everything[1]]
    assert conversation_folders(tmp_path / "agent-a/conv-3") == []


def test_the_default_root_is_letta_codes_own() -> None:
    assert default_root({"LETTA_TRANSCRIPT_ROOT": " /srv/letta \n"}) == Path("/srv/letta")
    assert default_root({"LETTA_TRANSCRIPT_ROOT": " "}) == Path.home() / ".letta" / "transcripts"
