"""Letta-spelled memory tool calls: the bytes memrepo's tool commits are the bytes Letta Code's
tool writes from the same file, in both layouts.

Each row gives a file, a call and the bytes that result, checked twice: against Letta's own
tool code run under node (a mismatch there means Letta Code changed, and the message shows
what it writes now) and against memrepo's tool on a memory repository. DIFFERENCES are the
deliberate ones (README, "Memory format"), each with what Letta writes and what memrepo does.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.memfs.create import init_repository
from bot.memfs.tool.memory_tool import MemoryTool
from tests.conftest import git
from tests.letta_conformance.letta import VERSION, Letta

TEA = "---\ndescription: Tea notes\n---\nGreen.\nBlack.\n"
TEA_V2 = '---\nname: "Tea"\ndescription: "Tea notes"\n---\nGreen.\nBlack.\n'


@dataclass(frozen=True)
class Row:
    id: str
    layout: str
    files: dict[str, str]  # written and committed first
    call: dict  # Letta's spelling; `reason` is added
    path: str  # the file whose bytes are compared
    expect: str | None  # its bytes after the call (None: deleted)


def row(id: str, call: dict, path: str, expect: str | None, *, layout: str = "v1",
        files: dict[str, str] | None = None) -> Row:
    default = {"reference/tea.md": TEA} if layout == "v1" else {"projects/MEMORY.md": "# Projects\n",
                                                                  "projects/tea.md": TEA_V2, "tea.md": TEA_V2}
    return Row(id, layout, default if files is None else files, call, path, expect)


def ins(path: str, line: float, text: str) -> dict:
    return {"command": "insert", "file_path": path, "insert_line": line, "insert_text": text}


def rep(path: str, old: str, new: str) -> dict:
    return {"command": "str_replace", "file_path": path, "old_string": old, "new_string": new}


TEA_PATH = "reference/tea.md"
ROWS = [
    # --- v1: `description:` as given, `read_only:` when present, `---`, the body with no blank line.
    row("str_replace in the body", rep(TEA_PATH, "Black.", "Oolong."), TEA_PATH,
        "---\ndescription: Tea notes\n---\nGreen.\nOolong.\n"),
    row("str_replace of the init template", rep("system/human.md", "Nothing recorded yet.", "Prefers tea."),
        "system/human.md", "---\ndescription: What I know about the person I work with - preferences, context, "
        "how they like to work.\n---\nPrefers tea.\n", files={}),
    row("insert_line 1 is before the body's first line", ins(TEA_PATH, 1, "Oolong."), TEA_PATH,
        "---\ndescription: Tea notes\n---\nOolong.\nGreen.\nBlack.\n"),
    row("insert_line 2", ins(TEA_PATH, 2, "Oolong."), TEA_PATH,
        "---\ndescription: Tea notes\n---\nGreen.\nOolong.\nBlack.\n"),
    row("insert_line 0 clamps to the top", ins(TEA_PATH, 0, "Oolong."), TEA_PATH,
        "---\ndescription: Tea notes\n---\nOolong.\nGreen.\nBlack.\n"),
    row("insert_line -1 clamps to the top too", ins(TEA_PATH, -1, "Oolong."), TEA_PATH,
        "---\ndescription: Tea notes\n---\nOolong.\nGreen.\nBlack.\n"),
    row("insert_line past the end: after the last newline", ins(TEA_PATH, 99, "Oolong."), TEA_PATH,
        "---\ndescription: Tea notes\n---\nGreen.\nBlack.\n\nOolong."),
    row("insert_line 2.7 is floored", ins(TEA_PATH, 2.7, "Oolong."), TEA_PATH,
        "---\ndescription: Tea notes\n---\nGreen.\nOolong.\nBlack.\n"),
    row("insert of several lines", ins(TEA_PATH, 2, "Oolong.\nPu-erh."), TEA_PATH,
        "---\ndescription: Tea notes\n---\nGreen.\nOolong.\nPu-erh.\nBlack.\n"),
    row("insert into an empty body", ins("reference/empty.md", 1, "First."), "reference/empty.md",
        "---\ndescription: Empty\n---\nFirst.", files={"reference/empty.md": "---\ndescription: Empty\n---\n"}),
    row("create with text", {"command": "create", "file_path": "reference/coffee", "description": "Coffee",
                             "file_text": "Espresso."}, "reference/coffee.md",
        "---\ndescription: Coffee\n---\nEspresso."),
    row("create without text", {"command": "create", "file_path": "reference/coffee.md", "description": "Coffee"},
        "reference/coffee.md", "---\ndescription: Coffee\n---\n"),
    row("create: a description with a colon is written as it is",
        {"command": "create", "file_path": "reference/coffee", "description": "Coffee: beans, grinds",
         "file_text": "x\n"}, "reference/coffee.md", "---\ndescription: Coffee: beans, grinds\n---\nx\n"),
    row("create: a description on one line, trimmed",
        {"command": "create", "file_path": "reference/coffee", "description": "  Coffee\nand tea  ",
         "file_text": "x\n"}, "reference/coffee.md", "---\ndescription: Coffee and tea\n---\nx\n"),
    row("update_description", {"command": "update_description", "file_path": TEA_PATH, "description": "Teas"},
        TEA_PATH, "---\ndescription: Teas\n---\nGreen.\nBlack.\n"),
    row("read_only: false is kept", rep("system/open.md", "May", "Can"), "system/open.md",
        "---\ndescription: Open\nread_only: false\n---\nCan change.\n",
        files={"system/open.md": "---\ndescription: Open\nread_only: false\n---\nMay change.\n"}),
    row("frontmatter spacing is Letta's", rep(TEA_PATH, "Black.", "Oolong."), TEA_PATH,
        "---\ndescription: Tea notes\n---\nGreen.\nOolong.\n",
        files={TEA_PATH: "---\ndescription:    Tea notes   \n---\nGreen.\nBlack.\n"}),
    row("a blank line after --- is body, kept", rep(TEA_PATH, "Black.", "Oolong."), TEA_PATH,
        "---\ndescription: Tea notes\n---\n\nGreen.\nOolong.\n",
        files={TEA_PATH: "---\ndescription: Tea notes\n---\n\nGreen.\nBlack.\n"}),
    row("a quoted description stays quoted", rep(TEA_PATH, "Black.", "Oolong."), TEA_PATH,
        "---\ndescription: 'Tea: notes'\n---\nGreen.\nOolong.\n",
        files={TEA_PATH: "---\ndescription: 'Tea: notes'\n---\nGreen.\nBlack.\n"}),
    row("CRLF frontmatter becomes LF, the body keeps its line ends", rep(TEA_PATH, "Black.", "Oolong."), TEA_PATH,
        "---\ndescription: Tea notes\n---\nGreen.\r\nOolong.\r\n",
        files={TEA_PATH: "---\r\ndescription: Tea notes\r\n---\r\nGreen.\r\nBlack.\r\n"}),
    row("delete", {"command": "delete", "file_path": TEA_PATH}, TEA_PATH, None),
    # --- v2: `name` and `description` written as JSON strings.
    row("v2 str_replace in a core file", rep("tea.md", "Black.", "Oolong."), "tea.md",
        '---\nname: "Tea"\ndescription: "Tea notes"\n---\nGreen.\nOolong.\n', layout="v2"),
    row("v2 str_replace of the init template", rep("human.md", "Nothing recorded yet.", "Prefers tea."), "human.md",
        '---\nname: "Human"\ndescription: "What I know about the person I work with - preferences, context, how they '
        'like to work."\n---\nPrefers tea.\n', layout="v2", files={}),
    row("v2 insert", ins("projects/tea.md", 2, "Oolong."), "projects/tea.md",
        '---\nname: "Tea"\ndescription: "Tea notes"\n---\nGreen.\nOolong.\nBlack.\n', layout="v2"),
    row("v2 create names the file from its file name",
        {"command": "create", "file_path": "coding-prefs_notes", "description": 'Code "style"\\', "file_text": "x\n"},
        "coding-prefs_notes.md", '---\nname: "Coding Prefs Notes"\ndescription: "Code \\"style\\"\\\\"\n---\nx\n',
        layout="v2"),
    row("v2 create in an indexed folder", {"command": "create", "file_path": "projects/coffee", "description": "Café"},
        "projects/coffee.md", '---\nname: "Coffee"\ndescription: "Café"\n---\n', layout="v2"),
    row("v2 create of a folder index: all body", {"command": "create", "file_path": "notes/MEMORY.md",
                                                  "file_text": "# Notes"}, "notes/MEMORY.md", "# Notes\n",
        layout="v2"),
    row("v2 unquoted values are written quoted", rep("prefs.md", "x", "y"), "prefs.md",
        '---\nname: "Prefs"\ndescription: "How: things"\n---\ny\n', layout="v2",
        files={"prefs.md": "---\nname: Prefs\ndescription: How: things\n---\nx\n"}),
    row("v2 update_description", {"command": "update_description", "file_path": "tea.md", "description": "Teas"},
        "tea.md", '---\nname: "Tea"\ndescription: "Teas"\n---\nGreen.\nBlack.\n', layout="v2"),
    row("v2 str_replace in MEMORY.md: all body", rep("MEMORY.md", "# Memory", "# My memory"), "MEMORY.md",
        "# My memory\n\n- [tea](tea.md)\n", layout="v2",
        files={"MEMORY.md": "# Memory\n\n- [tea](tea.md)\n", "tea.md": TEA_V2}),
]

REFUSALS = [  # Letta's tool refuses these too; memrepo's answer says what Letta's says
    row("v2 create in a folder without an index", {"command": "create", "file_path": "notes/a",
                                                   "description": "A"}, "notes/a.md", None, layout="v2"),
    row("v2 create under system/", {"command": "create", "file_path": "system/a", "description": "A"},
        "system/a.md", None, layout="v2"),
    row("v2 edit under skills/", rep("skills/x/SKILL.md", "a", "b"), "skills/x/SKILL.md", None, layout="v2",
        files={"projects/MEMORY.md": "# Projects\n", "skills/x/SKILL.md": "---\nname: x\n---\na\n"}),
    row("v2 delete of an index", {"command": "delete", "file_path": "projects/MEMORY.md"}, "projects/MEMORY.md",
        None, layout="v2"),
    row("v2 rename of an index", {"command": "rename", "old_path": "projects/MEMORY.md", "new_path": "p/MEMORY.md"},
        "projects/MEMORY.md", None, layout="v2"),
    row("v2 update_description of an index", {"command": "update_description", "file_path": "projects/MEMORY.md",
                                              "description": "d"}, "projects/MEMORY.md", None, layout="v2"),
    row("v2 file without name", rep("bad.md", "x", "y"), "bad.md", None, layout="v2",
        files={"bad.md": "---\ndescription: d\n---\nx\n"}),
]


@dataclass(frozen=True)
class Difference:
    row: Row
    letta: str  # what Letta's tool writes
    why: str


DIFFERENCES = [
    Difference(row("several matches", rep(TEA_PATH, "ea", "EA"), TEA_PATH, None,
                   files={TEA_PATH: "---\ndescription: d\n---\ntea, tea\n"}),
               "---\ndescription: d\n---\ntEA, tea\n",
               "memrepo refuses an old_string that matches several places (with the count): replacing the first "
               "edits a place the agent may not have meant"),
    Difference(row("limit kept", rep(TEA_PATH, "x", "y"), TEA_PATH,
                   "---\ndescription: d\nlimit: 5000\n---\ny\n",
                   files={TEA_PATH: "---\ndescription: d\nlimit: 5000\n---\nx\n"}),
               "---\ndescription: d\n---\ny\n",
               "Letta's rendering drops every key but description and read_only; memrepo keeps them"),
    Difference(row("a description over several lines kept", rep(TEA_PATH, "x", "y"), TEA_PATH,
                   "---\ndescription: >-\n  Tea notes\n  and more\n---\ny\n",
                   files={TEA_PATH: "---\ndescription: >-\n  Tea notes\n  and more\n---\nx\n"}),
               "---\ndescription: >-\n---\ny\n",
               "Letta keeps only a description's first line, which leaves a YAML block with no text"),
]


def memory(tmp_path: Path, r: Row) -> tuple[MemoryTool, Path]:
    repo = init_repository(tmp_path / "memrepo", "a1", "Ada", r.layout)
    for path, text in r.files.items():
        target = repo.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
    if r.files:
        git(repo.root, "add", "-A")
        git(repo.root, "commit", "-q", "--no-verify", "-m", "Files both tools start from")
    return MemoryTool(repo, push=False), repo.root


def lettas(letta: Letta, tmp_path: Path, root: Path, r: Row) -> tuple[dict, bytes | None]:
    """Letta's tool on a copy of the same files: its answer and the file's bytes after."""
    copy = tmp_path / "letta"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".git"))
    answer = letta.tool(copy, r.layout, {**r.call, "reason": "x"})
    target = copy / r.path
    return answer, target.read_bytes() if target.is_file() else None


def committed(tool: MemoryTool, path: str) -> bytes | None:
    return tool.repo.read(path)


@pytest.mark.parametrize("r", [pytest.param(r, id=r.id) for r in ROWS])
def test_memrepo_writes_the_bytes_lettas_tool_writes(letta: Letta, tmp_path: Path, r: Row) -> None:
    tool, root = memory(tmp_path, r)
    expect = r.expect
    answer, theirs = lettas(letta, tmp_path, root, r)
    assert answer["ok"], f"Letta Code {VERSION} refused {r.call}: {answer['error']}"
    shown = None if theirs is None else theirs.decode("utf-8")
    assert shown == expect, f"Letta Code {VERSION} moved: it now writes {shown!r}, the table says {expect!r}"
    result = tool.call({**r.call, "reason": "Keep up with Letta"})
    assert result.ok, result.message
    ours = committed(tool, r.path)
    assert (None if ours is None else ours.decode("utf-8")) == expect


@pytest.mark.parametrize("r", [pytest.param(r, id=r.id) for r in REFUSALS])
def test_memrepo_refuses_what_lettas_tool_refuses(letta: Letta, tmp_path: Path, r: Row) -> None:
    tool, root = memory(tmp_path, r)
    answer, _ = lettas(letta, tmp_path, root, r)
    assert not answer["ok"], f"Letta Code {VERSION} moved: it now accepts {r.call}"
    head = tool.repo.head_sha()
    result = tool.call({**r.call, "reason": "x"})
    assert not result.ok and tool.repo.head_sha() == head
    said = answer["error"].removeprefix("memory: ")
    assert said.split(": ", 1)[-1] in result.message, (said, result.message)


@pytest.mark.parametrize("d", [pytest.param(d, id=d.row.id) for d in DIFFERENCES])
def test_deliberate_differences(letta: Letta, tmp_path: Path, d: Difference) -> None:
    tool, root = memory(tmp_path, d.row)
    answer, theirs = lettas(letta, tmp_path, root, d.row)
    assert answer["ok"] and theirs is not None and theirs.decode("utf-8") == d.letta, (
        f"Letta Code {VERSION} moved ({d.why}): it now writes {theirs!r}")
    result = tool.call({**d.row.call, "reason": "x"})
    if d.row.expect is None:
        assert not result.ok, result.message
    else:
        assert result.ok, result.message
        assert tool.repo.read(d.row.path) == d.row.expect.encode("utf-8")
