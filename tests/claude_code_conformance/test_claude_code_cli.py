"""The published Claude Code CLI (pinned, tests/claude_code_conformance/claude.py) in a project
after one `memrepo claude-code install`, headless (`claude -p`) against a scripted Messages
endpoint on loopback: what the model receives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bot.memfs.repo import MemoryRepo
from tests.claude_code_conformance.endpoint import Endpoint
from tests.conftest import git

MEMREPO = [sys.executable, "-m", "bot.cli"]


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


def compiled(root: Path) -> str:
    done = subprocess.run([*MEMREPO, "compile", "--repo", str(root)], capture_output=True, text=True, check=True)
    return done.stdout.rstrip("\n")


def test_claude_code_sees_its_memory_and_a_change_at_the_next_prompt(claude: Path, memory: MemoryRepo,
                                                                    tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "claude-home"
    project.mkdir()
    home.mkdir()
    done = subprocess.run([*MEMREPO, "claude-code", "install", "--repo", str(memory.root), "--project", str(project)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with Endpoint(["Noted."]) as endpoint:
        env = claude_env(home, endpoint)
        first = ask(claude, project, env, "What do you remember about me?")
        requests = endpoint.messages()
        assert len(requests) == 1
        memory_now = compiled(memory.root)
        assert any(memory_now in text for text in texts_of(requests[0])), "core memory is not in the first request"

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
