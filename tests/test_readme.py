"""The README's shell examples, run as a newcomer runs them: each block of commands in a new
folder of its own, with this checkout's `memrepo` first on PATH, no forge or LLM settings, and
a fresh git identity (conftest's). A command that fails fails the test, named."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import FORGE_ENV

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[A-Za-z0-9_-]*)\s*$")
SHELLS = ("sh", "bash")


@dataclass(frozen=True)
class Block:
    """One fenced block of the README: the line its fence opens on, its language, its text."""

    line: int
    lang: str
    text: str

    @property
    def first(self) -> str:
        return self.text.splitlines()[0].strip() if self.text else ""


def readme_blocks(text: str | None = None) -> list[Block]:
    """Every fenced block of the README (indented ones in lists too), in order."""
    lines = (README.read_text(encoding="utf-8") if text is None else text).splitlines()
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
            out.append(Block(start[0], start[1], "\n".join(body) + "\n"))
            start = None
    return out


def shell_blocks() -> list[Block]:
    return [b for b in readme_blocks() if b.lang in SHELLS]


def block_starting(first: str) -> Block:
    [block] = [b for b in shell_blocks() if b.first.startswith(first)]
    return block


def newcomer_env(folder: Path) -> dict[str, str]:
    """The environment a block runs in: this checkout's memrepo first on PATH (the virtualenv's
    bin), transcripts in the folder, and no settings that would reach a real forge or LLM."""
    env = {k: v for k, v in os.environ.items() if k not in FORGE_ENV}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["MEMREPO_HOME"] = str(folder / "memrepo-home")
    return env


def run_block(block: Block, folder: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The block as one bash script in `folder`: it stops at the first command that fails, and
    says which (on standard error, `README command failed (N): COMMAND`). Standard input is
    empty, so a server on stdio (`memrepo mcp`) ends at once."""
    script = ("set -eo pipefail\n"
              "trap 'echo \"README command failed ($?): $BASH_COMMAND\" >&2' ERR\n" + block.text)
    return subprocess.run(["bash", "-c", script], cwd=folder, env=newcomer_env(folder), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def assert_ran(done: subprocess.CompletedProcess[str], block: Block) -> None:
    assert done.returncode == 0, (f"README.md:{block.line}: {done.stderr.strip()}\n"
                                  f"--- the block:\n{block.text}--- its output:\n{done.stdout}")


# ------------------------------------------------------------------------------ the Using it block
def test_the_using_it_commands_run_on_a_memory_made_today(tmp_path: Path) -> None:
    block = block_starting("memrepo init memory")
    done = run_block(block, tmp_path)
    assert_ran(done, block)
    # log --since today listed both commits, and `at` a moment since showed the edit
    assert "Create memory repository" in done.stdout and "Record how the user likes answers" in done.stdout
    assert re.search(r"^Prefers short answers\.$", done.stdout, re.MULTILINE)
    # no date fixed in the past: a memory made on any day has no history before it
    for line in block.text.splitlines():
        if re.search(r"\b(at|--since|--until|--at)\s", line):
            assert not re.search(r"\b20\d\d-\d\d-\d\d", line), line


# ------------------------------------------------------------------------------ `why PATH:LINE`
WHY = re.compile(r"memrepo why (?P<path>\S+):(?P<line>\d+) --repo (?P<repo>\S+)")


def body_start(lines: list[str]) -> int:
    """The number (from 1) of a memory file's first line after its frontmatter."""
    assert lines[0] == "---"
    return lines.index("---", 1) + 2


def test_the_why_example_points_at_the_line_the_readmes_tool_call_wrote(tmp_path: Path) -> None:
    block = block_starting("memrepo init memory")
    [example] = WHY.finditer(block.text)
    done = run_block(block, tmp_path)
    assert_ran(done, block)
    lines = (tmp_path / example["repo"] / example["path"]).read_text(encoding="utf-8").splitlines()
    number = int(example["line"])
    assert number >= body_start(lines), f"line {number} is the frontmatter's: {lines[number - 1]!r}"
    assert lines[number - 1] == "Prefers short answers."
    assert "  | Prefers short answers.\nWritten by agent Ada <ada@agents.memrepo> with the memory tool" in done.stdout


# ------------------------------------------------------------------------------ `memrepo tool -`
def fresh_memory(folder: Path) -> None:
    """`memory` in `folder`, made by the README's own first command (`memrepo init memory ...`)."""
    init = Block(0, "sh", block_starting("memrepo init memory").first + "\n")
    assert_ran(run_block(init, folder), init)


def test_the_tool_call_from_standard_input_example_commits_and_reads_back(tmp_path: Path) -> None:
    block = block_starting("memrepo tool --repo memory - <<")
    fresh_memory(tmp_path)
    done = run_block(block, tmp_path)
    assert_ran(done, block)
    written = (tmp_path / "memory" / "projects" / "ledger.md").read_text(encoding="utf-8")
    assert written == ("---\ndescription: The ledger service\n---\n"
                       "Moves to Postgres 16 in Q1.\nIt's the payments team's.\n")
    log = subprocess.run(["git", "log", "-1", "--format=%s|%an"], cwd=tmp_path / "memory", capture_output=True,
                         text=True, check=True).stdout
    assert log == "Record the ledger's plans|Ada\n"
    viewed = json.loads(done.stdout[done.stdout.index("{"):])  # the second call's --json result
    assert viewed["ok"] is True and "It's the payments team's." in viewed["content"]
