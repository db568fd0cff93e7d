"""normalize(): the paths the memory tool accepts, what they become, and each refusal's message."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot import messages
from bot.errors import MemrepoError
from bot.memfs.paths import MAX_PATH, is_under, normalize

EMPTY = "path is empty; give a path such as system/human.md"
NUL = "path contains a NUL character"


def absolute(path: str) -> str:
    return f"path '{path}' is absolute; give a path inside the memory repository, such as system/human.md"


def home(path: str) -> str:
    return f"path '{path}' refers to a home folder; give a path inside the memory repository"


def parent(path: str) -> str:
    return f"path '{path}' contains '..'; paths must stay inside the memory repository"


def reserved(path: str, area: str) -> str:
    return f"path '{path}' is inside {area}, which the memory tool does not write"


def git_config(path: str, name: str) -> str:
    return messages.PATH_GIT_CONFIG.format(path=path, name=name)


def hidden_top(path: str, name: str) -> str:
    return messages.PATH_HIDDEN_TOP.format(path=path, name=name)


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
        ("system/...", True, "system/..."),
        ("system/~draft", True, "system/~draft.md"),  # '~' only matters at the start
        ("system/.memrepo", True, "system/.memrepo"),  # reserved only at the top
        ("x" * MAX_PATH, False, "x" * MAX_PATH),
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
        ("system/a\tb.md", "path 'system/a\\tb.md' contains a control character"),
        ("system/a\nb.md", "path 'system/a\\nb.md' contains a control character"),
        ("system/a\x1bb", "path 'system/a\\x1bb' contains a control character"),
        ("system/a\x7fb", "path 'system/a\\x7fb' contains a control character"),
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
