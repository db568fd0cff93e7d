"""A memory with every kind of writer in it, for the palace's tests (and its README screenshots):
alice/memory on a real localhub with a clone made by `memrepo init`, in which

- agent a1 (Ada), in conversation c1, records what the user asked through an AgentSession (its
  commit carries the conversation and the turn), pushed to main;
- a dream of conversation c2 is opened by the dreamer, approved by bob and merged on the forge;
- a person (Pat) edits memory in a clone of their own and pushes;
- an agent edit conflicts with a person's change of the same line: sync sets it aside;
- a second dream is open, with changes requested by carol;
- one agent edit is committed and not pushed yet (queued).

Nothing is mocked; the palace reads it all the way `memrepo palace` does.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import github

from bot.agent import AgentSession
from bot.dream.runner import run_dream
from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.tool.memory_tool import MemoryTool
from bot.transcript import TranscriptStore
from localhub.server import LocalhubServer
from tests.conftest import FORGE_ENV, PERSON_EMAIL, PERSON_NAME, StoreClock, git, localhub_token
from tests.memory_forge import FAST, REPO
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parent.parent
HUMAN = "system/human.md"
TEAM = "reference/team.md"
RECORD = "conversations/c2/2026-03.md"


@dataclass
class World:
    server: Any
    token: str
    memory: MemoryRepo
    store: TranscriptStore
    home: Path
    tmp: Path
    facts: dict[str, Any] = field(default_factory=dict)

    def client(self) -> ForgeClient:
        return ForgeClient(REPO, TokenCredentials(self.token), base_url=self.server.api_url, policy=FAST,
                           min_write_interval=0.0, timeout=10)

    def review(self, number: int, login: str, event: str, body: str) -> None:
        gh = github.Github(auth=github.Auth.Token(localhub_token(self.server, login)), base_url=self.server.api_url,
                           retry=None)
        gh.get_repo(REPO).get_pull(number).create_review(body=body, event=event)

    def line_of(self, path: str, needle: str) -> int:
        text = self.memory.read(path).decode()
        return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)

    def env(self) -> dict[str, str]:
        return {**os.environ, "MEMREPO_HOME": str(self.home)}


def git_settings(home: Path) -> dict[str, str]:
    """The git identity and settings tests/conftest.py's isolated_git gives each test."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / ".gitconfig"
    config.write_text(f"[user]\n\tname = {PERSON_NAME}\n\temail = {PERSON_EMAIL}\n[init]\n\tdefaultBranch = main\n")
    return {"HOME": str(home), "GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1"}


@contextlib.contextmanager
def world(tmp: Path) -> Iterator[World]:
    """The memory described above, on a localhub that runs until the block ends."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(_environment(tmp))
        server = stack.enter_context(LocalhubServer(tmp / "localhub-data"))
        token = localhub_token(server, "alice")
        github.Github(auth=github.Auth.Token(token), base_url=server.api_url, retry=None).get_user().create_repo(
            "memory")
        memory = init_repository(tmp / "memory", "a1", "Ada")
        authed = server.url.replace("http://", f"http://x-access-token:{token}@") + f"/{REPO}.git"
        sync.set_remote(memory, authed)
        home = tmp / "home"
        os.environ["MEMREPO_HOME"] = str(home)
        store = stack.enter_context(TranscriptStore(home, fsync=False, clock=StoreClock()))
        w = World(server, token, memory, store, home, tmp)
        _fill(w, authed)
        yield w


@contextlib.contextmanager
def _environment(tmp: Path) -> Iterator[None]:
    """This module's own environment (the fixtures of conftest.py are per test): a person's git
    identity, no forge or LLM settings from the machine."""
    saved = dict(os.environ)
    try:
        for name in (*FORGE_ENV, "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
                     "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
            os.environ.pop(name, None)
        os.environ.update(git_settings(tmp / "git-home"))
        yield None
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _fill(w: World, authed: str) -> None:
    facts = w.facts
    # 1. an agent's edit in a known conversation, pushed to main
    with AgentSession(w.memory, "c1", store=w.store, background_dreams=False) as session:
        asked = session.record("user", "Please call me Sam from now on.")
        session.record("assistant", "I will, Sam.")
        edit = session.handle_tool_call({"command": "str_replace", "path": HUMAN, "old_str": "Nothing recorded yet.",
                                         "new_str": "Wants to be called Sam.",
                                         "reason": "Record what the user wants to be called"})
    assert edit.ok and edit.route == "direct", edit.message
    facts.update(agent_commit=edit.commit, asked=asked.message_id)

    # 2. a dream, approved by bob and merged on the forge
    berlin = w.store.append("a1", "c2", "user", "I live in Berlin.")
    w.store.append("a1", "c2", "assistant", "Noted.")
    dream = run_dream(w.memory, "a1", "c2", store=w.store, retry=FAST)
    assert dream.pr is not None, dream.message
    w.review(dream.pr, "bob", "APPROVE", "Looks right.")
    client = w.client()
    pr = client.wait_for_mergeability(dream.pr, timeout=20)
    merged = client.merge(dream.pr, pr.head_sha)
    assert merged.merged, merged
    assert sync.sync(w.memory).pushed is not False
    facts.update(dream=dream, dream_merge=merged.sha, berlin=berlin.message_id)
    # what follows is committed after the merge's second, so `at` the merge's time is memory before it
    merge_time = w.memory.git[merged.sha].commit_time
    wait_until(lambda: time.time() >= merge_time + 1, 5, "the clock to pass the merge's second")

    # 3. a person's edit, from their own clone
    theirs = w.tmp / "pats-clone"
    git(w.tmp, "clone", "-q", authed, str(theirs))
    human = theirs / HUMAN
    human.write_text(human.read_text().replace("Wants to be called Sam.",
                                               "Wants to be called Sam.\nWorks on the platform team."))
    (theirs / TEAM).parent.mkdir(parents=True, exist_ok=True)
    (theirs / TEAM).write_text("---\ndescription: The team the user works in\n---\nTeam: Platform\n")
    git(theirs, "add", "-A")
    git(theirs, "commit", "-q", "-m", "Add the user's team")
    git(theirs, "push", "-q", "origin", "main")
    assert sync.sync(w.memory).pulled
    facts["person_commit"] = git(theirs, "rev-parse", "HEAD").strip()
    facts["before_person"] = merge_time

    # 4. an agent's edit that conflicts with a person's change of the same line: set aside
    (theirs / TEAM).write_text((theirs / TEAM).read_text().replace("Team: Platform", "Team: Infrastructure"))
    git(theirs, "commit", "-q", "-am", "The team is called Infrastructure now")
    git(theirs, "push", "-q", "origin", "main")
    local = MemoryTool(w.memory, push=False).call({"command": "str_replace", "path": TEAM, "old_str": "Team: Platform",
                                                   "new_str": "Team: Data", "reason": "Record the user's new team"})
    assert local.ok, local.message
    result = sync.sync(w.memory)
    assert len(result.set_aside) == 1, result.summary
    facts["set_aside"] = result.set_aside[0]

    # 5. a second dream, open, with changes requested by carol
    w.store.append("a1", "c2", "user", "My cat is called Mo.")
    second = run_dream(w.memory, "a1", "c2", store=w.store, retry=FAST)
    assert second.pr is not None, second.message
    w.review(second.pr, "carol", "REQUEST_CHANGES", "Not this one.")
    facts["open_dream"] = second

    # 6. an agent's edit committed and not pushed yet
    queued = MemoryTool(w.memory, push=False).call({
        "command": "create", "path": "reference/follow-up.md", "file_text": "---\ndescription: Things to come "
        "back to\n---\nAsk about the move.\n", "reason": "Note a follow-up"})
    assert queued.ok, queued.message
    facts["queued"] = queued.commit


class PalaceProcess:
    """`memrepo palace` on a free port, as a user starts it; stopped with SIGTERM."""

    def __init__(self, w: World, *args: str, home: Path | None = None) -> None:
        """`home`: another MEMREPO_HOME than the agent's (one without its transcripts)."""
        env = w.env() if home is None else {**w.env(), "MEMREPO_HOME": str(home)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "palace", "--repo", str(w.memory.root), "--port", "0", *args],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        found = re.search(r" at (http://\S+/) ", first)
        if found is None:
            self.stop()
            raise AssertionError(f"memrepo palace did not start: {first!r} {self.errors}")
        self.url = found.group(1)
        self.errors = ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        try:
            _, self.errors = self.process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, self.errors = self.process.communicate()
