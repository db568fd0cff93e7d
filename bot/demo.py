"""`memrepo demo`: the product on one machine, every step checked.

A bare repository stands in for the team's GitHub remote. An agent edits its memory through
the memory tool (each call one commit, pushed), a person commits to the same memory from
their own clone, the agent syncs, compiles its prompt, and the history shows who wrote
what. The demo fails (exit 1) if any step did not do what it says.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from bot import messages
from bot.errors import MemrepoError
from bot.identity import role_of
from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.memfs.prompt import PromptCompiler
from bot.memfs.tool import MemoryTool

AGENT_ID = "ada"
AGENT_NAME = "Ada"
PERSON = ("Sam Rivera", "sam@example.com")
SYSTEM_PROMPT = "You are Ada, a helpful assistant with a long-term memory."

EDITS: list[tuple[dict, bool]] = [
    ({"command": "str_replace", "path": "system/human.md", "old_str": "Nothing recorded yet.",
      "new_str": "- Name: Kim Jiwoo; works on the payments team.\n- Prefers short answers with code.",
      "reason": "Record who the user is and how they like answers"}, True),
    ({"command": "create", "file_path": "reference/projects/ledger.md",
      "description": "The ledger service: what it is, decisions, open questions",
      "file_text": "- Ledger moves to Postgres 16 in Q1.\n- Owner: payments team.\n",
      "reason": "Start notes on the ledger project"}, True),
    ({"command": "insert", "path": "reference/projects/ledger.md", "insert_line": -1,
      "insert_text": "- Open question: keep the nightly reconciliation job?",
      "reason": "Note an open question about the ledger"}, True),
    # Refused: the agent tries to write outside memory. Nothing changes, the agent is told why.
    ({"command": "create", "path": "../outside.md", "file_text": "x"}, False),
    # Refused: a system file without frontmatter does not validate.
    ({"command": "create", "path": "system/scratch.md", "file_text": "no frontmatter here"}, False),
]


class DemoFailed(MemrepoError):
    pass


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise DemoFailed(messages.DEMO_GIT_FAILED.format(command=" ".join(args), error=done.stderr.strip()))
    return done.stdout


def run(workdir: Path | None = None, out: Callable[[str], None] = print) -> int:
    """Run the story; returns 0 when every step did what it says, else raises DemoFailed."""
    with tempfile.TemporaryDirectory(prefix="memrepo-demo-") as tmp:
        base = Path(workdir) if workdir is not None else Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        _story(base, out)
    return 0


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise DemoFailed(messages.DEMO_STEP_FAILED.format(what=what))


def _story(base: Path, out: Callable[[str], None]) -> None:
    remote = base / "remote.git"
    _git(base, "init", "--bare", "-q", "-b", "main", str(remote))
    out(messages.DEMO_REMOTE.format(path=remote))

    repo = init_repository(base / "agent-memory", AGENT_ID, AGENT_NAME)
    out(messages.DEMO_INIT.format(path=repo.root, agent=AGENT_NAME, agent_id=AGENT_ID))
    out("   " + sync.set_remote(repo, str(remote)))
    _check(_git(remote, "rev-parse", "main").strip() == repo.head_sha(), "the remote has the first commit")

    out(messages.DEMO_EDITS)
    tool = MemoryTool(repo)
    for call, should_succeed in EDITS:
        before = repo.head_sha()
        result = tool.call(call)
        mark = "ok " if result.ok else "refused"
        first, *rest = result.message.splitlines()
        out(f"   [{mark}] {call['command']}: {first}")
        for line in rest:
            out(f"             {line}")
        expected = "succeeds" if should_succeed else "is refused"
        _check(result.ok == should_succeed, f"{call['command']} {expected}")
        if result.ok:
            _check(result.pushed is True, "each accepted edit is pushed")
        else:
            _check(repo.head_sha() == before, "a refused call leaves memory unchanged")

    person = base / "sam-clone"
    _git(base, "clone", "-q", str(remote), str(person))
    notes = person / "reference/projects/ledger.md"
    notes.write_text(notes.read_text() + "- Decision (Sam): keep the nightly job until March.\n")
    _git(person, "-c", f"user.name={PERSON[0]}", "-c", f"user.email={PERSON[1]}",
         "commit", "-qam", "Record the decision on the nightly job")
    _git(person, "push", "-q", "origin", "main")
    out(messages.DEMO_PERSON.format(name=PERSON[0]))

    result = sync.sync(repo)
    out(messages.DEMO_SYNCED.format(summary=result.summary))
    remote_head = _git(remote, "rev-parse", "main").strip()
    _check(repo.head_sha() == remote_head, "the agent's clone matches the remote")
    _check(b"keep the nightly job" in (repo.read("reference/projects/ledger.md") or b""),
           "the agent sees the person's decision")

    compiled = PromptCompiler(repo.root).compile(SYSTEM_PROMPT)
    out(messages.DEMO_PROMPT.format(sha=compiled.head_sha[:12]))
    out(_indent(compiled.text))
    _check("Kim Jiwoo" in compiled.text and "ledger.md" in compiled.text, "the prompt holds the new memory")

    out(messages.DEMO_HISTORY)
    roles = []
    for info in repo.log():
        role = role_of(info.author_email)
        roles.append(role)
        out(messages.DEMO_LOG_LINE.format(sha=info.sha[:10], role=role, author=info.author_name,
                                          summary=info.summary))
    _check(roles.count("agent") >= 3 and "human" in roles, "history names the agent and the person")
    out(messages.DEMO_DONE)


def _indent(text: str) -> str:
    return "\n".join("   | " + line for line in text.splitlines())
