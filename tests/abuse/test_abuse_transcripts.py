"""A harness's transcript path is checked: Claude Code's hooks import only the session's own file.

A Stop hook given another project's `transcript_path` imported it, so that project's session
(and its secrets) became searchable from this memory. The hooks now take a transcript only from
the session's own project folder in Claude Code's projects directory
(`$CLAUDE_CONFIG_DIR/projects/<folder>/`, else `~/.claude/projects/<folder>/`, the folder named
from the session's `cwd` by Claude Code's own rule), or from a folder the user names in
MEMREPO_CLAUDE_CODE_TRANSCRIPTS, and say so in one line when they refuse. Claude Code's rule is
read from its published bundle (the pinned native package the conformance tests run) and run
under node beside ours."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.claude_code import hook, turn_end
from bot.claude_code.transcript import (
    NAMED_ENV,
    TRANSCRIPT_ELSEWHERE,
    TRANSCRIPT_NOT_A_SESSION,
    project_folder_name,
    transcript_problem,
)
from bot.memfs.store.repo import MemoryRepo
from bot.transcript import TranscriptStore
from tests.claude_code_conformance.claude import binary

SESSION = "0b6c4d1e-2f3a-4b5c-8d9e-0a1b2c3d4e5f"
SECRET = "the other project's deploy key is hunter2"
# Claude Code 2.1.332's folder-name rule, as its bundle spells it (the names are its minifier's)
HASH_SOURCE = "function Nle(n){let t=0;for(let r=0;r<n.length;r++)t=(t<<5)-t+n.charCodeAt(r)|0;return t}"
SLUG_SOURCE = ("var jae=200;function me(e){return Math.abs(Nle(e)).toString(36)}function w(e){return "
               'e.replace(/[^a-zA-Z0-9]/g,"-")}function J$(e){let n=w(e);if(n.length<=jae)return n;return'
               "`${n.slice(0,jae)}-${me(e)}`}")
CWDS = ["/work/my_app", "/home/zoë/notes", "/srv/😀/app", "C:\\Users\\ada\\memory", "/a b/c.d_e-f",
        "/" + "deep/" * 60 + "end", "/" + "ü" * 150 + "/" + "😀" * 30, "/x" * 101, "/y" * 100]


def test_the_folder_name_is_claude_codes_own() -> None:
    bundle = binary().read_bytes()
    assert HASH_SOURCE.encode() in bundle and SLUG_SOURCE.encode() in bundle
    script = (f"{HASH_SOURCE}{SLUG_SOURCE}"
              "const paths=JSON.parse(require('fs').readFileSync(0,'utf8'));"
              "process.stdout.write(JSON.stringify(paths.map(J$)))")
    done = subprocess.run(["node", "-e", script], input=json.dumps(CWDS), capture_output=True, text=True,
                          timeout=60, check=True)
    assert [project_folder_name(cwd) for cwd in CWDS] == json.loads(done.stdout)


# ---------------------------------------------------------------------------------- the rule
@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code's config folder, as CLAUDE_CONFIG_DIR names it; MEMREPO_HOME a fresh store."""
    config = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("MEMREPO_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_PROJECT_DIR_NAME", raising=False)
    monkeypatch.delenv(NAMED_ENV, raising=False)
    return config


def session(folder: Path, text: str, name: str = SESSION) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    path.write_text(json.dumps({"type": "user", "uuid": "u1", "timestamp": "2026-12-03T10:00:00Z",
                                "message": {"role": "user", "content": text}}) + "\n")
    return path


def stored(home: Path) -> list[str]:
    with TranscriptStore(home) as store:
        if "a1" not in store.agents():
            return []
        return [m.text for conv in store.conversations("a1") for m in store.read("a1", conv)]


def refused_for(path: Path | str, folder: Path) -> str:
    return TRANSCRIPT_ELSEWHERE.format(path=path, folder=folder, env=NAMED_ENV)


def test_a_stop_hook_given_another_projects_transcript_imports_nothing(memory: MemoryRepo, claude: Path,
                                                                      tmp_path: Path) -> None:
    other = session(claude / "projects" / "-work-other", SECRET)
    given = {"session_id": SESSION, "transcript_path": str(other), "cwd": "/work/my_app"}
    done = subprocess.run([sys.executable, "-m", hook.HOOK_MODULE, "stop", "--repo", str(memory.root)],
                          input=json.dumps(given), capture_output=True, text=True, timeout=60)
    said = refused_for(other, claude / "projects" / "-work-my-app")
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"memrepo claude-code hook: {said}\n")
    assert stored(tmp_path / "home") == []
    assert hook.seen_fact(hook.state_file(memory.root, SESSION), "transcript") is None


@pytest.mark.parametrize("where", [
    lambda c, t: c / "projects" / "-work-my-app-evil",  # a folder whose name starts like the project's
    lambda c, t: c / "projects",  # the projects directory itself
    lambda c, t: t / "elsewhere",  # outside Claude Code's directory
    lambda c, t: c / "projects" / "-work-my-app" / ".." / "-work-other",  # climbing out
])
def test_transcripts_outside_the_sessions_project_folder_are_refused(where, claude: Path, tmp_path: Path) -> None:
    path = session(where(claude, tmp_path), SECRET)
    assert transcript_problem(str(path), "/work/my_app", os.environ) == refused_for(
        path, claude / "projects" / "-work-my-app")


def test_a_link_in_the_project_folder_to_another_projects_session_is_refused(claude: Path) -> None:
    other = session(claude / "projects" / "-work-other", SECRET)
    mine = claude / "projects" / "-work-my-app"
    mine.mkdir(parents=True)
    (mine / f"{SESSION}.jsonl").symlink_to(other)
    assert transcript_problem(str(mine / f"{SESSION}.jsonl"), "/work/my_app", os.environ) == refused_for(
        mine / f"{SESSION}.jsonl", mine)


@pytest.mark.parametrize("path", ["relative/s.jsonl", "/etc/passwd", "/tmp/s.json"])
def test_what_is_no_session_file_is_refused(path: str, claude: Path) -> None:
    assert transcript_problem(path, "/work/my_app", os.environ) == TRANSCRIPT_NOT_A_SESSION.format(
        path=path)


def test_the_sessions_own_file_and_a_folder_the_user_names_are_imported(memory: MemoryRepo, claude: Path,
                                                                       tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    own = session(claude / "projects" / "-work-my-app", "my own words")
    given = {"session_id": SESSION, "transcript_path": str(own), "cwd": "/work/my_app"}
    turn_end.after_turn(memory.root, given, spawn=lambda *_: None)
    assert stored(tmp_path / "home") == ["my own words"]
    # started in a subfolder: the project's root (CLAUDE_PROJECT_DIR) names the folder too
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", "/work/my_app")
    assert transcript_problem(str(own), "/work/my_app/src", os.environ) is None
    # a transcript kept elsewhere, named by hand
    kept = session(tmp_path / "archive", "archived words", name="old-session")
    assert transcript_problem(str(kept), "/work/my_app", os.environ) is not None
    monkeypatch.setenv(NAMED_ENV, f"/nowhere{os.pathsep}{tmp_path / 'archive'}")
    assert transcript_problem(str(kept), "/work/my_app", os.environ) is None


def test_claude_codes_folder_name_override_is_followed(claude: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_PROJECT_DIR_NAME", "team_memory")
    own = session(claude / "projects" / "team_memory", "words")
    assert transcript_problem(str(own), "/work/my_app", os.environ) is None
    monkeypatch.setenv("CLAUDE_CODE_PROJECT_DIR_NAME", "../escape")  # not a name Claude Code takes
    assert transcript_problem(str(own), "/work/my_app", os.environ) is not None


def test_session_start_shows_the_memory_but_keeps_no_foreign_transcript(memory: MemoryRepo, claude: Path) -> None:
    other = session(claude / "projects" / "-work-other", SECRET)
    given = {"session_id": SESSION, "transcript_path": str(other), "cwd": "/work/my_app", "source": "startup"}
    done = subprocess.run([sys.executable, "-m", hook.HOOK_MODULE, "session-start", "--repo", str(memory.root)],
                          input=json.dumps(given), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "<memory>" in done.stdout
    said = refused_for(other, claude / "projects" / "-work-my-app")
    assert done.stderr == f"memrepo claude-code hook: {said}\n"
    assert hook.seen_fact(hook.state_file(memory.root, SESSION), "transcript") is None
