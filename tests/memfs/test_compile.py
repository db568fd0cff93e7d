"""compile_memory: the prompt format, table by table, and properties of the tree limits and
of the frontmatter fast path."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.config import Limits
from bot.memfs.format.document import try_parse
from bot.memfs.format.validate import decode
from bot.memfs.prompt.compile import (
    Entry,
    compile_memory,
    compile_prompt,
    kind,
    read_document,
    trim_blank_lines,
)


def doc(description: str, body: str = "") -> bytes:
    return f"---\ndescription: {description}\n---\n{body}".encode()


TRUNCATED = re.compile(r"^\[Tree truncated: showing (\d+) of (\d+) entries\. (\d+) omitted\.\]$")


def tree_of(output: str) -> list[str]:
    """The lines between the external_projection tags."""
    lines = output.split("\n")
    start = lines.index("<external_projection>")
    return lines[start + 1 : lines.index("</external_projection>")]


def test_full_format() -> None:
    files = {
        "system/persona.md": doc("Who I am", "\n\nI help with code.\n\n"),
        "system/human.md": doc("The person", "Pat likes short answers.\n"),
        "system/project/gotchas.md": doc("Traps", "- tests need redis\n"),
        "skills/deploy/SKILL.md": b"---\nname: deploy\ndescription: Ship a release\n---\nsteps\n",
        "reference/details.md": doc("description of details", "x\n"),
        "ARCHIVE.md": doc("its description"),
        ".memrepo/config.yml": b"",
    }
    assert compile_memory(files, Limits()) == "\n".join([
        "<memory>",
        "<human>",
        "<projection>$MEMORY_DIR/system/human.md</projection>",
        "<description>The person</description>",
        "Pat likes short answers.",
        "</human>",
        "<persona>",
        "<projection>$MEMORY_DIR/system/persona.md</projection>",
        "<description>Who I am</description>",
        "I help with code.",
        "</persona>",
        "<project>",
        "<gotchas>",
        "<projection>$MEMORY_DIR/system/project/gotchas.md</projection>",
        "<description>Traps</description>",
        "- tests need redis",
        "</gotchas>",
        "</project>",
        "<skills>",
        "- skills/deploy/SKILL.md — Ship a release",
        "</skills>",
        "<external_projection>",
        "$MEMORY_DIR/",
        "├── reference/",
        "│   └── details.md — description of details",
        "└── ARCHIVE.md — its description",
        "</external_projection>",
        "</memory>",
    ])


@pytest.mark.parametrize(("files", "expected"), [
    pytest.param({}, "<memory>\n</memory>", id="empty"),
    pytest.param(
        {"system/b.md": doc("B", "b"), "system/a.md": doc("A", "a")},
        "<memory>\n<a>\n<projection>$MEMORY_DIR/system/a.md</projection>\n<description>A</description>\n"
        "a\n</a>\n<b>\n<projection>$MEMORY_DIR/system/b.md</projection>\n<description>B</description>\n"
        "b\n</b>\n</memory>",
        id="keys-sorted",
    ),
    pytest.param(
        {"system/x/y.md": doc("Y", "y"), "system/x.md": doc("X", "x")},
        "<memory>\n<x>\n<projection>$MEMORY_DIR/system/x.md</projection>\n<description>X</description>\n"
        "x\n</x>\n<x>\n<y>\n<projection>$MEMORY_DIR/system/x/y.md</projection>\n"
        "<description>Y</description>\ny\n</y>\n</x>\n</memory>",
        id="file-before-folder-of-same-name",
    ),
    pytest.param(
        {"system/a/b/c.md": doc("C", "c")},
        "<memory>\n<a>\n<b>\n<c>\n<projection>$MEMORY_DIR/system/a/b/c.md</projection>\n"
        "<description>C</description>\nc\n</c>\n</b>\n</a>\n</memory>",
        id="nested-two-levels",
    ),
    pytest.param(
        {"system/empty.md": doc("Nothing yet", "\n\n  \n")},
        "<memory>\n<empty>\n<projection>$MEMORY_DIR/system/empty.md</projection>\n"
        "<description>Nothing yet</description>\n</empty>\n</memory>",
        id="empty-body",
    ),
    pytest.param(
        {"system/multi.md": b"---\ndescription: |\n  two\n  lines\n---\n\n    code\n  text\n\n"},
        "<memory>\n<multi>\n<projection>$MEMORY_DIR/system/multi.md</projection>\n"
        "<description>two lines</description>\n    code\n  text\n</multi>\n</memory>",
        id="description-one-line-body-indent-kept",
    ),
    pytest.param(
        {"system/my notes.md": doc("N", "n")},
        "<memory>\n<my_notes>\n<projection>$MEMORY_DIR/system/my notes.md</projection>\n"
        "<description>N</description>\nn\n</my_notes>\n</memory>",
        id="tag-name-made-safe",
    ),
])
def test_core(files: dict[str, bytes], expected: str) -> None:
    assert compile_memory(files, Limits()) == expected


@pytest.mark.parametrize(("data", "shown"), [
    pytest.param(b"just text\nno frontmatter\n", "just text\nno frontmatter", id="no-frontmatter"),
    pytest.param(b"---\ndescription: x\nbody\n", "---\ndescription: x\nbody", id="unclosed"),
    pytest.param(b"---\ndescription: x\nno key\n---\nbody\n", "---\ndescription: x\nno key\n---\nbody",
                 id="bad-yaml"),
    pytest.param(b"---\n- a list\n---\nbody\n", "---\n- a list\n---\nbody", id="not-a-mapping"),
])
def test_broken_core_file_is_still_shown(data: bytes, shown: str) -> None:
    out = compile_memory({"system/broken.md": data}, Limits())
    assert out == (f"<memory>\n<broken>\n<projection>$MEMORY_DIR/system/broken.md</projection>\n"
                   f"<description></description>\n{shown}\n</broken>\n</memory>")


@pytest.mark.parametrize("data", [b"\xff\xfe bad", b"text\0with NUL"])
def test_undecodable_core_file_is_a_one_line_note(data: bytes) -> None:
    out = compile_memory({"system/blob.md": data}, Limits()).split("\n")
    note = out[4]
    assert note.startswith("[this file cannot be shown in the prompt: ") and note.endswith("]")
    assert out[:4] == ["<memory>", "<blob>", "<projection>$MEMORY_DIR/system/blob.md</projection>",
                       "<description></description>"]
    assert out[5:] == ["</blob>", "</memory>"]


def test_skills_section() -> None:
    files = {
        "skills/b/SKILL.md": doc("Second"),
        "skills/a/SKILL.md": b"---\nname: a\ndescription: First\n---\n",
        "skills/c/SKILL.md": b"no frontmatter",
        "skills/a/helper.py": b"print()",
        "skills/flat.md": doc("invalid flat skill"),
    }
    assert compile_memory(files, Limits()) == (
        "<memory>\n<skills>\n- skills/a/SKILL.md — First\n- skills/b/SKILL.md — Second\n"
        "- skills/c/SKILL.md\n</skills>\n</memory>"
    )


def test_tree_excludes_core_skills_and_dot_paths() -> None:
    files = {
        "system/persona.md": doc("P"),
        "system/image.png": b"\x89PNG",
        "skills/a/SKILL.md": doc("A"),
        ".memrepo/config.yml": b"",
        ".github/workflows/x.yml": b"",
        ".gitignore": b"",
        "notes/.draft.md": doc("hidden"),
        "notes/kept.md": doc("kept"),
    }
    assert tree_of(compile_memory(files, Limits())) == [
        "$MEMORY_DIR/",
        "├── notes/",
        "│   └── kept.md — kept",
        "└── system/",
        "    └── image.png",
    ]


def test_tree_order_and_descriptions() -> None:
    long = "word " * 60
    files = {
        "z.md": doc("last file"),
        "a.txt": b"not markdown: no description",
        "b/c.md": doc("deep"),
        "b/a/x.md": b"---\ndescription: ''\n---\n",
        "m/long.md": doc(long),
        "m/broken.md": b"no frontmatter",
    }
    cut = " ".join(long.split())[:199] + "…"
    assert tree_of(compile_memory(files, Limits(), memory_dir="/mem/")) == [
        "/mem/",
        "├── b/",
        "│   ├── a/",
        "│   │   └── x.md",
        "│   └── c.md — deep",
        "├── m/",
        "│   ├── broken.md",
        f"│   └── long.md — {cut}",
        "├── a.txt",
        "└── z.md — last file",
    ]
    assert len(cut) == 200


def test_memory_dir_in_projection() -> None:
    out = compile_memory({"system/persona.md": doc("P", "p")}, Limits(), memory_dir="/home/a/.memory")
    assert "<projection>/home/a/.memory/system/persona.md</projection>" in out


FLAT = {f"f{i}.md": doc(f"d{i}") for i in range(10)}  # lines such as "├── f0.md — d0"
SHOW_3 = ["$MEMORY_DIR/", "├── f0.md — d0", "├── f1.md — d1", "├── f2.md — d2",
          "[Tree truncated: showing 3 of 10 entries. 7 omitted.]"]


@pytest.mark.parametrize(("limits", "expected"), [
    pytest.param(Limits(tree_children=4), [
        "$MEMORY_DIR/", "├── f0.md — d0", "├── f1.md — d1", "├── f2.md — d2", "└── f3.md — d3",
        "[Tree truncated: showing 4 of 10 entries. 6 omitted.]",
    ], id="children"),
    pytest.param(Limits(tree_lines=4), [
        "$MEMORY_DIR/", "├── f0.md — d0", "├── f1.md — d1",
        "[Tree truncated: showing 2 of 10 entries. 8 omitted.]",
    ], id="lines"),
    pytest.param(Limits(tree_chars=len("\n".join(SHOW_3))), SHOW_3, id="chars-exactly"),
    pytest.param(Limits(tree_chars=len("\n".join(SHOW_3)) - 1), [
        "$MEMORY_DIR/", "├── f0.md — d0", "├── f1.md — d1",
        "[Tree truncated: showing 2 of 10 entries. 8 omitted.]",
    ], id="chars-one-short"),
    pytest.param(Limits(tree_lines=11), [
        "$MEMORY_DIR/", *(f"├── f{i}.md — d{i}" for i in range(9)), "└── f9.md — d9",
    ], id="lines-exactly-fit"),
    pytest.param(Limits(tree_chars=12 + 10 * 15), [
        "$MEMORY_DIR/", *(f"├── f{i}.md — d{i}" for i in range(9)), "└── f9.md — d9",
    ], id="chars-exactly-fit"),
])
def test_tree_truncation(limits: Limits, expected: list[str]) -> None:
    assert tree_of(compile_memory(FLAT, limits)) == expected


def test_children_limit_applies_per_folder_and_counts_subtrees() -> None:
    files = {f"a/{i}.md": doc("x") for i in range(3)} | {f"b/{i}.md": doc("x") for i in range(3)}
    files["c/d/e.md"] = doc("x")
    assert tree_of(compile_memory(files, Limits(tree_children=2))) == [
        "$MEMORY_DIR/",
        "├── a/",
        "│   ├── 0.md — x",
        "│   └── 1.md — x",
        "└── b/",
        "    ├── 0.md — x",
        "    └── 1.md — x",
        "[Tree truncated: showing 6 of 11 entries. 5 omitted.]",
    ]


def test_compile_prompt() -> None:
    memory = "<memory>\n</memory>"
    assert compile_prompt("You are Ada.  \n\n", memory) == "You are Ada.\n\n" + memory
    assert compile_prompt("", "<memory>\n</memory>") == "<memory>\n</memory>"
    assert compile_prompt(" \n", "<memory>\n</memory>") == "<memory>\n</memory>"


@pytest.mark.parametrize(("path", "where"), [
    ("system/a.md", "core"), ("system/a/b.md", "core"), ("system/a.txt", "external"),
    ("skills/a/SKILL.md", "skill"), ("skills/a/b/SKILL.md", None), ("skills/a.md", None),
    ("reference/x.md", "external"), (".memrepo/config.yml", None), ("x/.hidden", None),
])
def test_kind(path: str, where: str | None) -> None:
    assert kind(path) == where


def test_trim_blank_lines() -> None:
    assert trim_blank_lines("\n \n  indented\n\nlast  \n\n") == "  indented\n\nlast"
    assert trim_blank_lines(" \n\t\n") == ""


# ------------------------------------------------------------------ properties
segment = st.text(alphabet="abcxyz.-_", min_size=1, max_size=4).filter(lambda s: not s.startswith("."))
external_path = st.lists(segment, min_size=1, max_size=4).map("/".join).filter(
    lambda p: not p.startswith(("system/", "skills/")) and p not in ("system", "skills"))


def _valid_tree(paths: set[str]) -> bool:
    """No path is both a file and a folder (git cannot store that)."""
    return not any(other.startswith(p + "/") for p in paths for other in paths)


@settings(max_examples=300, deadline=None)
@given(
    paths=st.sets(external_path, min_size=1, max_size=60).filter(_valid_tree),
    lines=st.integers(2, 80),
    chars=st.integers(80, 3000),
    children=st.integers(1, 12),
    described=st.booleans(),
)
def test_tree_limits_property(paths: set[str], lines: int, chars: int, children: int,
                              described: bool) -> None:
    files = {p: doc("a description " * 3) if described else b"" for p in paths}
    limits = Limits(tree_lines=lines, tree_chars=chars, tree_children=children)
    tree = tree_of(compile_memory(files, limits))
    folders = {p.rsplit("/", i)[0] for p in paths for i in range(1, p.count("/") + 1)}
    total = len(paths) + len(folders)
    assert len(tree) <= lines
    assert len("\n".join(tree)) <= chars
    match = TRUNCATED.match(tree[-1])
    if match is None:
        assert len(tree) - 1 == total
    else:
        shown, all_entries, omitted = map(int, match.groups())
        assert all_entries == total
        assert shown + omitted == all_entries
        assert shown == len(tree) - 2
        assert omitted > 0


# Frontmatter made of lines that are often, but not always, plain `key: words`.
fm_line = st.one_of(
    st.from_regex(r"[a-z_]{1,8}: +[A-Za-z][A-Za-z0-9 ,.'\"()!?&*%@`{}\[\]:#|>~=-]{0,20} *", fullmatch=True),
    st.sampled_from(["description: yes", "description: Off", "description: null", "y: x", "on: x",
                     "description: a: b", "description: a #c", "description: a:", "description:",
                     "description: |", "  more", "- item", "# comment", "", "description: x\r",
                     "description: é", "description: a\tb", "description: a\u2028b", "---", "--- x",
                     "description: x---y", "key: 'quoted'", "description: 2024-01-01"]),
)
document_text = st.builds(
    lambda opening, lines, closing, body: opening + "".join(line + "\n" for line in lines) + closing + body,
    st.sampled_from(["---\n", "--- \n", "---\r\n", "", "x\n"]),
    st.lists(fm_line, max_size=4),
    st.sampled_from(["---\n", "--- \n", "---", "---\r\n", ""]),
    st.text(alphabet="ab\n -#:", max_size=20),
)


@settings(max_examples=1000, deadline=None)
@given(document_text)
def test_read_document_agrees_with_the_document_parser(text: str) -> None:
    """The fast paths of read_document give what document.parse gives, or fall back."""
    parsed = try_parse(text)
    expected = Entry(body=text) if parsed is None else Entry(" ".join(parsed.description.split()), parsed.body)
    assert read_document(text.encode()) == expected


def test_read_document_undecodable() -> None:
    _, problem = decode(b"\xff")
    assert read_document(b"\xff") == Entry(problem=problem)
