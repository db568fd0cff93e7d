"""`memrepo codex install` / `uninstall`, its hooks, `mcp --codex`'s session and the rollout
reader, without Codex itself (tests/codex_conformance runs the real CLI)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from bot.codex.install import hook_trust, trust_key
from bot.codex.transcript import session_of
from bot.memfs.store.repo import MemoryRepo
from bot.transcript import TranscriptStore
from bot.transcript.codex import OWN, read_row
from tests.conftest import run_cli

HOOK = [sys.executable, "-m", "bot.codex.hook"]
USER_CONFIG = """\
# my Codex settings
model = "o3"  # the model I like

[mcp_servers.docs]
command = "docs-server"

[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "notify-send done"

[hooks.state]
"{config}:stop:0:0" = {{ trusted_hash = "sha256:mine" }}
"""


def install(capsys: pytest.CaptureFixture[str], memory: MemoryRepo, home: Path) -> tuple[int, str, str]:
    return run_cli(capsys, "codex", "install", "--repo", str(memory.root), "--codex-home", str(home))


def config_of(home: Path) -> dict:
    return tomllib.loads((home / "config.toml").read_text())


@pytest.mark.parametrize(("label", "group", "trusted"), [
    # a hook the published Codex 0.171.0 ran in `codex exec` with this hash recorded (and not without it)
    ("session_start", {"hooks": [{"type": "command",
                                  "command": "/bin/sh -c 'cat > /tmp/cx/hook-$0.json; echo context-from-$0' "
                                             "session_start"}]},
     "sha256:e5fafab735eef60d0edf7b0a696ee012ea1a5ad147aa41418595d0de1f72d14f"),
    ("stop", {"hooks": [{"type": "command",
                         "command": "/bin/sh -c 'cat > /tmp/cx/hook-$0.json; echo context-from-$0' stop"}]},
     "sha256:063d5a0cfa6e80aad2ac87e9022505a0f24ddf59b302afcf582a512fc1a1fb7e"),
])
def test_hook_trust_is_the_hash_codex_records(label: str, group: dict, trusted: str) -> None:
    assert hook_trust(label, group) == trusted
    assert hook_trust(label, {**group, "matcher": "startup"}) != trusted  # the matcher is part of the hook


def test_install_merges_into_codex_config_keeping_the_users_and_trusts_its_hooks(
        memory: MemoryRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    config = home / "config.toml"
    config.write_text(USER_CONFIG.format(config=config))
    code, out, err = install(capsys, memory, home)
    assert code == 0, err
    text = config.read_text()
    assert text.startswith("# my Codex settings\nmodel = \"o3\"  # the model I like\n")
    data = tomllib.loads(text)
    assert data["mcp_servers"]["docs"] == {"command": "docs-server"}
    server = data["mcp_servers"]["memrepo"]
    assert server["required"] is True and server["args"][:4] == ["-m", "bot.cli", "mcp", "--codex"]
    assert "MEMREPO_HOME" in server["env_vars"]
    stops = data["hooks"]["Stop"]
    assert stops[0]["hooks"][0]["command"] == "notify-send done"
    assert "bot.codex.hook stop" in stops[1]["hooks"][0]["command"]
    state = data["hooks"]["state"]
    assert state[f"{config}:stop:0:0"] == {"trusted_hash": "sha256:mine"}
    for event, label, index in (("SessionStart", "session_start", 0), ("UserPromptSubmit", "user_prompt_submit", 0),
                                ("Stop", "stop", 1)):
        group = data["hooks"][event][index]
        assert state[trust_key(config, label, index)] == {"trusted_hash": hook_trust(label, group)}
    assert "trusted_hash" in out and str(memory.root) in out

    code, out, _ = install(capsys, memory, home)
    assert code == 0 and "nothing changed" in out and config.read_text() == text  # a re-run changes nothing

    code, out, err = run_cli(capsys, "codex", "uninstall", "--codex-home", str(home))
    assert code == 0, err
    after = config_of(home)
    assert after == tomllib.loads(USER_CONFIG.format(config=config))
    assert config.read_text().startswith("# my Codex settings\n")


def test_uninstall_moves_the_trust_of_a_users_hook_that_came_after_memrepos(
        memory: MemoryRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "codex"
    assert install(capsys, memory, home)[0] == 0
    config = home / "config.toml"
    with config.open("a") as handle:  # the user adds a hook of their own after memrepo's, and trusts it
        handle.write('\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "later"\n')
    trusted = f'"{config}:stop:1:0" = {{ trusted_hash = "sha256:later" }}\n'
    text = config.read_text().replace("[hooks.state]\n", "[hooks.state]\n" + trusted)
    config.write_text(text)
    assert run_cli(capsys, "codex", "uninstall", "--codex-home", str(home))[0] == 0
    data = config_of(home)
    assert [g["hooks"][0]["command"] for g in data["hooks"]["Stop"]] == ["later"]
    assert data["hooks"]["state"] == {f"{config}:stop:0:0": {"trusted_hash": "sha256:later"}}
    assert "mcp_servers" not in data and "SessionStart" not in data["hooks"]


def test_a_config_that_is_not_toml_stops_install_before_anything_is_written(
        memory: MemoryRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    (home / "config.toml").write_text("model = [\n")
    code, out, err = install(capsys, memory, home)
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "cannot be read as Codex's TOML configuration" in err and "nothing was changed" in err
    assert (home / "config.toml").read_text() == "model = [\n"
    assert sorted(p.name for p in home.iterdir()) == ["config.toml"]


def test_install_refuses_someone_elses_server_named_memrepo(memory: MemoryRepo, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    (home / "config.toml").write_text('[mcp_servers.memrepo]\ncommand = "other"\n')
    code, _, err = install(capsys, memory, home)
    assert code == 1 and "not memrepo's" in err
    assert (home / "config.toml").read_text() == '[mcp_servers.memrepo]\ncommand = "other"\n'


def hook(event: str, root: Path, sessions: Path, payload: object) -> subprocess.CompletedProcess[str]:
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run([*HOOK, event, "--repo", str(root), "--sessions", str(sessions)], input=raw,
                          capture_output=True, text=True, timeout=60)


def test_a_resumed_session_gets_the_memory_again_only_when_head_moved(memory: MemoryRepo, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    start = {"session_id": "s-1", "transcript_path": str(sessions / "rollout.jsonl"), "source": "startup"}
    first = json.loads(hook("session-start", memory.root, sessions, start).stdout)
    assert first["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    resumed = hook("session-start", memory.root, sessions, {**start, "source": "resume"})
    assert resumed.returncode == 0 and resumed.stdout == ""
    assert hook("prompt", memory.root, sessions, {**start, "prompt": "hi"}).stdout == ""
    state = json.loads((memory.root / ".git" / "memrepo" / "codex" / "s-1.json").read_text())
    assert state["transcript"] == str(sessions / "rollout.jsonl")


@pytest.mark.parametrize("raw", ["{not json", "[1, 2]", "\"text\""])
def test_malformed_hook_input_is_one_line_and_writes_nothing(memory: MemoryRepo, tmp_path: Path, raw: str) -> None:
    done = hook("session-start", memory.root, tmp_path, raw)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("memrepo codex hook: the hook input on standard input is not a JSON object")
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (memory.root / ".git" / "memrepo" / "codex").exists()


def test_a_rollout_outside_codexs_sessions_is_not_kept(memory: MemoryRepo, tmp_path: Path) -> None:
    done = hook("session-start", memory.root, tmp_path / "sessions",
                {"session_id": "s-2", "transcript_path": str(tmp_path / "elsewhere" / "rollout.jsonl")})
    assert done.returncode == 0 and "not in Codex's sessions folder" in done.stderr
    state = json.loads((memory.root / ".git" / "memrepo" / "codex" / "s-2.json").read_text())
    assert "transcript" not in state


ROLLOUT_NAME = "rollout-2026-12-07T13-05-17-01a2509b-cbe1-7133-9e24-89a800e348d1.jsonl"
SESSION = "01a2509b-cbe1-7133-9e24-89a800e348d1"


def row(payload: dict, kind: str = "response_item", ordinal: int = 1) -> dict:
    return {"timestamp": "2026-12-07T13:05:17.304Z", "ordinal": ordinal, "type": kind, "payload": payload}


def user(text: str, provenance: str | None = "user") -> dict:
    item = {"type": "message", "id": f"msg_{abs(hash(text))}", "role": "user",
            "content": [{"type": "input_text", "text": text}]}
    if provenance:
        item["internal_chat_message_metadata_passthrough"] = {
            "content_item_metadata": [{"provenance": {"type": provenance}}]}
    return item


@pytest.mark.parametrize(("value", "said"), [
    (row(user("I drink tea.")), [("user", "user", "I drink tea.")]),
    (row(user("<environment_context>\n<cwd>/p</cwd>\n</environment_context>", provenance=None)), OWN),
    (row(user("from a hook", provenance="harness")), OWN),
    (row({"type": "message", "id": "m1", "role": "developer", "content": [{"type": "input_text", "text": "x"}]}), OWN),
    (row({"type": "message", "id": "m2", "role": "assistant",
          "content": [{"type": "output_text", "text": "Noted."}]}), [("assistant", "agent", "Noted.")]),
    (row({"type": "function_call", "id": "fc_1", "name": "memory_view", "namespace": "mcp__memrepo",
          "arguments": "{\"path\": \"system\"}", "call_id": "c1"}),
     [("tool_call", "agent", "mcp__memrepo__memory_view({\"path\": \"system\"})")]),
    (row({"type": "compacted", "message": "The user drinks tea."}, kind="compacted"),
     [("compaction", "agent", "The user drinks tea.")]),
    (row({"type": "task_started"}, kind="event_msg"), OWN),
    ({"type": "session_meta", "payload": {"id": SESSION}}, OWN),
])
def test_rollout_rows_become_messages(value: dict, said: object) -> None:
    made = read_row(value, {}, SESSION)
    assert (made if isinstance(made, str) else [(s.kind, s.source, s.text) for s in made.said]) == said


def test_a_calls_output_is_a_tool_result_from_that_tool() -> None:
    tools: dict[str, str] = {}
    read_row(row({"type": "function_call", "id": "fc", "name": "exec_command", "arguments": "{}", "call_id": "c9"}),
             tools, SESSION)
    made = read_row(row({"type": "function_call_output", "call_id": "c9", "output": "hello"}, ordinal=7), tools,
                    SESSION)
    assert not isinstance(made, str)
    assert made.id == f"{SESSION}.7"
    assert [(s.kind, s.source) for s in made.said] == [("tool_result", "tool:exec_command")]


def test_a_rollout_with_a_bad_line_imports_nothing(memory: MemoryRepo, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    day = tmp_path / "sessions" / "2026" / "12" / "07"
    day.mkdir(parents=True)
    good = json.dumps(row(user("I drink tea.")))
    (day / ROLLOUT_NAME).write_text(f"{good}\n{{not json\n")
    home = tmp_path / "memrepo-home"
    code, out, err = run_cli(capsys, "transcript", "import", "--from", "codex", str(tmp_path / "sessions"),
                             "--repo", str(memory.root), "--home", str(home))
    assert code == 1 and out == "" and "Traceback" not in err and "line 2" in err
    assert "a1" not in TranscriptStore(home).agents()

    (day / ROLLOUT_NAME).write_text(f"{good}\n")
    code, out, err = run_cli(capsys, "transcript", "import", "--from", "codex", str(day),
                             "--repo", str(memory.root), "--home", str(home))
    assert code == 0, err
    assert "imported 1 message from 1 Codex session" in out
    assert [r.text for r in TranscriptStore(home).read("a1", SESSION)] == ["I drink tea."]
    code, out, _ = run_cli(capsys, "transcript", "import", "--from", "codex", str(day / ROLLOUT_NAME),
                           "--repo", str(memory.root), "--home", str(home))
    assert "imported 0 messages" in out  # incremental: nothing twice


@pytest.mark.parametrize(("meta", "session"), [
    ({"sessionId": "s-1", "callId": "call_1"}, "s-1"),
    ({"x-codex-turn-metadata": {"session_id": "s-2"}}, "s-2"),
    ({"progressToken": 1}, None),
    ({"sessionId": "  "}, None),
])
def test_the_session_a_codex_calls_meta_names(meta: dict, session: str | None) -> None:
    assert session_of(meta) == session


def test_a_prompt_where_nothing_moved_imports_no_compiler(memory: MemoryRepo, tmp_path: Path) -> None:
    hook("session-start", memory.root, tmp_path, {"session_id": "s-1", "source": "startup"})
    probe = ("import io, json, sys; sys.stdin = io.StringIO(json.dumps({'session_id': 's-1'})); "
             "from bot.codex import hook; code = hook.run('prompt', sys.argv[1], sys.argv[2]); "
             "print(code, sorted(m for m in sys.modules if m.startswith(('bot.', 'pygit2', 'git', 'yaml'))))")
    done = subprocess.run([sys.executable, "-c", probe, str(memory.root), str(tmp_path)], capture_output=True,
                          text=True)
    loaded = ("0 ['bot.claude_code', 'bot.claude_code.hook', 'bot.claude_code.state', 'bot.codex', 'bot.codex.hook', "
              "'bot.codex.state', 'bot.memfs', 'bot.memfs.store', 'bot.memfs.store.refs']")
    assert done.stdout.split("\n")[0] == loaded, done.stderr


def test_a_project_install_puts_the_trust_in_the_users_file_and_says_the_project_is_not_trusted(
        memory: MemoryRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home, project = tmp_path / "codex", tmp_path / "project"
    project.mkdir()
    code, out, err = run_cli(capsys, "codex", "install", "--repo", str(memory.root), "--codex-home", str(home),
                             "--project", str(project))
    assert code == 0, err
    assert "only for a trusted project" in out and "does not trust it yet" in out
    config = project / ".codex" / "config.toml"
    data = tomllib.loads(config.read_text())
    assert data["mcp_servers"]["memrepo"]["required"] is True and "state" not in data["hooks"]
    state = config_of(home)["hooks"]["state"]
    assert set(state) == {trust_key(config, label, 0) for label in ("session_start", "user_prompt_submit", "stop")}
    assert "projects" not in config_of(home)  # memrepo trusts no project for the user

    code, _, err = run_cli(capsys, "codex", "uninstall", "--codex-home", str(home), "--project", str(project))
    assert code == 0, err
    assert tomllib.loads(config.read_text()) == {} and config_of(home) == {}
