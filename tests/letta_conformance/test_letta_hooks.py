"""The same staged change through Letta Code's pre-commit hook and `memrepo validate --staged`,
in real git repositories: both accept it or both refuse it, and memrepo names every problem
(file and reason) that Letta names.

Each row starts from a committed memory (HEAD is valid for both tools), stages a change and
says exactly what Letta prints for it, so a row that fails on the Letta side means Letta
Code changed (the message says what it says now), and one that fails on the memrepo side
means memrepo no longer keeps the promise. Rows in DIFFERENCES are the deliberate ones
(README, "Memory format"): memrepo refuses what Letta lets through, for the reason given.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import git, run_cli
from tests.letta_conformance.letta import LEGACY, ROOT_MARKER, VERSION, Letta, Verdict, problem_lines

V1, V2 = LEGACY, ROOT_MARKER


def md(*frontmatter: str, body: str = "Body.\n") -> str:
    return "---\n" + "".join(line + "\n" for line in frontmatter) + "---\n" + body


def v2(name: str, description: str, body: str = "Body.\n") -> str:
    return md(f"name: {json.dumps(name)}", f"description: {json.dumps(description)}", body=body)


HUMAN = md("description: What I know about the person I work with.", body="Nothing recorded yet.\n")
PERSONA = md("description: Who I am.", body="I am Ada.\n")
RO = md("description: Fixed.", "read_only: true", body="Do not change.\n")
RO_FALSE = md("description: Open.", "read_only: false", body="May change.\n")
POLICY = "merge: explicit\n"

V1_BASE = {"system/human.md": HUMAN, "system/persona.md": PERSONA, ".memrepo/config.yml": POLICY,
           "system/fixed.md": RO, "system/open.md": RO_FALSE, "reference/tea.md": md("description: Tea.")}


@dataclass(frozen=True)
class Case:
    id: str
    policy: str
    head: dict[str, str]
    staged: dict[str, str | None]  # path -> new text; None: removed
    letta: tuple[str, ...]  # the problem lines Letta prints; empty: it accepts the change
    env: dict[str, str] = field(default_factory=dict)
    memrepo: tuple[str, ...] | None = None  # where memrepo deliberately says more (DIFFERENCES)


def sized(n: int, description: str = "d") -> str:
    """A valid memory file of exactly n characters, frontmatter included."""
    head = md(f"description: {description}", body="")
    return head + "x" * (n - len(head) - 1) + "\n"


CONFIG = json.dumps({"version": 1, "maxDepth": 2, "maxFileCharacters": 200,
                     "fileCharacterLimits": [{"pattern": "reference/big/*.md", "maxCharacters": None},
                                             {"pattern": "reference/**", "maxCharacters": 400}]}, indent=2) + "\n"
LIMITED = {**V1_BASE, ".memfs.config.json": CONFIG}


INDEX = "# Memory\n\n- [persona](persona.md)\n- [projects](projects/MEMORY.md)\n"
V2_BASE = {"MEMORY.md": INDEX, "persona.md": v2("Persona", "Who I am."), "human.md": v2("Human", "The user."),
           "projects/MEMORY.md": "# Projects\n\n- [memrepo](memrepo.md)\n",
           "projects/memrepo.md": v2("Memrepo", "Memory in git.")}  # as Letta keeps it: no .memrepo/


def v2_sized(n: int) -> str:
    head = v2("N", "d", body="")
    return head + "x" * (n - len(head) - 1) + "\n"


def case(id: str, staged: dict[str, str | None], *letta: str, head: dict[str, str] | None = None,
         policy: str = V1, env: dict[str, str] | None = None) -> Case:
    return Case(id, policy, V1_BASE if head is None else head, staged, letta, env or {})


CASES = [
    # --- v1 (system/ is core): Letta's frontmatter rules on system/ and reference/.
    case("v1 edit of a core file", {"system/human.md": md("description: The user.", body="Likes tea.\n")}),
    case("v1 new reference file", {"reference/coffee.md": md("description: Coffee.")}),
    case("v1 new external file without frontmatter", {"notes/today.md": "Plain notes.\n"}),
    case("v1 deletion", {"reference/tea.md": None}),
    case("v1 missing frontmatter", {"system/new.md": "No frontmatter.\n"},
         "system/new.md: missing frontmatter (must start with ---)"),
    case("v1 frontmatter never closed", {"reference/new.md": "---\ndescription: x\nbody\n"},
         "reference/new.md: frontmatter opened but never closed (missing closing ---)"),
    case("v1 unknown key", {"system/human.md": md("description: d", "tags: x")},
         "system/human.md: unknown frontmatter key 'tags' (allowed: description read_only limit)"),
    case("v1 limit key is Letta's too", {"system/human.md": md("description: d", "limit: 5000")}),
    case("v1 missing description", {"system/new.md": md("limit: 10")},
         "system/new.md: missing required field 'description'"),
    case("v1 empty description", {"system/new.md": md("description:")},
         "system/new.md: 'description' must not be empty"),
    case("v1 read_only set on a new file", {"system/new.md": md("description: d", "read_only: false")},
         "system/new.md: 'read_only' is a protected field and cannot be set by the agent"),
    case("v1 read_only file changed", {"system/fixed.md": RO.replace("Do not", "Did")},
         "system/fixed.md: file is read_only and cannot be modified"),
    case("v1 read_only changed", {"system/open.md": RO_FALSE.replace("false", "true")},
         "system/open.md: 'read_only' is a protected field and cannot be changed by the agent"),
    case("v1 read_only removed", {"system/open.md": md("description: Open.", body="May change.\n")},
         "system/open.md: 'read_only' is a protected field and cannot be removed by the agent"),
    case("v1 flat skill", {"skills/tea.md": md("description: d")},
         "skills/tea.md: invalid skill path (skills must be folders). Use skills/<name>/SKILL.md"),
    case("v1 skill folder", {"skills/tea/SKILL.md": "---\nname: tea\n---\nBrew.\n"}),
    # --- v1 with Letta's constraints (.memfs.config.json): system/ and reference/ only.
    case("v1 file at maxFileCharacters", {"system/long.md": sized(200)}, head=LIMITED),
    case("v1 file over maxFileCharacters", {"system/long.md": sized(201)},
         "system/long.md: 201 characters exceeds 200 from maxFileCharacters", head=LIMITED),
    case("v1 characters are code points", {"system/long.md": sized(200, "é")}, head=LIMITED),
    case("v1 glob limit raises a folder's", {"reference/notes.md": sized(400)}, head=LIMITED),
    case("v1 file over a glob limit", {"reference/notes.md": sized(401)},
         "reference/notes.md: 401 characters exceeds 400 from glob 'reference/**'", head=LIMITED),
    case("v1 first matching glob wins, null uncaps", {"reference/big/dump.md": sized(30000)}, head=LIMITED),
    case("v1 external files are not Letta's to limit", {"notes/long.md": sized(1000)}, head=LIMITED),
    case("v1 depth at maxDepth", {"system/a/b.md": md("description: d")}, head=LIMITED),
    case("v1 deeper than maxDepth", {"system/a/b/c.md": md("description: d")},
         "system/a/b/c.md: depth 3 exceeds maxDepth 2", head=LIMITED),
    case("v1 depth and size of one file", {"reference/a/b/c.md": sized(401)},
         "reference/a/b/c.md: depth 3 exceeds maxDepth 2",
         "reference/a/b/c.md: 401 characters exceeds 400 from glob 'reference/**'", head=LIMITED),
    case("v1 constraints config changed", {".memfs.config.json": CONFIG.replace("200", "300")},
         ".memfs.config.json is protected and requires human approval to change", head=LIMITED),
    case("v1 constraints config added", {".memfs.config.json": CONFIG},
         ".memfs.config.json is protected and requires human approval to change"),
    case("v1 constraints config removed", {".memfs.config.json": None},
         ".memfs.config.json is protected and requires human approval to change", head=LIMITED),
    case("v1 constraints config changed with a person's approval", {".memfs.config.json": CONFIG.replace("200", "300")},
         head=LIMITED, env={"LETTA_MEMORY_CONSTRAINTS_UPDATE": "1"}),
    case("v1 approved config that is not valid",
         {".memfs.config.json": json.dumps({"version": 2, "maxDepth": -1, "maxFileCharacters": 0, "extra": 1,
                                            "fileCharacterLimits": [{"pattern": "/x", "maxCharacters": 1.5},
                                                                    {"pattern": "a**"}, 3]})},
         ".memfs.config.json: unknown field 'extra'",
         ".memfs.config.json: version must be 1",
         ".memfs.config.json: maxDepth must be a non-negative integer",
         ".memfs.config.json: maxFileCharacters must be a positive integer",
         ".memfs.config.json: fileCharacterLimits[0]: pattern must be a non-empty repo-relative glob using '/'",
         ".memfs.config.json: fileCharacterLimits[0]: maxCharacters must be a positive integer or null",
         ".memfs.config.json: fileCharacterLimits[1]: '**' must be a complete path segment",
         ".memfs.config.json: fileCharacterLimits[1]: maxCharacters must be a positive integer or null",
         ".memfs.config.json: fileCharacterLimits[2] must be an object",
         head=LIMITED, env={"LETTA_MEMORY_CONSTRAINTS_UPDATE": "1"}),
    # --- v2 (root MEMORY.md, Letta's root-marker policy): root files are core, folders need indexes.
    case("v2 edit of a core file", {"human.md": v2("Human", "The user.", "Likes tea.\n")}, head=V2_BASE, policy=V2),
    case("v2 new core file", {"prefs.md": v2("Prefs", "How the user likes things.")}, head=V2_BASE, policy=V2),
    case("v2 new file in an indexed folder", {"projects/tea.md": v2("Tea", "Tea notes.")}, head=V2_BASE, policy=V2),
    case("v2 new folder with its index", {"notes/MEMORY.md": "# Notes\n", "notes/a.md": v2("A", "A note.")},
         head=V2_BASE, policy=V2),
    case("v2 index edited", {"MEMORY.md": INDEX + "- [notes](notes/MEMORY.md)\n"}, head=V2_BASE, policy=V2),
    case("v2 file in a folder without an index", {"notes/a.md": v2("A", "A note.")},
         "notes/a.md: missing required index notes/MEMORY.md", head=V2_BASE, policy=V2),
    case("v2 file in a subfolder without an index", {"projects/old/a.md": v2("A", "A note.")},
         "projects/old/a.md: missing required index projects/old/MEMORY.md", head=V2_BASE, policy=V2),
    case("v2 system/ is a folder like any other", {"system/human.md": v2("Human", "The user.")},
         "system/human.md: missing required index system/MEMORY.md", head=V2_BASE, policy=V2),
    case("v2 v1 frontmatter in a core file", {"human.md": md("description: The user.")},
         "human.md: missing required field 'name'", head=V2_BASE, policy=V2),
    case("v2 unquoted values are Letta's too", {"prefs.md": md("name: Prefs", "description: How: things.")},
         head=V2_BASE, policy=V2),
    case("v2 a key beyond name and description", {"human.md": v2("Human", "The user.").replace(
        "---\nBody", "read_only: true\n---\nBody")},
         "human.md: unknown frontmatter key 'read_only' (allowed: name description)", head=V2_BASE, policy=V2),
    case("v2 duplicate key", {"prefs.md": md('name: "A"', 'name: "B"', 'description: "d"')},
         "prefs.md: duplicate frontmatter key 'name'", head=V2_BASE, policy=V2),
    case("v2 empty values", {"prefs.md": md('name: ""', "description:")},
         "prefs.md: 'name' must not be empty", "prefs.md: 'description' must not be empty",
         head=V2_BASE, policy=V2),
    case("v2 missing frontmatter", {"projects/tea.md": "Tea.\n"},
         "projects/tea.md: missing frontmatter (must start with ---)", head=V2_BASE, policy=V2),
    case("v2 root index with frontmatter", {"MEMORY.md": md("description: d", body=INDEX)},
         "MEMORY.md: MEMORY.md must not have frontmatter", head=V2_BASE, policy=V2),
    case("v2 folder index with frontmatter", {"projects/MEMORY.md": md('name: "P"', 'description: "d"')},
         "projects/MEMORY.md: MEMORY.md must not have frontmatter", head=V2_BASE, policy=V2),
    case("v2 folder index deleted under its files", {"projects/MEMORY.md": None},
         "projects/memrepo.md: missing required index projects/MEMORY.md", head=V2_BASE, policy=V2),
    case("v2 folder deleted with its index", {"projects/MEMORY.md": None, "projects/memrepo.md": None},
         head=V2_BASE, policy=V2),
    case("v2 root index deleted", {"MEMORY.md": None},
         "MEMORY.md: root memory index is required for MemFS v2", head=V2_BASE, policy=V2),
    case("v2 flat skill", {"skills/tea.md": v2("Tea", "d")},
         "skills/tea.md: invalid skill path (skills must be folders). Use skills/<name>/SKILL.md",
         head=V2_BASE, policy=V2),
    case("v2 skills are not memory's", {"skills/tea/SKILL.md": "---\nname: tea\nlicense: MIT\n---\nBrew.\n"},
         head=V2_BASE, policy=V2),
    case("v2 Letta's default file limit", {"projects/long.md": v2_sized(20001)},
         "projects/long.md: 20001 characters exceeds 20000 from maxFileCharacters", head=V2_BASE, policy=V2),
    case("v2 Letta's default core limit",
         {f"core{n}.md": v2_sized(19000) for n in range(4)},
         "core memory: 76175 characters exceeds 65536 from maxCoreMemoryCharacters", head=V2_BASE, policy=V2),
    case("v2 Letta's default depth",
         {"a/MEMORY.md": "# A\n", "a/b/MEMORY.md": "# B\n", "a/b/c/MEMORY.md": "# C\n",
          "a/b/c/d.md": v2("D", "Deep.")},
         "a/b/c/MEMORY.md: depth 3 exceeds maxDepth 2", "a/b/c/d.md: depth 3 exceeds maxDepth 2",
         head=V2_BASE, policy=V2),
    case("v2 a glob over Letta's defaults", {"projects/tea.md": v2_sized(301)},
         "projects/tea.md: 301 characters exceeds 300 from glob 'projects/*.md'",
         head={**V2_BASE, ".memfs.config.json": json.dumps(
             {"version": 1, "fileCharacterLimits": [{"pattern": "projects/*.md", "maxCharacters": 300}]})},
         policy=V2),
    case("v1 becomes v2 when a root MEMORY.md is added", {"MEMORY.md": "# Memory\n"},
         "reference/tea.md: missing required index reference/MEMORY.md",
         "system/fixed.md: missing required index system/MEMORY.md",
         "system/human.md: missing required index system/MEMORY.md",
         "system/open.md: missing required index system/MEMORY.md",
         "system/persona.md: missing required index system/MEMORY.md", policy=V2),
    case("a local MemFS (legacy-only) keeps v1 with a MEMORY.md", {"MEMORY.md": "# Memory\n"}),
    case("v1 two problems in two files",
         {"system/a.md": "x\n", "reference/b.md": md("description: d", "x: 1")},
         "reference/b.md: unknown frontmatter key 'x' (allowed: description read_only limit)",
         "system/a.md: missing frontmatter (must start with ---)"),
]

# memrepo refuses these, Letta Code lets them through (README, "Memory format").
DIFFERENCES = [
    Case("read_only file deleted (Letta's hook checks only added and changed files)", V1, V1_BASE,
         {"system/fixed.md": None}, (), memrepo=("system/fixed.md: file is read_only and cannot be deleted or moved",)),
    Case("no constraints config: memrepo's own depth limit under system/ (Letta has none)", V1, V1_BASE,
         {"system/a/b/c/d.md": md("description: d")}, (),
         memrepo=("system/a/b/c/d.md: 3 folders deep under system/, over the limit of 2 (limits.system_depth in "
                  ".memrepo/config.yml); use a flatter path",)),
    Case("no constraints config: memrepo's own file limit (Letta has none)", V1, V1_BASE,
         {"system/long.md": sized(20001)}, (),
         memrepo=("system/long.md: file has 20,001 characters, over the limit of 20,000 (limits.file_chars in "
                  ".memrepo/config.yml); split it or move detail to external memory",)),
    Case("read_only outside system/ and reference/ (Letta checks it only there)", V1,
         {**V1_BASE, "notes/fixed.md": RO}, {"notes/fixed.md": RO.replace("Do not", "Did")}, (),
         memrepo=("notes/fixed.md: file is read_only and cannot be modified",)),
]


def make_repo(letta: Letta, root: Path, c: Case) -> Path:
    """A git repository whose HEAD holds `c.head`, with Letta's hook installed and `c.staged`
    staged."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, c.head)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "Memory as both tools left it")
    letta.install_hooks(root, c.policy)
    write(root, c.staged)
    git(root, "add", "-A")
    return root


def write(root: Path, files: dict[str, str | None]) -> None:
    for path, text in files.items():
        target = root / path
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))


def memrepo_verdict(capsys: pytest.CaptureFixture[str], root: Path, monkeypatch: pytest.MonkeyPatch,
                    env: dict[str, str]) -> Verdict:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    code, out, err = run_cli(capsys, "validate", "--staged", "--quiet", "--repo", str(root))
    return Verdict(code, problem_lines(out), out + err)


def both(letta: Letta, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
         c: Case) -> tuple[Verdict, Verdict]:
    root = make_repo(letta, tmp_path / "memory", c)
    staged = git(root, "diff", "--cached", "--name-status")
    theirs = letta.run_hook(root, c.env)
    ours = memrepo_verdict(capsys, root, monkeypatch, c.env)
    assert git(root, "diff", "--cached", "--name-status") == staged  # neither validator touched the index
    assert theirs.problems == c.letta, (
        f"Letta Code {VERSION} moved: for this change it now prints {list(theirs.problems)}, "
        f"where the table says {list(c.letta)}\n{theirs.output}")
    assert theirs.accepted == (not c.letta), theirs.output
    return theirs, ours


@pytest.mark.parametrize("c", [pytest.param(c, id=c.id) for c in CASES])
def test_memrepo_agrees_with_lettas_hook(letta: Letta, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch, c: Case) -> None:
    theirs, ours = both(letta, tmp_path, capsys, monkeypatch, c)
    assert ours.accepted == theirs.accepted, (
        f"Letta {'accepts' if theirs.accepted else 'refuses'} this change and memrepo does not:\n{ours.output}")
    missing = [line for line in theirs.problems if line not in ours.problems]
    assert not missing, f"memrepo does not name {missing}; it says:\n{ours.output}"


@pytest.mark.parametrize("c", [pytest.param(c, id=c.id) for c in DIFFERENCES])
def test_memrepo_goes_further_where_documented(letta: Letta, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch, c: Case) -> None:
    theirs, ours = both(letta, tmp_path, capsys, monkeypatch, c)
    assert theirs.accepted and not ours.accepted
    assert c.memrepo is not None and set(c.memrepo) <= set(ours.problems), ours.output
