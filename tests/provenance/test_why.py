"""`memrepo why` on lines written straight to main (the agent through the memory tool, a person
with git), the whole-file form, and every way to ask about something that is not there. Real
repositories; the forge parts are in test_why_forge.py."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from bot.memfs.history.blame import parse_line_porcelain
from bot.memfs.history.travel import EXIT_NOT_IN_MEMORY, PathNotInMemoryError
from bot.memfs.store.repo import MemoryRepo
from bot.provenance import evidence
from bot.provenance.why import EXIT_NO_SUCH_LINE, NoSuchLineError, render_why, why
from tests.conftest import PERSON_EMAIL, PERSON_NAME, git, run_cli


def tool(capsys: pytest.CaptureFixture[str], repo: MemoryRepo, **call: str) -> None:
    code, _, err = run_cli(capsys, "tool", "--repo", str(repo.root), "--agent-id", "a1", json.dumps(call))
    assert code == 0, err


@pytest.fixture
def written(memory: MemoryRepo, capsys: pytest.CaptureFixture[str]) -> MemoryRepo:
    """system/human.md: lines 1-3 from `memrepo init` (a person), 4-5 by the agent, 6 by Pat."""
    tool(capsys, memory, command="str_replace", path="system/human.md", old_str="Nothing recorded yet.",
         new_str="Prefers short answers.\nLives in Berlin.", reason="Record how the user likes answers")
    with open(memory.root / "system/human.md", "a", encoding="utf-8") as handle:
        handle.write("Has a cat called Mo.\n")
    git(memory.root, "commit", "-q", "-am", "Add the cat")
    return memory


def test_a_line_the_agent_wrote_with_the_memory_tool(written: MemoryRepo) -> None:
    report = why(written.root, "system/human.md", 4, forge=False, transcripts=False)
    [origin] = report["origins"]
    assert report["lines"][0]["text"] == "Prefers short answers."
    assert origin["writer"] == "agent" and origin["via"] == "direct"
    assert origin["commit"]["author"] == {"name": "Ada", "email": "a1@agents.memrepo"}
    assert origin["commit"]["summary"] == "Record how the user likes answers"
    assert origin["landed"]["sha"] == origin["commit"]["sha"]
    assert origin["pull_request"] is None and origin["dream"] is None and origin["transcript"] is None
    text = render_why(report)
    assert "Written by agent Ada <a1@agents.memrepo> with the memory tool" in text
    assert "Committed straight to main." in text and "no transcript is linked" in text


def test_a_line_a_person_wrote_says_exactly_that(written: MemoryRepo) -> None:
    report = why(written.root, "system/human.md", 6)
    [origin] = report["origins"]
    assert origin["writer"] == "human" and origin["via"] == "direct"
    assert origin["commit"]["author"] == {"name": PERSON_NAME, "email": PERSON_EMAIL}
    assert (origin["pull_request"], origin["dream"], origin["transcript"], origin["resolution"]) == \
        (None, None, None, None)
    assert report["forge"]["asked"] is False  # nothing to ask about a direct commit
    text = render_why(report)
    when = origin["commit"]["committed_at"].replace("T", " ")
    assert text.splitlines()[-1] == (f"Written directly by a person, {PERSON_NAME} <{PERSON_EMAIL}>, in commit "
                                     f"{origin['commit']['sha'][:10]} on {when}: \"Add the cat\".")
    for invented in ("conversation", "transcript", "Dream", "Pull request", "message"):
        assert invented not in text


def test_without_a_line_every_line_is_explained_once_per_commit(written: MemoryRepo) -> None:
    report = why(written.root, "system/human", forge=False, transcripts=False)
    assert report["path"] == "system/human.md" and report["line"] is None and report["line_count"] == 6
    assert [o["lines"] for o in report["origins"]] == [[1, 2, 3], [4, 5], [6]]
    assert [o["writer"] for o in report["origins"]] == ["agent", "agent", "human"]  # init's lines: the agent's
    assert [entry["line"] for entry in report["lines"]] == [1, 2, 3, 4, 5, 6]
    text = render_why(report)
    assert "6 lines, written by 3 commits" in text and "Lines 4-5:" in text


def test_lines_are_those_of_main_not_of_the_working_tree(written: MemoryRepo) -> None:
    (written.root / "system/human.md").write_text("changed but not committed\n")
    report = why(written.root, "system/human.md", 6, forge=False)
    assert report["lines"][0]["text"] == "Has a cat called Mo."


def test_a_merge_without_a_forge_names_what_git_records(written: MemoryRepo) -> None:
    root = written.root
    git(root, "checkout", "-q", "-b", "topic")
    (root / "reference").mkdir()
    (root / "reference/topic.md").write_text("---\ndescription: Topic\n---\nFrom the branch.\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "Branch work")
    branch_commit = git(root, "rev-parse", "HEAD").strip()
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "-m", "Merge pull request #7 from alice/topic", "topic")
    merge = git(root, "rev-parse", "HEAD").strip()
    report = why(root, "reference/topic.md", 4)
    [origin] = report["origins"]
    assert origin["commit"]["sha"] == branch_commit and origin["via"] == "merge"
    assert origin["landed"]["sha"] == merge
    assert origin["pull_request"] == {"source": "git", "number": 7, "url": None, "title": None, "state": "closed",
                                      "merged": True, "author": None, "head_ref": "topic", "merge_commit": merge,
                                      "labels": None, "reviews": None}
    assert report["forge"]["asked"] is False and "no remote" in report["forge"]["reason"]
    assert "Pull request #7 from topic" in render_why(report)


def test_an_empty_file(written: MemoryRepo) -> None:
    (written.root / "reference").mkdir()
    (written.root / "reference/empty.md").write_text("")
    git(written.root, "add", ".")
    git(written.root, "commit", "-q", "--no-verify", "-m", "Empty")
    report = why(written.root, "reference/empty.md")
    assert report["lines"] == [] and report["origins"] == [] and report["line_count"] == 0
    assert "The file is empty" in render_why(report)
    with pytest.raises(NoSuchLineError, match="is empty"):
        why(written.root, "reference/empty.md", 1)


def test_lines_and_paths_that_are_not_there(written: MemoryRepo) -> None:
    for line in (0, 7, -1):
        with pytest.raises(NoSuchLineError) as caught:
            why(written.root, "system/human.md", line)
        assert caught.value.details["exit_code"] == EXIT_NO_SUCH_LINE
        assert str(caught.value).startswith("system/human.md has 6 lines at main (")
    for path in ("system/nothing.md", "system", "../x", "/etc/passwd", ".git/HEAD", ""):
        with pytest.raises(PathNotInMemoryError) as caught:
            why(written.root, path, 1)
        assert caught.value.details["exit_code"] == EXIT_NOT_IN_MEMORY


def test_cli_exit_codes_and_one_line_errors(written: MemoryRepo, capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    root = str(written.root)
    before = git(written.root, "status", "--porcelain") + git(written.root, "rev-parse", "HEAD")
    code, out, err = run_cli(capsys, "why", "system/human.md:4", "--repo", root)
    assert code == 0 and "with the memory tool" in out and err == ""
    code, out, err = run_cli(capsys, "why", "system/human.md:4", "--repo", root, "--json")
    assert code == 0 and json.loads(out)["origins"][0]["writer"] == "agent"
    for target, expected in [("system/human.md:99", EXIT_NO_SUCH_LINE), ("system/human.md:0", EXIT_NO_SUCH_LINE),
                             ("system/human.md:2.5", EXIT_NO_SUCH_LINE), ("system/human.md:", EXIT_NO_SUCH_LINE),
                             ("system/nope.md:1", EXIT_NOT_IN_MEMORY), ("nope", EXIT_NOT_IN_MEMORY)]:
        code, out, err = run_cli(capsys, "why", target, "--repo", root)
        assert code == expected, (target, err)
        assert out == "" and err.startswith("memrepo: ") and err.count("\n") == 1, (target, err)
    code, out, err = run_cli(capsys, "why", "x.md:1", "--repo", str(tmp_path))
    assert code == 1 and err.count("\n") == 1
    assert git(written.root, "status", "--porcelain") + git(written.root, "rev-parse", "HEAD") == before
    code, out, err = run_cli(capsys, "why", "--help")
    assert code == 0 and "exit codes" in out and "6 a line the file does not have" in out


def test_a_colon_that_is_part_of_the_name(written: MemoryRepo) -> None:
    (written.root / "reference").mkdir()
    (written.root / "reference/a:b.md").write_text("---\ndescription: Colon\n---\ntext\n")
    env = {**os.environ}
    subprocess.run(["git", "add", "."], cwd=written.root, check=True, env=env)
    # Memory no longer takes such a name (Windows cannot hold it), but history made before may.
    git(written.root, "commit", "-q", "--no-verify", "-m", "Colon")
    from bot.commands.why import split_target

    assert split_target("reference/a:b.md") == ("reference/a:b.md", None)
    assert split_target("reference/a:b.md:4") == ("reference/a:b.md", 4)
    assert why(written.root, "reference/a:b.md", 4)["lines"][0]["text"] == "text"


# ------------------------------------------------------------------------------ the pure parts
def test_parse_line_porcelain() -> None:
    sha = "a" * 40
    output = (f"{sha} 3 1 2\nauthor Pat\nauthor-mail <p@x>\nfilename old/name.md\n\tfirst line\n"
              f"{sha} 4 2\nauthor Pat\nfilename old/name.md\n\t\tindented\n"
              f"{'b' * 40} 1 3 1\nboundary\nfilename new.md\n\t\n")
    lines = parse_line_porcelain(output)
    assert [(b.line, b.sha[0], b.original_line, b.original_path, b.text) for b in lines] == [
        (1, "a", 3, "old/name.md", "first line"), (2, "a", 4, "old/name.md", "\tindented"), (3, "b", 1, "new.md", "")]


@pytest.mark.parametrize(("message", "expected"), [
    ("Merge pull request #12 from alice/memrepo/dream/x\n\nTitle", (12, "alice/memrepo/dream/x")),
    ("Merge branch 'topic'", None),
    ("Fix (#12)", None),
])
def test_merged_pull_number(message: str, expected: tuple[int, str] | None) -> None:
    assert evidence.merged_pull_number(message) == expected


def test_select_messages_by_ids_or_by_range() -> None:
    rows = [{"message_id": f"m{i}", "captured_at": f"t{i}", "kind": "user", "source": "user", "text": f"x{i}"}
            for i in range(5)]
    picked, missing = evidence.select_messages(rows, ["m3", "m1", "m9"], None, None)
    assert [m["message_id"] for m in picked] == ["m1", "m3"] and missing == ["m9"]
    picked, missing = evidence.select_messages(rows, None, "m1", "m3")
    assert [m["message_id"] for m in picked] == ["m1", "m2", "m3"] and missing == []
    assert evidence.select_messages(rows, None, "m1", "m7") == ([], ["m7"])
