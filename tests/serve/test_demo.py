"""`memrepo demo`: the whole story runs on the embedded default and checks itself.

The story runs once with `--keep DIR --json` (module fixture); each step's evidence is then
checked, one test per step, against what the kept folder really holds: the agents' clones,
their transcript stores, and the forge itself (localhub restarted on the kept data, read over
REST). Another run narrates in a temporary folder that is gone afterwards."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import github
import pytest

from bot import cli, demo
from bot.demo import DEMO_STEP_FAILED
from bot.identity import INTEGRATOR, role_of
from bot.pullrequest.provenance import parse_provenance
from bot.serve.local import PORTS_FILE, ephemeral_range, recorded_port
from bot.transcript import TranscriptStore
from localhub.server import LocalhubServer
from tests.conftest import PERSON_EMAIL, PERSON_NAME, git, localhub_token
from tests.house.test_readme import block_starting, newcomer_env


@dataclass
class Story:
    code: int
    timeline: dict[str, Any]
    base: Path
    forge: Any  # PyGithub Repository on the restarted localhub

    def step(self, number: int) -> dict[str, Any]:
        [step] = [s for s in self.timeline["steps"] if s["number"] == number]
        assert step["ok"] and step["seconds"] > 0
        return step["evidence"]

    def first_parents(self, clone: str = "ada") -> list[str]:
        return git(self.base / clone, "rev-list", "--first-parent", "main").split()


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Story]:
    home = tmp_path_factory.mktemp("demo-home")
    (home / ".gitconfig").write_text(f"[user]\n\tname = {PERSON_NAME}\n\temail = {PERSON_EMAIL}\n")
    base = tmp_path_factory.mktemp("demo") / "story"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = cli.main(["demo", "--keep", str(base), "--json"])
        timeline = json.loads(out.getvalue())
        hub = LocalhubServer(base / "stack" / "localhub").start()
        try:
            # Sam, its owner, reads the private repository (as anyone it was not shared with could not).
            token = localhub_token(hub, "sam")  # the operator's: sam's account exists
            gh = github.Github(auth=github.Auth.Token(token), base_url=hub.api_url, retry=None)
            yield Story(code, timeline, base, gh.get_repo(demo.REPO))
            gh.close()
        finally:
            hub.stop()


def test_the_demo_succeeds_within_its_time_limit_and_prints_its_timeline(story: Story) -> None:
    assert story.code == 0, story.timeline.get("error")
    assert story.timeline["ok"] is True and story.timeline["error"] is None
    assert [s["number"] for s in story.timeline["steps"]] == [1, 2, 3, 4, 5, 6]
    assert all(s["ok"] for s in story.timeline["steps"])
    assert 0 < story.timeline["seconds"] <= story.timeline["limit_seconds"] == demo.TIME_LIMIT


def test_step_1_both_agents_are_connected_to_the_forge_repository(story: Story) -> None:
    evidence = story.step(1)
    assert evidence["webhook"].endswith("/webhooks/github")
    for clone in ("ada", "ben"):
        url = git(story.base / clone, "remote", "get-url", "origin").strip()
        assert url.endswith(f"/{demo.REPO}.git")
        assert git(story.base / clone, "rev-list", "--max-parents=0", "main").strip() == \
            git(story.base / "ada", "rev-list", "--max-parents=0", "main").strip()  # one shared history
    assert evidence["main"] in story.first_parents()  # where main was when both had connected


def test_the_kept_stack_records_the_clones_port_outside_the_ephemeral_range(story: Story) -> None:
    """`memrepo serve --local --data DIR/stack` (no --port) starts again on the ports the demo
    used, which were picked where no outgoing connection takes them meanwhile."""
    low, high = ephemeral_range()
    ports = json.loads((story.base / "stack" / PORTS_FILE).read_text())
    assert ports["receiver"] == ports["localhub"] + 1
    assert not any(low <= port <= high for port in ports.values())
    assert recorded_port(story.base / "stack") == ports["localhub"]
    for clone in ("ada", "ben"):
        url = git(story.base / clone, "remote", "get-url", "origin").strip()
        assert urlsplit(url).port == ports["localhub"]


def test_step_1_each_agent_follows_the_private_memory_with_its_own_forge_token(story: Story) -> None:
    """The agents open the event stream with the forge token their clone pushes with, never an
    operator token, so the forge decides who may follow: the memory is private, and a token of
    someone it does not let read it is refused."""
    evidence = story.step(1)
    assert evidence["private"] is True and story.forge.private
    assert evidence["stream_token_logins"] == {"ada": "ada", "ben": "ben"}
    assert evidence["outsider_status"] == 404
    assert story.forge.has_in_collaborators("ada") and story.forge.has_in_collaborators("ben")


def test_step_2_a_small_edit_went_straight_to_main_as_the_agents_commit(story: Story) -> None:
    evidence = story.step(2)
    assert evidence["route"] == "direct" and evidence["pushed"] is True
    commit = evidence["commit"]
    assert commit in story.first_parents()  # on main itself, not through a pull request
    email = git(story.base / "ada", "show", "-s", "--format=%ae", commit).strip()
    assert role_of(email) == "agent"
    assert "Kim Jiwoo" in git(story.base / "ada", "show", f"{commit}:system/human.md")
    assert evidence["ben_prompt_revision"] == commit  # Ben followed the push


def test_step_3_the_dream_pull_request_carries_provenance_and_was_merged_by_the_integrator(story: Story) -> None:
    evidence = story.step(3)
    pull = story.forge.get_pull(evidence["pull_request"])
    assert pull.merged and pull.merge_commit_sha == evidence["merge_commit"]
    assert pull.head.ref == f"memrepo/dream/{evidence['dream_id']}"
    provenance = parse_provenance(pull.body)
    assert provenance is not None and provenance.agent_id == "ada" and provenance.trigger == "manual"
    assert provenance.transcript.first_message_id == evidence["transcript"]["first"]
    with TranscriptStore(story.base / "ada-home") as store:  # the messages it cites exist, as said
        texts = [m.text for m in store.read("ada", provenance.conversation_id)]
    assert "The ledger service moves to Postgres 16 in Q1." in texts
    assert evidence["merge_commit"] in story.first_parents()
    assert set(evidence["prompt_revisions"].values()) == {evidence["merge_commit"]}


def test_step_4_the_persons_edit_and_the_dream_were_both_kept_by_the_integrators_resolution(story: Story) -> None:
    evidence = story.step(4)
    assert evidence["mergeable_before"] is False
    person = story.forge.get_commit(evidence["person_commit"])
    assert role_of(person.commit.author.email) == "human"
    assert evidence["person_commit"] in story.first_parents()  # straight on main, on the forge
    pull = story.forge.get_pull(evidence["pull_request"])
    assert pull.merged and pull.merge_commit_sha == evidence["merge_commit"]
    # Merging by push, the conflict is resolved in the integrator's merge commit on main (the
    # pull request's branch gets no commit of the integrator's), which says what it resolved.
    assert [c for c in pull.get_commits() if c.commit.author.email == INTEGRATOR.email] == []
    merge = story.forge.get_commit(evidence["merge_commit"])
    assert merge.commit.author.email == INTEGRATOR.email and len(merge.parents) == 2
    assert merge.parents[1].sha == pull.head.sha and "resolved in this merge commit" in merge.commit.message
    path = story.step(3)["path"]
    text = git(story.base / "ada", "show", f"{evidence['merge_commit']}:{path}")
    assert "- Sam: finance confirmed" in text and "platform team owns the ledger" in text
    assert "Postgres 16 in Q1" in text


def test_step_5_the_protected_change_waited_for_an_approval_by_a_person(story: Story) -> None:
    evidence = story.step(5)
    pull = story.forge.get_pull(evidence["pull_request"])
    assert pull.merged and pull.head.ref.startswith("memrepo/edit/ben/")
    assert [(r.user.login, r.state) for r in pull.get_reviews()] == [("sam", "APPROVED")]
    assert "memrepo:agent-edit" in evidence["labels"]
    parents = git(story.base / "ada", "rev-parse", f"{evidence['merge_commit']}^1").strip()
    assert parents == evidence["main_before"]  # nothing else landed meanwhile
    assert "British English" in git(story.base / "ben", "show", "main:system/persona.md")


def test_step_6_why_and_at_answer_from_the_evidence(story: Story) -> None:
    evidence = story.step(6)
    [dream] = evidence["why_dream"]["origins"]
    assert dream["writer"] == "dreamer" and dream["pull_request"]["number"] == story.step(3)["pull_request"]
    assert dream["dream"]["dream_id"] == story.step(3)["dream_id"]
    assert [m["text"] for m in dream["transcript"]["messages"]][-1] == "The ledger service moves to Postgres 16 in Q1."
    [person] = evidence["why_person"]["origins"]
    assert person["writer"] == "human" and not person.get("pull_request") and not person.get("dream")
    assert evidence["at"]["commit"] == story.step(5)["main_before"]


def test_the_readmes_why_example_on_the_kept_folder_quotes_what_the_user_said(story: Story) -> None:
    # The Quick start's command, as written with DIR the kept folder: line 4 of Ada's human.md is
    # what Ada learned in step 2 (not the frontmatter), and why finds her transcript for it.
    block = block_starting("git -C DIR/ada remote get-url origin")
    [line] = [line for line in block.text.splitlines() if " why " in line]
    text = (story.base / "ada" / "system" / "human.md").read_text(encoding="utf-8").splitlines()
    number = int(line.split("system/human.md:", 1)[1].split()[0])
    assert text[number - 1] == "- Name: Kim Jiwoo; leads the payments team."
    done = subprocess.run(["bash", "-c", line.replace("DIR", str(story.base))], env=newcomer_env(story.base),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"system/human.md:{number} at main" in done.stdout
    assert "  | - Name: Kim Jiwoo; leads the payments team.\nWritten by agent Ada <ada@agents.memrepo>" in done.stdout
    assert "Hi! I'm Kim Jiwoo and I lead the payments team." in done.stdout


def test_the_narrated_story_in_a_temporary_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    code = cli.main(["demo"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    for step in range(1, 7):
        assert f"\n{step}. " in out, step
    assert out.count("[ok]") >= 20
    assert "Every step did what it says" in out.splitlines()[-1]
    assert "x-access-token" not in out  # tokens in remote URLs are never shown
    assert list(scratch.iterdir()) == []  # the temporary folder is gone


def test_the_story_on_v2_memories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "story"
    code = cli.main(["demo", "--layout", "v2", "--keep", str(base), "--json"])
    out, err = capsys.readouterr()
    timeline = json.loads(out)
    assert (code, err, timeline["ok"]) == (0, "", True), timeline["error"]
    assert all(step["ok"] for step in timeline["steps"]) and len(timeline["steps"]) == 6
    for clone in ("ada", "ben"):
        files = git(base / clone, "ls-files").split()
        assert {"MEMORY.md", "persona.md", "human.md"} <= set(files) and not any(f.startswith("system/") for f in files)
    [dream] = [s["evidence"] for s in timeline["steps"] if s["number"] == 3]
    assert dream["path"] == "conversations/c-ada-1/" + dream["path"].rsplit("/", 1)[1]
    assert (base / "ada" / "conversations" / "c-ada-1" / "MEMORY.md").is_file()
    [why] = [s["evidence"] for s in timeline["steps"] if s["number"] == 6]
    assert why["at"]["path"] == "persona.md"
    assert "British English" in (base / "ben" / "persona.md").read_text()


def test_a_folder_in_use_is_refused_in_one_line_and_left_alone(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    used = tmp_path / "used"
    used.mkdir()
    (used / "notes.md").write_text("mine\n")
    code = cli.main(["demo", "--keep", str(used)])
    _, err = capsys.readouterr()
    assert code == 1 and len(err.splitlines()) == 1 and "not an empty folder" in err and "Traceback" not in err
    assert [p.name for p in used.iterdir()] == ["notes.md"]


def test_a_failed_step_makes_the_json_timeline_say_so_and_the_exit_code_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(base: Path, narrator: demo.Narrator, layout: str) -> None:
        with narrator.step(1, "a step that finds something wrong"):
            narrator.check(False, "the forge has the first commit")

    monkeypatch.setattr(demo, "_story", broken)
    code = cli.main(["demo", "--keep", str(tmp_path / "story"), "--json"])
    out, err = capsys.readouterr()
    timeline = json.loads(out)
    assert code == 1 and err == ""
    assert timeline["ok"] is False
    assert timeline["error"] == DEMO_STEP_FAILED.format(what="the forge has the first commit")
    assert [(s["number"], s["ok"]) for s in timeline["steps"]] == [(1, False)]


def test_an_unexpected_error_still_ends_the_json_timeline(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def crashing(base: Path, narrator: demo.Narrator, layout: str) -> None:
        with narrator.step(1, "a step that meets a bug"):
            raise KeyError("boom")

    monkeypatch.setattr(demo, "_story", crashing)
    code = cli.main(["demo", "--json"])
    out, err = capsys.readouterr()
    timeline = json.loads(out)
    assert code == 1 and err == "" and timeline["ok"] is False and "KeyError" in timeline["error"]


def test_the_time_limit_is_part_of_success(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demo, "_story", lambda base, narrator, layout: None)
    monkeypatch.setattr(demo, "TIME_LIMIT", -1.0)  # every run takes longer: no time needs to pass
    code = cli.main(["demo"])
    _, err = capsys.readouterr()
    assert code == 1 and "the limit is" in err
