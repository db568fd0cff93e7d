"""The published Codex CLI (pinned, tests/codex_conformance/codex.py) after one
`memrepo codex install`, headless (`codex exec --json`, `codex exec resume`) against a scripted
Responses endpoint on loopback: what the model receives, what git holds, and what becomes of a
session."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from bot.memfs.store.repo import MemoryRepo
from bot.trailers import parse_trailers
from bot.transcript import TranscriptStore
from tests.codex_conformance.endpoint import Endpoint
from tests.conftest import git
from tests.harness_cli import MEMREPO, compiled, dreaming_memory, the_dream_pull

PROVIDER = """\
# the scripted endpoint stands in for OpenAI's
model = "gpt-5"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "{url}"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
"""


def installed(memory_root: Path, tmp_path: Path, endpoint: Endpoint) -> tuple[Path, Path]:
    """A project folder, and a CODEX_HOME whose config.toml names the endpoint and where
    `memrepo codex install` ran for the memory."""
    project, home = tmp_path / "project", tmp_path / "codex-home"
    project.mkdir()
    home.mkdir()
    (home / "config.toml").write_text(PROVIDER.format(url=endpoint.url))
    done = subprocess.run([*MEMREPO, "codex", "install", "--repo", str(memory_root), "--codex-home", str(home)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "# the scripted endpoint stands in for OpenAI's" in (home / "config.toml").read_text()
    return project, home


def codex_env(home: Path, tmp_path: Path, **extra: str) -> dict[str, str]:
    (tmp_path / "user-home").mkdir(exist_ok=True)
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "user-home"), "CODEX_HOME": str(home),
            "SCRIPTED_API_KEY": "sk-scripted", "GIT_CONFIG_GLOBAL": os.environ["GIT_CONFIG_GLOBAL"],
            "GIT_CONFIG_NOSYSTEM": "1", **extra}


def ask(codex: Path, project: Path, env: dict[str, str], prompt: str, resume: str | None = None) -> str:
    """One headless turn; the session (thread) id."""
    argv = [str(codex), "exec", *(["resume", resume] if resume else []), "--json", "--skip-git-repo-check", prompt]
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"codex exited {done.returncode}: {done.stderr or done.stdout}"
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert not [e for e in events if e.get("type") in ("turn.failed", "error")], events
    (thread,) = [e["thread_id"] for e in events if e.get("type") == "thread.started"]
    return thread


def texts_of(request: dict) -> list[str]:
    """Every text the model is sent in one request's input items."""
    return [part.get("text", "") for item in request.get("input", []) if isinstance(item, dict)
            for part in item.get("content") or [] if isinstance(part, dict)]


def test_codex_sees_its_memory_and_tools_first_and_a_change_once_at_the_next_prompt(
        codex: Path, memory: MemoryRepo, tmp_path: Path) -> None:
    with Endpoint(["Noted."]) as endpoint:
        project, home = installed(memory.root, tmp_path, endpoint)
        env = codex_env(home, tmp_path)
        session = ask(codex, project, env, "What do you remember about me?")
        (first,) = endpoint.responses()
        memory_now = compiled(memory.root)
        assert sum(memory_now in text for text in texts_of(first)) == 1, "core memory is not in the first request once"
        namespaces = {tool["name"]: tool for tool in first["tools"] if tool.get("type") == "namespace"}
        names = {tool["name"] for tool in namespaces["mcp__memrepo"]["tools"]}
        assert {"memory_view", "memory_str_replace", "memory_search", "core_memory_append"} <= names

        with (memory.root / "system" / "human.md").open("a") as handle:
            handle.write("- Prefers green tea in the afternoon.\n")
        git(memory.root, "commit", "-qam", "Remember the tea")  # a commit reaches the clone
        assert ask(codex, project, env, "And now?", resume=session) == session
        second = endpoint.responses()[-1]
        moved = [text for text in texts_of(second) if "Prefers green tea" in text]
        assert len(moved) == 1 and compiled(memory.root) in moved[0]

        ask(codex, project, env, "Anything new?", resume=session)
        third = endpoint.responses()[-1]
        assert sum("Prefers green tea" in text for text in texts_of(third)) == 1  # not injected again


def test_a_write_names_the_session_and_its_turn_and_the_rollout_is_searchable(
        codex: Path, memory: MemoryRepo, tmp_path: Path) -> None:
    memrepo_home = tmp_path / "memrepo-home"
    said = "Remember that I drink green tea in the afternoon."
    append = {"name": "core_memory_append", "namespace": "mcp__memrepo",
              "arguments": {"label": "human", "content": "Drinks green tea."}}
    with Endpoint([append, "Saved."]) as endpoint:
        project, home = installed(memory.root, tmp_path, endpoint)
        session = ask(codex, project, codex_env(home, tmp_path, MEMREPO_HOME=str(memrepo_home)), said)

    trailers = dict(parse_trailers(git(memory.root, "log", "-1", "--format=%B")))
    assert (trailers["Agent-ID"], trailers["Conversation-ID"]) == ("a1", session)
    first, last = trailers["Transcript-Range"].split("..")
    rows = TranscriptStore(memrepo_home).read("a1", session)
    by_id = {row.message_id: row for row in rows}
    assert (by_id[first].kind, by_id[first].source, by_id[first].text) == ("user", "user", said)
    assert by_id[last].kind == "tool_call" and "core_memory_append" in by_id[last].text  # the call that wrote
    assert (rows[-1].kind, rows[-1].text) == ("assistant", "Saved.")  # the Stop hook imported the turn's end

    line = (memory.root / "system" / "human.md").read_text().splitlines().index("Drinks green tea.") + 1
    mine = {**os.environ, "MEMREPO_HOME": str(memrepo_home)}
    why = subprocess.run([*MEMREPO, "why", f"system/human.md:{line}", "--repo", str(memory.root)],
                         capture_output=True, text=True, env=mine)
    assert why.returncode == 0, why.stderr
    assert said in why.stdout and session in why.stdout
    found = subprocess.run([*MEMREPO, "search", "afternoon tea", "--agent", "a1"], capture_output=True, text=True,
                           env=mine)
    assert found.returncode == 0, found.stderr
    assert session in found.stdout


def test_a_codex_session_dreams_into_a_pull_request(codex: Path, localhub, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    world = dreaming_memory(localhub, tmp_path, monkeypatch)
    said = "I moved to Lisbon last week."
    with Endpoint(["Noted: Lisbon."]) as endpoint:
        project, home = installed(world.memory.root, tmp_path, endpoint)
        session = ask(codex, project, codex_env(home, tmp_path, MEMREPO_HOME=str(world.home)), said)

    pull = the_dream_pull(world, localhub, world.memory.root / ".git" / "memrepo" / "codex" / f"{session}.log")
    assert pull.head.ref.startswith("memrepo/dream/")  # a dream: its branch says so, with no label
    assert session in pull.body and said in pull.body


def test_an_install_for_one_trusted_project_serves_that_project_only(codex: Path, memory: MemoryRepo,
                                                                     tmp_path: Path) -> None:
    project, other, home = tmp_path / "project", tmp_path / "other", tmp_path / "codex-home"
    for folder in (project, other, home):
        folder.mkdir()
    with Endpoint(["Noted."]) as endpoint:
        (home / "config.toml").write_text(PROVIDER.format(url=endpoint.url)
                                          + f'\n[projects."{project}"]\ntrust_level = "trusted"\n')
        done = subprocess.run([*MEMREPO, "codex", "install", "--repo", str(memory.root), "--codex-home", str(home),
                               "--project", str(project)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "is a trusted project" in done.stdout
        assert "memrepo" not in tomllib.loads((home / "config.toml").read_text()).get("mcp_servers", {})
        env = codex_env(home, tmp_path)
        ask(codex, project, env, "What do you remember about me?")
        ask(codex, other, env, "And here?")
        inside, outside = endpoint.responses()
    memory_now = compiled(memory.root)
    assert any(memory_now in text for text in texts_of(inside))
    assert "mcp__memrepo" in {tool.get("name") for tool in inside["tools"]}
    assert not any(memory_now in text for text in texts_of(outside))
    assert "mcp__memrepo" not in {tool.get("name") for tool in outside["tools"]}
