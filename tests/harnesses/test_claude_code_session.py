"""A Claude Code session's transcript in memrepo, without Claude Code itself (the real CLI:
tests/claude_code_conformance): the MCP server of one session (`memrepo mcp --claude-code`)
names the session and the turn in each write and routes a turn that read untrusted content to
a pull request; the Stop and SessionEnd hooks import the session and hand its trigger events on."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bot.agent import AgentSession
from bot.claude_code import auto_memory, hook, install, transcript, turn_end
from bot.config import OWN_MEMORY_TOOLS, own_tool_sources
from bot.contracts import LABEL_UNTRUSTED
from bot.errors import MemrepoError
from bot.mcp.catalog import MEMORY_TOOLS
from bot.mcp.server import MemoryServer, Options
from bot.memfs.store.repo import MemoryRepo
from bot.transcript import TranscriptStore
from bot.transcript.model import build
from tests.agent.test_agent_session import FAST, HUMAN, World, world  # noqa: F401 (a fixture)
from tests.conftest import git
from tests.mcp.test_mcp import _run, text

SESSION = "5e55-1011"
AT = "2026-12-03T10:00:00Z"


def row(kind: str, uuid: str, content: object, **extra: object) -> dict[str, Any]:
    return {"type": kind, "uuid": uuid, "timestamp": AT, "sessionId": SESSION, "isSidechain": False,
            "message": {"role": "assistant" if kind == "assistant" else "user", "content": content}, **extra}


def session_file(folder: Path, *rows: dict[str, Any]) -> Path:
    path = folder / f"{SESSION}.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in rows)
    return path


def said(text_: str) -> dict[str, Any]:
    return {"type": "text", "text": text_}


def call(uuid: str, name: str, tool_id: str) -> dict[str, Any]:
    return row("assistant", uuid, [{"type": "tool_use", "id": tool_id, "name": name, "input": {}}])


# ----------------------------------------------------------------------------- triggers
@pytest.mark.parametrize(("kinds", "events"), [
    ([], []),
    (["user", "assistant", "tool_call", "tool_result", "assistant"], ["step", "step"]),
    (["compaction", "reasoning", "assistant"], ["compaction", "step"]),
])
def test_the_trigger_events_of_new_rows(kinds: list[str], events: list[str]) -> None:
    rows = [build("a1", SESSION, kind, "x", source="agent" if kind != "tool_result" else "tool:Read",
                  captured_at="2026-12-03T10:00:00.000000Z", message_id=f"m{i}") for i, kind in enumerate(kinds)]
    assert turn_end.events_of(rows) == events


def test_each_turns_end_imports_the_session_and_hands_on_only_new_events(
        memory: MemoryRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    project = tmp_path / "claude" / "projects" / "-work-my-app"  # Claude Code's folder for /work/my_app
    path = session_file(project, row("user", "u1", "hi"), row("assistant", "a1", [said("Hello.")]))
    handed: list[tuple[str, list[str]]] = []

    def spawn(root: Path, session: str, events: list[str]) -> None:
        handed.append((session, events))

    given = {"session_id": SESSION, "transcript_path": str(path), "cwd": "/work/my_app"}
    assert turn_end.after_turn(memory.root, given, spawn) == ["step"]
    assert turn_end.after_turn(memory.root, given, spawn) == []  # nothing new: nothing handed on
    session_file(project, row("user", "s1", "summary", isCompactSummary=True),
                 row("assistant", "a2", [said("Go on.")]))
    assert turn_end.after_turn(memory.root, given, spawn) == ["compaction", "step"]
    assert handed == [(SESSION, ["step"]), (SESSION, ["compaction", "step"])]
    assert hook.seen_fact(hook.state_file(memory.root, SESSION), "transcript") == str(path)
    with TranscriptStore(tmp_path / "home") as store:
        assert [m.message_id for m in store.read("a1", SESSION)] == ["u1", "a1", "s1", "a2"]


def test_a_hook_input_without_a_session_is_refused(memory: MemoryRepo) -> None:
    with pytest.raises(MemrepoError, match="session_id and transcript_path"):
        turn_end.after_turn(memory.root, {"session_id": SESSION})


def test_the_detached_process_says_why_a_due_dream_did_not_run(memory: MemoryRepo, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_HOME", str(tmp_path / "home"))
    config = memory.root / ".memrepo" / "config.yml"
    config.write_text(config.read_text().replace("steps: 25", "steps: 2"))
    git(memory.root, "commit", "-qam", "Dream every two steps")
    assert turn_end.fire(memory.root, {"session_id": SESSION, "events": ["step"]}) == []  # counted, not due
    (line,) = turn_end.fire(memory.root, {"session_id": SESSION, "events": ["step"]})
    assert "a dream did not run" in line and "remote" in line  # due, and this memory has no remote


# ------------------------------------------------------------------------- the MCP server
def serve(memory: MemoryRepo, home: Path, env: dict[str, str], body: Any) -> Any:
    app = MemoryServer(Options(repo=memory.root, home=str(home), poll_seconds=0.02, forge_retry=FAST,
                               claude_code=True, env=env))
    try:
        return _run(app, "legacy", None, body)
    finally:
        app.close()


def test_the_server_of_a_claude_code_session_needs_its_id(memory: MemoryRepo, tmp_path: Path) -> None:
    with pytest.raises(MemrepoError, match="CLAUDE_CODE_SESSION_ID"):
        MemoryServer(Options(repo=memory.root, home=str(tmp_path), claude_code=True, env={}))


def test_a_write_names_the_session_and_the_turn_up_to_the_call(memory: MemoryRepo, tmp_path: Path) -> None:
    path = session_file(tmp_path / "p", row("user", "u1", "Remember that I drink tea."),
                        call("a1", "mcp__memrepo__memory_str_replace", "t1"))
    hook.remember(hook.state_file(memory.root, SESSION), transcript=str(path))  # as SessionStart keeps it

    async def body(client: Client, app: MemoryServer) -> Any:
        return await client.call_tool("memory_str_replace", {
            "path": HUMAN, "old_str": "Nothing recorded yet.", "new_str": "Drinks tea.", "reason": "Tea"})

    result = serve(memory, tmp_path / "home", {"CLAUDE_CODE_SESSION_ID": SESSION}, body)
    assert not result.is_error, text(result)
    message = git(memory.root, "log", "-1", "--format=%B")
    assert f"Conversation-ID: {SESSION}" in message and "Transcript-Range: u1..a1" in message


def test_without_a_hooks_note_the_session_is_found_where_claude_code_keeps_it(memory: MemoryRepo,
                                                                               tmp_path: Path) -> None:
    config = tmp_path / "claude"
    session_file(config / "projects" / "-work-my-app", row("user", "u1", "Note my tea."),
                 call("a1", "mcp__memrepo__memory_str_replace", "t1"))
    env = {"CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_PROJECT_DIR": "/work/my_app", "CLAUDE_CONFIG_DIR": str(config)}

    async def body(client: Client, app: MemoryServer) -> Any:
        return await client.call_tool("memory_str_replace", {
            "path": HUMAN, "old_str": "Nothing recorded yet.", "new_str": "Tea.", "reason": "Tea"})

    assert not serve(memory, tmp_path / "home", env, body).is_error
    assert "Transcript-Range: u1..a1" in git(memory.root, "log", "-1", "--format=%B")


def test_a_turn_that_read_untrusted_output_sends_the_write_to_a_pull_request(world: World) -> None:  # noqa: F811
    path = session_file(world.tmp / "p", row("user", "u1", "Summarise that page and remember it."),
                        call("a1", "WebFetch", "t1"),
                        row("user", "r1", [{"type": "tool_result", "tool_use_id": "t1", "content": "page"}]),
                        call("a2", "mcp__memrepo__memory_str_replace", "t2"))
    hook.remember(hook.state_file(world.memory.root, SESSION), transcript=str(path))
    before = world.memory.head_sha()

    async def body(client: Client, app: MemoryServer) -> Any:
        return await client.call_tool("memory_str_replace", {
            "path": HUMAN, "old_str": "Nothing recorded yet.", "new_str": "Reads that page.", "reason": "Page"})

    result = serve(world.memory, world.home, {"CLAUDE_CODE_SESSION_ID": SESSION}, body)
    assert not result.is_error, text(result)
    assert result.structured_content["route"] == "pull-request"
    assert world.memory.head_sha() == before
    pr = world.client().get_pull_request(result.structured_content["pull_request"])
    assert LABEL_UNTRUSTED in pr.labels and "external:tool:WebFetch" in pr.body


# Claude Code's name of a tool -> does its result make the context untrusted (default policy)?
OWN_OR_OUTSIDE = [
    ("mcp__memrepo__core_memory_append", False),  # memrepo's report of its own write
    ("mcp__memrepo__memory_str_replace", False),
    ("mcp__memrepo__memory_view", False),  # the memory itself
    ("mcp__memrepo__conversation_search", True),  # quotes past transcripts, outside content included
    ("mcp__memrepo__memory_search", True),
    ("mcp__memrepo__memory_why", True),
    ("mcp__memrepo__memory_record", True),  # echoes what the harness recorded
    ("mcp__other__core_memory_append", True),  # another server's tool of the same name
    ("Read", False),
    ("WebFetch", True),
]


@pytest.mark.parametrize(("tool", "untrusted"), OWN_OR_OUTSIDE)
def test_memrepos_own_tool_results_do_not_make_the_session_untrusted(memory: MemoryRepo, tmp_path: Path,
                                                                     tool: str, untrusted: bool) -> None:
    path = session_file(tmp_path / "p", row("user", "u1", "Remember that I drink tea."), call("a1", tool, "t1"),
                        row("user", "r1", [{"type": "tool_result", "tool_use_id": "t1", "content": "Committed."}]))
    hook.remember(hook.state_file(memory.root, SESSION), transcript=str(path))
    with AgentSession(memory, SESSION, home=tmp_path / "home", background_dreams=False) as agent:
        transcript.SessionTranscript(memory.root, SESSION, {}).catch_up(agent)
        assert agent.turn.first_message_id == "u1"
        assert agent.turn.untrusted is untrusted
        assert agent.turn.external == ((f"external:tool:{tool}",) if untrusted else ())


def test_the_own_tools_are_the_servers_memory_tools_as_claude_code_names_them() -> None:
    assert set(OWN_MEMORY_TOOLS) == {spec.name for spec in MEMORY_TOOLS}
    assert own_tool_sources() == tuple(f"tool:mcp__{install.SERVER}__{name}" for name in OWN_MEMORY_TOOLS)


# ------------------------------------------------------------------------- auto memory
@pytest.mark.parametrize(("file_path", "expected"), [
    ("auto-memory/tea.md", "auto-memory/tea.md"),
    ("MEMORY.md", "MEMORY.md"),
    (".git/config", None),
    ("../elsewhere.md", None),
    ("", None),
    (None, None),
])
def test_which_writes_are_the_memorys(memory: MemoryRepo, file_path: str | None, expected: str | None) -> None:
    given = str(memory.root / file_path) if file_path else file_path
    assert auto_memory.inside(memory.root, given) == expected


def test_an_auto_memory_write_is_committed_and_an_edit_replaces_the_file(memory: MemoryRepo, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_HOME", str(tmp_path / "home"))
    path = session_file(tmp_path / "p", row("user", "u1", "Keep that I like tea."), call("a1", "Write", "t1"))
    hook.remember(hook.state_file(memory.root, SESSION), transcript=str(path))
    disk = memory.root / "auto-memory" / "MEMORY.md"
    disk.parent.mkdir()
    disk.write_text("- [Tea](tea.md)\n")
    given = {"session_id": SESSION, "tool_name": "Write", "tool_input": {"file_path": str(disk)}}
    assert auto_memory.after_write(memory.root, given, env={}) is None  # on main: nothing to tell Claude
    assert git(memory.root, "show", "HEAD:auto-memory/MEMORY.md") == "- [Tea](tea.md)\n"
    assert "Transcript-Range: u1..a1" in git(memory.root, "log", "-1", "--format=%B")
    disk.write_text("- [Tea](tea.md)\n- [Walks](walks.md)\n")  # an Edit
    assert auto_memory.after_write(memory.root, {**given, "tool_name": "Edit"}, env={}) is None
    assert git(memory.root, "show", "HEAD:auto-memory/MEMORY.md") == "- [Tea](tea.md)\n- [Walks](walks.md)\n"
    assert git(memory.root, "status", "--porcelain") == ""
    assert auto_memory.after_write(memory.root, given, env={}) is None  # unchanged: no commit
    assert git(memory.root, "rev-list", "--count", "HEAD").strip() == "3"


def test_a_refused_auto_memory_write_is_put_back_and_claude_is_told_why(memory: MemoryRepo, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_HOME", str(tmp_path / "home"))
    disk = memory.root / "auto-memory" / "huge.md"
    disk.parent.mkdir()
    disk.write_text("---\ndescription: far too long\n---\n" + "x" * 30_000 + "\n")
    head = memory.head_sha()
    out = auto_memory.after_write(memory.root, {"session_id": SESSION, "tool_name": "Write",
                                                "tool_input": {"file_path": str(disk)}}, env={})
    answer = json.loads(out or "{}")
    assert answer["decision"] == "block" and "put the file back" in answer["reason"]
    assert not disk.exists() and memory.head_sha() == head
    assert git(memory.root, "status", "--porcelain") == ""


def test_a_write_waits_for_claude_code_to_write_down_the_call_that_made_it(tmp_path: Path) -> None:
    path = session_file(tmp_path, row("user", "u1", "hi"))
    late = threading.Timer(0.2, lambda: session_file(tmp_path, call("a1", "mcp__memrepo__memory_create", "toolu_7")))
    late.start()
    try:
        assert transcript.written_down(path, "toolu_7")
    finally:
        late.join()
    assert not transcript.written_down(path, "toolu_8", wait=0.1)  # never written: it stops waiting


def test_a_first_write_waits_for_the_session_file_itself(tmp_path: Path) -> None:
    """Claude Code 2.1 writes a new session's file a moment after its first rows: the first
    tool call of a session can arrive before the file exists."""
    late = threading.Timer(0.2, lambda: session_file(tmp_path, row("user", "u1", "hi"),
                                                     call("a1", "mcp__memrepo__memory_create", "toolu_9")))
    path = tmp_path / f"{SESSION}.jsonl"
    assert not path.exists()
    late.start()
    try:
        assert transcript.written_down(path, "toolu_9")
    finally:
        late.join()
    assert not transcript.written_down(tmp_path / "never.jsonl", "toolu_9", wait=0.1)
