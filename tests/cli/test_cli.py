"""The `memrepo` command line: help, bad input (one line, no traceback, nothing changed),
`validate`, `tool` and `log` on real git repositories."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bot import __version__, cli
from bot.commands.log import LOG_EMPTY
from bot.commands.validate import VALIDATE_OK
from bot.memfs.create import INIT_COMMIT
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.sync import set_remote
from bot.memfs.tool.memory_tool import COMMITTED, NO_REMOTE_NOTE
from tests.conftest import PERSON_EMAIL, PERSON_NAME, git
from tests.conftest import run_cli as run

HUMAN = "system/human.md"
EDIT_HUMAN = {"command": "str_replace", "path": HUMAN, "old_str": "Nothing recorded yet.",
              "new_str": "Prefers tea.", "reason": "Note tea"}




def memrepo_command() -> list[str]:
    """The installed console script next to this interpreter, else `python -m bot.cli`."""
    script = Path(sys.executable).parent / "memrepo"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "bot.cli"]


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


def write(root: Path, path: str, text: str) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def tree_state(base: Path) -> tuple[dict[str, bytes], dict[str, tuple[str, str]]]:
    """Every file under `base` outside git's own folders, and HEAD + `git status` of every
    working clone: what a failed command must leave as it was."""
    files: dict[str, bytes] = {}
    clones: dict[str, tuple[str, str]] = {}
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(base)
        if ".git" in rel.parts or rel.parts[0].endswith(".git"):
            continue
        if path.is_file():
            files[rel.as_posix()] = path.read_bytes()
        if path.is_dir() and (path / ".git").is_dir():
            head = subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=path,
                                  capture_output=True, text=True).stdout
            clones[rel.as_posix()] = (head, git(path, "status", "--porcelain", "--ignored"))
    return files, clones


# --------------------------------------------------------------------------- help

def test_help_lists_every_command_with_one_line_of_help() -> None:
    done = subprocess.run([*memrepo_command(), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith("usage: memrepo")
    flat = " ".join(done.stdout.split())
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    helps = {action.dest: action.help for action in sub._choices_actions}
    assert list(helps) == list(cli.COMMANDS)
    for name, text in helps.items():
        assert text and "\n" not in text and text.strip() == text, name
        # argparse wraps long lines; the words are all there, right after the name.
        assert f"{name} {' '.join(text.split())}" in flat, name


def test_help_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--help")
    assert code == 0 and err == ""
    for name in cli.COMMANDS:
        assert re.search(rf"^\s+{name}\b", out, re.MULTILINE), name


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--version")
    assert (code, out, err) == (0, f"memrepo {__version__}\n", "")


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys)
    assert code == 2 and out == ""
    assert err.startswith("usage: memrepo") and "Traceback" not in err


# ---------------------------------------------------------------------- bad input

def _missing(tmp: Path) -> list[str]:
    return ["validate", "--repo", str(tmp / "nowhere")]


def _file(tmp: Path) -> list[str]:
    (tmp / "notes.txt").write_text("not a folder\n")
    return ["log", "--repo", str(tmp / "notes.txt")]


def _not_git(tmp: Path) -> list[str]:
    (tmp / "plain").mkdir()
    (tmp / "plain" / "a.md").write_text("hello\n")
    return ["compile", "--repo", str(tmp / "plain")]


def _not_memory(tmp: Path) -> list[str]:
    other = tmp / "project"
    git(tmp, "init", "-q", str(other))
    (other / "README.md").write_text("a project\n")
    git(other, "add", "README.md")
    git(other, "commit", "-qm", "Start")
    return ["validate", "--repo", str(other)]


def _no_commits(tmp: Path) -> list[str]:
    git(tmp, "init", "-q", str(tmp / "fresh"))
    return ["log", "--repo", str(tmp / "fresh")]


def _bare(tmp: Path) -> list[str]:
    git(tmp, "init", "-q", "--bare", str(tmp / "remote.git"))
    return ["tool", "--repo", str(tmp / "remote.git"), '{"command": "view"}']


def _bad_json(tmp: Path) -> list[str]:
    return ["tool", "--repo", str(tmp / "memory"), "{not json"]


def _refused(tmp: Path) -> list[str]:
    call = dict(EDIT_HUMAN, old_str="Nowhere in the file")
    return ["tool", "--repo", str(tmp / "memory"), json.dumps(call)]


def _refused_path(tmp: Path) -> list[str]:
    return ["tool", "--repo", str(tmp / "memory"),
            json.dumps({"command": "create", "path": "../outside.md", "file_text": "x"})]


def _validate_missing_path(tmp: Path) -> list[str]:
    return ["validate", "--repo", str(tmp / "memory"), "system/nothing-here.md"]


def _validate_bad_base(tmp: Path) -> list[str]:
    return ["validate", "--repo", str(tmp / "memory"), "--base", "no-such-branch"]


def _compile_missing_prompt(tmp: Path) -> list[str]:
    return ["compile", "--repo", str(tmp / "memory"), "--system-prompt", str(tmp / "prompt.txt")]


def _log_missing(tmp: Path) -> list[str]:
    return ["log", "--repo", str(tmp / "gone"), HUMAN]


ONE_LINE_ERRORS: list[tuple[Callable[[Path], list[str]], str]] = [
    (_missing, "does not exist"),
    (_file, "is a file"),
    (_not_git, "is not a git repository"),
    (_not_memory, "not a memory repository"),
    (_no_commits, "no commits"),
    (_bare, "bare git repository"),
    (_bad_json, "not valid JSON"),
    (_refused, "0 matches"),
    (_refused_path, "'..'"),
    (_validate_missing_path, "does not exist"),
    (_validate_bad_base, "no-such-branch"),
    (_compile_missing_prompt, "cannot read the system prompt file"),
    (_log_missing, "does not exist"),
]


@pytest.mark.parametrize(("setup", "says"), ONE_LINE_ERRORS,
                         ids=[setup.__name__.lstrip("_") for setup, _ in ONE_LINE_ERRORS])
def test_bad_input_is_one_line_and_changes_nothing(
    memory: MemoryRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    setup: Callable[[Path], list[str]], says: str,
) -> None:
    argv = setup(tmp_path)
    before = tree_state(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 1, (out, err)
    assert out == ""
    assert len(err.splitlines()) == 1 and err.endswith("\n"), err
    assert says in err
    assert "Traceback" not in err
    assert tree_state(tmp_path) == before


@pytest.mark.parametrize("argv", [
    ["no-such-command"],
    ["tool"],
    ["log", "-n", "many"],
    ["validate", "--staged", "--base", "HEAD"],
    ["repository"],
], ids=["unknown-command", "tool-without-call", "bad-number", "exclusive-options", "no-action"])
def test_usage_errors_exit_2(
    memory: MemoryRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    before = tree_state(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("usage: memrepo") and "error:" in err
    assert "Traceback" not in err
    assert tree_state(tmp_path) == before


def test_errors_from_the_console_script(memory: MemoryRepo, tmp_path: Path) -> None:
    before = tree_state(tmp_path)
    done = subprocess.run([*memrepo_command(), "tool", "--repo", str(memory.root), "[1, 2"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "not valid JSON" in done.stderr
    done = subprocess.run([*memrepo_command(), "log", "--repo", str(tmp_path / "missing")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("memrepo: ") and len(done.stderr.splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert tree_state(tmp_path) == before


# ------------------------------------------------------------------------ validate

def test_validate_fresh_repository(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "validate", "--repo", str(memory.root))
    assert (code, err) == (0, "")
    assert out == VALIDATE_OK.format(count=5) + "\n"
    assert out == "Memory is valid (5 files checked).\n"


@pytest.fixture
def broken(memory: MemoryRepo) -> MemoryRepo:
    """The memory repository with two broken files in the working tree (not staged)."""
    write(memory.root, "system/x.md", "No frontmatter here.\n")
    write(memory.root, "reference/y.md", "---\ndescription: Y\ncolor: red\n---\nBody.\n")
    return memory


def test_validate_reports_letta_messages(broken: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    before = tree_state(broken.root)
    code, out, err = run(capsys, "validate", "--repo", str(broken.root))
    assert (code, err) == (1, "")
    assert out == (
        "Frontmatter validation failed:\n"
        "  reference/y.md: unknown frontmatter key 'color' (allowed: description read_only limit)\n"
        "  system/x.md: missing frontmatter (must start with ---)\n"
    )
    assert tree_state(broken.root) == before


def test_validate_from_inside_the_repository(
    broken: MemoryRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(broken.root)
    code, out, _ = run(capsys, "validate")
    assert code == 1 and out.startswith("Frontmatter validation failed:\n")


@pytest.mark.parametrize(("paths", "code", "lines"), [
    (["system"], 1, ["  system/x.md: missing frontmatter (must start with ---)"]),
    (["system/x.md"], 1, ["  system/x.md: missing frontmatter (must start with ---)"]),
    (["reference/y.md"], 1,
     ["  reference/y.md: unknown frontmatter key 'color' (allowed: description read_only limit)"]),
    (["system/human.md"], 0, []),
    (["system/human.md", ".memrepo"], 0, []),
])
def test_validate_paths_restrict_the_check(
    broken: MemoryRepo, capsys: pytest.CaptureFixture[str], paths: list[str], code: int, lines: list[str]
) -> None:
    got, out, _ = run(capsys, "validate", "--repo", str(broken.root), *paths)
    assert got == code
    if code:
        assert out.splitlines() == ["Frontmatter validation failed:", *lines]
    else:
        assert out == VALIDATE_OK.format(count=len(paths)) + "\n"


def test_validate_staged_checks_only_the_index(broken: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(broken.root)
    code, out, _ = run(capsys, "validate", "--repo", root, "--staged")
    assert code == 0, out  # broken files in the working tree only
    assert out == VALIDATE_OK.format(count=0) + "\n"

    git(broken.root, "add", "system/x.md")
    code, out, _ = run(capsys, "validate", "--repo", root, "--staged")
    assert code == 1
    assert out == "Frontmatter validation failed:\n  system/x.md: missing frontmatter (must start with ---)\n"

    # A fixed working-tree copy does not hide the broken staged one.
    write(broken.root, "system/x.md", "---\ndescription: X\n---\nFixed, but not staged.\n")
    assert run(capsys, "validate", "--repo", root, "--staged")[0] == 1
    # PATH arguments restrict --staged too.
    assert run(capsys, "validate", "--repo", root, "--staged", "reference")[0] == 0

    git(broken.root, "add", "system/x.md")
    code, out, _ = run(capsys, "validate", "--repo", root, "--staged")
    assert (code, out) == (0, VALIDATE_OK.format(count=1) + "\n")


def test_validate_staged_deletion(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    git(memory.root, "rm", "-q", HUMAN)
    code, out, _ = run(capsys, "validate", "--repo", str(memory.root), "--staged")
    assert (code, out) == (0, VALIDATE_OK.format(count=1) + "\n")


def test_validate_base_checks_what_changed_since(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    root = memory.root
    write(root, "reference/good.md", "---\ndescription: Good\n---\nFine.\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Good base")
    write(root, "system/bad.md", "No frontmatter.\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "Sneak a bad file in")

    code, out, _ = run(capsys, "validate", "--repo", str(root), "--base", "HEAD~1")
    assert code == 1
    assert out == "Frontmatter validation failed:\n  system/bad.md: missing frontmatter (must start with ---)\n"
    code, out, _ = run(capsys, "validate", "--repo", str(root), "--base", "HEAD")
    assert (code, out) == (0, VALIDATE_OK.format(count=0) + "\n")
    # From the first commit, the bad file is among the changes; PATH restricts --base too.
    assert run(capsys, "validate", "--repo", str(root), "--base", "HEAD~2")[0] == 1
    assert run(capsys, "validate", "--repo", str(root), "--base", "HEAD~2", "reference")[0] == 0
    assert git(root, "status", "--porcelain") == ""


# ---------------------------------------------------------------------------- tool

def test_tool_commits_one_change_as_the_agent(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    before = commits(memory.root)
    code, out, err = run(capsys, "tool", "--repo", str(memory.root), json.dumps(EDIT_HUMAN))
    assert (code, err) == (0, "")
    head = memory.head_sha()
    assert head is not None
    assert out == COMMITTED.format(sha=head[:12], message="Note tea",
                                               note=NO_REMOTE_NOTE) + "\n"
    assert commits(memory.root) == before + 1
    assert git(memory.root, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s").strip() == (
        "Ada <a1@agents.memrepo>|Ada <a1@agents.memrepo>|Note tea")
    assert "Prefers tea." in (memory.root / HUMAN).read_text()
    assert git(memory.root, "status", "--porcelain") == ""


def test_tool_view_changes_nothing(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    before = commits(memory.root)
    code, out, _ = run(capsys, "tool", "--repo", str(memory.root), '{"command": "view", "path": "system"}')
    assert code == 0
    assert "system/human.md" in out and "system/persona.md" in out
    assert commits(memory.root) == before


def test_tool_json(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "tool", "--json", "--repo", str(memory.root), json.dumps(EDIT_HUMAN))
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert isinstance(result, dict)
    assert {"ok", "commit", "revision", "pushed"} <= set(result)
    assert result["ok"] is True
    assert result["commit"] == result["revision"] == memory.head_sha()
    assert result["pushed"] is None  # no remote
    assert result["paths"] == [HUMAN]


def test_tool_json_refused(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    head = memory.head_sha()
    call = dict(EDIT_HUMAN, old_str="absent")
    code, out, err = run(capsys, "tool", "--json", "--repo", str(memory.root), json.dumps(call))
    assert (code, err) == (1, "")
    result = json.loads(out)
    assert result["ok"] is False and result["commit"] is None and result["revision"] == head
    assert "0 matches" in result["message"]
    assert memory.head_sha() == head


def test_tool_json_pushed_to_remote(
    memory: MemoryRepo, bare_remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    set_remote(memory, str(bare_remote))
    code, out, _ = run(capsys, "tool", "--json", "--repo", str(memory.root), json.dumps(EDIT_HUMAN))
    assert code == 0
    result = json.loads(out)
    assert result["pushed"] is True
    assert git(bare_remote, "rev-parse", "main").strip() == result["commit"] == memory.head_sha()

    code, out, _ = run(capsys, "tool", "--json", "--no-push", "--repo", str(memory.root),
                       json.dumps(dict(EDIT_HUMAN, old_str="Prefers tea.", new_str="Prefers coffee.")))
    assert code == 0
    result = json.loads(out)
    assert result["pushed"] is False
    assert git(bare_remote, "rev-parse", "main").strip() != result["commit"]


SURROGATE_CALLS = [
    pytest.param([], '{"command": "create", "path": "reference/x.md", "description": "x", "file_text": "a\\udcff"}',
                 "'file_text' is not valid Unicode: character 2 is U+DCFF", id="json-escape"),
    pytest.param(["--json"], '{"command": "view", "path": "system/\\ud800"}', "'path' is not valid Unicode",
                 id="json-escape-json-output"),
    pytest.param([], b'{"command": "view", "path": "system/\xff"}', "'path' is not valid Unicode: character 8",
                 id="argument-not-utf8"),
    pytest.param(["--json"], b'{"command": "vi\xffew"}', "'command' is not valid Unicode",
                 id="argument-not-utf8-json-output"),
]


@pytest.mark.parametrize(("options", "call", "refusal"), SURROGATE_CALLS)
def test_tool_refuses_text_that_is_not_unicode(memory: MemoryRepo, tmp_path: Path, options: list[str],
                                               call: str | bytes, refusal: str) -> None:
    """A lone surrogate (a JSON escape, or bytes that are not UTF-8 in the argument) is refused
    by name from the console script, with strict UTF-8 output as under a UTF-8 locale."""
    before = tree_state(tmp_path)
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    done = subprocess.run([*memrepo_command(), "tool", *options, "--repo", str(memory.root), call],
                          capture_output=True, env=env, timeout=60)
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    assert done.returncode == 1, err
    assert "internal error" not in err and "Traceback" not in err
    if options:
        assert err == "" and refusal in json.loads(out)["message"]
    else:
        assert out == "" and err.startswith(refusal) and len(err.splitlines()) == 1
    assert tree_state(tmp_path) == before


def test_tool_refuses_standard_input_that_is_not_utf8_and_reads_utf8_text(memory: MemoryRepo,
                                                                         tmp_path: Path) -> None:
    """Standard input is read as UTF-8 whatever the locale says; bytes that are not UTF-8 are
    refused by name, as in an argument, not an internal error."""
    before = tree_state(tmp_path)
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    command = [*memrepo_command(), "tool", "--repo", str(memory.root), "-"]
    done = subprocess.run(command, input=b'{"command": "view", "path": "system/\xff"}', capture_output=True,
                          env=env, timeout=60)
    assert done.returncode == 1 and done.stdout == b""
    assert done.stderr.decode().startswith("'path' is not valid Unicode: character 8 is U+DCFF"), done.stderr
    assert tree_state(tmp_path) == before
    call = dict(EDIT_HUMAN, new_str="Prefers th\u00e9.")
    done = subprocess.run(command, input=json.dumps(call, ensure_ascii=False).encode("utf-8"),
                          capture_output=True, env={**env, "PYTHONIOENCODING": "latin-1"}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Prefers th\u00e9." in (memory.read(HUMAN) or b"").decode("utf-8")


def test_tool_reads_the_call_from_stdin(
    memory: MemoryRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(EDIT_HUMAN) + "\n"))
    code, out, _ = run(capsys, "tool", "--repo", str(memory.root), "-")
    assert code == 0
    assert out.startswith("Committed ") and '"Note tea"' in out
    assert "Prefers tea." in (memory.read(HUMAN) or b"").decode()


def test_tool_agent_id_overrides_the_repository_agent(
    memory: MemoryRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, _ = run(capsys, "tool", "--repo", str(memory.root), "--agent-id", "b2",
                     "--agent-name", "Bea", json.dumps(EDIT_HUMAN))
    assert code == 0
    assert git(memory.root, "log", "-1", "--format=%an <%ae>").strip() == "Bea <b2@agents.memrepo>"
    call = dict(EDIT_HUMAN, old_str="Prefers tea.", new_str="Prefers coffee.")
    code, _, _ = run(capsys, "tool", "--repo", str(memory.root), "--agent-id", "c3", json.dumps(call))
    assert code == 0
    # Another agent without a name of its own is shown by its id, never by the repository's agent's name.
    assert git(memory.root, "log", "-1", "--format=%an <%ae>").strip() == "c3 <c3@agents.memrepo>"


def test_tool_refuses_a_bad_agent_id(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    head = memory.head_sha()
    code, out, err = run(capsys, "tool", "--repo", str(memory.root), "--agent-id", "no good",
                         json.dumps(EDIT_HUMAN))
    assert code == 1 and out == ""
    assert len(err.splitlines()) == 1 and "agent_id" in err
    assert memory.head_sha() == head


def test_tool_refused_validation_goes_to_stderr(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    before = tree_state(memory.root)
    call = {"command": "create", "path": "system/scratch.md", "file_text": "no frontmatter"}
    code, out, err = run(capsys, "tool", "--repo", str(memory.root), json.dumps(call))
    assert code == 1 and out == ""
    assert err.startswith("Frontmatter validation failed:\n")
    assert "Traceback" not in err
    assert tree_state(memory.root) == before


# ----------------------------------------------------------------------------- log

def log_rows(out: str) -> list[list[str]]:
    """sha, time, role, author, summary of each line of `memrepo log`."""
    return [re.split(r"\s{2,}", line.strip(), maxsplit=4) for line in out.splitlines()]


def commit_as(root: Path, name: str, email: str, path: str, text: str, message: str) -> None:
    write(root, path, text)
    git(root, "add", path)
    git(root, "-c", f"user.name={name}", "-c", f"user.email={email}", "commit", "-q", "--no-verify",
        "-m", message)


@pytest.fixture
def history(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> MemoryRepo:
    """init (by the person), an agent's edit, a person's commit, a dream and the integrator."""
    assert run(capsys, "tool", "--repo", str(memory.root), json.dumps(EDIT_HUMAN))[0] == 0
    root = memory.root
    commit_as(root, PERSON_NAME, PERSON_EMAIL, "reference/team.md",
              "---\ndescription: The team\n---\nPat leads.\n", "Describe the team")
    commit_as(root, "memrepo dreamer", "d7@dreams.memrepo", "reference/dreams/d7.md",
              "---\ndescription: Dream d7\n---\nConsolidated.\n", "Consolidate a conversation")
    commit_as(root, "memrepo integrator", "integrator@bot.memrepo", "reference/team.md",
              "---\ndescription: The team\n---\nPat leads. Kim joined.\n", "Merge pull request #3")
    capsys.readouterr()
    return memory


def test_log_shows_each_writer_role(history: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "log", "--repo", str(history.root))
    assert (code, err) == (0, "")
    rows = log_rows(out)
    assert [(r[2], r[3], r[4]) for r in rows] == [
        ("integrator", "memrepo integrator", "Merge pull request #3"),
        ("dreamer", "memrepo dreamer", "Consolidate a conversation"),
        ("human", PERSON_NAME, "Describe the team"),
        ("agent", "Ada", "Note tea"),
        ("agent", "Ada", INIT_COMMIT),  # init commits as the memory's agent
    ]
    shas = git(history.root, "log", "--format=%H").split()
    assert [r[0] for r in rows] == [sha[:10] for sha in shas]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ", r[1]) for r in rows)


def test_log_of_one_file(history: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "log", "--repo", str(history.root), "reference/team.md")
    assert code == 0
    assert [r[4] for r in log_rows(out)] == ["Merge pull request #3", "Describe the team"]
    # Letta lets paths omit .md.
    code, out, _ = run(capsys, "log", "--repo", str(history.root), "reference/team")
    assert [r[4] for r in log_rows(out)] == ["Merge pull request #3", "Describe the team"]
    code, out, _ = run(capsys, "log", "--repo", str(history.root), HUMAN)
    assert [r[4] for r in log_rows(out)] == ["Note tea", INIT_COMMIT]
    code, out, _ = run(capsys, "log", "--repo", str(history.root), "reference/never.md")
    assert (code, out) == (0, LOG_EMPTY.format(path="reference/never.md") + "\n")


def test_log_max_count(history: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "log", "--repo", str(history.root), "-n", "2")
    assert code == 0
    assert [r[2] for r in log_rows(out)] == ["integrator", "dreamer"]
    code, out, _ = run(capsys, "log", "--repo", str(history.root), "--max-count", "1", "reference/team.md")
    assert [r[4] for r in log_rows(out)] == ["Merge pull request #3"]
