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
    case("v1 two problems in two files",
         {"system/a.md": "x\n", "reference/b.md": md("description: d", "x: 1")},
         "reference/b.md: unknown frontmatter key 'x' (allowed: description read_only limit)",
         "system/a.md: missing frontmatter (must start with ---)"),
]

# memrepo refuses these, Letta Code lets them through (README, "Memory format").
DIFFERENCES = [
    Case("read_only file deleted (Letta's hook checks only added and changed files)", V1, V1_BASE,
         {"system/fixed.md": None}, (), memrepo=("system/fixed.md: file is read_only and cannot be deleted or moved",)),
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
