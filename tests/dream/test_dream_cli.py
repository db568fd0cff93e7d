"""`memrepo dream` through bot.cli.main: exit codes, one line of output, no traceback."""

from __future__ import annotations

import pytest

from bot.pullrequest.provenance import parse_provenance
from tests.conftest import run_cli
from tests.dream.test_dream_run import World, world  # noqa: F401  (the localhub fixture)


def dream(capsys: pytest.CaptureFixture[str], w: World, *args: str) -> tuple[int, str, str]:
    return run_cli(capsys, "dream", "--repo", str(w.memory.root), "--home", str(w.home), *args)


def test_dream_opens_a_pull_request_then_reports_it_as_open(world: World,  # noqa: F811
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    world.say("I live in Berlin.")
    code, out, err = dream(capsys, world)
    assert (code, err) == (0, "")
    assert out.count("\n") == 1 and "opened pull request #1" in out
    pr = world.client().get_pull_request(1)
    assert parse_provenance(pr.body).trigger == "manual"

    code, out, err = dream(capsys, world, "--agent", "a1", "--conversation", "c1")
    assert (code, err) == (0, "")
    assert "already covers the same messages" in out and "remembered" in out
    assert len(world.open_pulls()) == 1


@pytest.mark.parametrize("args, problem", [
    (("--conversation", "nope"), "agent a1 has no conversation 'nope'; its conversations: c1, c2"),
    (("--agent", "zed"), "no transcripts for agent 'zed'; known agents: a1"),
    ((), "agent a1 has several conversations; name one with --conversation, or dream each that has something new "
         "with --all: c1, c2"),
    (("--conversation", "c1", "--strategy", "llm"), "the llm strategy needs MEMREPO_LLM_URL"),
])
def test_bad_input_is_one_line_and_exit_1(world: World, capsys: pytest.CaptureFixture[str],  # noqa: F811
                                          args: tuple[str, ...], problem: str) -> None:
    world.say("hello")
    world.say("hello again", conversation="c2")
    code, out, err = dream(capsys, world, *args)
    assert code == 1 and out == ""
    assert err.startswith("memrepo: ") and err.count("\n") == 1 and "Traceback" not in err
    assert problem in err
    world.assert_nothing_left()


def test_no_remote_is_one_line_and_exit_1(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    from bot.memfs.create import init_repository
    from bot.transcript import TranscriptStore

    init_repository(tmp_path / "solo", "a1", "Ada")
    with TranscriptStore(tmp_path / "home", fsync=False) as store:
        store.append("a1", "c1", "user", "hi")
    code, out, err = run_cli(capsys, "dream", "--repo", str(tmp_path / "solo"), "--home", str(tmp_path / "home"))
    assert code == 1 and out == "" and err.count("\n") == 1
    assert "has no remote" in err


def test_dream_is_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "--help")
    assert code == 0 and "dream" in out
    code, out, _ = run_cli(capsys, "dream", "--help")
    assert code == 0 and "--strategy" in out and "--conversation" in out
