"""Importing memrepo's JSON Lines again never adds a row twice, rows without a message_id too:
such a row's id comes from the row and its place in its conversation (`model.imported_id`),
so a file imported again, or a longer copy of it imported after a shorter one, adds only what
it did not have, and a sentence said twice is kept twice."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.transcript import TranscriptStore
from tests.conftest import run_cli

AGENT = "a1"


def row(conversation: str, kind: str, text: str, message_id: str | None = None) -> bytes:
    data = {"agent_id": AGENT, "conversation_id": conversation, "kind": kind, "text": text}
    if message_id is not None:
        data["message_id"] = message_id
    return json.dumps(data).encode()


def stored(store: TranscriptStore) -> dict[str, list[tuple[str, str, str]]]:
    if AGENT not in store.agents():
        return {}
    return {c: [(m.message_id, m.kind, m.text) for m in store.read(AGENT, c)] for c in store.conversations(AGENT)}


def fresh_store(folder: str) -> TranscriptStore:
    return TranscriptStore(folder, fsync=False, clock=lambda: datetime(2026, 3, 14, 9, 0, tzinfo=UTC))


ROWS = st.lists(st.tuples(st.sampled_from(["c1", "c2"]), st.sampled_from(["user", "assistant"]),
                          st.sampled_from(["yes", "I live in Berlin.", "ok"]),
                          st.one_of(st.none(), st.sampled_from(["m-1", "m-2"]))),
                min_size=1, max_size=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=ROWS, cuts=st.lists(st.integers(0, 12), max_size=4))
def test_imports_of_parts_of_a_file_and_the_file_again_store_what_one_import_does(
        rows: list[tuple[str, str, str, str | None]], cuts: list[int]) -> None:
    lines = [row(*r) for r in rows]
    with tempfile.TemporaryDirectory() as once_home, tempfile.TemporaryDirectory() as parts_home:
        with fresh_store(once_home) as once:
            once.import_lines(lines)
            expected = stored(once)
        with fresh_store(parts_home) as parts:
            for cut in [*cuts, len(lines)]:  # shorter copies (a file that grew), then the whole file
                parts.import_lines(lines[:cut])
            again = parts.import_lines(lines)
            assert again.imported == 0
            assert stored(parts) == expected
    without_id = [r for r in rows if r[3] is None]
    assert sum(len(v) for v in expected.values()) >= len(without_id)  # a sentence said twice stays twice


def test_the_same_sentence_said_twice_is_two_rows_and_importing_again_adds_none(tmp_path: Path) -> None:
    lines = [row("c1", "user", "yes"), row("c1", "assistant", "Noted."), row("c1", "user", "yes")]
    with fresh_store(str(tmp_path)) as store:
        assert store.import_lines(lines).imported == 3
        assert store.import_lines(lines).imported == 0
        assert store.import_lines([*lines, row("c1", "assistant", "Done.")]).imported == 1
        assert [m.text for m in store.read(AGENT, "c1")] == ["yes", "Noted.", "yes", "Done."]


def test_transcript_import_of_a_file_twice_reports_nothing_new(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "chat.jsonl"
    file.write_bytes(b"\n".join([row("c1", "user", "I live in Berlin."), row("c1", "assistant", "Noted.")]) + b"\n")
    home = str(tmp_path / "home")
    code, out, _ = run_cli(capsys, "transcript", "import", str(file), "--home", home)
    assert code == 0 and out.startswith("imported 2 ")
    code, out, _ = run_cli(capsys, "transcript", "import", str(file), "--home", home)
    assert code == 0 and out.startswith("imported 0 ") and "2 duplicate" in out
    assert [m.text for m in TranscriptStore(home).read(AGENT, "c1")] == ["I live in Berlin.", "Noted."]
