"""normalize(): the paths the memory tool accepts, what they become, and each refusal's message;
path_problem, mode_problem and collisions: what memory may hold, whichever way a change arrives."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.config import CONFIG_PATH, protected_paths
from bot.dream.cursor import CURSOR_DIR
from bot.errors import MemrepoError
from bot.memfs.format import constraints
from bot.memfs.format.paths import (
    MAX_PATH,
    MEMREPO_FILES,
    MEMREPO_FOLDER,
    PATH_BAD_MODE,
    PATH_CONTROL_CHAR,
    PATH_DOT_NAME,
    PATH_EXECUTABLE,
    PATH_GIT_CONFIG,
    PATH_HIDDEN_TOP,
    PATH_INVISIBLE_CHAR,
    PATH_IS_LINK,
    PATH_IS_SUBMODULE,
    PATH_NAME_TOO_LONG,
    PATH_REFUSED,
    PATH_RESERVED,
    PATH_SHORT_NAME,
    PATH_TOO_LONG,
    PATH_TRAILING_DOT,
    PATH_WINDOWS_CHAR,
    PATH_WINDOWS_DEVICE,
    collisions,
    fold,
    is_under,
    mode_problem,
    normalize,
    path_problem,
    shown,
    twins,
)

EMPTY = "path is empty; give a path such as system/human.md"
NUL = "path contains a NUL character"


def absolute(path: str) -> str:
    return f"path '{path}' is absolute; give a path inside the memory repository, such as system/human.md"


def home(path: str) -> str:
    return f"path '{path}' refers to a home folder; give a path inside the memory repository"


def parent(path: str) -> str:
    return f"path '{path}' contains '..'; paths must stay inside the memory repository"


def refused(path: str, problem: str) -> str:
    return PATH_REFUSED.format(path=path, problem=problem)


def reserved(path: str, area: str) -> str:
    return refused(path, PATH_RESERVED.format(area=area))


def git_config(path: str, name: str) -> str:
    return refused(path, PATH_GIT_CONFIG.format(name=name))


def hidden_top(path: str, name: str) -> str:
    return refused(path, PATH_HIDDEN_TOP.format(name=name))


GIT = "git's own data (.git/)"
MEMREPO = "memrepo's machine state (.memrepo/)"
GITHUB = "the repository's CI configuration (.github/)"


@pytest.mark.parametrize(
    ("raw", "add_md", "expected"),
    [
        ("system/human.md", True, "system/human.md"),
        ("system/human", True, "system/human.md"),
        ("system/human", False, "system/human"),
        ("memory/system/human.md", True, "system/human.md"),
        ("memory/system/human", True, "system/human.md"),
        ("memory/memory/x", True, "memory/x.md"),  # only one prefix is Letta's
        ("memory", True, "memory.md"),  # a lone 'memory' is a file name, not the prefix
        ("memory/", True, "memory.md"),
        ("  system/human.md \n", True, "system/human.md"),  # surrounding blanks dropped
        ("./system//human.md", True, "system/human.md"),
        ("system/./a/./b", True, "system/a/b.md"),
        ("system/human/", True, "system/human.md"),
        ("system\\project\\gotchas", True, "system/project/gotchas.md"),  # Windows separators
        ("reference/notes.txt", True, "reference/notes.txt"),  # another extension is kept
        ("reference/v1.2", True, "reference/v1.2"),  # any dot in the name counts as an extension
        ("ARCHIVE", True, "ARCHIVE.md"),
        ("système/été", True, "système/été.md"),
        ("system/a b", True, "system/a b.md"),
        ("skills/x/SKILL.md", True, "skills/x/SKILL.md"),
        ("system/..hidden", True, "system/..hidden"),  # not a '..' segment (but has a dot)
        ("system/~draft", True, "system/~draft.md"),  # '~' only matters at the start
        ("system/.memrepo", True, "system/.memrepo"),  # reserved only at the top
        ("x" * 199 + "/" + "x" * 200, False, "x" * 199 + "/" + "x" * 200),  # MAX_PATH characters
        ("n/" + "é" * 127, False, "n/" + "é" * 127),  # a name of 254 bytes
        # Blanks around each segment go, so normalising the result again changes nothing.
        pytest.param("system/human /", True, "system/human.md", id="blank-before-trailing-slash"),
    ],
)
def test_accepted(raw, add_md, expected):
    assert normalize(raw, add_md=add_md) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        # Empty, in every spelling.
        ("", EMPTY),
        ("   \n\t", EMPTY),
        (None, EMPTY),
        (".", EMPTY),
        ("./", EMPTY),
        ("//", absolute("//")),
        ("./.", EMPTY),
        # Not text.
        (42, "path must be text, found int"),
        (b"system/a.md", "path must be text, found bytes"),
        (["system/a.md"], "path must be text, found list"),
        (True, "path must be text, found bool"),
        # NUL and control characters.
        ("system/a\0.md", NUL),
        ("\0", NUL),
        ("system/a\tb.md", "path 'system/a\\tb.md' contains a control character (U+0009)"),
        ("system/a\nb.md", "path 'system/a\\nb.md' contains a control character (U+000A)"),
        ("system/a\x1bb", "path 'system/a\\x1bb' contains a control character (U+001B)"),
        ("system/a\x7fb", "path 'system/a\\x7fb' contains a control character (U+007F)"),
        # Too long.
        ("x" * (MAX_PATH + 1), f"path '{'x' * 40}...' is longer than {MAX_PATH} characters"),
        # Home folders.
        ("~/notes.md", home("~/notes.md")),
        ("~", home("~")),
        ("~root/x", home("~root/x")),
        ("$HOME/notes.md", home("$HOME/notes.md")),
        ("${HOME}/notes.md", home("${HOME}/notes.md")),
        # Absolute.
        ("/etc/passwd", absolute("/etc/passwd")),
        ("/memory/system/a.md", absolute("/memory/system/a.md")),
        ("\\\\server\\share", absolute("\\\\server\\share")),
        ("C:\\Users\\x", absolute("C:\\Users\\x")),
        ("c:/x", absolute("c:/x")),
        ("  /etc/passwd", absolute("/etc/passwd")),
        # Parent folders.
        ("..", parent("..")),
        ("../x", parent("../x")),
        ("system/../../x", parent("system/../../x")),
        ("system/../system/a.md", parent("system/../system/a.md")),  # even when it stays inside
        ("memory/../x", parent("memory/../x")),
        ("system\\..\\..\\x", parent("system\\..\\..\\x")),
        # git's and memrepo's own folders.
        (".git", reserved(".git", GIT)),
        (".git/config", reserved(".git/config", GIT)),
        ("memory/.git/hooks/pre-commit", reserved("memory/.git/hooks/pre-commit", GIT)),
        ("./.git/x", reserved("./.git/x", GIT)),
        (".memrepo/config.yml", reserved(".memrepo/config.yml", MEMREPO)),
        ("memory/.memrepo", reserved("memory/.memrepo", MEMREPO)),
        (".github/workflows/x.yml", reserved(".github/workflows/x.yml", GITHUB)),
        # git's configuration files, at any depth, and hidden names at the top.
        (".gitignore", git_config(".gitignore", ".gitignore")),
        ("system/.gitattributes", git_config("system/.gitattributes", ".gitattributes")),
        (".env", hidden_top(".env", ".env")),
    ],
)
def test_refused(raw, message):
    with pytest.raises(MemrepoError) as info:
        normalize(raw)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        # git refuses a '.git' segment anywhere and in any letter case; so does normalize.
        (".GIT/config", reserved(".GIT/config", GIT)),
        (".Git/hooks/pre-commit", reserved(".Git/hooks/pre-commit", GIT)),
        ("system/.git/x", reserved("system/.git/x", GIT)),
        # Home folders and drive letters are refused after the 'memory/' prefix is removed too.
        ("memory/~/x", home("memory/~/x")),
        ("memory/C:/x", absolute("memory/C:/x")),
    ],
)
def test_refused_after_prefixes_are_removed(raw, message):
    with pytest.raises(MemrepoError) as info:
        normalize(raw)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("path", "folder", "expected"),
    [
        ("system/a.md", "system", True),
        ("system/a.md", "system/", True),
        ("system", "system", True),
        ("systems/a.md", "system", False),
        ("system", "system/a.md", False),
    ],
)
def test_is_under(path, folder, expected):
    assert is_under(path, folder) is expected


# ---------------------------------------------------------------------------- properties

SEGMENT = st.sampled_from(["..", ".", "", "~", "$HOME", "memory", ".git", ".memrepo", "system", "a.md",
                           "C:", "b", " ", "\\", "\0", "\t", "é"])
PATHLIKE = st.lists(SEGMENT, max_size=6).map("/".join)
ANY_TEXT = st.one_of(st.text(max_size=60), PATHLIKE, st.text(alphabet="./\\~$HOME:memory ", max_size=20))


def outcome(raw: object, add_md: bool) -> str | None:
    """normalize's result, or None when it refused with a MemrepoError (nothing else is allowed)."""
    try:
        return normalize(raw, add_md=add_md)
    except MemrepoError:
        return None


@settings(max_examples=500)
@given(raw=ANY_TEXT, add_md=st.booleans())
def test_result_stays_inside_the_repository(raw, add_md):
    result = outcome(raw, add_md)
    if result is None:
        return
    segments = result.split("/")
    assert result
    assert not result.startswith(("/", "\\"))
    assert ".." not in segments
    assert "" not in segments and "." not in segments
    assert "\\" not in result and "\0" not in result
    assert segments[0] not in (".git", ".memrepo", ".github")
    if add_md:  # the file name always has an extension ('.md' unless it had one)
        assert "." in segments[-1]


@given(raw=st.one_of(st.none(), st.integers(), st.floats(), st.binary(), st.lists(st.text()),
                     st.dictionaries(st.text(), st.text()), st.booleans()))
def test_non_text_is_refused_with_a_memrepo_error(raw):
    with pytest.raises(MemrepoError):
        normalize(raw)


@settings(max_examples=500)
@given(raw=ANY_TEXT, add_md=st.booleans())
def test_normalizing_a_result_again_changes_nothing(raw, add_md):
    """Callers may normalise twice (a tool call, then the patch it carries)."""
    result = outcome(raw, add_md)
    # The one exception: a leading 'memory/' is Letta's prefix every time it is seen.
    if result is None or result.startswith("memory/"):
        return
    assert normalize(result, add_md=add_md) == result


# ------------------------------------------------------------------ what memory may hold

GIT_DATA = PATH_RESERVED.format(area=GIT)

# path -> path_problem's answer (None: memory may hold it). Every write path asks here.
PATH_RULES: list[tuple[str, str | None]] = [
    ("system/human.md", None),
    ("notes/café.md", None),
    ("notes/.hidden.md", None),  # hidden names inside memory folders are memory
    ("notes/.github/x.md", None),  # CI reads .github/ only at the top
    ("system/..hidden", None),
    ("notes/a~b.md", None),
    ("notes/~draft.md", None),
    ("notes/console.md", None),
    ("notes/com0.md", None),
    ("notes/" + "é" * 127, None),  # 254 bytes
    (".memrepo/config.yml", None),  # memrepo's own: people change it in reviewed commits
    (".memrepo/cursors/a1/c1.json", None),
    (".memfs.config.json", None),  # Letta's own
    # git's folder in every disguise git knows (is_hfs_dotgit, is_ntfs_dotgit).
    ("notes/.git/config", GIT_DATA),
    ("notes/.GIT/config", GIT_DATA),
    ("notes/.g\u200cit/config", GIT_DATA),
    ("notes/.\u200dgit/config", GIT_DATA),
    ("notes/.gi\u200et/config", GIT_DATA),
    ("notes/\u200f.git/config", GIT_DATA),
    ("notes/.git\u202a/config", GIT_DATA),
    ("notes/.g\u202eit/x", GIT_DATA),
    ("notes/.g\u206ait/x", GIT_DATA),
    ("notes/.g\u206fit/x", GIT_DATA),
    ("notes/\ufeff.git/x", GIT_DATA),
    ("notes/.git./config", GIT_DATA),
    ("notes/.git /config", GIT_DATA),
    ("notes/.git. . ./config", GIT_DATA),
    ("notes/.git::$INDEX_ALLOCATION/config", GIT_DATA),
    ("notes/.git:x", GIT_DATA),
    ("notes/git~1/config", GIT_DATA),
    ("notes/GIT~1/x", GIT_DATA),
    ("notes/Git~1./x", GIT_DATA),
    ("notes/a\\.git\\config", GIT_DATA),  # a backslash is a separator on Windows
    # git's configuration files, at any depth and in any case.
    (".gitattributes", PATH_GIT_CONFIG.format(name=".gitattributes")),
    ("notes/.GITMODULES", PATH_GIT_CONFIG.format(name=".GITMODULES")),
    ("notes/.gitignore", PATH_GIT_CONFIG.format(name=".gitignore")),
    ("notes/.g\u200citignore", PATH_GIT_CONFIG.format(name=".g\\u200citignore")),
    ("notes/.gitmodules.", PATH_GIT_CONFIG.format(name=".gitmodules.")),
    # Hidden names at the top: CI, memrepo's own (for the tool), everything else.
    (".github/workflows/evil.yml", PATH_RESERVED.format(area=GITHUB)),
    (".GitHub/workflows/evil.yml", PATH_RESERVED.format(area=GITHUB)),
    (".memrepo", PATH_RESERVED.format(area=MEMREPO)),
    (".MEMREPO/config.yml", PATH_RESERVED.format(area=MEMREPO)),
    (".mailmap", PATH_HIDDEN_TOP.format(name=".mailmap")),
    (".memfs.config.json/x", PATH_HIDDEN_TOP.format(name=".memfs.config.json")),
    # Invisible and control characters.
    ("notes/evil\u202etxt.md", PATH_INVISIBLE_CHAR.format(code="U+202E RIGHT-TO-LEFT OVERRIDE")),
    ("notes/zero\u200bwidth.md", PATH_INVISIBLE_CHAR.format(code="U+200B ZERO WIDTH SPACE")),
    ("notes/word\u2060joiner.md", PATH_INVISIBLE_CHAR.format(code="U+2060 WORD JOINER")),
    ("notes/a\u2064.md", PATH_INVISIBLE_CHAR.format(code="U+2064 INVISIBLE PLUS")),
    ("notes/\ufeffa.md", PATH_INVISIBLE_CHAR.format(code="U+FEFF ZERO WIDTH NO-BREAK SPACE")),
    ("notes/line\u2028break.md", PATH_INVISIBLE_CHAR.format(code="U+2028 LINE SEPARATOR")),
    ("notes/a\x85.md", PATH_CONTROL_CHAR.format(code="U+0085")),
    ("notes/a\tb.md", PATH_CONTROL_CHAR.format(code="U+0009")),
    # What Windows cannot hold, or reads as another file.
    ("notes/a:b.md", PATH_WINDOWS_CHAR.format(char=":")),
    ("notes/why?.md", PATH_WINDOWS_CHAR.format(char="?")),
    ("notes/a\\b.md", PATH_WINDOWS_CHAR.format(char="\\")),
    ('notes/"q".md', PATH_WINDOWS_CHAR.format(char='"')),
    ("notes/a.", PATH_TRAILING_DOT.format(name="a.")),
    ("notes/a ", PATH_TRAILING_DOT.format(name="a ")),
    ("notes/a /b.md", PATH_TRAILING_DOT.format(name="a ")),
    ("system/...", PATH_TRAILING_DOT.format(name="...")),
    ("notes/con.md", PATH_WINDOWS_DEVICE.format(name="con.md")),
    ("notes/NUL", PATH_WINDOWS_DEVICE.format(name="NUL")),
    ("notes/aux .txt", PATH_WINDOWS_DEVICE.format(name="aux .txt")),
    ("notes/COM1.md", PATH_WINDOWS_DEVICE.format(name="COM1.md")),
    ("notes/lpt9/x.md", PATH_WINDOWS_DEVICE.format(name="lpt9")),
    ("notes/conin$", PATH_WINDOWS_DEVICE.format(name="conin$")),
    ("notes/PERSON~1.MD", PATH_SHORT_NAME.format(name="PERSON~1.MD")),
    ("notes/gitmod~1", PATH_SHORT_NAME.format(name="gitmod~1")),
    ("notes/gi7eba~4", PATH_SHORT_NAME.format(name="gi7eba~4")),
    ("notes/progra~12/x.md", PATH_SHORT_NAME.format(name="progra~12")),
    # Lengths.
    ("notes/" + "é" * 128, PATH_NAME_TOO_LONG.format(name="é" * 24, size=256, limit=255)),
    ("notes/" + "x" * 300 + ".md", PATH_NAME_TOO_LONG.format(name="x" * 24, size=303, limit=255)),
    ("/".join(["x" * 100] * 5), PATH_TOO_LONG.format(limit=MAX_PATH)),
    # Names git itself refuses.
    ("notes//a.md", PATH_DOT_NAME.format(name="")),
    ("notes/./a.md", PATH_DOT_NAME.format(name=".")),
    ("notes/../a.md", PATH_DOT_NAME.format(name="..")),
]


@pytest.mark.parametrize(("path", "problem"), PATH_RULES, ids=[shown(p) for p, _ in PATH_RULES])
def test_path_problem(path: str, problem: str | None) -> None:
    assert path_problem(path) == problem


@pytest.mark.parametrize("path", [".memrepo/config.yml", ".memrepo/cursors/a1/c1.json", ".memfs.config.json"])
def test_the_tool_refuses_memrepos_own_files_which_reviewed_commits_may_change(path: str) -> None:
    assert path_problem(path) is None
    assert path_problem(path, memrepo_files=False) is not None
    with pytest.raises(MemrepoError):
        normalize(path)


@pytest.mark.parametrize(("raw", "problem"), [
    ("notes/GIT~1/x", GIT_DATA),
    ("notes/.git./x", GIT_DATA),
    ("notes/" + "x" * 300, PATH_NAME_TOO_LONG.format(name="x" * 24, size=303, limit=255)),
    ("notes/evil\u202etxt", PATH_INVISIBLE_CHAR.format(code="U+202E RIGHT-TO-LEFT OVERRIDE")),
    ("notes/con", PATH_WINDOWS_DEVICE.format(name="con.md")),
    ("notes/a.", PATH_TRAILING_DOT.format(name="a.")),
])
def test_normalize_refuses_what_memory_may_not_hold_saying_why(raw: str, problem: str) -> None:
    with pytest.raises(MemrepoError) as info:
        normalize(raw)
    assert str(info.value) == refused(shown(raw), problem)


@pytest.mark.parametrize(("mode", "problem"), [
    (0o100644, None),
    (0o100755, PATH_EXECUTABLE),
    (0o120000, PATH_IS_LINK),
    (0o160000, PATH_IS_SUBMODULE),
    (0o100664, PATH_BAD_MODE.format(mode="100664")),
    (0o040000, PATH_BAD_MODE.format(mode="40000")),
])
def test_mode_problem(mode: int, problem: str | None) -> None:
    assert mode_problem(mode) == problem


@pytest.mark.parametrize(("new", "tree", "expected"), [
    (["system/Human.md"], ["system/human.md", "system/Human.md"], {"system/Human.md": "system/human.md"}),
    (["system/PERSONA.md"], ["system/persona.md", "system/PERSONA.md"], {"system/PERSONA.md": "system/persona.md"}),
    (["notes/cafe\u0301.md"], ["notes/caf\u00e9.md", "notes/cafe\u0301.md"],
     {"notes/cafe\u0301.md": "notes/caf\u00e9.md"}),
    (["System/new.md"], ["system/human.md", "System/new.md"], {"System/new.md": "system"}),
    (["notes/STRASSE.md"], ["notes/stra\u00dfe.md", "notes/STRASSE.md"], {"notes/STRASSE.md": "notes/stra\u00dfe.md"}),
    (["a/x.md", "A/y.md"], ["a/x.md", "A/y.md"], {"a/x.md": "A", "A/y.md": "a"}),
    (["system/new.md"], ["system/human.md", "system/new.md"], {}),
    (["notes/b.md"], ["notes/a.md", "notes/b.md"], {}),
])
def test_collisions(new: list[str], tree: list[str], expected: dict[str, str]) -> None:
    assert collisions(new, tree) == expected


def test_fold_and_twins() -> None:
    assert fold("System/PERSONA.md") == fold("system/persona.md")
    assert fold("notes/cafe\u0301.md") == fold("notes/caf\u00e9.md")
    assert fold("system/per\u200csona.md") == fold("system/persona.md")
    assert twins("system/PERSONA.md", ["system/persona.md", "system/human.md"]) == ["system/persona.md"]
    assert twins("system/persona.md", ["system/persona.md"]) == []


@pytest.mark.parametrize(("path", "protected"), [
    ("system/persona.md", True),
    ("system/PERSONA.md", True),
    ("System/Persona.MD", True),
    ("system/perso\u0301na.md", False),
    (".MEMFS.CONFIG.JSON", True),
    ("policies/CAF\u00c9.md", True),  # the pattern spells it decomposed
    ("policies/other.md", False),
    ("Rules/a.md", True),
])
def test_protected_paths_match_in_any_case_and_normalisation(path: str, protected: bool) -> None:
    globs = ["system/persona.md", ".memfs.config.json", "policies/cafe\u0301.md", "rules/"]
    assert protected_paths([path], globs) == ([path] if protected else [])


def test_memrepos_own_names_are_the_ones_it_writes() -> None:
    assert CONFIG_PATH.startswith(MEMREPO_FOLDER + "/") and CURSOR_DIR.startswith(MEMREPO_FOLDER + "/")
    assert MEMREPO_FILES == (constraints.CONFIG_FILE,)
