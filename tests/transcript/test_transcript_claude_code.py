"""Claude Code's session rows as memrepo messages (bot/transcript/claude_code.py), and the
incremental import of session files (bot/transcript/claude_code_import.py). The row shapes are
those Claude Code 2.1.332 writes (the real CLI's sessions are imported in
tests/claude_code_conformance)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.errors import MemrepoError
from bot.transcript import TranscriptStore
from bot.transcript.claude_code import META, OWN, SIDECHAIN_MARK, read_row, read_session
from bot.transcript.claude_code_import import default_root, import_claude_code, session_files

AT = "2026-12-03T15:19:06.480Z"
SESSION = "938c0bfd-070f-4553-8ce3-6e038d79b6fa"


def row(kind: str, uuid: str, content: object, **extra: object) -> dict:
    role = "assistant" if kind == "assistant" else "user"
    return {"parentUuid": None, "isSidechain": False, "type": kind, "uuid": uuid, "timestamp": AT,
            "sessionId": SESSION, "message": {"role": role, "content": content}, **extra}


def said(value: object, tools: dict | None = None) -> list[tuple[str, str, str]] | str:
    found = read_row(value, {} if tools is None else tools)
    return found if isinstance(found, str) else [(s.kind, s.source, s.text) for s in found.said]


@pytest.mark.parametrize(("value", "expected"), [
    (row("user", "u1", "remember I like tea"), [("user", "user", "remember I like tea")]),
    (row("user", "u1", [{"type": "text", "text": "two"}, {"type": "image", "source": {}}]), [("user", "user", "two")]),
    (row("assistant", "a1", [{"type": "thinking", "thinking": "hm", "signature": "s"},
                             {"type": "text", "text": "Saved."}]),
     [("reasoning", "agent", "hm"), ("assistant", "agent", "Saved.")]),
    (row("assistant", "a1", [{"type": "tool_use", "id": "toolu_1", "name": "mcp__memrepo__memory_view",
                              "input": {"path": "system"}}]),
     [("tool_call", "agent", 'mcp__memrepo__memory_view({"path": "system"})')]),
    (row("user", "u1", "summary of before", isCompactSummary=True), [("compaction", "agent", "summary of before")]),
    (row("user", "u1", "Caveat: local command output", isMeta=True), META),
    (row("user", "u1", "<task-notification>found it</task-notification>",
         origin={"kind": "task-notification", "producer": "session-task"}),
     [("tool_result", "tool:task-notification", "<task-notification>found it</task-notification>")]),
    (row("user", "u1", "typed", origin={"kind": "user"}), [("user", "user", "typed")]),
    (row("user", "u1", "<local-command-stdout>Compacted</local-command-stdout>"),
     [("tool_result", "tool:local-command", "<local-command-stdout>Compacted</local-command-stdout>")]),
    ({"type": "attachment", "uuid": "x", "attachment": {"type": "hook_success"}}, OWN),
    ({"type": "last-prompt", "lastPrompt": "hi", "sessionId": SESSION}, OWN),
    ({"type": "system", "subtype": "compact_boundary", "uuid": "b", "content": "Conversation compacted"}, OWN),
    (row("assistant", "a1", [{"type": "text", "text": "  "}]), "empty"),
])
def test_rows_become_messages(value: object, expected: object) -> None:
    assert said(value) == expected


def test_a_tool_result_is_from_the_tool_that_was_called_and_untrusted_by_name() -> None:
    tools: dict[str, str] = {}
    said(row("assistant", "a1", [{"type": "tool_use", "id": "toolu_9", "name": "WebFetch", "input": {}}]), tools)
    result = row("user", "u2", [{"type": "tool_result", "tool_use_id": "toolu_9",
                                 "content": [{"type": "text", "text": "page text"}]}])
    assert said(result, tools) == [("tool_result", "tool:WebFetch", "page text")]
    failed = row("user", "u3", [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "timed out",
                                 "is_error": True}])
    assert said(failed, tools) == [("tool_result", "tool:WebFetch", "Error: timed out")]
    assert said(row("user", "u4", [{"type": "tool_result", "tool_use_id": "nobody", "content": "x"}])) == \
        [("tool_result", "tool:unknown", "x")]


def test_a_subagents_rows_are_marked_and_its_prompt_is_not_the_users() -> None:
    value = row("user", "s1", "look for the config", isSidechain=True)
    assert said(value) == [("user", "agent", SIDECHAIN_MARK + "look for the config")]


def test_a_sessions_subagent_files_are_imported_into_its_conversation_marked(tmp_path: Path) -> None:
    path = write_session(tmp_path / "p", row("user", "u1", "find the config"))
    write_session(tmp_path / "p" / SESSION / "subagents", row("user", "s1", "Look for the config file."),
                  row("assistant", "s2", [{"type": "text", "text": "In etc/."}]), session="agent-a65d")
    with TranscriptStore(tmp_path / "home") as store:
        assert import_claude_code(store, "ag", path).imported == 3
        rows = [(m.message_id, m.kind, m.source, m.text) for m in store.read("ag", SESSION)]
        assert rows == [("u1", "user", "user", "find the config"),
                        ("s1", "user", "agent", SIDECHAIN_MARK + "Look for the config file."),
                        ("s2", "assistant", "agent", SIDECHAIN_MARK + "In etc/.")]
        assert import_claude_code(store, "ag", path).imported == 0


@pytest.mark.parametrize(("value", "problem"), [
    ([], "JSON object"),
    (row("user", "", "x"), "uuid"),
    ({**row("user", "u1", "x"), "timestamp": "yesterday-ish"}, "timestamp"),
    ({**row("user", "u1", "x"), "message": "text"}, "message"),
    (row("user", "u1", 7), "message.content"),
    (row("user", "bad id/../x", "x"), "bad id"),
])
def test_a_row_claude_code_would_not_write_is_refused_with_what_is_wrong(value: object, problem: str) -> None:
    with pytest.raises(MemrepoError, match=problem):
        read_row(value, {})


def lines(*rows: dict) -> list[bytes]:
    return [json.dumps(r).encode() + b"\n" for r in rows]


def test_a_session_numbers_the_messages_of_one_row_and_reads_only_from_start() -> None:
    first = lines(row("user", "u1", "hi"),
                  row("assistant", "a1", [{"type": "text", "text": "let me look"},
                                          {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]))
    later = lines(row("user", "u2", [{"type": "tool_result", "tool_use_id": "t1", "content": "file"}]))
    whole = read_session("ag", SESSION, first + later, AT)
    assert [m.message_id for m in whole.messages] == ["u1", "a1", "a1.2", "u2"]
    assert whole.messages[-1].source == "tool:Read"
    tail = read_session("ag", SESSION, first + later, AT, start=sum(map(len, first)))
    assert [(m.message_id, m.source) for m in tail.messages] == [("u2", "tool:Read")]  # its tool named from before


def test_a_bad_line_is_a_problem_naming_it_and_unparsed_lines_before_start_are_not() -> None:
    reading = read_session("ag", SESSION, [b"{not json\n", *lines(row("user", "u1", "hi")), b"[1]\n"], AT)
    assert [p.split(":")[0] for p in reading.problems] == ["line 1", "line 3"]
    assert read_session("ag", SESSION, [b"{not json\n", *lines(row("user", "u1", "hi"))], AT, start=10).problems == []


@given(st.lists(st.sampled_from(["user", "assistant", "attachment", "last-prompt"]), max_size=12))
def test_every_conversation_row_gives_messages_with_its_uuid_and_others_are_counted(kinds: list[str]) -> None:
    rows = [row(k, f"r{i}", "text" if k == "user" else [{"type": "text", "text": "reply"}])
            if k in ("user", "assistant") else {"type": k, "uuid": f"r{i}"} for i, k in enumerate(kinds)]
    reading = read_session("ag", SESSION, lines(*rows), AT)
    spoken = [f"r{i}" for i, k in enumerate(kinds) if k in ("user", "assistant")]
    assert [m.message_id for m in reading.messages] == spoken
    assert sum(reading.skipped.values()) == len(kinds) - len(spoken)


# ----------------------------------------------------------------------------- the import

def write_session(folder: Path, *rows: dict, session: str = SESSION) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    with path.open("ab") as handle:
        handle.writelines(lines(*rows))
    return path


def test_an_import_takes_what_is_new_once_and_keeps_claudes_ids(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-work-app"
    path = write_session(project, row("user", "u1", "I drink green tea"))
    with TranscriptStore(tmp_path / "home") as store:
        report = import_claude_code(store, "ag", path)
        assert (report.conversations, report.imported) == (1, 1)
        assert import_claude_code(store, "ag", path).imported == 0
        write_session(project, row("assistant", "a1", [{"type": "text", "text": "Noted."}]))
        assert import_claude_code(store, "ag", tmp_path / "projects").imported == 1  # the projects folder
        assert [(m.message_id, m.kind) for m in store.read("ag", SESSION)] == [("u1", "user"), ("a1", "assistant")]


def test_an_unfinished_last_line_waits_and_a_bad_line_imports_nothing(tmp_path: Path) -> None:
    path = write_session(tmp_path / "p", row("user", "u1", "hi"))
    with path.open("ab") as handle:
        handle.write(b'{"type": "user", "uuid": "u2"')  # Claude Code still writing it
    with TranscriptStore(tmp_path / "home") as store:
        assert import_claude_code(store, "ag", path).imported == 1
        with path.open("ab") as handle:
            handle.write(b"\n")  # ends as a bad row
        with pytest.raises(MemrepoError, match="nothing was imported"):
            import_claude_code(store, "ag", path)
        assert [m.message_id for m in store.read("ag", SESSION)] == ["u1"]


@pytest.mark.parametrize("name", ["a b.jsonl", "caf\u00e9.jsonl"])
def test_a_file_not_named_for_a_session_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(json.dumps(row("user", "u1", "hi")) + "\n")
    with TranscriptStore(tmp_path / "home") as store, pytest.raises(MemrepoError, match="session"):
        import_claude_code(store, "ag", path)


def test_where_sessions_are_found(tmp_path: Path) -> None:
    assert default_root({"CLAUDE_CONFIG_DIR": str(tmp_path)}) == tmp_path / "projects"
    assert default_root({}) == Path.home() / ".claude" / "projects"
    one = write_session(tmp_path / "projects" / "a", row("user", "u1", "x"))
    two = write_session(tmp_path / "projects" / "b", row("user", "u1", "x"), session="s2")
    assert session_files(tmp_path / "projects") == [one, two]
    assert session_files(tmp_path / "projects" / "b") == [two]


def test_the_command_imports_for_the_memorys_agent_and_says_so(tmp_path: Path, memory) -> None:  # type: ignore[no-untyped-def]
    path = write_session(tmp_path / "p", row("user", "u1", "I drink green tea"))
    argv = [sys.executable, "-m", "bot.cli", "transcript", "import", "--from", "claude-code", str(path),
            "--home", str(tmp_path / "home")]
    done = subprocess.run([*argv, "--repo", str(memory.root)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "imported 1 message from 1 Claude Code session" in done.stdout and "for agent a1" in done.stdout
    lost = subprocess.run([*argv, "--repo", str(tmp_path)], capture_output=True, text=True)
    assert lost.returncode != 0 and "--agent" in lost.stderr and "Traceback" not in lost.stderr
