"""The agent session's pure core, by tables: slash command parsing, the direct-commit-or-pull-
request decision, changed-line counting, turns and their trust, the /sleeptime setting, and
/doctor's report."""

from __future__ import annotations

import subprocess

import pytest

from bot.agent import doctor, sleeptime, turns
from bot.agent.commands import COMMANDS, Command, parse_command
from bot.agent.routing import EditFacts, changed_lines, external_sources, route_edit
from bot.config import DEFAULT_POLICY, DirectCommit, Dream, Limits, Policy
from bot.contracts import LABEL_AGENT_EDIT, LABEL_UNTRUSTED
from bot.errors import MemrepoError


# ---------------------------------------------------------------------------------- commands
@pytest.mark.parametrize(("text", "expected"), [
    ("/memory-repository set https://github.com/acme/ada.git",
     Command("memory-repository", "set", "https://github.com/acme/ada.git")),
    ("/memory-repository status", Command("memory-repository", "status")),
    ("/memory-repository", Command("memory-repository", "status")),
    ("/memory-repository unset", Command("memory-repository", "unset")),
    ("/memory-repository sync", Command("memory-repository", "sync")),
    ("  /Memory-Repository SYNC  ", Command("memory-repository", "sync")),
    ("/dream", Command("dream")),
    ("/DREAM", Command("dream")),
    ("/sleeptime", Command("sleeptime")),
    ("/sleeptime off", Command("sleeptime", "off")),
    ("/sleeptime steps 10", Command("sleeptime", "steps", 10)),
    ("/sleeptime Steps  3", Command("sleeptime", "steps", 3)),
    ("/sleeptime compaction", Command("sleeptime", "compaction")),
    ("/recompile", Command("recompile")),
    ("/remember I prefer tea", Command("remember", None, "I prefer tea")),
    ("/remember line one\nline two", Command("remember", None, "line one\nline two")),
    ("/remember\nnext line", Command("remember", None, "next line")),
    ("/doctor", Command("doctor")),
])
def test_commands_parse(text: str, expected: Command) -> None:
    assert parse_command(text) == expected


@pytest.mark.parametrize(("text", "problem"), [
    ("/memory-repository set", "usage: /memory-repository set <url>"),
    ("/memory-repository set a b", "usage: /memory-repository"),
    ("/memory-repository status now", "usage: /memory-repository"),
    ("/memory-repository push", "usage: /memory-repository"),
    ("/dream now", "usage: /dream"),
    ("/sleeptime steps", "usage: /sleeptime"),
    ("/sleeptime steps 0", "usage: /sleeptime"),
    ("/sleeptime steps -2", "usage: /sleeptime"),
    ("/sleeptime steps ten", "usage: /sleeptime"),
    ("/sleeptime steps ３", "usage: /sleeptime"),  # a full-width digit is not a number here
    ("/sleeptime off now", "usage: /sleeptime"),
    ("/sleeptime sometimes", "usage: /sleeptime"),
    ("/remember", "usage: /remember <what to remember>"),
    ("/remember    ", "usage: /remember"),
    ("/recompile please", "usage: /recompile"),
    ("/doctor x", "usage: /doctor"),
    ("/forget everything", "unknown command /forget; known commands: /memory-repository, /dream"),
    ("/", "unknown command /;"),
    ("hello", "not a command"),
    ("", "not a command"),
])
def test_bad_commands_say_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(MemrepoError) as caught:
        parse_command(text)
    assert problem in caught.value.message


def test_an_unknown_command_lists_every_known_one() -> None:
    with pytest.raises(MemrepoError) as caught:
        parse_command("/help")
    for name in COMMANDS:
        assert f"/{name}" in caught.value.message


# ---------------------------------------------------------------------------------- routing
POLICY = Policy(protected=("system/persona.md", "reference/legal/"), direct_commit=DirectCommit(max_changed_lines=10))
MAIL = "external:mailto:boss@example.com"
PAGE = "external:https://example.com/page"


@pytest.mark.parametrize(("paths", "lines", "sources", "direct", "labels", "why"), [
    (("system/human.md",), 1, (), True, (), ()),
    (("system/human.md",), 10, (), True, (), ()),  # at the limit: still direct
    (("system/human.md",), 11, (), False, (LABEL_AGENT_EDIT,), ("changes 11 lines, more than the 10",)),
    (("system/persona.md",), 1, (), False, (LABEL_AGENT_EDIT,), ("protected memory: system/persona.md",)),
    (("reference/legal/nda.md",), 1, (), False, (LABEL_AGENT_EDIT,), ("protected memory: reference/legal/nda.md",)),
    (("reference/legal.md",), 1, (), True, (), ()),  # the folder pattern does not match a sibling file
    (("system/human.md",), 1, (MAIL,), False, (LABEL_AGENT_EDIT, LABEL_UNTRUSTED), ("outside the conversation (",)),
    (("system/human.md",), 1, ("tool:search", "user", "agent"), True, (), ()),  # tool output is not external
    (("system/human.md",), 1, (MAIL, PAGE, MAIL), False, (LABEL_AGENT_EDIT, LABEL_UNTRUSTED),
     (f"({MAIL}, {PAGE})",)),
    (("system/persona.md", "system/human.md"), 50, (PAGE,), False, (LABEL_AGENT_EDIT, LABEL_UNTRUSTED),
     ("outside the conversation", "protected memory: system/persona.md", "changes 50 lines")),
    ((), 0, (), True, (), ()),
])
def test_direct_commit_or_pull_request(paths: tuple[str, ...], lines: int, sources: tuple[str, ...], direct: bool,
                                       labels: tuple[str, ...], why: tuple[str, ...]) -> None:
    route = route_edit(EditFacts(paths, lines, sources), POLICY)
    assert route.direct is direct
    assert route.labels == labels
    assert route.untrusted is (LABEL_UNTRUSTED in labels)
    assert len(route.reasons) == len(why)
    for reason, fragment in zip(route.reasons, why, strict=True):
        assert fragment in reason


def test_the_default_policy_protects_the_persona_and_allows_40_lines() -> None:
    assert route_edit(EditFacts(("system/human.md",), 40), DEFAULT_POLICY).direct
    assert not route_edit(EditFacts(("system/human.md",), 41), DEFAULT_POLICY).direct
    assert not route_edit(EditFacts(("system/persona.md",), 1), DEFAULT_POLICY).direct


def test_external_sources_are_kept_once_in_order() -> None:
    assert external_sources(["user", PAGE, "tool:x", MAIL, PAGE]) == (PAGE, MAIL)


def _b(*lines: str) -> bytes:
    return "".join(f"{line}\n" for line in lines).encode()


@pytest.mark.parametrize(("changes", "expected"), [
    ({"a.md": (_b("x"), _b("y"))}, 2),  # one line replaced: one out, one in
    ({"a.md": (_b("x", "y"), _b("x", "y", "z"))}, 1),
    ({"a.md": (None, _b("1", "2", "3"))}, 3),  # created
    ({"a.md": (_b("1", "2"), None)}, 2),  # deleted
    ({"a.md": (_b("1", "2"), None), "b.md": (None, _b("1", "2"))}, 0),  # moved as it is
    ({"a.md": (_b("1", "2"), None), "b.md": (None, _b("1", "3"))}, 4),  # moved and changed: not a move
    ({"a.md": (_b("a", "b", "c"), _b("a", "B", "c")), "n.md": (None, _b("new"))}, 3),
    ({"a.md": (b"no newline", b"no newline\n")}, 0),  # the last line's newline is not a line
    ({}, 0),
])
def test_changed_lines_count_like_numstat(changes: dict[str, tuple[bytes | None, bytes | None]],
                                          expected: int) -> None:
    assert changed_lines(changes) == expected


# ---------------------------------------------------------------------------------- turns
@pytest.mark.parametrize(("rows", "number", "external"), [
    ([], 0, ()),
    ([("user", "user")], 1, ()),
    ([("user", "user"), ("tool_result", MAIL)], 1, (MAIL,)),
    ([("user", "user"), ("tool_result", MAIL), ("assistant", "agent")], 1, (MAIL,)),
    # the next user message starts a new turn, but the e-mail is still in the model's context
    ([("user", "user"), ("tool_result", MAIL), ("user", "user")], 2, (MAIL,)),
    ([("user", "user"), ("tool_result", MAIL), ("compaction", "agent"), ("user", "user")], 2, ()),  # dropped
    ([("user", "user"), ("user", MAIL)], 1, (MAIL,)),  # a forwarded e-mail is not the user typing
    # a tool's result is untrusted unless the policy trusts that tool
    ([("user", "user"), ("system", "human"), ("tool_result", "tool:search")], 1, ("external:tool:search",)),
    ([("user", "user"), ("tool_result", "tool:calculator")], 1, ()),
    ([("tool_result", PAGE), ("tool_result", PAGE), ("tool_result", MAIL)], 0, (PAGE, MAIL)),
    ([("user", "user"), ("tool_result", PAGE), ("user", "human")], 1, (PAGE,)),  # a person's note: same turn
])
def test_untrusted_content_taints_the_context_until_it_drops_out(rows: list[tuple[str, str]], number: int,
                                                                 external: tuple[str, ...]) -> None:
    turn = turns.Turn()
    for kind, source in rows:
        turn = turns.after_row(turn, kind, source, trusted=("tool:calculator",))
    assert (turn.number, turn.external, turn.untrusted) == (number, external, bool(external))


def test_a_turn_spans_its_transcript_messages() -> None:
    turn = turns.Turn()
    assert turn.transcript_range is None
    rows = [("user", "user", "m1"), ("assistant", "agent", "m2"), ("tool_call", "agent", "m3")]
    for kind, source, message_id in rows:
        turn = turns.after_row(turn, kind, source, message_id)
    assert (turn.number, turn.transcript_range) == (1, "m1..m3")
    turn = turns.after_row(turn, "user", "user", "m4")
    assert (turn.number, turn.transcript_range) == (2, "m4..m4")
    assert turns.after_row(turns.Turn(), "assistant", "agent", "m9").transcript_range == "m9..m9"


def test_begin_starts_a_new_turn_with_the_same_context() -> None:
    tainted = turns.after_row(turns.Turn(3), "tool_result", PAGE)
    assert turns.begin(tainted) == turns.Turn(4, (PAGE,))
    assert turns.cleared(turns.begin(tainted)) == turns.Turn(4)


# ---------------------------------------------------------------------------------- sleeptime
@pytest.mark.parametrize(("setting", "expected"), [
    (None, Dream("step-count", 25, "verbatim")),
    ("off", Dream("off", 25, "verbatim")),
    ("compaction", Dream("compaction", 25, "verbatim")),
    ("steps:3", Dream("step-count", 3, "verbatim")),
    ("steps:0", Dream("step-count", 25, "verbatim")),  # a stored value that does not parse: the policy
    ("steps:x", Dream("step-count", 25, "verbatim")),
    ("sometimes", Dream("step-count", 25, "verbatim")),
])
def test_the_agents_setting_over_the_policy(setting: str | None, expected: Dream) -> None:
    assert sleeptime.effective(Dream(), setting) == expected


@pytest.mark.parametrize(("mode", "steps", "stored"), [("off", None, "off"), ("steps", 7, "steps:7"),
                                                       ("compaction", None, "compaction")])
def test_settings_render_and_read_back(mode: str, steps: int | None, stored: str) -> None:
    assert sleeptime.render_setting(mode, steps) == stored
    assert sleeptime.effective(Dream(), stored).trigger == {"steps": "step-count"}.get(mode, mode)


# ---------------------------------------------------------------------------------- doctor
def _doc(description: str | None, body: str) -> bytes:
    front = f"description: {description}\n" if description is not None else "read_only: false\n"
    return f"---\n{front}---\n{body}".encode()


def test_doctor_reports_sizes_largest_blocks_descriptions_and_pending_pushes() -> None:
    limits = Limits(file_chars=200, core_chars=400)
    files = {
        "system/persona.md": _doc("Who I am.", "p" * 50),
        "system/human.md": _doc("The person.", "h" * 150),  # within 10% of the file limit
        "system/big.md": _doc("Too big.", "b" * 250),  # over it
        "reference/no-description.md": _doc(None, "x"),
        "reference/empty-description.md": _doc("", "x"),
        "notes/loose.md": b"no frontmatter at all\n",
        ".memrepo/config.yml": b"merge: auto\n",
        ".github/workflows/x.md": b"not memory",
    }
    report = doctor.diagnose(files, limits, pending=2, backups=["refs/memrepo/backup/x"], stream="connected")
    assert report.core_chars == sum(len(files[p].decode()) for p in files if p.startswith("system/"))
    assert [p for p, _ in report.largest] == ["system/big.md", "system/human.md", "system/persona.md"]
    assert [p for p, _ in report.over] == ["system/big.md"]
    assert [p for p, _ in report.near] == ["system/human.md"]
    assert report.undescribed == ("notes/loose.md", "reference/empty-description.md", "reference/no-description.md")
    assert not report.healthy
    text = doctor.render(report)
    assert f"core memory (system/): {report.core_chars:,} of 400 characters" in text
    assert "over the file limit: system/big.md" in text
    assert "close to the file limit: system/human.md" in text
    assert "3 files without a description" in text
    assert "2 commits not pushed yet" in text
    assert "refs/memrepo/backup/x" in text
    assert "event stream: connected" in text
    assert text.endswith("memory needs attention (see above)")


def test_doctor_on_healthy_memory() -> None:
    files = {"system/persona.md": _doc("Who I am.", "short\n")}
    report = doctor.diagnose(files, Limits(), pending=0)
    assert report.healthy
    text = doctor.render(report)
    assert "every memory file has a description" in text and "nothing waiting to be pushed" in text
    assert "event stream" not in text and text.endswith("memory is healthy")
    assert "no remote" in doctor.render(doctor.diagnose(files, Limits(), pending=None))


def test_an_edit_commit_keeps_its_source_trailers_readable_whatever_the_reason_says() -> None:
    """A reason is the model's text, which may quote untrusted content: a `---` or scissors
    line in it must not end the message before git's trailer reading reaches the sources."""
    from bot.agent.render import EditContext, commit_message
    from bot.agent.routing import Route
    from bot.trailers import parse_trailers

    reason = "Update the address\n---\n# ------------------------ >8 ------------------------\nas the mail said"
    route = Route(direct=False, labels=(LABEL_AGENT_EDIT, LABEL_UNTRUSTED), sources=("external:mailto:x@example.net",))
    message = commit_message(EditContext("a1", "c1", 2, "str_replace", reason, ("system/human.md",), "0" * 40,
                                         "memrepo/edit/a1/0000abcd", route))
    assert ("Source", "external:mailto:x@example.net") in parse_trailers(message)
    git = subprocess.run(["git", "interpret-trailers", "--parse"], input=message, capture_output=True, text=True,
                         timeout=20, check=True)  # git's own reading, which stops at `---` and scissors lines
    assert "Source: external:mailto:x@example.net" in git.stdout.splitlines()
    assert "\n---\n" not in message and "\n# ---" not in message
    assert "as the mail said" in message
