"""Dreams for a harness's conversations: the rows an import brings count as the steps and
compactions of memrepo's own sessions (triggers.decide_all, harness.events_by_conversation),
`memrepo follow --transcripts --events` imports as Letta Code writes and opens the dream its
step threshold asks for with no other command, and `memrepo dream` imports what is new
before it reads, for one conversation or, with --all, each that has something new."""

from __future__ import annotations

import re
from pathlib import Path

import github
import pytest

from bot.config import Dream
from bot.contracts import DREAM_BRANCH_PREFIX
from bot.dream.events import events_by_conversation
from bot.dream.triggers import TriggerState, decide_all
from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.pullrequest.provenance import parse_provenance
from bot.transcript.model import build
from tests.conftest import git, run_cli
from tests.dream.test_dream_run import World, world  # noqa: F401  (the localhub fixture)
from tests.follow.test_follow import Follow
from tests.letta_writer import AGENT, CONVERSATION, Turn, assistant, user, write
from tests.waiting import wait_until

STEPS_2 = Dream(trigger="step-count", steps=2)
COMPACTION = Dream(trigger="compaction", steps=2)
OFF = Dream(trigger="off", steps=2)


# ------------------------------------------------------------------------------ pure
@pytest.mark.parametrize(("state", "events", "policy", "run", "trigger", "steps", "pending"), [
    (TriggerState(), [], STEPS_2, False, None, 0, None),
    (TriggerState(), ["step"], STEPS_2, False, None, 1, None),
    (TriggerState(), ["step", "step"], STEPS_2, True, "step-count", 0, "step-count"),
    (TriggerState(steps=1), ["step"], STEPS_2, True, "step-count", 0, "step-count"),
    # several thresholds in one import: one run, the steps after it counted
    (TriggerState(), ["step"] * 5, STEPS_2, True, "step-count", 1, "step-count"),
    (TriggerState(), ["step", "compaction"], COMPACTION, True, "compaction", 0, "compaction"),
    (TriggerState(), ["step", "compaction"], STEPS_2, False, None, 1, None),
    (TriggerState(), ["step"] * 9, OFF, False, None, 9, None),
    # a manual request with the import's steps: one run, as the request
    (TriggerState(), ["step", "step", "manual"], STEPS_2, True, "manual", 0, "manual"),
    (TriggerState(), ["step", "manual"], OFF, True, "manual", 0, "manual"),
    # a dream still open: the run is decided (the runner asks the forge), the trigger remembered
    (TriggerState(steps=1, open_dream="20260314T090001Z-00000001", open_pr=3), ["step"], STEPS_2, True,
     "step-count", 0, "step-count"),
])
def test_events_that_arrive_together_are_counted_and_run_at_most_once(
        state: TriggerState, events: list[str], policy: Dream, run: bool, trigger: str | None, steps: int,
        pending: str | None) -> None:
    decision = decide_all(state, events, policy)
    assert (decision.run, decision.trigger, decision.state.steps, decision.state.pending) == \
        (run, trigger, steps, pending)


def message(agent: str, conversation: str, kind: str, number: int):  # type: ignore[no-untyped-def]
    return build(agent, conversation, kind, f"text {number}", source=None, captured_at="2026-03-14T09:00:00.000000Z",
                 message_id=f"m-{number}")


def test_an_imports_rows_make_the_events_of_the_memorys_agents_only() -> None:
    rows = [message("a1", "c1", "user", 1), message("a1", "c1", "assistant", 2), message("a1", "c1", "reasoning", 3),
            message("a1", "c2", "compaction", 4), message("other", "c1", "assistant", 5),
            message("a1", "c1", "tool_call", 6), message("a1", "c1", "assistant", 7),
            message("a1", "c3", "user", 8)]
    assert events_by_conversation(rows, {"a1"}) == {("a1", "c1"): ["step", "step"], ("a1", "c2"): ["compaction"]}
    assert events_by_conversation(rows, set()) == {}


# ------------------------------------------------------------------- real parts
def steps_policy(root: Path, steps: int) -> None:
    config = root / ".memrepo/config.yml"
    text, done = re.subn(r"^  steps: \d+", f"  steps: {steps}", config.read_text(), flags=re.M)
    assert done == 1
    config.write_text(text)
    git(root, "commit", "-qam", f"Dream every {steps} steps")


def test_a_letta_line_written_while_follow_runs_leads_to_a_dream_pull_request(served, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`follow --transcripts --events` alone: Letta's writer appends a turn, the follower imports
    it within a tick (its poll is an hour), the second assistant step meets the threshold, and a
    dream pull request opens on the forge naming Letta's agent and conversation."""
    token = served.new_token("alice")
    github.Github(auth=github.Auth.Token(token), base_url=served.api, retry=None).get_user().create_repo("memory")
    url = served.web.replace("http://", f"http://x-access-token:{token}@") + "/alice/memory.git"
    folder = init_repository(tmp_path / "folder", "a1", "Ada")
    git(folder.root, "config", "letta.agentId", AGENT)  # as Letta Code records the agent of its memory
    steps_policy(folder.root, 2)
    sync.set_remote(folder, url)
    git(folder.root, "push", "-q", "origin", "HEAD:main")
    root, home = tmp_path / "letta", tmp_path / "home"
    write(root, [Turn([user("I moved to Lyon last week.", "o1", "message-u1"),
                       assistant("Noted: Lyon it is.", "message-a1", after_reasoning=False)])])
    events = f"{served.receiver}/v1/repos/alice/memory/events"
    hub = github.Github(auth=github.Auth.Token(token), base_url=served.api, retry=None).get_repo("alice/memory")

    with Follow("--repo", str(folder.root), "--events", events, "--poll", "3600", "--transcripts", str(root),
                "--home", str(home)) as follow:
        wait_until(lambda: follow.said("imported 2 messages from 1 Letta conversation"), 30, follow.output)
        assert hub.get_pulls(state="open").totalCount == 0  # one step of two: no dream yet
        write(root, [Turn([user("My sister Ines visits in May.", "o2", "message-u2"),
                           assistant("I'll remember that.", "message-a2", after_reasoning=False)],
                          at="2026-03-14T09:05:00.000Z")])
        wait_until(lambda: follow.said("opened pull request #"), 60, follow.output)
        assert follow.stop() == 0, follow.output()
    assert "Traceback" not in "".join(follow.err), follow.output()
    [pull] = list(hub.get_pulls(state="open"))
    assert pull.head.ref.startswith(DREAM_BRANCH_PREFIX)  # a dream by its branch: no label, one request
    provenance = parse_provenance(pull.body)
    assert (provenance.agent_id, provenance.conversation_id, provenance.trigger) == (AGENT, CONVERSATION, "step-count")
    assert (provenance.transcript.first_message_id, provenance.transcript.last_message_id) == \
        ("message-u1", "message-a2")


def test_dream_imports_lettas_newest_line_before_it_reads(world: World, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """No import command: the line Letta wrote a moment ago is in the dream."""
    root = world.tmp / "letta"
    write(root, [Turn([user("I moved to Lyon last week.", "o1", "message-u1"),
                       assistant("Noted: Lyon it is.", "message-a1", after_reasoning=False)])])
    monkeypatch.setenv("LETTA_TRANSCRIPT_ROOT", str(root))
    git(world.memory.root, "config", "letta.agentId", AGENT)
    code, out, err = run_cli(capsys, "dream", "--repo", str(world.memory.root), "--home", str(world.home),
                             "--agent", AGENT)
    assert (code, err) == (0, "") and "opened pull request #1" in out, out + err
    provenance = parse_provenance(world.client().get_pull_request(1).body)
    assert (provenance.conversation_id, provenance.transcript.last_message_id) == (CONVERSATION, "message-a1")


def test_dream_all_dreams_each_conversation_with_something_new(world: World, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    root = world.tmp / "letta"
    write(root, [Turn([user("I moved to Lyon last week.", "o1", "message-u1")]),
                 Turn([user("My sister Ines visits in May.", "o2", "message-u2")], conversation="conv-second")])
    monkeypatch.setenv("LETTA_TRANSCRIPT_ROOT", str(root))
    args = ("dream", "--repo", str(world.memory.root), "--home", str(world.home), "--agent", AGENT)
    code, _, err = run_cli(capsys, *args)
    assert code == 1 and "conv-second" in err and "--all" in err  # which one? it says how to take them all
    code, out, err = run_cli(capsys, *args, "--all")
    assert (code, err) == (0, ""), out + err
    assert out.count("opened pull request #") == 2
    conversations = {parse_provenance(world.client().get_pull_request(n).body).conversation_id for n in (1, 2)}
    assert conversations == {CONVERSATION, "conv-second"}
    code, out, err = run_cli(capsys, *args, "--all")  # both open now: each said, nothing opened
    assert code == 0 and "opened pull request" not in out
