"""Counted nouns read as people write them ("1 file", "3 files"), never "file(s)": the plural
helper, the messages that count, and a guard over the messages and the templates of pull
requests, commits, integrator comments, model prompts and MCP tools."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.commands.search import SEARCH_RESULT
from bot.commands.transcript import IMPORT_DONE, REBUILD_DONE
from bot.commands.validate import VALIDATE_OK
from bot.dream.render import DREAM_PR_TITLE
from bot.dream.strategies.verbatim import DREAM_VERBATIM_SUMMARY
from bot.integrator.decide import INTEGRATOR_STATUS_INVALID
from bot.memfs.sync.status import STATUS_AHEAD_VALUE
from bot.texts import Text, noun, plural

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("count", "one", "many", "spec", "expected"), [
    (0, "file", None, "", "0 files"),
    (1, "file", None, "", "1 file"),
    (2, "file", None, "", "2 files"),
    (1, "local commit was", "local commits were", "", "1 local commit was"),
    (5, "local commit was", "local commits were", "", "5 local commits were"),
    (1234567, "message", None, ",", "1,234,567 messages"),
    (1, "message", None, ",", "1 message"),
])
def test_plural(count: int, one: str, many: str | None, spec: str, expected: str) -> None:
    assert plural(count, one, many, spec) == expected


def test_noun_alone() -> None:
    assert [noun(1, "key"), noun(2, "key"), noun(0, "entry", "entries")] == ["key", "keys", "entries"]


@pytest.mark.parametrize(("template", "values", "expected"), [
    ("{n:|file|files} checked", {"n": 1}, "1 file checked"),
    ("{n:|file|files} checked", {"n": 0}, "0 files checked"),
    ("{n:,|row|rows} of {m:|log|logs}", {"n": 12000, "m": 1}, "12,000 rows of 1 log"),
    ("{n:|conflict or problem|conflicts or problems}", {"n": 2}, "2 conflicts or problems"),
    ("plain {x!r} and {y:.1f}s, {{braces}}", {"x": "a", "y": 1.25}, "plain 'a' and 1.2s, {braces}"),
    ("{0:|try|tries} then {1}", (1, "stop"), "1 try then stop"),
])
def test_text_formats_counts_and_everything_str_format_does(template: str, values: object, expected: str) -> None:
    text = Text(template)
    if isinstance(values, tuple):
        assert text.format(*values) == expected
    else:
        assert text.format(**values) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(("message", "values", "expected"), [
    (VALIDATE_OK, {"count": 1}, "Memory is valid (1 file checked)."),
    (IMPORT_DONE, {"imported": 1, "duplicates": 2, "path": "f"},
     "imported 1 row from f; 2 duplicates skipped (same message_id)"),
    (REBUILD_DONE, {"agent": "ada", "count": 1000, "logs": 2},
     "rebuilt the search index of agent ada: 1,000 messages from 2 logs"),
    (DREAM_PR_TITLE, {"agent": "ada", "conversation": "c1", "changes": 1, "count": 1},
     "Dream for ada/c1: 1 change from 1 message"),
    (STATUS_AHEAD_VALUE, {"count": 1}, "1 commit not pushed"),
    (INTEGRATOR_STATUS_INVALID, {"count": 2, "first": "x"}, "2 problems: x"),
])
def test_messages_that_count_say_the_right_number(message: str, values: dict[str, object], expected: str) -> None:
    assert message.format(**values) == expected


def _texts() -> list[tuple[str, str]]:
    paths = [*sorted(ROOT.glob("bot/**/texts.py")),
             *sorted(ROOT.glob("webhooks/**/texts.py"))]
    for folder in ("pr", "agent", "commit", "integrator", "prompts", "mcp"):
        paths += sorted((ROOT / "templates" / folder).glob("*.j2"))
    return [(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")) for path in paths]


def test_no_message_or_pull_request_template_says_s_in_parentheses() -> None:
    offending = [f"{name}:{number}: {line.strip()}" for name, text in _texts()
                 for number, line in enumerate(text.splitlines(), 1)
                 if re.search(r"\w\(s\)", line.replace("http(s)", "")) and '"file(s)"' not in line]
    assert offending == []


@pytest.mark.parametrize(("value", "shown"), [
    ("2026-03-14T09:30:12.654321Z", "2026-03-14 09:30:12 UTC"),
    ("2026-03-14T11:30:12+02:00", "2026-03-14 09:30:12 UTC"),
    ("not a time", "not a time"),
    (None, ""),
])
def test_text_shows_times_to_the_second(value: object, shown: str) -> None:
    assert Text("at {t:when}").format(t=value) == f"at {shown}"


def test_messages_that_show_stored_times_show_them_to_the_second() -> None:
    summary = DREAM_VERBATIM_SUMMARY.format(
        count=1, conversation="c1", window=3, first="2026-03-14T09:30:12.000001Z", last="2026-03-14T09:31:00.5Z",
        paths="conversations/c1/2026-03.md")
    assert "from 2026-03-14 09:30:12 UTC to 2026-03-14 09:31:00 UTC" in summary and "(of 3 new messages)" in summary
    line = SEARCH_RESULT.format(rank=1, score=1.5, time="2026-03-14T09:30:12.123456Z", agent="ada",
                                               conversation="c1", kind="user", source="user", message_id="m_1")
    assert "  2026-03-14 09:30:12 UTC  ada/c1" in line
