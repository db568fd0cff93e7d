"""The memory_apply_patch envelope: parsing, applying, and the exact messages of each error."""

from __future__ import annotations

import contextlib
import difflib

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bot.errors import MemrepoError
from bot.memfs.tool.patch import FileOp, Hunk, PatchError, apply_patch, parse_patch

SECTION = "'*** Add File:', '*** Update File:', '*** Delete File:' or '*** End Patch'"
HUNK_LINE = "a hunk line (' ' context, '-' removed, '+' added), an '@@' line or a '***' line"


def patch(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


def files(table: dict[str, str] | None = None):
    """A `read` callable over a few files."""
    return dict(table or {}).get


def run(text: str, read=None) -> dict[str, str | None]:
    return apply_patch(parse_patch(text), read or files())


# ------------------------------------------------------------------------------- parsing


def test_parse_all_kinds():
    ops = parse_patch(patch(
        "*** Add File: system/new.md",
        "+one",
        "+",
        "+two",
        "*** Update File: system/a.md",
        "*** Move to: reference/a.md",
        "@@ ## Heading",
        " keep",
        "-old",
        "+new",
        "@@",
        " more",
        "+added",
        "*** Delete File: system/gone.md",
    ))
    assert [(op.kind, op.path, op.move_to) for op in ops] == [
        ("add", "system/new.md", None),
        ("update", "system/a.md", "reference/a.md"),
        ("delete", "system/gone.md", None),
    ]
    assert ops[0].text == "one\n\ntwo\n"
    assert [(h.header, h.lines) for h in ops[1].hunks] == [
        ("## Heading", [(" ", "keep"), ("-", "old"), ("+", "new")]),
        (None, [(" ", "more"), ("+", "added")]),
    ]
    assert [op.line for op in ops] == [2, 6, 15]
    assert [h.line for h in ops[1].hunks] == [8, 12]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Blank lines around the envelope and between sections; markers with trailing blanks.
        ("\n\n*** Begin Patch  \n\n*** Delete File: a.md\n\n*** End Patch \n\n", [("delete", "a.md")]),
        # Paths are returned as given, minus surrounding blanks.
        (patch("*** Delete File:   memory/x  "), [("delete", "memory/x")]),
        (patch("*** Delete File:a.md"), [("delete", "a.md")]),
        # No trailing newline after End Patch.
        ("*** Begin Patch\n*** Delete File: a.md\n*** End Patch", [("delete", "a.md")]),
    ],
)
def test_parse_tolerates_spacing(text, expected):
    assert [(op.kind, op.path) for op in parse_patch(text)] == expected


def test_first_hunk_may_omit_its_header_line():
    (op,) = parse_patch(patch("*** Update File: a.md", " x", "-y", "+z"))
    assert [(h.header, h.lines) for h in op.hunks] == [(None, [(" ", "x"), ("-", "y"), ("+", "z")])]


@pytest.mark.parametrize(
    ("header_line", "header"),
    [
        ("@@", None),
        ("@@   ", None),
        ("@@ ## Facts", "## Facts"),
        ("@@   ## Facts  ", "## Facts"),
        ("@@ -3,4 +3,5 @@", None),  # a unified-diff header: the numbers mean nothing here
        ("@@ -3 +3,2 @@ ## Facts", "## Facts"),
    ],
)
def test_hunk_headers(header_line, header):
    (op,) = parse_patch(patch("*** Update File: a.md", header_line, "-y"))
    assert op.hunks[0].header == header


def test_blank_lines_inside_a_hunk_are_empty_context_but_trailing_ones_are_spacing():
    (op, _) = parse_patch(
        patch("*** Update File: a.md", "@@", " a", "", "-b", " ", "", "", "*** Delete File: c")
    )
    assert op.hunks[0].lines == [(" ", "a"), (" ", ""), ("-", "b"), (" ", "")]


def test_body_lines_that_look_like_markers_stay_body():
    (add, upd) = parse_patch(patch(
        "*** Add File: a.md", "+*** End Patch", "*** Update File: b.md", " *** End Patch", "-@@ x", "+x"
    ))
    assert add.text == "*** End Patch\n"
    assert upd.hunks[0].lines == [(" ", "*** End Patch"), ("-", "@@ x"), ("+", "x")]


def test_end_of_file_marker():
    (op,) = parse_patch(patch("*** Update File: a.md", "@@", " x", "+y", "*** End of File", "@@ h", "-z"))
    assert [(h.at_eof, h.header) for h in op.hunks] == [(True, None), (False, "h")]
    (op,) = parse_patch(patch("*** Update File: a.md", " x", "+y", "*** End of File", "-z"))
    assert [h.lines for h in op.hunks] == [[(" ", "x"), ("+", "y")], [("-", "z")]]


def test_move_without_hunks_is_a_rename():
    (op,) = parse_patch(patch("*** Update File: a.md", "*** Move to: b.md"))
    assert (op.kind, op.path, op.move_to, op.hunks) == ("update", "a.md", "b.md", [])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the patch is empty; it must start with '*** Begin Patch' and end with '*** End Patch'"),
        (" \n\n", "the patch is empty; it must start with '*** Begin Patch' and end with '*** End Patch'"),
        ("hello\n", "line 1: expected '*** Begin Patch', found 'hello'"),
        ("\n\n--- a/x\n", "line 3: expected '*** Begin Patch', found '--- a/x'"),
        ("*** Begin Patch\n", f"line 2: expected {SECTION}, found the end of the patch"),
        ("*** Begin Patch\n*** Delete File: a\n", f"line 3: expected {SECTION}, found the end of the patch"),
        (
            "*** Begin Patch\n*** Add File: a\n+x\n",
            f"line 4: expected {SECTION}, found the end of the patch",
        ),
        (patch("*** Modify File: a"), f"line 2: expected {SECTION}, found '*** Modify File: a'"),
        (patch("*** Add File a"), f"line 2: expected {SECTION}, found '*** Add File a'"),
        (patch("+x"), f"line 2: expected {SECTION}, found '+x'"),
        (
            patch("y" * 70),
            f"line 2: expected {SECTION}, found '{'y' * 60}...'",
        ),
        (
            "*** Begin Patch\n*** End Patch\n",
            "the patch changes no files; add '*** Add File:', '*** Update File:' or "
            "'*** Delete File:' sections",
        ),
        (
            patch("*** Delete File: a") + "more\n",
            "line 4: expected nothing after '*** End Patch', found 'more'",
        ),
        (patch("*** Add File:  "), "line 2: '*** Add File:' needs a file path after the colon"),
        (patch("*** Update File:"), "line 2: '*** Update File:' needs a file path after the colon"),
        (patch("*** Delete File: "), "line 2: '*** Delete File:' needs a file path after the colon"),
        (
            patch("*** Update File: a", "*** Move to:", "-x"),
            "line 3: '*** Move to:' needs a file path after the colon",
        ),
        (
            patch("*** Add File: a.md", "+x", "y"),
            "line 4: expected a line starting with '+' (the text of the new file a.md), found 'y'",
        ),
        (
            patch("*** Add File: a.md", " x"),
            "line 3: expected a line starting with '+' (the text of the new file a.md), found ' x'",
        ),
        (
            patch("*** Update File: a.md", "@@", "x"),
            f"line 4: expected {HUNK_LINE}, found 'x'",
        ),
        (
            patch("*** Update File: a.md", "\tx"),
            f"line 3: expected {HUNK_LINE}, found '\\tx'",
        ),
        (
            patch("*** Delete File: a.md", "-x"),
            "line 3: expected the next '***' line ('*** Delete File:' takes no lines), found '-x'",
        ),
        (
            patch("*** Update File: a.md"),
            "line 2: '*** Update File: a.md' changes nothing; add a hunk ('@@', then ' context', "
            "'-removed' and '+added' lines) or a '*** Move to:' line",
        ),
        (
            patch("*** Update File: a.md", "@@ h"),
            "line 3: this hunk has no lines; give ' context', '-removed' and '+added' lines after '@@'",
        ),
        (
            patch("*** Update File: a.md", "@@", "-x", "@@"),
            "line 5: this hunk has no lines; give ' context', '-removed' and '+added' lines after '@@'",
        ),
        (
            patch("*** Update File: a.md", "@@", " x", " y"),
            "line 3: this hunk changes nothing (it has no '-' or '+' lines)",
        ),
        (
            patch("*** Delete File: a.md", "*** Move to: b.md"),
            "line 3: '*** Move to:' must come right after an '*** Update File:' line",
        ),
        (
            patch("*** Update File: a.md", "-x", "*** Move to: b.md"),
            "line 4: '*** Move to:' must come right after an '*** Update File:' line",
        ),
        (
            patch("*** Update File: a.md", "*** End of File"),
            "line 3: '*** End of File' must end a hunk of an '*** Update File:' section",
        ),
        (
            patch("*** Update File: a.md", "-x", "*** End of File", "*** End of File"),
            "line 5: '*** End of File' must end a hunk of an '*** Update File:' section",
        ),
        (
            patch("*** Update File: a.md", "@@", "*** End of File"),
            "line 3: this hunk has no lines; give ' context', '-removed' and '+added' lines after '@@'",
        ),
        (
            patch("*** Delete File: a.md", "*** End of File"),
            "line 3: '*** End of File' must end a hunk of an '*** Update File:' section",
        ),
        (
            patch("*** Delete File: a.md", "*** Add File: a.md", "+x"),
            "line 3: a.md is already changed by the section at line 2; "
            "put all changes to one file in one section",
        ),
        (
            patch("*** Update File: a.md", "*** Move to: b.md", "*** Add File: b.md"),
            "line 4: b.md is already changed by the section at line 2; "
            "put all changes to one file in one section",
        ),
        (
            patch("*** Delete File: b.md", "*** Update File: a.md", "*** Move to: b.md"),
            "line 3: b.md is already changed by the section at line 2; "
            "put all changes to one file in one section",
        ),
    ],
)
def test_parse_errors(text, message):
    with pytest.raises(PatchError) as info:
        parse_patch(text)
    assert str(info.value) == message
    assert isinstance(info.value, MemrepoError)


# ------------------------------------------------------------------------------ applying


@pytest.mark.parametrize(
    ("before", "body", "after"),
    [
        # Trailing newline kept, or kept absent.
        ("a\nb\nc\n", [" a", "-b", "+B"], "a\nB\nc\n"),
        ("a\nb\nc", [" a", "-b", "+B"], "a\nB\nc"),
        ("a\nb\nc", [" b", "-c", "+C"], "a\nb\nC"),
        ("a\nb\nc", [" c", "+d"], "a\nb\nc\nd"),
        ("a\nb\nc\n", [" c", "+d"], "a\nb\nc\nd\n"),
        # Removing everything gives an empty file.
        ("a\n", ["-a"], ""),
        ("a", ["-a"], ""),
        # Empty lines are lines.
        ("a\n\nb\n", [" a", "-", "+x", " b"], "a\nx\nb\n"),
        ("\n", ["-", "+x"], "x\n"),
        # Only added lines, no header: appended at the end.
        ("a\n", ["+b"], "a\nb\n"),
        ("", ["+b", "+c"], "b\nc\n"),
        # Whitespace matters (exact match).
        ("  a\n", ["-  a", "+a"], "a\n"),
        # '\r' is part of a line (files are split on '\n' only).
        ("a\r\nb\r\n", ["-a\r", "+x\r"], "x\r\nb\r\n"),
        ("a\u2028b\n", ["-a\u2028b", "+c"], "c\n"),
    ],
)
def test_update(before, body, after):
    assert run(patch("*** Update File: f.md", "@@", *body), files({"f.md": before})) == {"f.md": after}


@pytest.mark.parametrize(
    ("before", "body", "after"),
    [
        # The header narrows the search to the lines from the first one containing it.
        ("## A\nx\n## B\nx\n", ["@@ ## B", "-x", "+y"], "## A\nx\n## B\ny\n"),
        ("## A\nx\n## B\nx\n", ["@@ ## A", "-x", "+y"], "## A\ny\n## B\nx\n"),
        ("## Alpha\nx\n## Beta\nx\n", ["@@ Bet", "-x", "+y"], "## Alpha\nx\n## Beta\ny\n"),
        # With a header, the first match after it wins even if there are more.
        ("## A\nx\nx\n", ["@@ ## A", "-x", "+y"], "## A\ny\nx\n"),
        # The heading line itself may be context.
        ("## A\nx\n## B\nx\n", ["@@ ## B", " ## B", "-x", "+y"], "## A\nx\n## B\ny\n"),
        # Only added lines with a header: inserted right after the heading line.
        ("## A\nx\n## B\nz\n", ["@@ ## B", "+y"], "## A\nx\n## B\ny\nz\n"),
        # Hunks apply in order, each searched after the previous one.
        ("x\n1\nx\n2\n", ["-x", "+a", " 1", "@@", "-x", "+b"], "a\n1\nb\n2\n"),
        ("x\ny\nx\n", [" y", "-x", "+z", "@@", "+w"], "x\ny\nz\nw\n"),
        # End of File anchors the hunk to the end.
        ("x\nx\n", ["-x", "+y", "*** End of File"], "x\ny\n"),
        ("x\nx", ["-x", "+y", "*** End of File"], "x\ny"),
        ("a\n", ["+b", "*** End of File"], "a\nb\n"),
    ],
)
def test_update_with_headers_and_several_hunks(before, body, after):
    assert run(patch("*** Update File: f.md", *body), files({"f.md": before})) == {"f.md": after}


def test_add_delete_move():
    read = files({"system/a.md": "x\ny\n", "system/b.md": "b\n", "system/c.md": "c\n"})
    result = run(
        patch(
            "*** Add File: reference/new.md",
            "+---",
            "+description: new",
            "+---",
            "*** Update File: system/a.md",
            "*** Move to: reference/a.md",
            "-y",
            "+z",
            "*** Update File: system/b.md",
            "*** Move to: reference/b.md",
            "*** Delete File: system/c.md",
        ),
        read,
    )
    assert result == {
        "reference/new.md": "---\ndescription: new\n---\n",
        "system/a.md": None,
        "reference/a.md": "x\nz\n",
        "system/b.md": None,
        "reference/b.md": "b\n",
        "system/c.md": None,
    }
    assert list(result) == [  # patch order
        "reference/new.md", "system/a.md", "reference/a.md", "system/b.md", "reference/b.md", "system/c.md"
    ]
    assert run(patch("*** Add File: e.md")) == {"e.md": ""}
    assert run(patch("*** Add File: e.md", "+", "+")) == {"e.md": "\n\n"}
    assert run(patch("*** Add File: e.md", "+a", "", "+b", "  ", "")) == {"e.md": "a\n\nb\n"}


def test_move_to_same_path_is_an_update():
    ops = [FileOp("update", "a.md", move_to="a.md", hunks=[Hunk(lines=[("-", "x"), ("+", "y")])])]
    assert apply_patch(ops, files({"a.md": "x\n"})) == {"a.md": "y\n"}


def test_read_is_asked_only_about_touched_paths():
    asked: list[str] = []

    def read(path: str) -> str | None:
        asked.append(path)
        return {"a.md": "x\n"}.get(path)

    run(patch("*** Update File: a.md", "*** Move to: b.md", "-x", "+y", "*** Add File: c.md", "+c"), read)
    assert asked == ["a.md", "b.md", "c.md"]


@pytest.mark.parametrize(
    ("existing", "body", "message"),
    [
        (
            {"a.md": "x\n"},
            ["*** Add File: a.md", "+y"],
            "a.md: cannot add the file, it already exists; use '*** Update File: a.md' to change it",
        ),
        (
            {},
            ["*** Update File: a.md", "-x"],
            "a.md: cannot update the file, it does not exist; use '*** Add File: a.md' to create it",
        ),
        ({}, ["*** Delete File: a.md"], "a.md: cannot delete the file, it does not exist"),
        (
            {"a.md": "x\n", "b.md": "y\n"},
            ["*** Update File: a.md", "*** Move to: b.md"],
            "a.md: cannot move the file to b.md, which already exists",
        ),
        (
            {"a.md": "x\ny\n"},
            ["*** Update File: a.md", "@@", " x", "-z", "+w"],
            "a.md: hunk 1 (patch line 3) does not match the file; it looked for:\n    |x\n    |z",
        ),
        (
            {"a.md": "1\n2\n3\n4\n5\n6\n7\n"},
            ["*** Update File: a.md", "@@", *[f" {n}" for n in range(1, 8)], "-8"],
            "a.md: hunk 1 (patch line 3) does not match the file; it looked for:\n"
            "    |1\n    |2\n    |3\n    |4\n    |5\n    ... and 3 more lines",
        ),
        (
            {"a.md": "x\ny\n"},
            ["*** Update File: a.md", "-y", "+z", "@@", "-x"],
            "a.md: hunk 2 (patch line 5) does not match the file after hunk 1; it looked for:\n    |x",
        ),
        (
            {"a.md": "x\ny\n"},
            ["*** Update File: a.md", "@@ y", "-x"],
            "a.md: hunk 1 (patch line 3) does not match the file after the line containing 'y'; "
            "it looked for:\n    |x",
        ),
        (
            {"a.md": "x\ny\n"},
            ["*** Update File: a.md", "@@ ## Nope", "-x"],
            "a.md: hunk 1 (patch line 3) names '@@ ## Nope', but no line contains that text",
        ),
        (
            {"a.md": "h\nx\ny\n"},
            ["*** Update File: a.md", "-y", "+z", "@@ h", "-x"],
            "a.md: hunk 2 (patch line 5) names '@@ h', but no line after hunk 1 contains that text",
        ),
        (
            {"a.md": "x\ny\nx\n"},
            ["*** Update File: a.md", "-x", "+z"],
            "a.md: hunk 1 (patch line 3) matches 2 places in the file; add context lines, or an '@@' "
            "line with the heading above the change. It looked for:\n    |x",
        ),
        (
            {"a.md": "x\ny\nx\n"},
            ["*** Update File: a.md", "-x", "*** End of File", "-y"],
            "a.md: hunk 2 (patch line 5) does not match the file after hunk 1; it looked for:\n    |y",
        ),
        (
            {"a.md": "x\ny\n"},
            ["*** Update File: a.md", "-x", "*** End of File"],
            "a.md: hunk 1 (patch line 3) is marked '*** End of File' but does not match the end of "
            "the file; it looked for:\n    |x",
        ),
        (
            {"a.md": "x\n"},
            ["*** Update File: a.md", "-x", "+y", "@@", "-x", "*** End of File"],
            "a.md: hunk 2 (patch line 5) is marked '*** End of File' but does not match the end of "
            "the file; it looked for:\n    |x",
        ),
        (
            # Exact match: trailing blanks are not ignored.
            {"a.md": "x \n"},
            ["*** Update File: a.md", "-x"],
            "a.md: hunk 1 (patch line 3) does not match the file; it looked for:\n    |x",
        ),
    ],
)
def test_apply_errors(existing, body, message):
    with pytest.raises(PatchError) as info:
        run(patch(*body), existing.get)
    assert str(info.value) == message


def test_two_ops_on_one_path_after_the_caller_normalised_them():
    ops = parse_patch(patch("*** Add File: a", "+x", "*** Delete File: a.md"))
    ops[0].path = "a.md"
    with pytest.raises(PatchError) as info:
        apply_patch(ops, files())
    assert str(info.value) == (
        "a.md: the patch changes this file twice; put all changes to one file in one section"
    )


def test_errors_change_nothing_the_caller_sees():
    """The result is all-or-nothing: a late failure leaves no partial dict behind."""
    with pytest.raises(PatchError):
        run(patch("*** Add File: b.md", "+b", "*** Delete File: gone.md"), files({"a.md": "a"}))


# ---------------------------------------------------------------------------- properties

LINE = st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=8)


def is_file(lines: list[str], newline_at_end: bool) -> bool:
    """Whether these are the lines of some text: with no newline at the end, the last line
    cannot be empty ("a\n" is one line and a newline, not "a" then "")."""
    return newline_at_end or not lines or lines[-1] != ""


def text_of(lines: list[str], newline_at_end: bool) -> str:
    return "\n".join(lines) + ("\n" if newline_at_end and lines else "")


def make_patch(old: list[str], new: list[str], context: int, headers: bool) -> str:
    """An Update section turning `old` into `new`, one hunk per difflib group."""
    body = ["*** Update File: f.md"]
    groups = list(difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(context))
    for group in groups:
        first = group[0][1]
        heading = old[first - 1].strip() if first > 0 else ""
        body.append(f"@@ {heading}" if headers and heading else "@@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                body += [" " + line for line in old[i1:i2]]
            if tag in ("replace", "delete"):
                body += ["-" + line for line in old[i1:i2]]
            if tag in ("replace", "insert"):
                body += ["+" + line for line in new[j1:j2]]
    return patch(*body)


@settings(max_examples=300)
@given(
    old=st.lists(LINE, unique=True, max_size=25),
    data=st.data(),
    newline_at_end=st.booleans(),
    context=st.integers(1, 3),
    headers=st.booleans(),
)
def test_generated_patch_applies_back_to_the_edited_text(old, data, newline_at_end, context, headers):
    """Lines of `old` are unique, so every hunk of a difflib patch matches exactly once."""
    assume(is_file(old, newline_at_end))
    new = data.draw(st.lists(st.one_of(st.sampled_from(old), LINE) if old else LINE, max_size=25))
    if old == new:
        return
    before = text_of(old, newline_at_end)
    after = text_of(new, newline_at_end or not old)
    assert run(make_patch(old, new, context, headers), files({"f.md": before})) == {"f.md": after}


@settings(max_examples=300)
@given(old=st.lists(LINE, max_size=15), new=st.lists(LINE, max_size=15), newline_at_end=st.booleans())
def test_whole_file_hunk_applies_to_any_text(old, new, newline_at_end):
    """Lines may repeat here; a hunk spanning the whole file still matches only once."""
    assume(is_file(old, newline_at_end))
    if old == new:
        return
    body = ["*** Update File: f.md", "@@", *["-" + line for line in old], *["+" + line for line in new]]
    before = text_of(old, newline_at_end)
    after = text_of(new, newline_at_end or not old)
    assert run(patch(*body), files({"f.md": before})) == {"f.md": after}


@given(lines=st.lists(LINE, max_size=10))
def test_added_file_is_its_lines(lines):
    assert run(patch("*** Add File: n.md", *["+" + line for line in lines])) == {
        "n.md": "".join(line + "\n" for line in lines)
    }


@given(st.text(max_size=200))
def test_parse_raises_only_patch_errors(text):
    with contextlib.suppress(PatchError):
        parse_patch(text)


@given(st.lists(st.sampled_from([
    "*** Begin Patch", "*** End Patch", "*** Add File: a", "*** Update File: a", "*** Delete File: b",
    "*** Move to: c", "*** End of File", "@@", "@@ h", " x", "-x", "+y", "", "z",
]), max_size=12), st.sampled_from([None, "x\n", "h\nx\n", "x"]))
def test_parse_and_apply_raise_only_patch_errors(lines, content):
    text = "\n".join(["*** Begin Patch", *lines, "*** End Patch"])
    with contextlib.suppress(PatchError):
        apply_patch(parse_patch(text), {"a": content, "b": content}.get)
