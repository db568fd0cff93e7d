"""`memrepo transcript ...` and `memrepo search ...` through bot.cli.main: output, one-line
errors, exit codes, no tracebacks."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from bot import cli
from tests.conftest import run_cli


@pytest.fixture
def home(tmp_path: Path) -> str:
    return str(tmp_path / "mhome")


def append(capsys: pytest.CaptureFixture[str], home: str, *args: str) -> str:
    code, out, err = run_cli(capsys, "transcript", "append", "--home", home, *args)
    assert (code, err) == (0, ""), err
    return out.strip()


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("memrepo: ") and "Traceback" not in err
    return lines[0]


def test_append_prints_the_id_and_search_finds_it(capsys: pytest.CaptureFixture[str], home: str) -> None:
    first = append(capsys, home, "--agent", "ada", "--conversation", "c1", "--kind", "user",
                   "--text", "우리 회사에서 메모리를 샀어요")
    second = append(capsys, home, "--agent", "ada", "--conversation", "c1", "--kind", "assistant",
                    "--text", "I will remember the deploy schedule", "--time", "2024-05-01T10:00:00+09:00")
    assert first.startswith("m_") and second.startswith("m_") and first != second
    code, out, err = run_cli(capsys, "search", "메모리", "--home", home)
    assert (code, err) == (0, "")
    assert f"ada/c1  user (user)  {first}" in out
    assert "우리 회사에서 **메모리를** 샀어요" in out
    code, out, _ = run_cli(capsys, "search", "remembering", "--home", home, "--json", "--agent", "ada")
    hits = json.loads(out)
    assert [h["message_id"] for h in hits] == [second]
    assert set(hits[0]) >= {"message_id", "conversation_id", "agent_id", "kind", "source", "captured_at", "text",
                            "snippet", "score"}
    assert hits[0]["stated_at"] == "2024-05-01T01:00:00.000000Z"


def test_the_only_hit_has_a_positive_score(capsys: pytest.CaptureFixture[str], home: str) -> None:
    """A word in every message (here the one message there is) still scores above 0: the
    score says the message matched, it is not printed as 0.0000."""
    append(capsys, home, "--agent", "ada", "--conversation", "c1", "--kind", "user",
           "--text", "We move the ledger to Postgres 16")
    code, out, err = run_cli(capsys, "search", "Postgres", "--home", home)
    assert (code, err) == (0, "")
    score = float(re.match(r"1\. score (\S+) ", out).group(1))
    assert score > 0.1
    _, out, _ = run_cli(capsys, "search", "Postgres", "--home", home, "--json")
    assert json.loads(out)[0]["score"] == pytest.approx(score, abs=5e-5)


def test_append_reads_text_from_stdin(capsys: pytest.CaptureFixture[str], home: str,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("text from a pipe\n"))
    append(capsys, home, "--agent", "ada", "--conversation", "c1", "--kind", "user", "--text", "-")
    _code, out, _ = run_cli(capsys, "search", "pipe", "--home", home, "--json")
    assert json.loads(out)[0]["text"] == "text from a pipe\n"


def test_search_human_output_blocks(capsys: pytest.CaptureFixture[str], home: str) -> None:
    for text in ("alpha beta", "alpha gamma", "delta"):
        append(capsys, home, "--agent", "ada", "--conversation", "c1", "--kind", "user", "--text", text)
    code, out, _ = run_cli(capsys, "search", "alpha", "--home", home, "-k", "5")
    blocks = out.strip().split("\n\n")
    assert len(blocks) == 2
    assert blocks[0].startswith("1. score ") and blocks[1].startswith("2. score ")
    code, out, _ = run_cli(capsys, "search", "omega", "--home", home)
    assert (code, out.strip()) == (0, "no messages match 'omega'")


@pytest.mark.parametrize(("argv", "message", "code"), [
    (["search", "?!?"], "memrepo: the query has no words to search for", 1),
    (["search", "x", "--agent", "zed"], "memrepo: no transcripts for agent 'zed'; known agents: ada", 1),
    (["search", "x", "--since", "last tuesday"], "cannot read 'last tuesday' as a date", 3),
    (["search", "x", "-k", "0"], "-k must be a whole number from 1 to 1000", 1),
    (["search", "x", "--kind", "robot"], "kind 'robot' is not one of", 1),
    (["search", "x", "--source", "martian"], "source filter 'martian' is not valid", 1),
    (["transcript", "append", "--agent", "ada", "--conversation", "c1", "--kind", "user", "--text", " "],
     "text is empty", 1),
    (["transcript", "append", "--agent", "../up", "--conversation", "c1", "--kind", "user", "--text", "x"],
     "agent_id '../up' is not valid", 1),
    (["transcript", "append", "--agent", "ada", "--conversation", "c1", "--kind", "tool_result", "--text", "x"],
     "needs a source", 1),
    (["transcript", "rebuild", "--agent", "nobody"], "no transcripts for agent 'nobody'", 1),
    (["transcript", "import", "/nonexistent/file.jsonl"], "cannot read /nonexistent/file.jsonl", 1),
])
def test_errors_are_one_line(capsys: pytest.CaptureFixture[str], home: str, argv: list[str], message: str,
                             code: int) -> None:
    append(capsys, home, "--agent", "ada", "--conversation", "c1", "--kind", "user", "--text", "seed")
    got, _out, err = run_cli(capsys, *argv, "--home", home)
    assert got == code
    assert message in one_line_error(err)


def test_import_reports_and_refuses_invalid_files(capsys: pytest.CaptureFixture[str], home: str,
                                                  tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    rows = [{"message_id": f"x{i}", "agent_id": "ada", "conversation_id": "imp", "kind": "user",
             "text": f"imported row {i}"} for i in range(3)]
    good.write_text("\n".join(json.dumps(r) for r in rows + rows[:1]) + "\n")
    code, out, err = run_cli(capsys, "transcript", "import", str(good), "--home", home)
    assert (code, err) == (0, "")
    assert out.strip() == f"imported 3 rows from {good}; 1 duplicate skipped (same message_id)"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(rows[0] | {"message_id": "y1"}) + "\n{broken\n")
    code, out, err = run_cli(capsys, "transcript", "import", str(bad), "--home", home)
    assert code == 1 and out == ""
    assert "1 invalid row, so nothing was imported" in err and "line 2: not valid JSON" in err
    assert "Traceback" not in err
    code, out, _ = run_cli(capsys, "search", "imported", "--home", home, "--json", "-k", "10")
    assert sorted(h["message_id"] for h in json.loads(out)) == ["x0", "x1", "x2"]


def test_rebuild(capsys: pytest.CaptureFixture[str], home: str) -> None:
    code, out, _ = run_cli(capsys, "transcript", "rebuild", "--home", home)
    assert code == 0 and "nothing to index" in out
    append(capsys, home, "--agent", "ada", "--conversation", "c1", "--kind", "user", "--text", "hello")
    code, out, _ = run_cli(capsys, "transcript", "rebuild", "--home", home)
    assert out.strip() == "rebuilt the search index of agent ada: 1 message from 1 log"


def test_torn_tail_is_a_warning_on_stderr(capsys: pytest.CaptureFixture[str], home: str) -> None:
    append(capsys, home, "--agent", "ada", "--conversation", "c1", "--kind", "user", "--text", "kept row")
    with open(Path(home) / "transcripts" / "ada" / "c1.jsonl", "ab") as f:
        f.write(b'{"half')
    code, out, err = run_cli(capsys, "search", "kept", "--home", home)
    assert code == 0 and "**kept** row" in out
    assert err.startswith("memrepo: warning: ") and "c1.jsonl.torn" in err


def test_home_from_the_environment(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_HOME", str(tmp_path / "envhome"))
    code, _out, _ = run_cli(capsys, "transcript", "append", "--agent", "ada", "--conversation", "c1", "--kind",
                           "user", "--text", "from env")
    assert code == 0
    assert (tmp_path / "envhome" / "transcripts" / "ada" / "c1.jsonl").is_file()
    assert (tmp_path / "envhome" / "index" / "ada.sqlite3").is_file()


def test_search_filters_on_the_command_line(capsys: pytest.CaptureFixture[str], home: str) -> None:
    append(capsys, home, "--agent", "ada", "--conversation", "c1", "--kind", "user", "--text", "filter me")
    tool = append(capsys, home, "--agent", "ada", "--conversation", "c2", "--kind", "tool_result",
                  "--source", "tool:grep", "--text", "filter me too")
    _, out, _ = run_cli(capsys, "search", "filter", "--home", home, "--json", "--source", "tool")
    assert [h["message_id"] for h in json.loads(out)] == [tool]
    _, out, _ = run_cli(capsys, "search", "filter", "--home", home, "--json", "--conversation", "c2",
                           "--kind", "tool_result", "--since", "2000-01-01", "--until", "2999-12-31")
    assert [h["message_id"] for h in json.loads(out)] == [tool]
    _code, out, _ = run_cli(capsys, "search", "filter", "--home", home, "--json", "--until", "2000-01-01")
    assert json.loads(out) == []


def test_search_with_context_ranks_the_turn_after_a_match(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = str(tmp_path / "home")
    for kind, text in (("user", "where did you park the bicycle"), ("assistant", "behind the library"),
                       ("user", "unrelated chatter about lunch")):
        assert cli.main(["transcript", "append", "--home", home, "--agent", "ada", "--conversation", "c1",
                         "--kind", kind, "--text", text]) == 0
    capsys.readouterr()
    assert cli.main(["search", "--home", home, "--agent", "ada", "--json", "bicycle"]) == 0
    plain = [hit["text"] for hit in json.loads(capsys.readouterr().out)]
    assert cli.main(["search", "--home", home, "--agent", "ada", "--json", "--context", "bicycle"]) == 0
    context = [hit["text"] for hit in json.loads(capsys.readouterr().out)]
    assert plain == ["where did you park the bicycle"]
    assert context[:2] == ["where did you park the bicycle", "behind the library"]
    assert "unrelated chatter about lunch" not in context
