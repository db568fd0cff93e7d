"""Commit trailers as the integrator reads them: one table of messages, each with the trailers
expected, checked against git itself (`git interpret-trailers --parse --no-divider`, the rules
`git log --format=%(trailers)` applies to commits); then the one place where the integrator
reads more than git on purpose (a scissors line in text before the trailers), and the
external sources a set of commit messages names."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.trailers import external_sources, parse_trailers, trailer_map

MAIL = "external:mailto:pat.person@example.net"
PAGE = "external:https://example.com/page?a=1"
SCISSORS = "# ------------------------ >8 ------------------------"

# (id, message, expected trailers)
ROWS: list[tuple[str, str, list[tuple[str, str]]]] = [
    ("agent-edit", "Record the address\n\nAgent-ID: a1\nConversation-ID: c1\nBase-Commit: abc\nSource: " + MAIL
     + "\n", [("Agent-ID", "a1"), ("Conversation-ID", "c1"), ("Base-Commit", "abc"), ("Source", MAIL)]),
    ("two-sources", f"Edit\n\nSource: {MAIL}\nSource: {PAGE}\n", [("Source", MAIL), ("Source", PAGE)]),
    ("no-final-newline", f"Edit\n\nSource: {MAIL}", [("Source", MAIL)]),
    ("trailing-blank-lines", f"Edit\n\nSource: {MAIL}\n\n\n", [("Source", MAIL)]),
    ("trailing-space-lines", f"Edit\n\nSource: {MAIL}\n  \n", [("Source", MAIL)]),
    ("title-only-is-not-trailers", f"Source: {MAIL}\n", []),
    ("title-paragraph-is-not-trailers", f"Source: {MAIL}\nSource: {PAGE}\n", []),
    ("no-blank-line-before", f"Edit\n\nWhy it changed.\nSource: {MAIL}\n", []),
    ("not-the-last-paragraph", f"Edit\n\nSource: {MAIL}\n\nMore text.\n", []),
    ("body-then-trailers", f"Edit\n\nWhy.\n\nMore why.\n\nSource: {MAIL}\n", [("Source", MAIL)]),
    ("space-before-colon", f"Edit\n\nSource : {MAIL}\n", [("Source", MAIL)]),
    ("tab-before-colon", f"Edit\n\nSource\t: {MAIL}\n", [("Source", MAIL)]),
    ("no-space-after-colon", f"Edit\n\nSource:{MAIL}\n", [("Source", MAIL)]),
    ("empty-value", "Edit\n\nSource:\nAgent-ID: a1\n", [("Source", ""), ("Agent-ID", "a1")]),
    ("space-inside-token", f"Edit\n\nSo urce: {MAIL}\n", []),
    ("odd-token-char", f"Edit\n\nSource_1: {MAIL}\n", []),
    ("leading-space", f"Edit\n\n Source: {MAIL}\n", []),
    ("folded-value", "Edit\n\nSource: external:https://example.com/a\n  /b\nAgent-ID: a1\n",
     [("Source", "external:https://example.com/a /b"), ("Agent-ID", "a1")]),
    ("comment-line-in-block", f"Edit\n\nSource: {MAIL}\n# a comment\nAgent-ID: a1\n",
     [("Source", MAIL), ("Agent-ID", "a1")]),
    ("trailing-comment-lines", f"Edit\n\nSource: {MAIL}\n# a comment\n\n# another\n", [("Source", MAIL)]),
    ("trailing-conflicts-block", f"Edit\n\nSource: {MAIL}\n\nConflicts:\n\tsystem/human.md\n", [("Source", MAIL)]),
    ("signed-off-quarter", f"Edit\n\nSigned-off-by: Pat <pat@example.com>\nsome text\nmore text\nSource: {MAIL}\n",
     [("Signed-off-by", "Pat <pat@example.com>"), ("Source", MAIL)]),
    ("signed-off-too-few", "Edit\n\nSigned-off-by: Pat\na\nb\nc\nd\ne\nf\ng\n", []),
    ("non-trailer-line-spoils-block", f"Edit\n\nsome text\nSource: {MAIL}\n", []),
    ("crlf", f"Edit\r\n\r\nSource: {MAIL}\r\n", [("Source", MAIL)]),
    ("dashes-line-in-body", f"Edit\n\n---\nWhy.\n\nSource: {MAIL}\n", [("Source", MAIL)]),
    ("empty", "", []),
]


@pytest.mark.parametrize(("message", "expected"), [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_trailers_are_read_as_git_reads_them(message: str, expected: list[tuple[str, str]], tmp_path: Path) -> None:
    assert list(parse_trailers(message)) == expected
    assert list(parse_trailers(message)) == git_trailers(message, tmp_path)


def git_trailers(message: str, cwd: Path) -> list[tuple[str, str]]:
    done = subprocess.run(["git", "interpret-trailers", "--parse", "--no-divider"], input=message.encode(),
                          capture_output=True, cwd=cwd, check=True, timeout=30)
    out = []
    for line in done.stdout.decode().split("\n")[:-1]:
        token, _, value = line.partition(":")
        out.append((token, value.removeprefix(" ")))
    return out


def test_a_scissors_line_before_the_trailers_does_not_hide_them(tmp_path: Path) -> None:
    """git stops reading at a scissors line; text before the trailers may be the untrusted
    content itself, so here it cannot hide the trailers."""
    message = f"Edit\n\nWhat the page said:\n{SCISSORS}\nignore all that\n\nSource: {MAIL}\n"
    assert git_trailers(message, tmp_path) == []
    assert parse_trailers(message) == (("Source", MAIL),)
    assert external_sources([message]) == (MAIL,)


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([f"Edit\n\nSource: {MAIL}\n"], (MAIL,)),
        ([f"Edit\n\nSource: {PAGE}\nSource: {MAIL}\n", f"Fix\n\nSource: {MAIL}\n"], (PAGE, MAIL)),
        (["Edit\n\nSource: tool:search\nSource: user\n"], ()),
        ([f"Edit\n\nsource: {MAIL}\n", "Edit\n\nSOURCE: External:https://x.example\n"],
         (MAIL, "External:https://x.example")),
        ([f"Edit\n\nVia: {MAIL}\n"], ()),
        ([f"Source: {MAIL}\n", f"Edit\n\nSource: {MAIL}\n\nmore\n"], ()),
        (["Merge main into memrepo/edit/a1/x1: conflicts resolved by memrepo\n\nFiles:\n- a.md\n"], ()),
        ([], ()),
    ],
    ids=["one", "deduplicated-first-seen", "not-external", "any-case", "other-token", "not-trailers",
         "resolution-commit", "no-commits"],
)
def test_external_sources_of_commit_messages(messages: list[str], expected: tuple[str, ...]) -> None:
    assert external_sources(messages) == expected


LINES = st.sampled_from(["", " ", "Source: " + MAIL, "Agent-ID: a1", "  folded", "text", "# c", "Signed-off-by: x",
                         "Conflicts:", "\tpath", "Key :v", "---", "a:b"]) | st.text(
    st.sampled_from("ab:-# \t"), max_size=8)


@settings(max_examples=150, deadline=None)
@given(st.lists(LINES, max_size=8), st.booleans())
def test_any_message_reads_as_git_reads_it(lines: list[str], newline: bool) -> None:
    message = "\n".join(lines) + ("\n" if newline else "")
    assert list(parse_trailers(message)) == git_trailers(message, Path(tempfile.gettempdir()))


@pytest.mark.parametrize(("message", "expected"), [
    ("Dream\n\nDream-ID: d1\nAgent-ID: a1", {"Dream-ID": "d1", "Agent-ID": "a1"}),
    ("Dream\n\ndream-id: d1\nAGENT-ID:a1\n", {"Dream-ID": "d1", "Agent-ID": "a1"}),  # git compares keys without case
    ("Dream\n\nAgent-ID: a1\nAgent-ID: a2", {"Agent-ID": "a2"}),  # the last one counts
    ("Dream-ID: d1", {}),  # the title is never the trailer block
    ("Dream\n\nDream-ID: d1\n\nSome words after.", {}),  # not the last paragraph
    ("Dream\n\nAgent-ID: a1\nSource: external:https://x", {"Agent-ID": "a1"}),  # keys not asked for are left out
    ("Dream\n\nConversation-ID: a very\n  long value", {"Conversation-ID": "a very long value"}),  # folded
])
def test_trailer_map_reads_the_provenance_trailers_as_git_does(message: str, expected: dict[str, str]) -> None:
    assert dict(trailer_map(message)) == expected
