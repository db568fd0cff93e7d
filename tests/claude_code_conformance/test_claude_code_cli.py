"""The published Claude Code CLI (pinned, tests/claude_code_conformance/claude.py) in a project
after one `memrepo claude-code install`, headless (`claude -p`) against a scripted Messages
endpoint on loopback: what the model receives, what git holds, and what becomes of a session."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from bot.memfs.store.repo import MemoryRepo
from bot.trailers import parse_trailers
from bot.transcript import TranscriptStore
from tests.claude_code_conformance.endpoint import Endpoint
from tests.conftest import git
from tests.harness_cli import MEMREPO, compiled, dreaming_memory, the_dream_pull


def claude_env(home: Path, endpoint: Endpoint) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(home), "ANTHROPIC_BASE_URL": endpoint.url,
            "ANTHROPIC_API_KEY": "sk-scripted", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "ENABLE_TOOL_SEARCH": "false", "GIT_CONFIG_GLOBAL": os.environ["GIT_CONFIG_GLOBAL"],
            "GIT_CONFIG_NOSYSTEM": "1"}


def ask(claude: Path, project: Path, env: dict[str, str], prompt: str, resume: str | None = None) -> dict:
    argv = [str(claude), "-p", prompt, "--output-format", "json", *(["--resume", resume] if resume else [])]
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"claude exited {done.returncode}: {done.stderr or done.stdout}"
    result = json.loads(done.stdout)
    assert not result.get("is_error"), result
    return result


def texts_of(request: dict) -> list[str]:
    """Every text the model is sent in one request: system blocks and message text blocks."""
    found = [b.get("text", "") for b in request.get("system") or [] if isinstance(b, dict)]
    for message in request.get("messages", []):
        content = message.get("content")
        blocks = [{"text": content}] if isinstance(content, str) else content
        found += [b.get("text", "") for b in blocks if isinstance(b, dict)]
    return found


def test_claude_code_sees_its_memory_and_a_change_at_the_next_prompt(claude: Path, memory: MemoryRepo,
                                                                    tmp_path: Path) -> None:
    project, home = installed(memory.root, tmp_path)
    with Endpoint(["Noted."]) as endpoint:
        env = claude_env(home, endpoint)
        first = ask(claude, project, env, "What do you remember about me?")
        requests = endpoint.messages()
        assert len(requests) == 1
        memory_now = compiled(memory.root)
        assert any(memory_now in text for text in texts_of(requests[0])), "core memory is not in the first request"
        tools = {tool.get("name") for tool in requests[0].get("tools", [])}
        assert {"mcp__memrepo__memory_view", "mcp__memrepo__memory_str_replace", "mcp__memrepo__memory_search"} <= tools

        with (memory.root / "system" / "human.md").open("a") as handle:
            handle.write("- Prefers green tea in the afternoon.\n")
        git(memory.root, "commit", "-qam", "Remember the tea")  # a commit reaches the clone
        ask(claude, project, env, "And now?", resume=first["session_id"])
        second = endpoint.messages()[-1]
        moved = [text for text in texts_of(second) if "Prefers green tea" in text]
        assert moved and compiled(memory.root) in moved[-1]

        ask(claude, project, env, "Anything new?", resume=first["session_id"])
        third = endpoint.messages()[-1]
        assert sum("Prefers green tea" in text for text in texts_of(third)) == len(moved)  # not injected again


def installed(memory_root: Path, tmp_path: Path, *options: str) -> tuple[Path, Path]:
    """A project where `memrepo claude-code install` ran for the memory, and Claude Code's HOME."""
    project, home = tmp_path / "project", tmp_path / "claude-home"
    project.mkdir()
    home.mkdir()
    done = subprocess.run([*MEMREPO, "claude-code", "install", "--repo", str(memory_root), "--project", str(project),
                           *options], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return project, home


def test_a_write_names_the_session_and_its_turn_and_why_quotes_the_user(claude: Path, memory: MemoryRepo,
                                                                        tmp_path: Path) -> None:
    project, home = installed(memory.root, tmp_path)
    memrepo_home = tmp_path / "memrepo-home"
    said = "Remember that I drink green tea in the afternoon."
    append = {"name": "mcp__memrepo__core_memory_append", "input": {"label": "human", "content": "Drinks green tea."}}
    with Endpoint([append, "Saved."]) as endpoint:
        env = {**claude_env(home, endpoint), "MEMREPO_HOME": str(memrepo_home)}
        result = ask(claude, project, env, said)
    assert result["permission_denials"] == []
    session = result["session_id"]

    trailers = dict(parse_trailers(git(memory.root, "log", "-1", "--format=%B")))
    assert (trailers["Agent-ID"], trailers["Conversation-ID"]) == ("a1", session)
    first, last = trailers["Transcript-Range"].split("..")
    rows = TranscriptStore(memrepo_home).read("a1", session)
    by_id = {row.message_id: row for row in rows}
    assert (by_id[first].kind, by_id[first].source, by_id[first].text) == ("user", "user", said)
    assert by_id[last].kind == "tool_call" and "core_memory_append" in by_id[last].text  # the call that wrote
    assert (rows[-1].kind, rows[-1].text) == ("assistant", "Saved.")  # the Stop hook imported the turn's end

    line = (memory.root / "system" / "human.md").read_text().splitlines().index("Drinks green tea.") + 1
    why = subprocess.run([*MEMREPO, "why", f"system/human.md:{line}", "--repo", str(memory.root)],
                         capture_output=True, text=True, env={**os.environ, "MEMREPO_HOME": str(memrepo_home)})
    assert why.returncode == 0, why.stderr
    assert said in why.stdout and session in why.stdout


def test_a_session_dreams_into_a_pull_request(claude: Path, localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    world = dreaming_memory(localhub, tmp_path, monkeypatch)
    project, home = installed(world.memory.root, tmp_path)
    said = "I moved to Lisbon last week."
    with Endpoint(["Noted: Lisbon."]) as endpoint:
        session = ask(claude, project, {**claude_env(home, endpoint), "MEMREPO_HOME": str(world.home)},
                      said)["session_id"]

    pull = the_dream_pull(world, localhub, world.memory.root / ".git" / "memrepo" / "claude-code" / f"{session}.log")
    assert pull.head.ref.startswith("memrepo/dream/")  # a dream: its branch says so, with no label
    assert session in pull.body and said in pull.body


def test_claude_codes_auto_memory_in_the_memory_is_committed_with_the_session(claude: Path, memory: MemoryRepo,
                                                                              tmp_path: Path) -> None:
    project, home = installed(memory.root, tmp_path, "--auto-memory")
    folder = memory.root / "auto-memory"
    topic = "---\nname: tea\ndescription: What the user drinks\ntype: user\n---\nDrinks green tea.\n"
    write = {"name": "Write", "input": {"file_path": str(folder / "tea.md"), "content": topic}}
    with Endpoint([write, "Remembered."]) as endpoint:
        env = {**claude_env(home, endpoint), "MEMREPO_HOME": str(tmp_path / "memrepo-home")}
        result = ask(claude, project, env, "Remember that I drink green tea.")
        assert any(str(folder) in text for text in texts_of(endpoint.messages()[0]))  # Claude's memory is there
    assert result["permission_denials"] == []
    assert git(memory.root, "status", "--porcelain") == ""
    committed = git(memory.root, "show", "HEAD:auto-memory/tea.md")
    assert "Drinks green tea." in committed and "description: What the user drinks" in committed
    trailers = dict(parse_trailers(git(memory.root, "log", "-1", "--format=%B")))
    assert trailers["Conversation-ID"] == result["session_id"] and trailers["Transcript-Range"]


def test_a_compacted_session_is_a_compaction_in_the_transcript_and_its_output_not_the_users(
        claude: Path, memory: MemoryRepo, tmp_path: Path) -> None:
    project, home = installed(memory.root, tmp_path)
    memrepo_home = tmp_path / "memrepo-home"
    with Endpoint(["Noted.", "<summary>The user drinks green tea.</summary>"]) as endpoint:
        env = {**claude_env(home, endpoint), "MEMREPO_HOME": str(memrepo_home)}
        session = ask(claude, project, env, "I drink green tea.")["session_id"]
        ask(claude, project, env, "/compact", resume=session)  # SessionEnd imports what it wrote
    rows = TranscriptStore(memrepo_home).read("a1", session)
    (summary,) = [row for row in rows if row.kind == "compaction"]
    assert "The user drinks green tea." in summary.text
    said = [row.text for row in rows if (row.kind, row.source) == ("user", "user")]
    assert said[0] == "I drink green tea." and not any("local-command-stdout" in text for text in said)
