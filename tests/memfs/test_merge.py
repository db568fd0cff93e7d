"""merge3: table tests of each kind of region, and properties that must hold for any text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.memfs.merge.lines import merge3

BASE = "---\ndescription: notes\n---\nalpha\nbeta\ngamma\n"


@pytest.mark.parametrize(
    ("base", "ours", "theirs", "expected"),
    [
        # one side changed
        (BASE, BASE.replace("beta", "BETA"), BASE, BASE.replace("beta", "BETA")),
        (BASE, BASE, BASE.replace("beta", "BETA"), BASE.replace("beta", "BETA")),
        # both changed the same way: taken once
        (BASE, BASE + "delta\n", BASE + "delta\n", BASE + "delta\n"),
        # both changed different, separate regions
        (BASE, BASE.replace("alpha", "ALPHA"), BASE.replace("gamma", "GAMMA"),
         BASE.replace("alpha", "ALPHA").replace("gamma", "GAMMA")),
        # two writers appended: theirs first, then ours
        (BASE, BASE + "ours\n", BASE + "theirs\n", BASE + "theirs\nours\n"),
        # both inserted in the middle, at the same place
        (BASE, BASE.replace("beta\n", "beta\nmine\n"), BASE.replace("beta\n", "beta\nyours\n"),
         BASE.replace("beta\n", "beta\nyours\nmine\n")),
        # union drops our lines theirs already has, keeps blank separators
        (BASE, BASE + "\nshared\nours\n", BASE + "\nshared\ntheirs\n", BASE + "\nshared\ntheirs\n\nours\n"),
        # appending to a file without a final newline is still a clean insertion
        ("a\nb", "a\nb\nours\n", "a\nb\ntheirs\n", "a\nb\ntheirs\nours\n"),
        # deleting lines on one side
        (BASE, BASE.replace("beta\n", ""), BASE + "delta\n", BASE.replace("beta\n", "") + "delta\n"),
        # CRLF lines survive
        ("a\r\nb\r\n", "a\r\nb\r\nc\r\n", "a\r\nb\r\n", "a\r\nb\r\nc\r\n"),
        # empty texts
        ("", "", "", ""),
        ("", "x\n", "", "x\n"),
        ("x\n", "", "x\n", ""),
    ],
)
def test_clean_merges(base: str, ours: str, theirs: str, expected: str) -> None:
    result = merge3(base, ours, theirs)
    assert result.conflicts == []
    assert result.text == expected


@pytest.mark.parametrize(
    ("base", "ours", "theirs", "where"),
    [
        (BASE, BASE.replace("beta", "one"), BASE.replace("beta", "two"), (5, 6)),
        # adjacent changes are a conflict, as in diff3
        (BASE, BASE.replace("beta", "B"), BASE.replace("gamma", "G"), (5, 7)),
        # one side edits the last line, the other appends after it
        ("a\nb\n", "a\nB\n", "a\nb\nc\n", (2, 3)),
        # one side deletes what the other changes
        (BASE, BASE.replace("alpha\n", ""), BASE.replace("alpha", "ALPHA"), (4, 5)),
    ],
)
def test_conflicts(base: str, ours: str, theirs: str, where: tuple[int, int]) -> None:
    result = merge3(base, ours, theirs)
    assert result.text is None
    assert not result.clean
    first = result.conflicts[0]
    assert (first.base_start, first.base_end) == where
    assert first.describe().startswith(("line", "lines", "before line"))


def test_conflict_line_numbers_per_side() -> None:
    base = "a\nb\nc\n"
    result = merge3(base, "x\na\nb1\nc\n", "a\nb2\nb3\nc\n")
    [conflict] = result.conflicts
    assert (conflict.base_start, conflict.base_end) == (2, 3)
    assert (conflict.ours_start, conflict.ours_end) == (3, 4)
    assert (conflict.theirs_start, conflict.theirs_end) == (2, 4)
    assert conflict.ours == ("b1",)
    assert conflict.theirs == ("b2", "b3")
    assert conflict.describe() == "line 2"


# ----------------------------------------------------------------- properties
_line = st.sampled_from(["", "a", "b", "c", "- item", "---", "description: x", "  ", "z\r"])
_text = st.lists(_line, max_size=12).flatmap(
    lambda lines: st.booleans().map(lambda eol: "\n".join(lines) + ("\n" if eol and lines else ""))
)


@given(_text, _text)
def test_only_ours_changed(base: str, ours: str) -> None:
    assert merge3(base, ours, base).text == ours


@given(_text, _text)
def test_only_theirs_changed(base: str, theirs: str) -> None:
    assert merge3(base, base, theirs).text == theirs


@given(_text, _text)
def test_same_change_on_both_sides(base: str, both: str) -> None:
    assert merge3(base, both, both).text == both


@given(_text, _text, _text)
def test_never_crashes_and_reports_or_merges(base: str, ours: str, theirs: str) -> None:
    result = merge3(base, ours, theirs)
    assert (result.text is None) == bool(result.conflicts)


_new_line = st.text(alphabet="pqrstuvw ", min_size=1, max_size=6).filter(str.strip).map(lambda s: "new " + s)


@given(
    st.lists(_line, max_size=8),
    st.lists(_new_line, min_size=1, max_size=5, unique=True),
    st.lists(_new_line, min_size=1, max_size=5, unique=True),
)
def test_union_keeps_every_appended_line_once(
    base: list[str], ours_new: list[str], theirs_new: list[str]
) -> None:
    base_text = "".join(line + "\n" for line in base)
    ours = base_text + "".join(line + "\n" for line in ours_new)
    theirs = base_text + "".join(line + "\n" for line in theirs_new)
    result = merge3(base_text, ours, theirs)
    assert result.text is not None
    assert result.text.startswith(base_text + "".join(line + "\n" for line in theirs_new))
    tail = result.text[len(base_text):].splitlines()
    for line in set(ours_new) | set(theirs_new):
        assert tail.count(line) == 1
    assert len(tail) == len(set(ours_new) | set(theirs_new))
