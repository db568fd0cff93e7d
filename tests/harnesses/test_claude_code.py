"""`memrepo claude-code install` / `uninstall` and its hooks, without Claude Code itself
(tests/claude_code_conformance runs the real CLI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.claude_code.transcript import project_folder_name
from bot.memfs.store.repo import MemoryRepo
from bot.transcript import TranscriptStore
from tests.conftest import git, run_cli

HOOK = [sys.executable, "-m", "bot.claude_code.hook"]


def compiled(capsys: pytest.CaptureFixture[str], root: Path) -> str:
    code, out, _ = run_cli(capsys, "compile", "--repo", str(root))
    assert code == 0
    return out.rstrip("\n")


def hook(event: str, root: Path, session: str = "s-1", source: str = "startup") -> subprocess.CompletedProcess[str]:
    payload = {"session_id": session, "transcript_path": "/nowhere.jsonl", "cwd": str(root),
               "hook_event_name": "SessionStart" if event == "session-start" else "UserPromptSubmit",
               "source": source, "prompt": "hi"}
    return subprocess.run([*HOOK, event, "--repo", str(root)], input=json.dumps(payload), capture_output=True,
                          text=True, timeout=60)


def context(done: subprocess.CompletedProcess[str], event: str) -> str:
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    assert output["hookSpecificOutput"]["hookEventName"] == event
    return output["hookSpecificOutput"]["additionalContext"]


def commit_line(root: Path, line: str) -> None:
    with (root / "system" / "human.md").open("a") as handle:
        handle.write(f"- {line}\n")
    git(root, "commit", "-qam", f"Remember {line}")


def read(path: Path) -> dict:
    return json.loads(path.read_text())


def test_session_start_adds_the_core_memory_as_compile_prints_it(memory: MemoryRepo,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    expected = compiled(capsys, memory.root)
    for source in ("startup", "resume", "clear", "compact"):
        assert context(hook("session-start", memory.root, source=source), "SessionStart") == expected


def test_a_prompt_adds_the_memory_only_when_head_moved_since_the_session_saw_it(
        memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    root = memory.root
    context(hook("session-start", root), "SessionStart")
    quiet = hook("prompt", root)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    commit_line(root, "prefers tea")
    added = context(hook("prompt", root), "UserPromptSubmit")
    assert "prefers tea" in added and compiled(capsys, root) in added
    assert hook("prompt", root).stdout == ""  # seen now
    assert "prefers tea" in context(hook("prompt", root, session="s-2"), "UserPromptSubmit")  # another session
    state = root / ".git" / "memrepo" / "claude-code" / "s-1.json"
    assert read(state)["head"] == git(root, "rev-parse", "HEAD").strip()


def test_nothing_moved_imports_no_compiler(memory: MemoryRepo) -> None:
    context(hook("session-start", memory.root), "SessionStart")
    probe = ("import io, json, sys; sys.stdin = io.StringIO(json.dumps({'session_id': 's-1'})); "
             "from bot.claude_code import hook; code = hook.run('prompt', sys.argv[1]); "
             "print(code, sorted(m for m in sys.modules if m.startswith(('bot.', 'pygit2', 'git', 'yaml'))))")
    done = subprocess.run([sys.executable, "-c", probe, str(memory.root)], capture_output=True, text=True)
    loaded = ("0 ['bot.claude_code', 'bot.claude_code.hook', 'bot.claude_code.state', 'bot.memfs', 'bot.memfs.store', "
              "'bot.memfs.store.refs']")
    assert done.stdout.split("\n")[0] == loaded


def test_a_hook_that_compiles_loads_no_git_library(memory: MemoryRepo) -> None:
    """session-start compiles through the git command: the hook imports the core's leaves, not its
    door, so neither libgit2 nor the rest of the core (tool, sync, history) is loaded (the shared
    memories' record is read, a projection opened only when one is attached)."""
    probe = ("import io, json, sys; sys.stdin = io.StringIO(json.dumps({'session_id': 's-1'})); "
             "from bot.claude_code import hook; code = hook.run('session-start', sys.argv[1]); "
             "print(code, sorted(m for m in sys.modules if m.startswith(('pygit2', 'git', 'bot.memfs.tool', "
             "'bot.memfs.sync', 'bot.memfs.history', 'bot.memfs.shared.projection', 'bot.memfs.store.repo'))))")
    done = subprocess.run([sys.executable, "-c", probe, str(memory.root)], capture_output=True, text=True)
    assert done.stdout.splitlines()[-1] == "0 []", done.stderr


def test_a_prompt_adds_the_memory_again_when_an_attached_shared_memorys_head_moved(
        memory: MemoryRepo, tmp_path: Path) -> None:
    from bot.memfs import shared_projection as shared
    from bot.memfs import sync
    from bot.memfs.create import init_repository

    bare = tmp_path / "team.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    team = init_repository(tmp_path / "team", "t0", "Team")
    sync.set_remote(team, str(bare))
    assert sync.push(team).pushed
    shared.attach(memory, str(bare))
    root = memory.root
    assert "<shared_memory>" in context(hook("session-start", root), "SessionStart")
    assert hook("prompt", root).stdout == ""
    # A merge on the team's main, brought into the projection (by follow, a session, a sync):
    # the agent's own HEAD has not moved, the prompt it sees has.
    (team.root / "runbook.md").write_text("---\ndescription: How we deploy on Tuesdays.\n---\n- Tuesdays\n")
    git(team.root, "add", "-A")
    git(team.root, "commit", "-q", "--no-verify", "-m", "runbook")
    git(team.root, "push", "-q", "origin", "main")
    assert all(done.ok for done in shared.sync_all(memory))
    added = context(hook("prompt", root), "UserPromptSubmit")
    assert "runbook.md — How we deploy on Tuesdays." in added
    assert hook("prompt", root).stdout == ""  # seen now
    probe = ("import io, json, sys; sys.stdin = io.StringIO(json.dumps({'session_id': 's-1'})); "
             "from bot.claude_code import hook; code = hook.run('prompt', sys.argv[1]); "
             "print(code, sorted(m for m in sys.modules if m.startswith(('bot.', 'pygit2', 'git', 'yaml'))))")
    done = subprocess.run([sys.executable, "-c", probe, str(root)], capture_output=True, text=True)
    loaded = ("0 ['bot.claude_code', 'bot.claude_code.hook', 'bot.claude_code.state', 'bot.memfs', "
              "'bot.memfs.store', 'bot.memfs.store.refs']")
    assert done.stdout.split("\n")[0] == loaded  # nothing moved: still nothing but the ref files read


def test_a_hook_problem_is_said_and_never_blocks_the_prompt(tmp_path: Path) -> None:
    done = hook("session-start", tmp_path)
    assert done.returncode == 1 and done.stdout == "" and "memrepo claude-code hook" in done.stderr


def test_the_hook_command_of_memrepo_gives_the_same_answer(memory: MemoryRepo,
                                                             capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"session_id": "s-9", "source": "startup"})))
    code, out, _ = run_cli(capsys, "claude-code", "hook", "session-start", "--repo", str(memory.root))
    assert code == 0
    assert json.loads(out)["hookSpecificOutput"]["additionalContext"] == compiled(capsys, memory.root)


def install(capsys: pytest.CaptureFixture[str], root: Path, project: Path, *options: str) -> tuple[int, str, str]:
    return run_cli(capsys, "claude-code", "install", "--repo", str(root), "--project", str(project), *options)


def test_install_writes_the_server_hooks_and_permission(memory: MemoryRepo, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    code, out, err = install(capsys, memory.root, project)
    assert (code, err) == (0, "") and ".mcp.json" in out and "settings.local.json" in out
    server = read(project / ".mcp.json")["mcpServers"]["memrepo"]
    assert server["args"][-4:] == ["mcp", "--claude-code", "--repo", str(memory.root)]
    done = subprocess.run([server["command"], *server["args"][:-2], "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "CLAUDE_CODE_SESSION_ID" in done.stdout
    local = read(project / ".claude" / "settings.local.json")
    assert local["permissions"]["allow"] == ["mcp__memrepo"]
    assert local["enabledMcpjsonServers"] == ["memrepo"]
    assert local["env"] == {"MCP_CONNECTION_NONBLOCKING": "false"}  # the first request has the memory's tools
    assert local["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    for event, name in (("SessionStart", "session-start"), ("UserPromptSubmit", "prompt")):
        command = local["hooks"][event][0]["hooks"][0]["command"]
        done = subprocess.run(command, shell=True, input=json.dumps({"session_id": f"x-{name}"}),
                              capture_output=True, text=True)
        assert done.returncode == 0 and "<memory>" in done.stdout
    claude = tmp_path / "claude"
    session = claude / "projects" / project_folder_name(str(project)) / "s-1.jsonl"
    session.parent.mkdir(parents=True)
    session.write_text(json.dumps({"type": "user", "uuid": "u1", "timestamp": "2026-12-03T10:00:00Z",
                                   "message": {"role": "user", "content": "hello"}}) + "\n")
    for event in ("Stop", "SessionEnd"):
        command = local["hooks"][event][0]["hooks"][0]["command"]
        done = subprocess.run(command, shell=True, capture_output=True, text=True,
                              input=json.dumps({"session_id": "s-1", "transcript_path": str(session),
                                                "cwd": str(project)}),
                              env={**os.environ, "MEMREPO_HOME": str(tmp_path / "home"),
                                   "CLAUDE_CONFIG_DIR": str(claude)})
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert [m.text for m in TranscriptStore(tmp_path / "home").read("a1", "s-1")] == ["hello"]


def test_install_brings_an_earlier_installs_server_up_to_date(memory: MemoryRepo, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    earlier = {"type": "stdio", "command": sys.executable, "args": ["-m", "bot.cli", "mcp", "--repo", "/old"]}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"memrepo": earlier}}))
    install(capsys, memory.root, tmp_path)
    assert read(tmp_path / ".mcp.json")["mcpServers"]["memrepo"]["args"][-4:] == \
        ["mcp", "--claude-code", "--repo", str(memory.root)]


def test_install_again_changes_nothing(memory: MemoryRepo, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    install(capsys, memory.root, tmp_path)
    files = [tmp_path / ".mcp.json", tmp_path / ".claude" / "settings.local.json"]
    before = [(f.read_bytes(), f.stat().st_mtime_ns) for f in files]
    code, out, _ = install(capsys, memory.root, tmp_path)
    assert code == 0 and "nothing changed" in out
    assert [(f.read_bytes(), f.stat().st_mtime_ns) for f in files] == before


def test_install_keeps_a_users_own_settings_and_uninstall_takes_out_only_its_own(
        memory: MemoryRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine_mcp = {"mcpServers": {"other": {"command": "other-server"}}, "extra": 1}
    mine_local = {"permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(./.env)"]}, "env": {"DEBUG": "1"},
                  "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo mine"}]}],
                            "Stop": [{"hooks": [{"type": "command", "command": "echo stop"}]}]},
                  "enabledMcpjsonServers": ["other"], "model": "opus"}
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".mcp.json").write_text(json.dumps(mine_mcp))
    (tmp_path / ".claude" / "settings.local.json").write_text(json.dumps(mine_local))
    install(capsys, memory.root, tmp_path)
    local = read(tmp_path / ".claude" / "settings.local.json")
    assert local["permissions"] == {"allow": ["Bash(ls:*)", "mcp__memrepo"], "deny": ["Read(./.env)"]}
    assert local["hooks"]["UserPromptSubmit"][0] == mine_local["hooks"]["UserPromptSubmit"][0]
    assert len(local["hooks"]["UserPromptSubmit"]) == 2 and local["hooks"]["Stop"][0] == mine_local["hooks"]["Stop"][0]
    assert local["enabledMcpjsonServers"] == ["other", "memrepo"] and local["model"] == "opus"
    assert read(tmp_path / ".mcp.json")["mcpServers"]["other"] == {"command": "other-server"}
    code, out, _ = run_cli(capsys, "claude-code", "uninstall", "--project", str(tmp_path))
    assert code == 0
    assert read(tmp_path / ".mcp.json") == mine_mcp
    assert read(tmp_path / ".claude" / "settings.local.json") == mine_local
    code, out, _ = run_cli(capsys, "claude-code", "uninstall", "--project", str(tmp_path))
    assert code == 0 and "nothing changed" in out


def test_uninstall_removes_the_files_install_made(memory: MemoryRepo, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    install(capsys, memory.root, tmp_path)
    run_cli(capsys, "claude-code", "uninstall", "--project", str(tmp_path))
    assert not (tmp_path / ".mcp.json").exists() and not (tmp_path / ".claude" / "settings.local.json").exists()


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"hooks": []}'])
def test_an_unreadable_settings_file_stops_install_before_anything_is_written(
        memory: MemoryRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.local.json").write_text(text)
    code, _, err = install(capsys, memory.root, tmp_path)
    assert code == 1 and "settings.local.json" in err and "nothing was changed" in err
    assert not (tmp_path / ".mcp.json").exists()
    assert (tmp_path / ".claude" / "settings.local.json").read_text() == text


def test_install_refuses_a_server_named_memrepo_that_is_someone_elses(
        memory: MemoryRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"memrepo": {"command": "npx", "args": ["x"]}}}))
    code, _, err = install(capsys, memory.root, tmp_path)
    assert code == 1 and "uninstall it first" in err
    assert not (tmp_path / ".claude").exists()


def test_install_needs_a_memory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = install(capsys, tmp_path / "none", tmp_path)
    assert code == 1 and "memrepo init" in err


def test_install_with_auto_memory_points_claude_code_into_the_memory_and_uninstall_takes_it_out(
        memory: MemoryRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = install(capsys, memory.root, tmp_path, "--auto-memory")
    assert code == 0 and "auto memory" in out
    local = read(tmp_path / ".claude" / "settings.local.json")
    assert local["autoMemoryDirectory"] == str(memory.root / "auto-memory")
    (group,) = local["hooks"]["PostToolUse"]
    assert group["matcher"] == "Write|Edit|MultiEdit" and "post-tool" in group["hooks"][0]["command"]
    code, out, _ = install(capsys, memory.root, tmp_path, "--auto-memory")
    assert "nothing changed" in out
    run_cli(capsys, "claude-code", "uninstall", "--project", str(tmp_path))
    assert not (tmp_path / ".claude" / "settings.local.json").exists()


@pytest.mark.parametrize("folder", ["..", ".git/x", "."])
def test_auto_memory_outside_the_memory_is_refused(memory: MemoryRepo, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str], folder: str) -> None:
    code, _, err = install(capsys, memory.root, tmp_path, "--auto-memory", folder)
    assert code == 1 and "inside the memory" in err
    assert not (tmp_path / ".mcp.json").exists()


def test_a_users_own_auto_memory_folder_is_not_taken_over(memory: MemoryRepo, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".claude").mkdir()
    mine = {"autoMemoryDirectory": "~/notes"}
    (tmp_path / ".claude" / "settings.local.json").write_text(json.dumps(mine))
    code, _, err = install(capsys, memory.root, tmp_path, "--auto-memory")
    assert code == 1 and "~/notes" in err and "nothing was changed" in err
    assert read(tmp_path / ".claude" / "settings.local.json") == mine
