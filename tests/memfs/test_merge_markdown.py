"""bot/memfs/merge/markdown.py: resolve_markdown and resolve_tree as table tests of each rule
(frontmatter key by key, list union, plain text, a resolver's answer checked), and properties."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bot.config import DEFAULT_POLICY
from bot.memfs.format.document import parse, render
from bot.memfs.format.validate import validate_file
from bot.memfs.merge.markdown import (
    ConflictResolver,
    ResolveRequest,
    ResolverError,
    merge_text,
    resolve_markdown,
    resolve_tree,
)
from tests.merge_documents import BASE, BODY, GOOD, OURS_PROSE, PATH, THEIRS_PROSE, doc, merged

# ------------------------------------------------------------------------------------------ table
CLEAN = [
    ("ours-only", BASE, doc(BODY + "- new\n"), BASE, doc(BODY + "- new\n")),
    ("theirs-only", BASE, BASE, doc(BODY.replace("beta", "BETA")), doc(BODY.replace("beta", "BETA"))),
    ("same-change", BASE, doc(BODY, "new"), doc(BODY, "new"), doc(BODY, "new")),
    ("description-one-side", BASE, doc(BODY, "mine"), doc(BODY + "tail\n"), doc(BODY + "tail\n", "mine")),
    ("description-both-ours-wins", BASE, doc(BODY, "mine"), doc(BODY, "theirs"), doc(BODY, "mine")),
    ("key-added-theirs", BASE, doc(BODY.replace("alpha", "ALPHA")), doc(BODY, limit=5),
     doc(BODY.replace("alpha", "ALPHA"), limit=5)),
    ("key-removed-ours", doc(BODY, limit=5), doc(BODY), doc(BODY.replace("gamma", "G"), limit=5),
     doc(BODY.replace("gamma", "G"))),
    ("key-same-both", doc(BODY, limit=5), doc(BODY + "o\n", limit=9), doc(BODY, limit=9), doc(BODY + "o\n", limit=9)),
    ("read-only-kept", doc(BODY, read_only=False), doc(BODY + "x\n", read_only=True),
     doc("y\n" + BODY, read_only=False), doc("y\n" + BODY + "x\n", read_only=False)),
    ("read-only-never-added", BASE, doc(BODY, "d2", read_only=True), doc(BODY + "z\n"), doc(BODY + "z\n", "d2")),
    ("bullets-both-append", BASE, doc(BODY.replace("- gamma\n", "- gamma\n- ours\n")),
     doc(BODY.replace("- gamma\n", "- gamma\n- theirs\n")),
     doc(BODY.replace("- gamma\n", "- gamma\n- theirs\n- ours\n"))),
    ("bullets-both-append-same", BASE, doc(BODY.replace("- gamma\n", "- gamma\n- same\n")),
     doc(BODY.replace("- gamma\n", "- gamma\n- same\n")), doc(BODY.replace("- gamma\n", "- gamma\n- same\n"))),
    ("bullets-same-added-apart", BASE, doc(BODY.replace("- alpha\n", "- dup\n- alpha\n")),
     doc(BODY.replace("- gamma\n", "- gamma\n- dup\n")), doc(BODY.replace("- alpha\n", "- dup\n- alpha\n"))),
    ("bullets-delete-and-append", BASE, doc(BODY.replace("- gamma\n", "")),
     doc(BODY.replace("- gamma\n", "- gamma\n- delta\n")), doc(BODY.replace("- gamma\n", "- delta\n"))),
    ("bullets-edit-and-append", BASE, doc(BODY.replace("- gamma", "- GAMMA")),
     doc(BODY.replace("- gamma\n", "- gamma\n- delta\n")), doc(BODY.replace("- gamma\n", "- delta\n- GAMMA\n"))),
    ("bullets-both-edit-one", BASE, doc(BODY.replace("- beta", "- beta one")),
     doc(BODY.replace("- beta", "- beta two")),
     doc(BODY.replace("- beta\n", "- beta two\n- beta one\n"))),
    ("bullets-both-delete", BASE, doc(BODY.replace("- beta\n", "").replace("More", "Much more")),
     doc(BODY.replace("- beta\n", "")), doc(BODY.replace("- beta\n", "").replace("More", "Much more"))),
    ("bullets-marker-agnostic-dedupe", BASE, doc(BODY.replace("- gamma\n", "- gamma\n* same\n")),
     doc(BODY.replace("- gamma\n", "- gamma\n- same\n")), doc(BODY.replace("- gamma\n", "- gamma\n- same\n"))),
    ("numbered", doc("1. one\n2. two\n"), doc("1. one\n2. TWO\n"), doc("1. one\n2. two\n3. three\n"),
     doc("1. one\n3. three\n2. TWO\n")),
    ("continuation-kept-together", doc("- a\n- b\n  more about b\n"), doc("- a\n- b\n  more about b\n- o\n"),
     doc("- a\n- B\n  more about B\n"), doc("- a\n- B\n  more about B\n- o\n")),
    ("prose-separate-places", BASE, doc(BODY.replace("# Facts", "# All facts")),
     doc(BODY.replace("More prose.", "Different prose.")),
     doc(BODY.replace("# Facts", "# All facts").replace("More prose.", "Different prose."))),
    ("prose-both-append", BASE, doc(BODY + "ours line\n"), doc(BODY + "theirs line\n"),
     doc(BODY + "theirs line\nours line\n")),
    ("add-add-documents", "", doc("- a\n- o\n", "mine"), doc("- a\n- t\n", "theirs"), doc("- a\n- t\n- o\n", "mine")),
    ("crlf-body", doc("- a\r\n- b\r\n"), doc("- a\r\n- b\r\n- o\r\n"), doc("- z\r\n- a\r\n- b\r\n"),
     doc("- z\r\n- a\r\n- b\r\n- o\r\n")),
]


@pytest.mark.parametrize(("base", "ours", "theirs", "expected"), [r[1:] for r in CLEAN], ids=[r[0] for r in CLEAN])
def test_clean_resolutions(base: str, ours: str, theirs: str, expected: str) -> None:
    result = merged(base, ours, theirs)
    assert result.conflicts == ()
    assert result.text == expected
    assert result.resolved_by is None


CONFLICTS = [
    ("prose-same-line", BASE, doc(BODY.replace("Some prose", "Our prose")),
     doc(BODY.replace("Some prose", "Their prose")),
     ("both sides changed line 9",)),
    ("key-both-differently", doc(BODY, limit=5), doc(BODY, limit=6), doc(BODY, limit=7),
     ("frontmatter 'limit' changed on both sides: 6 in the pull request, 7 on the base (was 5)",)),
    ("description-deleted-vs-changed", BASE, "---\nlimit: 3\n---\n" + BODY, doc(BODY, "theirs"),
     ("frontmatter 'description' changed on both sides: absent in the pull request, \"theirs\" on the base "
      "(was \"notes\")",)),
    ("item-vs-prose", doc("- a\ntext\n"), doc("- a\nours text\n"), doc("- a\n- b\n"), ("both sides changed line 5",)),
    ("fenced-lines-are-not-items", doc("```\n- a\n```\n"), doc("```\n- b\n```\n"), doc("```\n- c\n```\n"),
     ("both sides changed line 5",)),
]


@pytest.mark.parametrize(("base", "ours", "theirs", "conflicts"), [r[1:] for r in CONFLICTS],
                         ids=[r[0] for r in CONFLICTS])
def test_conflicts_are_left_for_a_person(base: str, ours: str, theirs: str, conflicts: tuple[str, ...]) -> None:
    result = merged(base, ours, theirs)
    assert result.text is None and not result.clean
    assert result.conflicts == conflicts


def test_notes_say_what_the_rules_chose() -> None:
    result = merged(BASE, doc(BODY, "mine"), doc(BODY, "theirs"))
    assert result.notes == ("'description' changed on both sides: kept the pull request's \"mine\" "
                            "(the base had \"theirs\")",)
    ro = merged(doc(BODY, read_only=False), doc(BODY + "x\n", read_only=True), doc(BODY))
    assert ro.text == doc(BODY + "x\n", read_only=False) and "read_only" in ro.notes[0]


def test_frontmatter_text_is_kept_as_written() -> None:
    base = "---\ndescription: 'quoted: yes'   # a comment\n---\n- a\n"
    ours = base + "- o\n"
    theirs = "---\ndescription: 'quoted: yes'   # a comment\n---\n- t\n- a\n"
    assert merged(base, ours, theirs).text == "---\ndescription: 'quoted: yes'   # a comment\n---\n- t\n- a\n- o\n"


def test_rendered_frontmatter_when_no_side_matches() -> None:
    result = merged(doc(BODY, limit=1), doc(BODY, "mine", limit=1), doc(BODY, limit=2))
    assert result.text is not None
    assert parse(result.text).frontmatter == {"description": "mine", "limit": 2}
    assert parse(result.text).body == BODY


def test_quick_paths_return_a_side_verbatim() -> None:
    odd = "not a document at all\r\n"
    assert merged(BASE, odd, BASE).text == odd
    assert merged(BASE, BASE, odd).text == odd
    assert merged(BASE, odd, odd).text == odd


def test_not_documents_fall_back_to_text_merge() -> None:
    base = "line one\n- a\n"
    result = merged(base, base + "- o\n", "line zero\n" + base)
    assert result.text == "line zero\nline one\n- a\n- o\n"


def test_other_files_merge_as_text_without_list_union() -> None:
    base = "merge: explicit\nprotected:\n  - system/persona.md\n"
    ours = base.replace("explicit", "review")
    theirs = base + "  - system/human.md\n"
    result = resolve_markdown(".memrepo/config.yml", base, ours, theirs)
    assert result.text == "merge: review\nprotected:\n  - system/persona.md\n  - system/human.md\n"
    both = resolve_markdown(".memrepo/config.yml", base, base + "  - a.md\n", base.replace("  - system", "  - x"))
    assert both.text is None
    added = resolve_markdown(".memrepo/cursors/a/c.json", "", '{"a": 1}\n', '{"a": 2}\n')
    assert added.conflicts == ("added on both sides with different content",)


def test_merge_text_reports_file_line_numbers() -> None:
    text, conflicts = merge_text("- a\n  more\nx\ny\n", "- a\n  more\nX\ny\n", "- a\n  more\nXX\ny\n", offset=3)
    assert text is None and conflicts == ["both sides changed line 6"]
    _, before = merge_text("a\nb\n", "a\nB\n", "a\nb\nc\n")
    assert before == ["both sides changed line 2"]


def test_private_use_characters_survive() -> None:
    base = "- a\ue000b\n  more\n"
    result = merge_text(base, base + "- o\n", "- t\n" + base)
    assert result == ("- t\n- a\ue000b\n  more\n- o\n", [])


# -------------------------------------------------------------------------------------- resolvers
class Fixed:
    def __init__(self, answer: str | None = None, error: Exception | None = None) -> None:
        self.name = "fixed"
        self.answer = answer
        self.error = error
        self.requests: list[ResolveRequest] = []

    def resolve(self, request: ResolveRequest) -> str | None:
        self.requests.append(request)
        if self.error:
            raise self.error
        return self.answer


def test_default_resolver_leaves_conflicts() -> None:
    assert ConflictResolver().resolve(ResolveRequest(PATH, "", "", "", "", ())) is None


def test_resolver_sees_everything_and_its_answer_is_used() -> None:
    fixed = Fixed(GOOD)
    result = merged(BASE, OURS_PROSE, THEIRS_PROSE, instructions="keep both", resolver=fixed)
    assert result.text == GOOD and result.resolved_by == "fixed" and result.conflicts == ()
    (request,) = fixed.requests
    assert (request.base, request.ours, request.theirs, request.instructions) == (BASE, OURS_PROSE, THEIRS_PROSE,
                                                                                  "keep both")
    assert request.conflicts == ("both sides changed line 9",)


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        (BODY, "not a memory document"),
        ("---\ndescription: x\n", "not a memory document"),
        (doc(BODY, limit=9, read_only=True), "'read_only'"),
        (doc(BODY), "'limit'"),
        (doc(BODY, "something else", limit=9), "'description'"),
        (doc(BODY, limit=9, extra=1), "'extra'"),
        ("---\ndescription: notes\nlimit: 9\n---\n<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n", "conflict markers"),
        (doc("x" * 100_000, limit=9), "more than"),
    ],
    ids=["empty", "blank", "no-frontmatter", "unclosed", "read-only-set", "merged-key-changed",
         "description-changed", "unknown-key", "markers", "huge"],
)
def test_hostile_or_malformed_answers_are_conflicts(answer: str, why: str) -> None:
    result = merged(BASE, OURS_PROSE, THEIRS_PROSE, resolver=Fixed(answer))
    assert result.text is None and result.conflicts == ("both sides changed line 9",)
    assert why in result.notes[-1] and "not used" in result.notes[-1]


def test_answer_must_validate() -> None:
    base = doc("- a\n", limit=1)
    ours, theirs = doc("- o\n", limit=2), doc("- t\n", limit=3)
    result = merged(base, ours, theirs, resolver=Fixed(doc("- o\n- t\n", limit=0)))
    assert result.text is None and "does not validate" in result.notes[-1]
    ok = merged(base, ours, theirs, resolver=Fixed(doc("- o\n- t\n", limit=3)))
    assert ok.text == doc("- o\n- t\n", limit=3)


@pytest.mark.parametrize("error", [ResolverError("no luck"), RuntimeError("boom")], ids=["resolver-error", "crash"])
def test_failing_resolver_is_a_conflict(error: Exception) -> None:
    result = merged(BASE, OURS_PROSE, THEIRS_PROSE, resolver=Fixed(error=error))
    assert result.text is None and "could not help" in result.notes[-1]


# ------------------------------------------------------------------------------------------- trees
def test_resolve_tree() -> None:
    base = {"a.md": BASE, "gone-ours.md": BASE, "gone-theirs.md": BASE, "dm.md": BASE, "md.md": BASE,
            "both.md": BASE, "same.md": BASE}
    ours = {"a.md": BASE, "gone-theirs.md": BASE, "dm.md": doc(BODY + "o\n"), "both.md": doc(BODY + "- o\n"),
            "new-ours.md": doc("o\n"), "same.md": doc("s\n"), "add-add.md": doc("- o\n", "o")}
    theirs = {"a.md": doc(BODY, "t"), "gone-ours.md": BASE, "md.md": doc(BODY + "t\n"), "both.md": doc("- t\n" + BODY),
              "new-theirs.md": doc("t\n"), "same.md": doc("s\n"), "add-add.md": doc("- t\n", "t")}
    result = resolve_tree(base, ours, theirs, resolver=ConflictResolver())
    assert result.files == {
        "a.md": doc(BODY, "t"),
        "both.md": doc("- t\n" + BODY + "- o\n"),
        "dm.md": doc(BODY + "o\n"),
        "new-ours.md": doc("o\n"),
        "new-theirs.md": doc("t\n"),
        "same.md": doc("s\n"),
        "add-add.md": doc("- t\n- o\n", "o"),
    }
    assert result.conflicts == {"dm.md": ("changed in the pull request, deleted on the base",),
                                "md.md": ("deleted in the pull request, changed on the base",)}
    assert not result.clean and "add-add.md" in result.notes
    assert result.writes(ours) == {"a.md": doc(BODY, "t"), "add-add.md": doc("- t\n- o\n", "o"),
                                   "both.md": doc("- t\n" + BODY + "- o\n"), "gone-theirs.md": None,
                                   "new-theirs.md": doc("t\n")}


def test_resolve_tree_uses_the_resolver_and_deletes() -> None:
    result = resolve_tree({PATH: BASE, "x.md": BASE}, {PATH: OURS_PROSE, "x.md": BASE}, {PATH: THEIRS_PROSE},
                          resolver=Fixed(GOOD))
    assert result.clean and result.files == {PATH: GOOD} and result.resolved_by == {PATH: "fixed"}
    assert result.writes({PATH: OURS_PROSE, "x.md": BASE}) == {PATH: GOOD, "x.md": None}


# -------------------------------------------------------------------------------------- properties
texts = st.text(alphabet=st.sampled_from("ab- \n*1.:\r#\ue000x"), max_size=60)


@given(texts, texts)
def test_one_sided_changes_are_taken_whole(base: str, other: str) -> None:
    assert merged(base, other, base).text == other
    assert merged(base, base, other).text == other


ITEMS = [f"- fact {i}" for i in range(12)]
NEW = [f"- new {i}" for i in range(12)]


@st.composite
def edited(draw: st.DrawFn, base: list[str], pool: list[str]) -> tuple[list[str], set[str], set[str]]:
    """A side's edit of a list: deletes some items, inserts some new ones anywhere."""
    kept = [item for item in base if draw(st.booleans())]
    added = draw(st.lists(st.sampled_from(pool), unique=True, max_size=4))
    out = list(kept)
    for item in added:
        out.insert(draw(st.integers(0, len(out))), item)
    return out, set(base) - set(kept), set(added)


def _body(items: list[str]) -> str:
    return "# Facts\n" + "".join(f"{item}\n" for item in items) + "\nA closing paragraph.\n"


@settings(max_examples=300)
@given(st.data())
def test_list_union_keeps_every_added_item_exactly_once(data: st.DataObject) -> None:
    base = data.draw(st.lists(st.sampled_from(ITEMS), unique=True, max_size=8))
    ours, o_del, o_add = data.draw(edited(base, NEW))
    theirs, t_del, t_add = data.draw(edited(base, NEW))
    result = merged(doc(_body(base)), doc(_body(ours)), doc(_body(theirs)))
    assert result.text is not None, result.conflicts
    body = parse(result.text).body
    lines = body.split("\n")
    expected = (set(base) - o_del - t_del) | o_add | t_add
    got = [line for line in lines if line.startswith("- ")]
    assert sorted(got) == sorted(expected)
    assert lines[0] == "# Facts" and body.endswith("\nA closing paragraph.\n")


LINES = st.sampled_from(["- a", "- b", "- c", "* d", "1. e", "prose one", "prose two", "", "## Head"])
DESCRIPTIONS = st.sampled_from(["notes", "what the user said", "facts: with colon", "ünïcode"])


@st.composite
def documents(draw: st.DrawFn, base_keys: dict[str, Any] | None = None) -> str:
    keys: dict[str, Any] = {"description": draw(DESCRIPTIONS)}
    if base_keys is not None and "read_only" in base_keys:
        keys["read_only"] = base_keys["read_only"]
    elif base_keys is None and draw(st.booleans()):
        keys["read_only"] = False
    if draw(st.booleans()):
        keys["limit"] = draw(st.integers(1, 5))
    body = "".join(f"{line}\n" for line in draw(st.lists(LINES, max_size=8)))
    return render(keys, body)


@settings(max_examples=300)
@given(st.data())
def test_clean_resolution_of_valid_sides_is_valid(data: st.DataObject) -> None:
    base = data.draw(documents())
    base_keys = parse(base).frontmatter
    ours, theirs = data.draw(documents(base_keys)), data.draw(documents(base_keys))
    for side in (ours, theirs):
        assume(validate_file(PATH, side.encode(), base.encode(), DEFAULT_POLICY) == [])
    result = merged(base, ours, theirs)
    if result.text is not None:
        assert validate_file(PATH, result.text.encode(), theirs.encode(), DEFAULT_POLICY) == []
        assert validate_file(PATH, result.text.encode(), base.encode(), DEFAULT_POLICY) == []
        assert parse(result.text).frontmatter.get("read_only") == base_keys.get("read_only")


@given(texts, texts, texts)
def test_resolve_never_raises_on_any_text(base: str, ours: str, theirs: str) -> None:
    result = merged(base, ours, theirs)
    assert (result.text is None) == bool(result.conflicts)
