"""What a newcomer meets first, through bot.cli.main: `localhub create-repo` makes the
repository `repository set` then connects to; `--json` on `validate` and `dream` prints one JSON
document; `compile --system-prompt -` reads the prompt from standard input; long work draws a
tqdm progress bar on standard error only when it is a terminal (forced on here with
MEMREPO_PROGRESS=1), and bad input is one line."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from bot.commands.transcript import ProgressBars
from bot.memfs.create import init_repository
from bot.sockets import free_port
from localhub.server import LocalhubServer
from tests.conftest import git, run_cli
from tests.dream.test_dream_run import World, world  # noqa: F401  (the localhub fixture)


# ------------------------------------------------------------------------------ localhub create-repo
def test_create_repo_makes_the_repository_repository_set_connects_to(localhub: LocalhubServer, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "localhub", "create-repo", "ada/memory", "--url", localhub.url,
                             "--data", str(localhub.hub.data_dir))
    assert (code, err) == (0, "")
    first, second, third = out.splitlines()
    assert first == f"created ada/memory on {localhub.url}"
    url = second.removeprefix("clone URL (with ada's token): ")
    assert url.startswith("http://x-access-token:") and url.endswith(f"@{localhub.url[7:]}/ada/memory.git")
    assert third == f"connect a memory to it: memrepo repository set {url} --repo DIR"

    memory = init_repository(tmp_path / "memory", "ada", "Ada")
    code, out, err = run_cli(capsys, "repository", "set", url, "--repo", str(memory.root))
    assert (code, err) == (0, "") and "pushed main" in out
    assert git(memory.root, "ls-remote", "origin", "refs/heads/main").split()[0] == memory.head_sha()

    # again: nothing changes, and the URL is given all the same, with TOKEN in its place (ada has one)
    code, out, err = run_cli(capsys, "localhub", "create-repo", "ada/memory", "--url", localhub.url,
                             "--data", str(localhub.hub.data_dir))
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == f"ada/memory already exists on {localhub.url}; nothing was changed"
    assert git(memory.root, "ls-remote", "origin", "refs/heads/main").split()[0] == memory.head_sha()


def test_a_private_repository_is_private(localhub: LocalhubServer, capsys: pytest.CaptureFixture[str]) -> None:
    import requests

    code, out, _ = run_cli(capsys, "localhub", "create-repo", "bo/secret", "--private", "--description", "Bo's",
                           "--url", localhub.url, "--data", str(localhub.hub.data_dir))
    assert code == 0
    token = out.splitlines()[1].split("x-access-token:")[1].split("@")[0]
    repo = requests.get(f"{localhub.api_url}/repos/bo/secret", headers={"Authorization": f"token {token}"},
                        timeout=10).json()
    assert (repo["private"], repo["description"]) == (True, "Bo's")


@pytest.mark.parametrize("argv, problem", [
    (("ada",), "'ada' is not OWNER/NAME"),
    (("ada/me/mory",), "is not OWNER/NAME"),
    (("ada-/memory",), "is not OWNER/NAME"),
    (("ada/memory.git",), "is not OWNER/NAME"),
    (("ada/memory", "--url", "ftp://x"), "is not an http:// or https:// address"),
    (("ada/memory", "--url", "http://127.0.0.1:{port}"), "cannot reach localhub at http://127.0.0.1:{port}"),
])
def test_create_repo_refuses_bad_input_in_one_line(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...],
                                                   problem: str) -> None:
    port = free_port()
    code, out, err = run_cli(capsys, "localhub", "create-repo", *(a.format(port=port) for a in argv))
    assert code == 1 and out == ""
    assert err.startswith("memrepo: ") and err.count("\n") == 1 and problem.format(port=port) in err


# ------------------------------------------------------------------------------ validate --json
def test_validate_json_is_one_document_valid_or_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    memory = init_repository(tmp_path / "memory", "ada", "Ada")
    code, out, err = run_cli(capsys, "validate", "--repo", str(memory.root), "--json")
    assert (code, err) == (0, "")
    checked = json.loads(out)["checked"]
    assert checked > 0
    assert json.loads(out) == {"valid": True, "mode": "worktree", "base": None, "checked": checked, "problems": []}

    (memory.root / "system" / "x.md").write_text("No frontmatter here.\n")
    code, out, err = run_cli(capsys, "validate", "--repo", str(memory.root), "--json")
    assert (code, err) == (1, "")
    assert json.loads(out) == {"valid": False, "mode": "worktree", "base": None, "checked": checked + 1,
                               "problems": [{"path": "system/x.md",
                                             "message": "missing frontmatter (must start with ---)"}]}

    git(memory.root, "add", "system/x.md")
    code, out, _ = run_cli(capsys, "validate", "--repo", str(memory.root), "--staged", "--json")
    data = json.loads(out)
    assert code == 1 and (data["mode"], data["checked"], len(data["problems"])) == ("staged", 1, 1)
    code, out, _ = run_cli(capsys, "validate", "--repo", str(memory.root), "--base", "HEAD", "--json")
    assert (json.loads(out)["mode"], json.loads(out)["base"]) == ("base", "HEAD")


# ------------------------------------------------------------------------------ compile --system-prompt
def test_compile_reads_the_system_prompt_from_a_file_or_standard_input(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    memory = init_repository(tmp_path / "memory", "ada", "Ada")
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("You are Ada, a careful assistant.\n")
    code, from_file, err = run_cli(capsys, "compile", "--repo", str(memory.root), "--system-prompt", str(prompt))
    assert (code, err) == (0, "") and from_file.startswith("You are Ada, a careful assistant.")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(prompt.read_bytes())))
    code, from_stdin, err = run_cli(capsys, "compile", "--repo", str(memory.root), "--system-prompt", "-")
    assert (code, err) == (0, "") and from_stdin == from_file
    code, out, err = run_cli(capsys, "compile", "--repo", str(memory.root), "--system-prompt",
                             str(tmp_path / "missing.txt"))
    assert code == 1 and out == "" and "cannot read the system prompt file" in err and err.count("\n") == 1


# ------------------------------------------------------------------------------ dream --json
def dream(capsys: pytest.CaptureFixture[str], w: World, *args: str) -> tuple[int, str, str]:
    return run_cli(capsys, "dream", "--repo", str(w.memory.root), "--home", str(w.home), *args)


def test_dream_json_says_what_happened_in_one_document(world: World,  # noqa: F811
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    said = world.say("I live in Berlin.")
    code, out, err = dream(capsys, world, "--json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert (data["agent_id"], data["conversation_id"], data["ran"], data["trigger"], data["status"]) == (
        "a1", "c1", True, "manual", "opened")
    assert data["pull_request"] == {"number": 1, "url": world.client().get_pull_request(1).url}
    assert data["dream_id"] == data["provenance"]["dream_id"] and data["sources"] == []
    assert data["provenance"]["transcript"]["first_message_id"] == said.message_id
    assert "opened pull request #1" in data["message"]

    code, out, _ = dream(capsys, world, "--json")
    data = json.loads(out)
    assert code == 0 and (data["status"], data["pull_request"]["number"]) == ("already-open", 1)


# ------------------------------------------------------------------------------ progress
def transcript_home(tmp_path: Path, rows: int) -> Path:
    home = tmp_path / "home"
    lines = [json.dumps({"agent_id": "ada", "conversation_id": "c1", "kind": "user", "text": f"row {i}"})
             for i in range(rows)]
    (tmp_path / "rows.jsonl").write_text("\n".join(lines) + "\n")
    return home


@pytest.mark.parametrize("setting, drawn", [("1", True), ("0", False), (None, False)],
                         ids=["forced", "off", "not-a-terminal"])
def test_import_and_rebuild_draw_progress_on_stderr_only_when_asked_or_on_a_terminal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], setting: str | None,
        drawn: bool) -> None:
    if setting is None:
        monkeypatch.delenv("MEMREPO_PROGRESS", raising=False)
    else:
        monkeypatch.setenv("MEMREPO_PROGRESS", setting)
    home = transcript_home(tmp_path, 5000)
    code, out, err = run_cli(capsys, "transcript", "import", str(tmp_path / "rows.jsonl"), "--home", str(home))
    assert code == 0 and out.startswith("imported 5000 rows")
    assert ("importing: 100%" in err and "5000/5000" in err) is drawn
    assert (err == "") is not drawn
    code, out, err = run_cli(capsys, "transcript", "rebuild", "--home", str(home))
    assert code == 0 and out.strip() == "rebuilt the search index of agent ada: 5,000 messages from 1 log"
    assert "indexing transcripts: 100%" in err if drawn else err == ""
    assert "\n" not in out.strip()  # the bars never reach standard output


def test_a_dream_draws_progress_while_it_reads_the_transcript(world: World,  # noqa: F811
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MEMREPO_PROGRESS", "1")
    world.say("I live in Berlin.")
    code, out, err = dream(capsys, world, "--json")
    assert code == 0 and json.loads(out)["status"] == "opened"
    assert "reading the transcript: 100%" in err


def test_progress_bars_follow_tasks_and_stay_off_a_pipe() -> None:
    stream = io.StringIO()
    bars = ProgressBars(stream, env={"MEMREPO_PROGRESS": "1"})
    for done in (0, 400, 1000):
        bars("read", done, 1000)
    bars("index", 10, 20)
    bars("index", 20, 20)
    bars.close()
    text = stream.getvalue()
    assert "reading the transcript: 100%" in text and "indexing transcripts: 100%" in text
    quiet = io.StringIO()
    off = ProgressBars(quiet, env={})  # a StringIO is not a terminal
    off("read", 1, 2)
    off("read", 2, 2)
    assert quiet.getvalue() == "" and off.bar is None
