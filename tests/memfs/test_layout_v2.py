"""MemFS v2 (a root MEMORY.md) in memrepo: `init --layout v2`, what the prompt shows, and the memory
tool's v2 rules beyond what Letta's own code checks (tests/letta_conformance)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot.config import Limits, parse_policy
from bot.errors import MemrepoError
from bot.memfs.create import init_repository
from bot.memfs.prompt.compile import INDEXES_TRUNCATED, compile_memory
from bot.memfs.prompt.compiler import PromptCompiler
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.tool.memory_tool import V2_INDEX_NOT_DELETED, V2_NEEDS_INDEX, V2_NO_SKILLS, V2_NO_SYSTEM, MemoryTool
from tests.conftest import git, memory_on_localhub
from tests.conftest import run_cli as run

V2_FILES = {"MEMORY.md", "persona.md", "human.md", ".memrepo/config.yml", ".memfs.config.json",
            ".github/workflows/memrepo-validate.yml"}


@pytest.fixture
def v2(tmp_path: Path) -> MemoryRepo:
    return init_repository(tmp_path / "memory", "a1", "Ada", "v2")


def test_init_layout_v2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "mem"
    code, _, err = run(capsys, "init", str(root), "--layout", "v2", "--agent-id", "a1", "--agent-name", "Ada")
    assert (code, err) == (0, "")
    assert set(git(root, "ls-files").split()) == V2_FILES
    assert (root / "persona.md").read_text().startswith('---\nname: "Persona"\ndescription: "Who I am')
    assert not (root / "MEMORY.md").read_text().startswith("---")
    policy = parse_policy((root / ".memrepo/config.yml").read_text())
    assert policy.protected == ("persona.md", ".memfs.config.json")
    assert run(capsys, "validate", "--repo", str(root))[0] == 0
    # The hook runs memrepo's validation under v2's rules.
    (root / "notes").mkdir()
    (root / "notes/a.md").write_text('---\nname: "A"\ndescription: "a"\n---\nx\n')
    git(root, "add", "-A")
    done = git_commit(root)
    assert done.returncode == 1 and "notes/a.md: missing required index notes/MEMORY.md" in done.stdout + done.stderr


def git_commit(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "commit", "-q", "-m", "x"], cwd=root, capture_output=True, text=True)


def test_init_refuses_an_unknown_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(MemrepoError, match="unknown memory layout 'v3'; use one of: v1, v2"):
        init_repository(tmp_path / "a", layout="v3")
    assert not (tmp_path / "a").exists()
    code, _, err = run(capsys, "init", str(tmp_path / "b"), "--layout", "v3")
    assert code == 2 and "invalid choice: 'v3'" in err and "Traceback" not in err
    assert not (tmp_path / "b").exists()


def doc(name: str, description: str, body: str) -> bytes:
    return f'---\nname: "{name}"\ndescription: "{description}"\n---\n{body}'.encode()


def test_compile_v2_shows_core_files_then_indexes() -> None:
    files = {
        "MEMORY.md": b"# Memory\n\n- [projects](projects/MEMORY.md)\n",
        "persona.md": doc("Persona", "Who I am", "I am Ada.\n"),
        "human.md": doc("Human", "The user", "Kim.\n"),
        "projects/MEMORY.md": b"# Projects\n\n- [ledger](ledger.md)\n",
        "projects/ledger.md": doc("Ledger", "The ledger", "Postgres 16.\n"),
        "projects/old/notes.md": doc("Notes", "n", "not indexed\n"),
        "loose/a.md": doc("A", "a", "not memory\n"),
        "skills/tea/SKILL.md": b"---\ndescription: Brew tea\n---\nSteps.\n",
        ".memrepo/config.yml": b"merge: auto\n",
    }
    assert compile_memory(files, Limits()) == "\n".join([
        "<memory>",
        "<human>", "<projection>$MEMORY_DIR/human.md</projection>", "<description>The user</description>", "Kim.",
        "</human>",
        "<persona>", "<projection>$MEMORY_DIR/persona.md</projection>", "<description>Who I am</description>",
        "I am Ada.", "</persona>",
        "<memory_indexes>",
        "<index>", "<projection>$MEMORY_DIR/MEMORY.md</projection>", "# Memory", "",
        "- [projects](projects/MEMORY.md)", "</index>",
        "<index>", "<projection>$MEMORY_DIR/projects/MEMORY.md</projection>", "# Projects", "",
        "- [ledger](ledger.md)", "</index>",
        "</memory_indexes>",
        "<skills>", "- skills/tea/SKILL.md — Brew tea", "</skills>",
        "</memory>",
    ])


def test_compile_v2_indexes_within_the_tree_limits() -> None:
    files = {"MEMORY.md": b"# Memory\n", **{f"f{n}/MEMORY.md": b"# F\n" + b"x" * 50 + b"\n" for n in range(5)}}
    out = compile_memory(files, Limits(tree_chars=250)).split("\n")
    shown = [line for line in out if line.startswith("<projection>")]
    assert shown[0] == "<projection>$MEMORY_DIR/MEMORY.md</projection>"
    omitted = 6 - len(shown)
    assert omitted > 0
    assert INDEXES_TRUNCATED.format(shown=len(shown), total=6, omitted=omitted) in out


def test_prompt_of_a_v2_memory(v2: MemoryRepo) -> None:
    text = PromptCompiler(v2.root).compile("System.").text
    assert "<persona>\n<projection>$MEMORY_DIR/persona.md</projection>" in text
    assert "<projection>$MEMORY_DIR/MEMORY.md</projection>" in text
    assert "system/" not in text


def test_letta_layout_policy_legacy_only_keeps_v1(v2: MemoryRepo) -> None:
    (Path(v2.git.path) / "letta-memory-layout-policy").write_text("legacy-only\n")
    text = PromptCompiler(v2.root).compile().text
    assert "<memory_indexes>" not in text and "<external_projection>" in text


def test_memgpt_core_blocks_are_root_files_in_v2(v2: MemoryRepo) -> None:
    tool = MemoryTool(v2)
    result = tool.call({"command": "core_memory_append", "label": "human", "content": "Likes tea."})
    assert result.ok, result.message
    assert result.paths == ["human.md"] and v2.read("human.md").decode().endswith("Nothing recorded yet.\nLikes tea.\n")
    assert v2.read("system/human.md") is None


@pytest.mark.parametrize(("call", "said"), [
    ({"command": "create", "path": "system/a.md", "file_text": "x"}, V2_NO_SYSTEM),
    ({"command": "create", "path": "notes.md", "file_text": "---\ndescription: d\n---\nx\n"},
     "notes.md: missing required field 'name'"),
    ({"command": "create", "path": "a/b.md", "file_text": '---\nname: "B"\ndescription: "b"\n---\n'},
     V2_NEEDS_INDEX.format(index="a/MEMORY.md", path="a/b.md")),
    ({"command": "delete", "path": "MEMORY.md"}, V2_INDEX_NOT_DELETED),
    ({"command": "rename", "old_path": "human.md", "new_path": "people/human.md"},
     V2_NEEDS_INDEX.format(index="people/MEMORY.md", path="people/human.md")),
    # a patch names its paths inside itself: the same rules
    ({"command": "apply_patch", "patch": "*** Begin Patch\n*** Add File: system/x.md\n+x\n*** End Patch"},
     V2_NO_SYSTEM),
    ({"command": "apply_patch", "patch": "*** Begin Patch\n*** Add File: skills/foo/SKILL.md\n+x\n*** End Patch"},
     V2_NO_SKILLS),
    ({"command": "apply_patch", "patch": "*** Begin Patch\n*** Delete File: MEMORY.md\n*** End Patch"},
     V2_INDEX_NOT_DELETED),
    ({"command": "apply_patch", "patch": '*** Begin Patch\n*** Add File: a/b.md\n+---\n+name: "B"\n'
                                         '+description: "b"\n+---\n*** End Patch'},
     V2_NEEDS_INDEX.format(index="a/MEMORY.md", path="a/b.md")),
])
def test_v2_refusals_in_any_spelling(v2: MemoryRepo, call: dict, said: str) -> None:
    head = v2.head_sha()
    result = MemoryTool(v2).call(call)
    assert not result.ok and said in result.message, result.message
    assert v2.head_sha() == head


def test_a_v2_patch_may_bring_a_folders_index_with_its_first_file(v2: MemoryRepo) -> None:
    result = MemoryTool(v2).call({"command": "apply_patch", "patch": (
        '*** Begin Patch\n*** Add File: a/MEMORY.md\n+# A\n+- [b](b.md)\n'
        '*** Add File: a/b.md\n+---\n+name: "B"\n+description: "b"\n+---\n+Bee.\n*** End Patch')})
    assert result.ok, result.message
    assert sorted(result.paths) == ["a/MEMORY.md", "a/b.md"]


# ------------------------------------------------------------------ dreams, why and at on v2
@pytest.fixture
def v2_world(localhub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    from tests.dream.test_dream_run import World

    world = memory_on_localhub(localhub, tmp_path, monkeypatch, World, layout="v2")
    yield world
    world.store.close()


def test_a_dream_on_v2_indexes_its_folders_and_why_and_at_follow_it(v2_world, capsys: pytest.CaptureFixture[str]
                                                                    ) -> None:  # type: ignore[no-untyped-def]
    world = v2_world
    said = world.say("I live in Berlin.")
    base = world.memory.head_sha()
    first = world.dream()
    assert first.status == "opened", first.message
    head = world.branch_commit(f"memrepo/dream/{first.dream_id}")
    changed = git(world.memory.root, "diff", "--name-only", base, head).split()
    assert changed == [".memrepo/cursors/a1/c1.json", "conversations/MEMORY.md", "conversations/c1/2026-03.md",
                       "conversations/c1/MEMORY.md"]
    record = world.memory.read("conversations/c1/2026-03.md", head).decode()
    assert record.startswith('---\nname: "What the user said, 2026-03"\ndescription: "What the user said in')
    assert world.memory.read("conversations/MEMORY.md", head).decode().endswith("- [c1](c1/MEMORY.md)\n")
    assert world.memory.read("conversations/c1/MEMORY.md", head).decode().endswith("- [2026-03.md](2026-03.md)\n")
    # The integrator's check (validate --base) accepts it under v2's rules.
    git(world.memory.root, "checkout", "-q", "--detach", head)
    try:
        code, out, err = run(capsys, "validate", "--repo", str(world.memory.root), "--base", base)
    finally:
        git(world.memory.root, "checkout", "-q", "main")
    assert code == 0, out + err
    world.merge(first.pr)

    # A second dream appends to the month's file; the indexes already list it.
    world.say("I moved to Lyon.")
    second = world.dream()
    assert second.status == "opened", second.message
    tip = world.branch_commit(f"memrepo/dream/{second.dream_id}")
    assert git(world.memory.root, "diff", "--name-only", world.memory.head_sha(), tip).split() == \
        [".memrepo/cursors/a1/c1.json", "conversations/c1/2026-03.md"]
    world.merge(second.pr)

    # The prompt shows the conversation indexes, not the records.
    prompt = PromptCompiler(world.memory.root).compile().text
    assert "<projection>$MEMORY_DIR/conversations/c1/MEMORY.md</projection>" in prompt and "Berlin" not in prompt

    lines = world.memory.read("conversations/c1/2026-03.md").decode().split("\n")
    number = next(i for i, line in enumerate(lines, 1) if "Berlin" in line)
    code, out, err = run(capsys, "why", f"conversations/c1/2026-03.md:{number}", "--repo", str(world.memory.root),
                         "--json")
    assert code == 0, err
    chain = json.loads(out)
    assert first.dream_id in json.dumps(chain) and said.message_id in json.dumps(chain)
    code, out, err = run(capsys, "at", "2000-01-01", "MEMORY.md", "--repo", str(world.memory.root))
    assert code == 4 and "memory did not exist yet at 2000-01-01T00:00:00Z" in err and "Traceback" not in err
    now = "@" + git(world.memory.root, "log", "-1", "--format=%ct").strip()
    code, out, err = run(capsys, "at", now, "conversations/c1/2026-03.md", "--repo", str(world.memory.root))
    assert code == 0 and "> I live in Berlin." in out and "> I moved to Lyon." in out, err


# ------------------------------------------------------------------ what core memory is, per layout
def test_core_memory_is_the_root_files_in_v2_for_doctor_and_pull_request_bodies() -> None:
    from dataclasses import replace

    from bot.agent import doctor
    from tests.provenance.test_pull_request_bodies import edit

    files = {"MEMORY.md": b"# Memory\n", "persona.md": doc("Persona", "p", "I am Ada.\n"),
             "notes/MEMORY.md": b"# Notes\n", "notes/a.md": doc("A", "a", "x" * 50 + "\n")}
    report = doctor.diagnose(files, Limits())
    assert report.core_chars == len(files["persona.md"].decode())
    assert [path for path, _ in report.largest] == ["persona.md"]
    assert report.undescribed == ()  # an index has no frontmatter, and needs none
    deleted = replace(edit(), deleted=("persona.md", "notes/a.md", "system/x.md"), layout="v2")
    assert deleted.core_deleted == ("persona.md",)
    assert replace(deleted, layout="v1").core_deleted == ("system/x.md",)


def test_remember_writes_the_root_notes_file_in_v2(v2: MemoryRepo, tmp_path: Path) -> None:
    from bot.agent import AgentSession

    with AgentSession(v2, "c1", home=tmp_path / "home", push=False, background_dreams=False) as session:
        first = session.remember("Call me Kim.")
        second = session.remember("Tea, not coffee.")
    assert first.ok and second.ok, (first.message, second.message)
    text = v2.read("notes.md").decode()
    assert text.startswith('---\nname: "Notes"\ndescription: ') and "Call me Kim." in text and "Tea, not" in text
    assert v2.read("system/notes.md") is None
