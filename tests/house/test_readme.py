"""The shell examples of the README and of docs/*.md, run as a newcomer runs them on a fresh
machine without network: every ```sh and ```bash block is either run or excluded below with the
reason, and a block nobody classified fails the test, so a new example is never silently left out.

A block runs as one bash script (`set -eo pipefail`) in a new folder of its own, with this
checkout's `memrepo` first on PATH, a git identity of its own, no forge or LLM settings and an
empty standard input; it stops at the first command that fails, which the failure names. Each
runnable block runs once per module (under ten seconds in all, about four of them `memrepo mcp`
starting and ending at the end of its input); the tests then check what the commands did."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import FORGE_ENV, PERSON_EMAIL, PERSON_NAME

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[A-Za-z0-9_-]*)\s*$")
SHELLS = ("sh", "bash")


def documents() -> list[Path]:
    """The README and every page of docs/, whose examples are held to the same rule."""
    return [README, *sorted(DOCS.glob("*.md"))]


@dataclass(frozen=True)
class Block:
    """One fenced block of a document: the line its fence opens on, its language, its text, and
    the document (relative to the checkout)."""

    line: int
    lang: str
    text: str
    file: str = "README.md"

    @property
    def first(self) -> str:
        return self.text.splitlines()[0].strip() if self.text else ""


def readme_blocks(text: str | None = None, path: Path = README) -> list[Block]:
    """Every fenced block of a document, the README by default (indented ones in lists too), in order."""
    lines = (path.read_text(encoding="utf-8") if text is None else text).splitlines()
    name = path.relative_to(ROOT).as_posix()
    out: list[Block] = []
    start: tuple[int, str, str] | None = None
    body: list[str] = []
    for number, line in enumerate(lines, 1):
        fence = FENCE.match(line)
        if fence is None:
            if start is not None:
                body.append(line[len(start[2]):] if line.startswith(start[2]) else line.lstrip())
            continue
        if start is None:
            start, body = (number, fence.group("lang"), fence.group("indent")), []
        else:
            out.append(Block(start[0], start[1], "\n".join(body) + "\n", name))
            start = None
    return out


def shell_blocks() -> list[Block]:
    return [b for path in documents() for b in readme_blocks(path=path) if b.lang in SHELLS]


def block_starting(first: str) -> Block:
    [block] = [b for b in shell_blocks() if classified(b) == first]
    return block


# ------------------------------------------------------------------------------ which blocks run
USING_IT = 'cd "$(mktemp -d)"'  # the Quick start's own example, in a scratch folder
INIT = "memrepo init memory --agent-id ada"
TOOL_STDIN = "memrepo tool --repo memory - <<"
CLAUDE_CODE = "memrepo claude-code install --repo ~/memory --project ~/code/myproject"
CLAUDE_CODE_AUTO_MEMORY = CLAUDE_CODE + " --auto-memory"
CODEX = "memrepo codex install --repo ~/memory"

# Blocks that cannot run on a fresh machine without network, by their first line, and why.
EXCLUDED = {
    "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/memrepo demo":
        "installs from the package index; the demo itself runs in tests/serve/test_demo.py",
    "git -C DIR/ada remote get-url origin":
        "needs the folder a demo kept and its stack started again on the demo's port; its `why` line runs on a "
        "kept demo in tests/serve/test_demo.py",
    "sudo apt-get install -y git nodejs npm chromium":
        "installs system packages as root and runs the whole test suite",
    "memrepo repository set https://github.com/acme/ada-memory.git":
        "needs a repository on GitHub; `repository set` and `clone` run against localhub and bare repositories "
        "in tests/cli/test_repository_cli.py and tests/memfs/test_clone.py",
    "memrepo shared attach https://github.com/acme/team-memory.git":
        "needs a shared memory on GitHub; attach, list, sync and detach run against localhub and bare "
        "repositories in tests/memfs/test_shared_memory.py and tests/memfs/test_shared_rules.py",
    "memrepo follow --repo ~/.letta/agents/$AGENT_ID/memory":
        "needs a Letta Code agent's folder connected to a forge; follow runs against localhub in tests/follow/",
    "cp memrepo.env.example memrepo.env":
        "the settings of a deployment; tests/serve/test_container.py checks the example names every setting",
    "echo 'MEMREPO_APP_KEY_PATH=/dev/null' >> .env":
        "starts compose, which needs a Docker engine; tests/serve/test_container.py checks what token mode mounts and "
        "that the workers then act with the token",
    "memrepo localhub serve &":
        "leaves a server running on the fixed port 8765, and TOKEN stands for the token create-repo prints",
    "memrepo localhub serve --port 8765":
        "a server in the foreground on a fixed port, and TOKEN stands for a token; tests/cli/test_cli_newcomer.py "
        "runs create-repo and the token calls",
    "MEMORY=~/.letta/agents/$AGENT_ID/memory":
        "needs a Letta Code agent, a GitHub token and an integrator's receiver",
    ".venv/bin/pip install -q -e '.[anthropic]'":
        "installs from the package index and calls Anthropic's API with a key",
    "memrepo identity set --repo ~/memory --token-file ~/.config/ada-bot.token":
        "needs a second account's token on a forge; every identity command runs against localhub with two "
        "accounts and a GitHub App in tests/review/test_agent_identity.py",
    "memrepo review list --repo ~/memory":
        "needs a memory whose forge holds open memory pull requests and a person's token; every review "
        "command runs against localhub in tests/review/test_review_cli.py",
}


def make_memory(folder: Path, env: dict[str, str]) -> None:
    """`memory` in `folder`, made by the README's own first command (`memrepo init memory ...`)."""
    [init] = [line for line in block_starting(USING_IT).text.splitlines() if line.startswith(INIT)]
    subprocess.run(["bash", "-c", init], cwd=folder, env=env, capture_output=True, check=True, timeout=60)


def scratch_under(folder: Path, env: dict[str, str]) -> None:
    """`mktemp -d` makes its folder under `folder/tmp`, where the test finds it."""
    (folder / "tmp").mkdir()
    env["TMPDIR"] = str(folder / "tmp")


def make_home_memory_and_project(folder: Path, env: dict[str, str]) -> None:
    """What the Claude Code example takes as there: a memory at ~/memory and a project at
    ~/code/myproject (the block runs with HOME set to its folder)."""
    env["HOME"] = str(folder)
    subprocess.run(["bash", "-c", "memrepo init ~/memory"], cwd=folder, env=env, capture_output=True, check=True,
                   timeout=60)
    (folder / "code" / "myproject").mkdir(parents=True)


# Blocks that run, by their first line, and what their folder holds first.
Setup = Callable[[Path, dict[str, str]], None]
RUN: dict[str, Setup | None] = {
    USING_IT: scratch_under,  # it makes its scratch folder and its memory itself
    TOOL_STDIN: make_memory,  # the memory the Using it block makes
    CLAUDE_CODE: make_home_memory_and_project,
    CLAUDE_CODE_AUTO_MEMORY: make_home_memory_and_project,
    CODEX: make_home_memory_and_project,
}


def classified(block: Block) -> str | None:
    """The RUN or EXCLUDED entry `block` starts with (the longest, when one entry starts
    another), or None."""
    found = [key for key in (*RUN, *EXCLUDED) if block.first.startswith(key)]
    return max(found, key=len) if found else None


# ------------------------------------------------------------------------------ running them
def newcomer_env(folder: Path) -> dict[str, str]:
    """The environment a block runs in: this checkout's memrepo first on PATH (the virtualenv's
    bin), a git identity and home of its own beside `folder`, transcripts beside it too, and no
    settings that would reach a real forge or LLM."""
    home = folder.parent / f"{folder.name}-home"
    home.mkdir(exist_ok=True)
    config = home / ".gitconfig"
    config.write_text(f"[user]\n\tname = {PERSON_NAME}\n\temail = {PERSON_EMAIL}\n[init]\n\tdefaultBranch = main\n")
    env = {k: v for k, v in os.environ.items()
           if k not in FORGE_ENV and not k.startswith(("GIT_", "MEMREPO_"))}
    env.update(PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]), HOME=str(home),
               GIT_CONFIG_GLOBAL=str(config), GIT_CONFIG_NOSYSTEM="1", MEMREPO_HOME=str(home / "memrepo"))
    return env


def run_block(block: Block, folder: Path, env: dict[str, str], timeout: float = 60
              ) -> subprocess.CompletedProcess[str]:
    """The block as one bash script in `folder`: it stops at the first command that fails, and
    says which (on standard error, `README command failed (N): COMMAND`). Standard input is
    empty, so a server on stdio (`memrepo mcp`) ends at once."""
    script = ("set -eo pipefail\n"
              "trap 'echo \"README command failed ($?): $BASH_COMMAND\" >&2' ERR\n" + block.text)
    return subprocess.run(["bash", "-c", script], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


@dataclass(frozen=True)
class Ran:
    block: Block
    start: Path  # the folder the block started in
    done: subprocess.CompletedProcess[str]

    @property
    def folder(self) -> Path:
        """Where the block did its work: the scratch folder it made (`cd "$(mktemp -d)"`), else
        the folder it started in."""
        made = sorted(p for p in (self.start / "tmp").glob("*") if p.is_dir()) if (self.start / "tmp").is_dir() else []
        return made[0] if len(made) == 1 else self.start

    @property
    def failure(self) -> str | None:
        if self.done.returncode == 0:
            return None
        return (f"{self.block.file}:{self.block.line}: {self.done.stderr.strip()}\n"
                f"--- the block:\n{self.block.text}--- its output:\n{self.done.stdout}")


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Ran]:
    """Every runnable block, run once, each in a new folder after its setup."""
    out: dict[str, Ran] = {}
    for block in shell_blocks():
        key = classified(block)
        if key not in RUN:
            continue
        folder = tmp_path_factory.mktemp("readme")
        env = newcomer_env(folder)
        setup = RUN[key]
        if setup is not None:
            setup(folder, env)
        out[key] = Ran(block, folder, run_block(block, folder, env))
    return out


def test_every_shell_block_is_run_or_excluded_for_a_reason() -> None:
    blocks = shell_blocks()
    unclassified = [f"{b.file}:{b.line}: {b.first}" for b in blocks if classified(b) is None]
    assert not unclassified, "classify these blocks in RUN or EXCLUDED: " + "; ".join(unclassified)
    found = [classified(b) for b in blocks]
    assert sorted(k for k in found if k is not None) == sorted((*RUN, *EXCLUDED))  # each entry once, none stale
    assert all(reason for reason in EXCLUDED.values())


@pytest.mark.parametrize("key", list(RUN))
def test_a_runnable_block_runs_to_the_end(ran: dict[str, Ran], key: str) -> None:
    assert ran[key].failure is None, ran[key].failure


# ------------------------------------------------------------------------------ what they did
def test_the_using_it_dates_are_ones_a_memory_made_today_has(ran: dict[str, Ran]) -> None:
    result = ran[USING_IT]
    assert result.failure is None, result.failure
    # log --since today listed both commits, and `at` a moment since showed the edit
    assert "Create memory repository" in result.done.stdout
    assert "Record how the user likes answers" in result.done.stdout
    assert re.search(r"^Prefers short answers\.$", result.done.stdout, re.MULTILINE)
    # no date fixed in the past: a memory made on any day has no history before it
    for line in result.block.text.splitlines():
        if re.search(r"\b(at|--since|--until|--at)\s", line):
            assert not re.search(r"\b20\d\d-\d\d-\d\d", line), line


def test_the_using_it_example_makes_its_memory_in_a_scratch_folder_not_where_it_is_run(ran: dict[str, Ran]) -> None:
    # run from a checkout, the example must not leave `memory/` (or prompt.txt) inside the clone
    result = ran[USING_IT]
    assert result.failure is None, result.failure
    assert result.folder != result.start and (result.folder / "memory" / ".git").is_dir()
    assert sorted(p.name for p in result.start.iterdir()) == ["tmp"]


WHY = re.compile(r"memrepo why (?P<path>\S+):(?P<line>\d+) --repo (?P<repo>\S+)")


def body_start(lines: list[str]) -> int:
    """The number (from 1) of a memory file's first line after its frontmatter."""
    assert lines[0] == "---"
    return lines.index("---", 1) + 2


def test_the_why_example_points_at_the_line_the_readmes_tool_call_wrote(ran: dict[str, Ran]) -> None:
    result = ran[USING_IT]
    assert result.failure is None, result.failure
    [example] = WHY.finditer(result.block.text)
    lines = (result.folder / example["repo"] / example["path"]).read_text(encoding="utf-8").splitlines()
    number = int(example["line"])
    assert number >= body_start(lines), f"line {number} is the frontmatter's: {lines[number - 1]!r}"
    assert lines[number - 1] == "Prefers short answers."
    assert "  | Prefers short answers.\nWritten by agent Ada <ada@agents.memrepo> with the memory tool" \
        in result.done.stdout


def test_the_tool_call_from_standard_input_example_commits_and_reads_back(ran: dict[str, Ran]) -> None:
    result = ran[TOOL_STDIN]
    assert result.failure is None, result.failure
    memory = result.folder / "memory"
    written = (memory / "projects" / "ledger.md").read_text(encoding="utf-8")
    assert written == ("---\ndescription: The ledger service\n---\n"
                       "Moves to Postgres 16 in Q1.\nIt's the payments team's.\n")
    log = subprocess.run(["git", "log", "-1", "--format=%s|%an"], cwd=memory, capture_output=True, text=True,
                         check=True).stdout
    assert log == "Record the ledger's plans|Ada\n"
    viewed = json.loads(result.done.stdout[result.done.stdout.index("{"):])  # the second call's --json result
    assert viewed["ok"] is True and "It's the payments team's." in viewed["content"]


def test_the_claude_code_example_writes_the_projects_two_files(ran: dict[str, Ran]) -> None:
    result = ran[CLAUDE_CODE]
    assert result.failure is None, result.failure
    project = result.folder / "code" / "myproject"
    servers = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert "memrepo" in servers and str(result.folder / "memory") in json.dumps(servers["memrepo"])
    assert (project / ".claude" / "settings.local.json").is_file()


def test_the_codex_example_writes_codexs_config_with_trusted_hooks(ran: dict[str, Ran]) -> None:
    import tomllib

    result = ran[CODEX]
    assert result.failure is None, result.failure
    config = tomllib.loads((result.folder / ".codex" / "config.toml").read_text(encoding="utf-8"))
    assert str(result.folder / "memory") in json.dumps(config["mcp_servers"]["memrepo"])
    assert len(config["hooks"]["state"]) == 3


def test_the_auto_memory_example_points_claude_codes_memory_into_the_memory(ran: dict[str, Ran]) -> None:
    result = ran[CLAUDE_CODE_AUTO_MEMORY]
    assert result.failure is None, result.failure
    local = result.folder / "code" / "myproject" / ".claude" / "settings.local.json"
    assert json.loads(local.read_text(encoding="utf-8"))["autoMemoryDirectory"] == \
        str(result.folder / "memory" / "auto-memory")


def test_a_failing_readme_command_fails_its_block(tmp_path: Path) -> None:
    # the runner is honest: a command that fails in the middle of a block stops it, named
    block = Block(1, "sh", "memrepo validate --repo memory\necho never\n")
    done = run_block(block, tmp_path, newcomer_env(tmp_path))
    assert done.returncode != 0 and "never" not in done.stdout
    assert "README command failed (1): memrepo validate --repo memory" in done.stderr
    piped = Block(1, "sh", "memrepo at yesterday --repo memory | cat\n")
    done = run_block(piped, tmp_path, newcomer_env(tmp_path))
    assert done.returncode != 0 and "README command failed" in done.stderr  # pipefail: memrepo's exit, not cat's


def test_the_letta_row_example_reads_as_its_table_says() -> None:
    # docs/letta-code.md's rows, read by memrepo's own reader of Letta Code's transcripts
    from bot.transcript.letta import read_conversation

    [example] = [b for b in readme_blocks(path=DOCS / "letta-code.md") if b.lang == "json"]
    read = read_conversation("ada", "c1", [line.encode() for line in example.text.splitlines()], "2026-03-14T10:00:00Z")
    assert [(m.kind, m.source, m.message_id) for m in read.messages] == [
        ("user", "user", "message-5f2a"), ("reasoning", "agent", "message-77d0"),
        ("tool_call", "agent", "toolu_01"), ("tool_result", "tool:memory", "toolu_01.2")]
    assert read.skipped == {"error": 1} and read.problems == []
