"""A memory Letta Code made is a memory repository for every memrepo command, in both layouts.

Each memory here is made as Letta makes one: `git init`, Letta's own pre-commit hook and layout
policy, the agent in `letta.agentId`, Letta's empty first commit, then Letta's memory tool
writing files that Letta's hook accepts at commit, with no `.memrepo/` anywhere. v1 is a local
MemFS (`legacy-only`, `system/`); v2 is what Letta's API-backed agents keep (`root-marker`, a
root MEMORY.md). Every command runs through the CLI, and afterwards Letta writes again and its
hook still accepts the commit: nothing memrepo did left the memory in a state Letta refuses.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import FORGE_ENV, StoreClock, git, localhub_token, run_cli
from tests.letta_conformance.letta import LEGACY, POLICY_FILE, ROOT_MARKER, Letta, problem_lines
from tests.memory_forge import FAST, REPO

AGENT = "agent-6c1f7a2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b"  # Letta's spelling of an agent id
AGENT_NAME = "Letta Agent"  # the name Letta gives an agent whose display name it cannot fetch
INDEX = "# Memory\n\nWho I am: [persona](persona.md). Who I work with: [human](human.md).\n"
LAYOUTS = ("v1", "v2")


@dataclass(frozen=True)
class LettaMemory:
    """A memory folder Letta Code keeps, and Letta's own tool and hook to write it with."""

    letta: Letta
    root: Path
    layout: str

    def core(self, name: str) -> str:
        """The path of a core memory file in this layout."""
        return f"system/{name}.md" if self.layout == "v1" else f"{name}.md"

    @property
    def human(self) -> str:
        return self.core("human")

    def write(self, call: dict) -> None:
        """One call of Letta's memory tool (its file writes; Letta commits afterwards)."""
        answer = self.letta.tool(self.root, self.layout, {"reason": "x", **call})
        assert answer["ok"], answer

    def commit(self, reason: str) -> subprocess.CompletedProcess[str]:
        """Letta's commit of what its tool wrote: `git add -A` and `git commit`, which runs
        Letta's pre-commit hook, as the agent (Letta's `commitMemoryPaths`)."""
        git(self.root, "add", "-A")
        return subprocess.run(["git", "-c", f"user.name={AGENT_NAME}", "-c", f"user.email={AGENT}@letta.com",
                               "commit", "-q", "-m", reason], cwd=self.root, capture_output=True, text=True)

    def letta_files(self) -> dict[str, bytes]:
        """What Letta installed in the git folder: its hooks and its layout policy."""
        git_dir = self.root / ".git"
        return {path.relative_to(git_dir).as_posix(): path.read_bytes()
                for path in (*sorted((git_dir / "hooks").iterdir()), git_dir / POLICY_FILE)}

    def edit(self, old: str, new: str) -> str:
        """Letta edits what it knows of the user and commits; its hook must accept the commit.
        The new HEAD."""
        assert git(self.root, "status", "--porcelain") == "", "Letta's tools refuse a memory with uncommitted changes"
        self.write({"command": "str_replace", "file_path": self.human, "old_string": old, "new_string": new})
        done = self.commit(f"Update human: {new}")
        assert done.returncode == 0, f"Letta's hook refused Letta's own commit:\n{done.stdout}{done.stderr}"
        return git(self.root, "rev-parse", "HEAD").strip()


def letta_memory(letta: Letta, root: Path, layout: str) -> LettaMemory:
    """A memory as Letta Code makes one (`initializeLocalMemoryRepo`, then its tool and hook)."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    letta.install_hooks(root, LEGACY if layout == "v1" else ROOT_MARKER)
    for key, value in (("letta.agentId", AGENT), ("user.email", f"{AGENT}@letta.com"), ("user.name", AGENT_NAME),
                       ("commit.gpgsign", "false")):
        git(root, "config", key, value)
    git(root, "commit", "-q", "--allow-empty", "-m", "chore: initialize empty local memory")
    memory = LettaMemory(letta, root, layout)
    if layout == "v2":
        (root / "MEMORY.md").write_text(INDEX)  # an API-backed agent's root index, as its server seeds it
    memory.write({"command": "create", "file_path": memory.core("persona"), "description": "Who I am.",
                  "file_text": "I am Ada.\n"})
    memory.write({"command": "create", "file_path": memory.human, "description": "The person I work with.",
                  "file_text": "Name: Sam.\n"})
    done = memory.commit("Create persona and human")
    assert done.returncode == 0, done.stdout + done.stderr
    return memory


@pytest.fixture(params=LAYOUTS)
def made(request: pytest.FixtureRequest, letta: Letta, tmp_path: Path) -> LettaMemory:
    return letta_memory(letta, tmp_path / "memory", request.param)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """A memrepo command that must succeed: its output."""
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, f"memrepo {' '.join(argv)} exited {code}: {err}"
    return out


# ------------------------------------------------------------------------------ on the folder itself
def test_local_commands_take_a_letta_memory(made: LettaMemory, capsys: pytest.CaptureFixture[str]) -> None:
    repo = str(made.root)
    assert "Memory is valid" in cli(capsys, "validate", "--repo", repo)
    prompt = cli(capsys, "compile", "--repo", repo)
    assert "I am Ada." in prompt and "Name: Sam." in prompt
    call = {"command": "str_replace", "path": made.human, "old_str": "Name: Sam.", "new_str": "Name: Sam Lee.",
            "reason": "Full name"}
    assert "Committed" in cli(capsys, "tool", "--repo", repo, "--no-push", json.dumps(call))
    assert git(made.root, "log", "-1", "--format=%ae").strip() == f"{AGENT}@agents.memrepo"  # Letta's agent id
    assert git(made.root, "status", "--porcelain") == ""
    assert "Create persona and human" in cli(capsys, "log", "--repo", repo)
    assert "Name: Sam Lee." in cli(capsys, "at", "2100-01-01", made.human, "--repo", repo)
    line = (made.root / made.human).read_text().splitlines().index("Name: Sam Lee.") + 1
    why = json.loads(cli(capsys, "why", f"{made.human}:{line}", "--repo", repo, "--json", "--no-forge"))
    assert "Full name" in json.dumps(why)
    made.edit("Sam Lee.", "Sam Lee. Likes tea.")
    assert "Memory is valid" in cli(capsys, "validate", "--repo", repo)


def test_an_empty_letta_memory_opens(letta: Letta, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Letta's first commit is empty: its hooks, policy and agent id say whose memory it is."""
    root = tmp_path / "memory"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    letta.install_hooks(root, ROOT_MARKER)
    git(root, "config", "letta.agentId", AGENT)
    git(root, "commit", "-q", "--allow-empty", "-m", "chore: initialize empty local memory")
    assert "Memory is valid" in cli(capsys, "validate", "--repo", str(root))
    cli(capsys, "compile", "--repo", str(root))
    memory = LettaMemory(letta, root, "v1")  # no root MEMORY.md yet: v1's rules, for both tools
    call = {"command": "create", "path": memory.human, "description": "The person I work with.",
            "file_text": "Name: Sam.\n", "reason": "First note"}
    assert "Committed" in cli(capsys, "tool", "--repo", str(root), "--no-push", json.dumps(call))
    memory.edit("Name: Sam.", "Name: Sam. Likes tea.")


def test_lettas_limits_hold_for_memrepo_where_letta_set_them(made: LettaMemory, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A person approved Letta's constraints file (.memfs.config.json); memrepo's tool and
    `validate --staged` refuse what Letta's hook refuses under it, naming it as Letta does."""
    config = json.dumps({"version": 1, "maxFileCharacters": 300})
    (made.root / ".memfs.config.json").write_text(config + "\n")
    monkeypatch.setenv("LETTA_MEMORY_CONSTRAINTS_UPDATE", "1")  # the person's approval, as Letta asks for it
    assert made.commit("Limit memory files to 300 characters").returncode == 0
    monkeypatch.delenv("LETTA_MEMORY_CONSTRAINTS_UPDATE")
    long = made.core("long")
    text = "x" * 400
    call = {"command": "create", "path": long, "description": "Long.", "file_text": text, "reason": "Too long"}
    head = git(made.root, "rev-parse", "HEAD")
    code, out, err = run_cli(capsys, "tool", "--repo", str(made.root), "--no-push", json.dumps(call))
    assert code == 1 and "exceeds 300 from maxFileCharacters" in out + err, out + err
    assert git(made.root, "rev-parse", "HEAD") == head

    made.write({"command": "create", "file_path": long, "description": "Long.", "file_text": text})
    git(made.root, "add", "-A")
    theirs = made.letta.run_hook(made.root)
    code, out, _ = run_cli(capsys, "validate", "--staged", "--quiet", "--repo", str(made.root))
    assert not theirs.accepted and code != 0
    assert set(theirs.problems) <= set(problem_lines(out)), (theirs.output, out)
    git(made.root, "reset", "-q", "--hard")
    made.edit("Name: Sam.", "Name: Sam. Likes tea.")


# ------------------------------------------------------------------------------ with a forge
def forge_memory(localhub) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """alice/memory on localhub, empty: the URL a person connects Letta's folder to, and
    alice's token."""
    import github

    token = localhub_token(localhub, "alice")
    github.Github(auth=github.Auth.Token(token), base_url=localhub.api_url, retry=None).get_user().create_repo("memory")
    return localhub.url.replace("http://", f"http://x-access-token:{token}@") + f"/{REPO}.git", token


def integrate(localhub, token: str, redis_url: str, work: Path, number: int) -> None:  # type: ignore[no-untyped-def]
    """The integrator's job on one pull request, which must end merged."""
    from bot.forge.client import ForgeClient
    from bot.forge.credentials import TokenCredentials
    from bot.integrator import jobs
    from bot.integrator.context import using
    from tests.integrator.test_integrator_jobs import make_context

    ctx = make_context(localhub, token, redis_url, work)
    try:
        with using(ctx):
            said = jobs.integrate(REPO, number, context=ctx)
    finally:
        ctx.redis.close()
    client = ForgeClient(REPO, TokenCredentials(token), base_url=localhub.api_url, policy=FAST, min_write_interval=0.0,
                         timeout=10)
    try:
        assert client.get_pull_request(number).merged, said
    finally:
        client.close()


def served_head(root: Path, home: Path) -> str:
    """What `memrepo palace` serves as the memory's head, asked over HTTP, then stopped."""
    import re
    import sys

    import requests

    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "palace", "--repo", str(root), "--port", "0", "--home",
                             str(home), "--no-forge"], cwd=Path(__file__).resolve().parents[2],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        found = re.search(r" at (http://127\.0\.0\.1:\d+/) ", line)
        assert found, line + proc.stderr.read()  # type: ignore[union-attr]
        page = requests.get(found.group(1), timeout=30)
        assert page.status_code == 200, page.text[:500]
        return requests.get(found.group(1) + "head.json", timeout=30).json()["head"]
    finally:
        proc.terminate()
        proc.communicate(timeout=15)


def test_a_letta_memory_on_a_forge_dreams_integrates_and_syncs(  # type: ignore[no-untyped-def]
        made: LettaMemory, localhub, redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Connected to a forge, Letta's folder dreams, the integrator merges the dream, a sync
    brings it in (replaying what Letta committed meanwhile), `why` and the palace read it, and a
    teammate's clone dreams too; Letta's hook accepts Letta's commits all along."""
    from bot.transcript import TranscriptStore

    for name in FORGE_ENV:
        monkeypatch.delenv(name, raising=False)
    repo, home = str(made.root), tmp_path / "home"
    installed = made.letta_files()
    url, token = forge_memory(localhub)
    assert "connected to" in cli(capsys, "repository", "set", url, "--repo", repo)
    assert cli(capsys, "repository", "status", "--repo", repo).startswith("remote")

    with TranscriptStore(home, fsync=False, clock=StoreClock()) as store:
        said = store.append(AGENT, "c1", "user", "I live in Berlin.")
    assert "opened pull request #1" in cli(capsys, "dream", "--repo", repo, "--home", str(home))
    integrate(localhub, token, redis_url, tmp_path / "work", 1)

    made.edit("Name: Sam.", "Name: Sam. Likes tea.")  # Letta writes before it has the merged dream
    assert "pushed" in cli(capsys, "repository", "sync", "--repo", repo)  # Letta's commit replayed onto it
    record = next(p for p in git(made.root, "ls-files").split() if p.startswith("conversations/c1/2"))
    assert "I live in Berlin." in (made.root / record).read_text()
    made.edit("Likes tea.", "Likes green tea.")
    assert "Memory is valid" in cli(capsys, "validate", "--repo", repo)

    line = (made.root / record).read_text().splitlines().index("> I live in Berlin.") + 1
    chain = cli(capsys, "why", f"{record}:{line}", "--repo", repo, "--home", str(home), "--json")
    assert said.message_id in chain
    assert served_head(made.root, home) == git(made.root, "rev-parse", "HEAD").strip()

    assert "pushed" in cli(capsys, "repository", "sync", "--repo", repo)
    teammate = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", url, str(teammate))
    assert "Likes green tea." in cli(capsys, "compile", "--repo", str(teammate))
    with TranscriptStore(home, fsync=False, clock=StoreClock()) as store:
        store.append(AGENT, "c1", "user", "I moved to Lyon.")
    assert "opened pull request #2" in cli(capsys, "dream", "--repo", str(teammate), "--agent", AGENT,
                                           "--home", str(home))
    now = made.letta_files()
    assert "memrepo: pre-push guard" in now.pop("hooks/pre-push").decode()  # memrepo's one hook: Letta writes none
    assert now == installed  # and memrepo changed none of Letta's files
