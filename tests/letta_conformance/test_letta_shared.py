"""A Letta memory with shared memories attached the way Letta Code projects them, checked
against Letta Code's own published code (tests/letta_conformance/letta_shared.cjs runs its
`getRepositoryMountDir`, `validateAgentRepositoryName` and the order its harness lists attached
repositories in, cut out of the pinned bundle).

Letta's own system prompt says of shared memory only that it is not part of the in-context
memory and that each one has its own local projection root and remote; its harness lists the
attached repositories by name (its shared-memory skills discovery, `<mount>/skills`). memrepo's
compile and `follow` read such a memory: every projection at Letta's mount, named in the prompt
by a path that is Letta's mount once $MEMORY_DIR is expanded, in Letta's order, with its skills'
descriptions; a merge on a shared memory's main reaches the prompt through `follow`."""

from __future__ import annotations

import json
import os
import random
import re
import string
import subprocess
from pathlib import Path

import pytest

from bot.memfs import MemoryRepo, PromptCompiler, sync
from bot.memfs import shared_projection as shared
from bot.memfs.create import init_repository
from bot.memfs.shared.record import listing_key, name_problem, projection_root
from tests.conftest import FORGE_ENV, git, run_cli
from tests.letta_conformance.letta import Letta
from tests.letta_conformance.test_letta_memory import AGENT, LAYOUTS, letta_memory

HELPER = Path(__file__).resolve().parent / "letta_shared.cjs"
NAME_CHARS = string.ascii_letters + string.digits + "._-"
TRICKY = ["team", "Team2", "team2", "beta", "Beta", "beta.v2", "beta-v2", "beta_v2", "_x", "-y", ".z", "1z", "Z",
          "a" * 64, "a" * 65, "memory", "Memory", ".", "..", "", " team", "team ", "a b", "équipe", "a/b"]


def letta_rules(letta: Letta, home: Path, names: list[str]) -> dict:
    """What Letta's own code says of `names` for AGENT under `home`: mounts, refusals, order."""
    done = subprocess.run(["node", str(HELPER), str(letta.package), AGENT, json.dumps(names)],
                          capture_output=True, text=True, env={**os.environ, "HOME": str(home)})
    if done.returncode != 0:
        pytest.fail(f"Letta's shared-memory rules did not run: {done.stderr.strip()}")
    return json.loads(done.stdout)


def some_names(count: int) -> list[str]:
    draw = random.Random(31)
    return [''.join(draw.choice(NAME_CHARS) for _ in range(draw.randint(1, 8))) for _ in range(count)]


def test_names_mounts_and_order_are_lettas(letta: Letta, tmp_path: Path) -> None:
    names = list(dict.fromkeys(TRICKY + some_names(400)))
    said = letta_rules(letta, tmp_path, names)
    memory_dir = tmp_path / ".letta" / "agents" / AGENT / "memory"
    for name in names:
        assert (name_problem(name) is None) is (said["refused"][name] is None), (name, said["refused"][name])
        if said["mounts"][name] is not None:
            assert projection_root(memory_dir, name) == Path(said["mounts"][name]), name
    valid = [name for name in names if name_problem(name) is None]
    # A record holds names apart in case, as Letta's server does; Letta breaks a tie by id.
    apart = list({name.lower(): name for name in valid}.values())
    assert sorted(apart, key=listing_key) == letta_rules(letta, tmp_path, apart)["order"]


def _shared_memory(tmp: Path, name: str, files: dict[str, str]) -> tuple[Path, Path]:
    """A memory made by `memrepo init`, holding `files`, pushed to a bare `<name>.git`: (bare, clone)."""
    bare = tmp / "forge" / f"{name}.git"
    bare.parent.mkdir(parents=True, exist_ok=True)
    git(tmp, "init", "-q", "--bare", "-b", "main", str(bare))
    clone = init_repository(tmp / "people" / name, "t0", "Team")
    for path, text in files.items():
        (clone.root / path).parent.mkdir(parents=True, exist_ok=True)
        (clone.root / path).write_text(text)
    git(clone.root, "add", "-A")
    git(clone.root, "commit", "-q", "--no-verify", "-m", "team knowledge")
    sync.set_remote(clone, str(bare))
    assert sync.push(clone).pushed
    return bare, clone.root


SKILL = "---\nname: deploying\ndescription: How the team deploys, step by step.\n---\n\n1. Ship it.\n"
NOTE = "---\ndescription: {what}\n---\n\n- {what}\n"
SHARED_TAG = re.compile(r'<shared name="([^"]+)"')
PROJECTION = re.compile(r"<projection>([^<]+)</projection>")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_compile_and_follow_read_a_letta_memory_with_shared_memories_as_letta_projects_them(
        letta: Letta, tmp_path: Path, layout: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    for key in FORGE_ENV:
        monkeypatch.delenv(key, raising=False)
    home = tmp_path / "home"
    made = letta_memory(letta, home / ".letta" / "agents" / AGENT / "memory", layout)
    own = tmp_path / "forge" / "memory.git"
    own.parent.mkdir(parents=True)
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(own))
    memory = MemoryRepo.open(made.root)
    sync.set_remote(memory, str(own))
    assert sync.push(memory).pushed
    names = ["zeta", "Alpha", "beta"]  # attached in an order that is not Letta's
    people = {}
    for name in names:
        files = {"notes/context.md": NOTE.format(what=f"What {name} knows.")}
        if name == "beta":
            files["skills/deploying/SKILL.md"] = SKILL
        bare, people[name] = _shared_memory(tmp_path, name, files)
        shared.attach(memory, str(bare), env={})

    said = letta_rules(letta, home, names)
    for name in names:
        assert (Path(said["mounts"][name]) / ".git").is_dir(), f"{name} is not checked out at Letta's mount"
    text = PromptCompiler(made.root, memory_dir=str(made.root)).compile().text
    block = text[text.index("<shared_memory>"):text.index("</shared_memory>")]
    assert SHARED_TAG.findall(block) == said["order"]
    for name, where in zip(SHARED_TAG.findall(block), PROJECTION.findall(block), strict=True):
        assert os.path.normpath(where) == said["mounts"][name], (name, where)
    # Letta's harness takes an attached repository's skills from <mount>/skills; the prompt
    # lists them with their descriptions, not their contents.
    assert "SKILL.md — How the team deploys, step by step." in text and "Ship it" not in text

    # A merge on a shared memory's main (a person's push, here) reaches the prompt through follow.
    note = people["Alpha"] / "notes" / "oncall.md"
    note.write_text(NOTE.format(what="Who is on call this week."))
    git(note.parent.parent, "add", "-A")
    git(note.parent.parent, "commit", "-q", "--no-verify", "-m", "on call")
    git(note.parent.parent, "push", "-q", "origin", "main")
    code, out, err = run_cli(capsys, "follow", "--once", "--repo", str(made.root))
    assert code == 0 and "Alpha: " in out, out + err
    moved = git(note.parent.parent, "rev-parse", "HEAD").strip()
    assert git(Path(said["mounts"]["Alpha"]), "rev-parse", "HEAD").strip() == moved
    text = PromptCompiler(made.root, memory_dir=str(made.root)).compile().text
    assert "oncall.md — Who is on call this week." in text
