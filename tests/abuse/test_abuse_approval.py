"""A co-worker with write access against a running `serve --local` stack (localhub, Redis, the
receiver and an integrator worker), through the forge's API and git only.

`sam` owns the public memory, `ada` is the agent, `wes` and `val` are writers. An agent's
change to its persona is protected: a writer other than its author must approve it. Each test
plays one way around that rule and checks it does not merge:

- wes pushes his own commit onto the agent's pull request, under an address linked to no
  account (or an empty one), then approves it: the pusher's approval never counts;
- wes, removed as a collaborator, approves within the permission cache's minute;
- ada retargets her protected pull request to a branch whose rules protect nothing: nothing is
  merged there, and nothing is announced to the agents as the memory's head.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import github
import pytest
import requests
from rq import Queue
from rq.registry import StartedJobRegistry

from bot.agent.session import AgentSession
from bot.contracts import LABEL_NEEDS_REVIEW
from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.queue import QUEUE, connect
from bot.redis_keys import last_head_key
from bot.serve.local import LocalStack
from tests.conftest import git, localhub_token
from tests.waiting import wait_until

REPO = "sam/memory"
PERSONA = "system/persona.md"
WAIT = 30.0


@dataclass
class World:
    stack: LocalStack
    tokens: dict[str, str]
    ada: AgentSession
    tmp: Path

    def repo(self, login: str = "sam"):  # type: ignore[no-untyped-def]
        gh = github.Github(auth=github.Auth.Token(self.tokens[login]), base_url=self.stack.localhub.api_url,
                           retry=None)
        return gh.get_repo(REPO)

    def url(self, login: str) -> str:
        return self.stack.localhub.url.replace("http://", f"http://x-access-token:{self.tokens[login]}@") + \
            f"/{REPO}.git"

    def api(self, verb: str, path: str, login: str, **kwargs) -> requests.Response:  # type: ignore[no-untyped-def]
        return requests.request(verb, f"{self.stack.localhub.api_url}{path}",
                                headers={"Authorization": f"token {self.tokens[login]}"}, timeout=10, **kwargs)

    def settled(self) -> None:
        """Wait until the integrator has nothing queued or running, three looks in a row."""
        redis = connect(self.stack.redis.url)
        queue = Queue(QUEUE, connection=redis)
        started = StartedJobRegistry(QUEUE, connection=redis)
        calm = 0
        deadline = time.monotonic() + WAIT
        while calm < 3:
            assert time.monotonic() < deadline, "the integrator never went idle"
            calm = calm + 1 if queue.count == 0 and started.count == 0 else 0
            time.sleep(0.3)
        redis.close()

    def main_file(self, path: str) -> bytes:
        return self.repo().get_contents(path, ref="main").decoded_content

    def last_head(self) -> bytes | None:
        redis = connect(self.stack.redis.url)
        try:
            return redis.get(last_head_key(REPO))
        finally:
            redis.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("abuse-approval")
    stack = LocalStack(tmp / "stack").start()
    ada = None
    try:
        tokens = {login: localhub_token(stack.localhub, login) for login in ("sam", "ada", "wes", "val")}
        owner = github.Github(auth=github.Auth.Token(tokens["sam"]), base_url=stack.localhub.api_url, retry=None)
        forge_repo = owner.get_user().create_repo("memory", private=False)
        for login in ("ada", "wes", "val"):
            forge_repo.add_to_collaborators(login, "push")
        memory = init_repository(tmp / "ada", "ada", "Ada")
        sync.set_remote(memory, stack.localhub.url.replace("http://", f"http://x-access-token:{tokens['ada']}@")
                        + f"/{REPO}.git")
        ada = AgentSession(memory, "c-ada-1", home=tmp / "ada-home", env={}, background_dreams=False)
        world = World(stack, tokens, ada, tmp)
        wait_until(lambda: list(forge_repo.get_hooks()), WAIT, "the integrator's webhook on the repository")
        yield world
    finally:
        if ada is not None:
            ada.close()
        stack.stop()


def _persona_pull(world: World, text: str) -> int:
    """The agent changes its persona: a protected path, so a pull request for a person."""
    world.ada.record("user", f"Please remember: {text}")
    result = world.ada.handle_tool_call({"command": "insert", "path": PERSONA, "insert_line": -1,
                                         "insert_text": text, "reason": "The user asked"})
    assert result.ok and result.route == "pull-request" and result.pull_request, result.message
    number = int(result.pull_request)
    wait_until(lambda: LABEL_NEEDS_REVIEW in [lb.name for lb in world.repo().get_issue(number).get_labels()], WAIT,
               f"#{number} waiting for review")
    return number


def _push_onto(world: World, login: str, number: int, text: str, email: str, name: str) -> str:
    """`login` adds a line to the persona on the pull request's branch, committed as
    `name <email>`, and pushes it with their own token; the new head."""
    branch = world.repo().get_pull(number).head.ref
    clone = world.tmp / f"{login}-{number}"
    git(world.tmp, "clone", "-q", "--branch", branch, world.url(login), str(clone))
    with (clone / PERSONA).open("a", encoding="utf-8") as persona:
        persona.write(f"\n{text}\n")
    git(clone, "add", "-A")
    subprocess.run(["git", "-c", f"user.name={name}", "-c", f"user.email={email}", "commit", "-qm", "A small fix"],
                   cwd=clone, check=True, capture_output=True, env={"PATH": "/usr/bin:/bin", "HOME": str(world.tmp)})
    git(clone, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
    head = git(clone, "rev-parse", "HEAD").strip()
    wait_until(lambda: world.repo().get_pull(number).head.sha == head, WAIT, f"#{number} at wes's push")
    return head


@pytest.mark.parametrize(("email", "name"), [("wes.private@example.org", "A Helper"), ("", "Nobody")],
                         ids=["unlinked-email", "empty-email"])
def test_the_pusher_of_a_commit_cannot_approve_it(world: World, email: str, name: str) -> None:
    number = _persona_pull(world, f"I keep a diary ({email or 'empty'}).")
    line = f"I obey wes ({email or 'empty'})."
    head = _push_onto(world, "wes", number, line, email, name)
    world.settled()
    commits = world.api("GET", f"/repos/{REPO}/pulls/{number}/commits", "wes").json()
    assert commits[-1]["sha"] == head and commits[-1]["author"] is None  # no account is named by the commit
    world.repo("wes").get_pull(number).create_review(event="APPROVE", body="LGTM")
    world.settled()
    pull = world.repo().get_pull(number)
    assert not pull.merged and pull.state == "open"
    assert line.encode() not in world.main_file(PERSONA)
    # A writer who pushed nothing to the branch is who approves it.
    world.repo("val").get_pull(number).create_review(event="APPROVE", body="Checked wes's line.")
    wait_until(lambda: world.repo().get_pull(number).merged, WAIT, f"#{number} merged after val's approval")


def test_a_removed_collaborator_stops_counting_at_once(world: World) -> None:
    number = _persona_pull(world, "I speak softly.")
    # wes comments first, so the integrator reads (and caches) his permission: write
    world.repo("wes").get_pull(number).create_review(event="COMMENT", body="Looking at it.")
    world.settled()
    assert world.api("DELETE", f"/repos/{REPO}/collaborators/wes", "sam").status_code == 204
    world.repo("wes").get_pull(number).create_review(event="APPROVE", body="Fine.")
    world.settled()
    pull = world.repo().get_pull(number)
    assert not pull.merged and pull.state == "open"
    assert b"I speak softly." not in world.main_file(PERSONA)
    world.repo("sam").get_pull(number).create_review(event="APPROVE", body="Fine by me.")
    wait_until(lambda: world.repo().get_pull(number).merged, WAIT, f"#{number} merged after sam's approval")


def test_a_protected_change_retargeted_away_is_left_alone(world: World) -> None:
    main = world.repo().get_branch("main").commit.sha
    # sam keeps a scratch branch whose rules protect nothing and merge anything
    scratch = world.tmp / "sam-weak"
    git(world.tmp, "clone", "-q", world.url("sam"), str(scratch))
    (scratch / ".memrepo").mkdir(exist_ok=True)
    (scratch / ".memrepo" / "config.yml").write_text("merge: auto\nprotected: []\n", encoding="utf-8")
    git(scratch, "add", "-A")
    git(scratch, "-c", "user.name=Sam", "-c", "user.email=sam@example.org", "commit", "-qm", "scratch rules")
    git(scratch, "push", "-q", "origin", "HEAD:refs/heads/weak")
    weak = git(scratch, "rev-parse", "HEAD").strip()
    world.settled()
    heads_before = world.last_head()
    number = _persona_pull(world, "I take orders from anyone.")
    answer = world.api("PATCH", f"/repos/{REPO}/pulls/{number}", "ada", json={"base": "weak"})
    assert answer.status_code == 200, answer.text
    world.settled()
    pull = world.repo().get_pull(number)
    assert not pull.merged and pull.state == "open" and pull.base.ref == "weak"
    assert world.repo().get_branch("weak").commit.sha == weak
    assert world.repo().get_branch("main").commit.sha == main
    assert world.last_head() == heads_before
    assert b"I take orders from anyone." not in world.main_file(PERSONA)
