"""`memrepo why` against real parts: memory repositories made by `memrepo init`, localhub over
real HTTP and git, a TranscriptStore in tmp_path, dreams opened by the dreamer and merged on the
forge, and a conflict resolved by the integrator's workspace. Nothing is mocked."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import github
import pytest

from bot.config import DEFAULT_POLICY
from bot.dream.runner import run_dream
from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.forge.retry import RetryPolicy
from bot.forge.shapes import NewPullRequest
from bot.integrator.context import Remote
from bot.integrator.workspace import Workspace
from bot.memfs import sync
from bot.memfs.merge.markdown import ResolveRequest
from bot.palace.source import Palace
from bot.provenance.why import render_why, why
from bot.transcript import Message, TranscriptStore
from localhub.server import LocalhubServer
from tests.conftest import LocalhubMemory, git, localhub_token, memory_on_localhub, run_cli

REPO = "alice/memory"
FAST = RetryPolicy(max_total_seconds=5.0, max_attempts=3, backoff_base=0.05, backoff_cap=0.2)
RECORD = "conversations/c1/2026-03.md"


class World(LocalhubMemory):

    def client(self, token: str | None = None) -> ForgeClient:
        return ForgeClient(REPO, TokenCredentials(token or self.token), base_url=self.server.api_url, policy=FAST,
                           min_write_interval=0.0, timeout=10)

    def say(self, text: str, kind: str = "user") -> Message:
        return self.store.append("a1", "c1", kind, text)

    def dream(self) -> object:
        return run_dream(self.memory, "a1", "c1", store=self.store, retry=FAST)

    def merge(self, number: int) -> str:
        client = self.client()
        pr = client.wait_for_mergeability(number, timeout=20)
        assert pr.mergeable, pr
        result = client.merge(number, pr.head_sha)
        assert result.merged
        assert sync.sync(self.memory).pushed is not False
        return result.sha or ""

    def approve(self, number: int, login: str) -> None:
        token = localhub_token(self.server, login)
        gh = github.Github(auth=github.Auth.Token(token), base_url=self.server.api_url, retry=None)
        gh.get_repo(REPO).get_pull(number).create_review(body="Looks right.", event="APPROVE")

    def line_of(self, path: str, needle: str) -> int:
        text = self.memory.read(path).decode()
        return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.fixture
def world(localhub: LocalhubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    world = memory_on_localhub(localhub, tmp_path, monkeypatch, World)
    yield world
    world.store.close()


def test_a_dream_line_traces_to_its_pull_request_reviews_provenance_and_messages(world: World) -> None:
    berlin = world.say("I live in Berlin.")
    world.say("Noted.", "assistant")
    cat = world.say("My cat is called Mo.")
    result = world.dream()
    world.approve(result.pr, "bob")
    merge_sha = world.merge(result.pr)
    line = world.line_of(RECORD, "I live in Berlin.")

    report = why(world.memory.root, RECORD, line)

    assert report["path"] == RECORD and report["line"] == line
    [origin] = report["origins"]
    assert report["lines"] == [{"line": line, "text": "> I live in Berlin.", "commit": origin["commit"]["sha"]}]
    commit = origin["commit"]
    assert origin["writer"] == "dreamer" and commit["role"] == "dreamer"
    assert commit["author"]["email"] == f"{result.dream_id}@dreams.memrepo"
    assert origin["via"] == "merge" and origin["landed"]["sha"] == merge_sha
    assert git(world.memory.root, "rev-parse", f"{merge_sha}^2").strip() == commit["sha"]
    pr = origin["pull_request"]
    assert pr["source"] == "forge" and pr["number"] == result.pr and pr["merged"] is True
    assert pr["merge_commit"] == merge_sha
    assert pr["url"].endswith(f"/{REPO}/pull/{result.pr}")
    assert [(r["reviewer"], r["state"]) for r in pr["reviews"]] == [("bob", "APPROVED")]
    dream = origin["dream"]
    assert dream["source"] == "pull_request" and dream["dream_id"] == result.dream_id
    assert (dream["agent_id"], dream["conversation_id"], dream["trigger"], dream["strategy"]) == \
        ("a1", "c1", "manual", "verbatim")
    assert dream["transcript"]["first_message_id"] == berlin.message_id
    assert dream["transcript"]["last_message_id"] == cat.message_id
    assert dream["change"]["message_ids"] == [berlin.message_id, cat.message_id]
    transcript = origin["transcript"]
    assert transcript["available"] is True and transcript["missing"] == []
    assert [(m["message_id"], m["text"], m["captured_at"]) for m in transcript["messages"]] == \
        [(berlin.message_id, "I live in Berlin.", berlin.captured_at), (cat.message_id, "My cat is called Mo.",
                                                                         cat.captured_at)]
    assert report["forge"] == {"asked": True, "repository": REPO, "reason": None}

    text = render_why(report)
    for fact in (f"Pull request #{result.pr}", "bob approved", f"Dream {result.dream_id}", "trigger manual",
                 "strategy verbatim", berlin.message_id, "> I live in Berlin.", merge_sha[:10]):
        assert fact in text, (fact, text)


def test_without_the_forge_git_gives_the_pull_request_number_and_the_trailers(
        world: World, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    berlin = world.say("I live in Berlin.")
    result = world.dream()
    merge_sha = world.merge(result.pr)
    line = world.line_of(RECORD, "I live in Berlin.")

    report = why(world.memory.root, RECORD, line, forge=False)
    [origin] = report["origins"]
    assert report["forge"]["asked"] is False and "not asked" in report["forge"]["reason"]
    pr = origin["pull_request"]
    assert (pr["source"], pr["number"], pr["merge_commit"], pr["url"], pr["reviews"]) == \
        ("git", result.pr, merge_sha, None, None)
    assert pr["head_ref"] == f"memrepo/dream/{result.dream_id}"
    dream = origin["dream"]
    assert dream["source"] == "trailers" and dream["dream_id"] == result.dream_id
    assert dream["trigger"] is None and dream["strategy"] is None  # only the pull request records them
    assert [m["message_id"] for m in origin["transcript"]["messages"]] == [berlin.message_id]
    text = render_why(report)
    assert f"Pull request #{result.pr}" in text and "the forge was not asked (--no-forge)" in text

    # through the CLI with no token anywhere (not in the environment, not in origin's URL): not asked
    git(world.memory.root, "remote", "set-url", "origin", f"{world.server.url}/{REPO}.git")
    code, out, err = run_cli(capsys, "why", f"{RECORD}:{line}", "--repo", str(world.memory.root), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["forge"]["asked"] is False and "no token for alice/memory" in data["forge"]["reason"]
    assert data["origins"][0]["pull_request"]["source"] == "git"
    # with the token in the environment, the forge is asked again
    monkeypatch.setenv("MEMREPO_FORGE_TOKEN", world.token)
    code, out, err = run_cli(capsys, "why", f"{RECORD}:{line}", "--repo", str(world.memory.root), "--json")
    assert code == 0, err
    assert json.loads(out)["origins"][0]["pull_request"]["source"] == "forge"


def test_a_transcript_that_is_not_in_the_local_store_is_said_to_be_missing_and_quoted_from_the_pull_request(
        world: World, tmp_path: Path) -> None:
    said = world.say("I live in Berlin.")
    result = world.dream()
    world.merge(result.pr)
    line = world.line_of(RECORD, "I live in Berlin.")
    elsewhere = TranscriptStore(tmp_path / "other-home", fsync=False)
    try:
        report = why(world.memory.root, RECORD, line, transcripts=elsewhere)
    finally:
        elsewhere.close()
    transcript = report["origins"][0]["transcript"]
    assert transcript["available"] is False and "not available locally" in transcript["reason"]
    # the user's words, as the dream's pull request quotes them
    assert transcript["quoted_from"] == result.pr
    assert [(m["message_id"], m["kind"], m["text"]) for m in transcript["messages"]] == [
        (said.message_id, "user", "I live in Berlin.")]
    text = render_why(report)
    assert "not available locally" in text and f"Quoted below from pull request #{result.pr}'s description" in text
    assert "    > I live in Berlin." in text
    skipped = why(world.memory.root, RECORD, line, transcripts=False)["origins"][0]["transcript"]
    assert skipped["available"] is False and "not read" in skipped["reason"] and skipped["quoted_from"] == result.pr
    offline = why(world.memory.root, RECORD, line, forge=False, transcripts=False)["origins"][0]["transcript"]
    assert offline["quoted_from"] is None and offline["messages"] == []  # no forge, no description to quote


class Combine:
    """A deterministic resolver standing in for the LLM one: one line of its own for both edits."""

    name = "combine"

    def resolve(self, request: ResolveRequest) -> str | None:
        return request.ours.replace("Prefers short answers.", "Prefers short answers, with details when asked.")


def _commit_as(clone: Path, path: str, old: str, new: str, message: str, env: dict[str, str] | None = None) -> str:
    target = clone / path
    target.write_text(target.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    done = subprocess.run(["git", "commit", "-q", "-am", message], cwd=clone, env={**os.environ, **(env or {})},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return git(clone, "rev-parse", "HEAD").strip()


def test_a_line_written_by_the_integrator_resolving_a_conflict(world: World) -> None:
    agent = {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "a1@agents.memrepo",
             "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "a1@agents.memrepo"}
    clone = world.tmp / "clone"
    authed = world.server.url.replace("http://", f"http://x-access-token:{world.token}@") + f"/{REPO}.git"
    git(world.tmp, "clone", "-q", authed, str(clone))
    branch = "memrepo/edit/a1/e1"
    git(clone, "checkout", "-q", "-b", branch)
    edit = _commit_as(clone, "system/human.md", "Nothing recorded yet.", "Prefers short answers.",
                      "Record how the user likes answers", agent)
    git(clone, "push", "-q", "origin", branch)
    git(clone, "checkout", "-q", "main")
    _commit_as(clone, "system/human.md", "Nothing recorded yet.", "Prefers long answers.", "Pat's view")
    git(clone, "push", "-q", "origin", "main")
    client = world.client()
    pr = client.open_pull_request(NewPullRequest(head=branch, base="main", title="Agent edit",
                                                 labels=("memrepo:agent-edit",)))
    workspace = Workspace(world.tmp / "work", REPO, Remote(f"{world.server.url}/{REPO}.git", token=lambda: world.token))
    fetched = workspace.fetch("main", pr.number)
    outcome = workspace.resolve(fetched.base_sha, fetched.head_sha, branch, DEFAULT_POLICY, resolver=Combine())
    assert outcome.pushed, outcome
    merge_sha = world.merge(pr.number)
    line = world.line_of("system/human.md", "with details when asked")

    report = why(world.memory.root, "system/human.md", line)
    [origin] = report["origins"]
    assert origin["writer"] == "integrator" and origin["commit"]["sha"] == outcome.pushed
    assert origin["commit"]["author"]["email"] == "integrator@bot.memrepo"
    assert origin["commit"]["parents"] == [edit, fetched.base_sha]
    assert origin["resolution"]["branch"] == branch and fetched.base_sha.startswith(origin["resolution"]["base"])
    assert origin["via"] == "merge" and origin["landed"]["sha"] == merge_sha
    assert origin["pull_request"]["number"] == pr.number and origin["pull_request"]["source"] == "forge"
    assert origin["dream"] is None and origin["transcript"] is None  # an agent's edit: no dream behind it
    text = render_why(report)
    assert "resolving a conflict" in text and f"Pull request #{pr.number}" in text


def test_a_palace_told_not_to_ask_the_forge_does_not_ask_it_for_a_lines_provenance(world: World) -> None:
    """`memrepo palace --no-forge` on a memory whose origin holds a token: `/why` reads the pull
    request from the merge commit's title, as the palace's own status says, and asks nothing."""
    world.say("I live in Berlin.")
    result = world.dream()
    world.merge(result.pr)
    line = world.line_of(RECORD, "I live in Berlin.")
    palace = Palace(world.memory.root, forge=False, transcripts=False)
    report = palace.why(RECORD, line)
    assert report["forge"] == palace.forge.status() and report["forge"]["asked"] is False
    assert report["origins"][0]["pull_request"]["source"] == "git"
    assert report["origins"][0]["pull_request"]["number"] == result.pr
