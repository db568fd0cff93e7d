"""The world the abuse tests against a running `serve --local` stack share (tests/abuse/test_abuse.py,
tests/abuse/test_abuse_approval.py): `sam` owns the public memory sam/memory on the stack's
localhub, `ada` is the agent (a collaborator with push, an AgentSession on her clone), and every
login gets a token; the test files say who else is there and what they may do."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import github
import requests
from rq.registry import StartedJobRegistry

from bot.agent.session import AgentSession
from bot.contracts import LABEL_NEEDS_REVIEW
from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.queue import QUEUE, connect, get_queue
from bot.redis_keys import last_head_key
from bot.serve.local import LocalStack
from tests.conftest import localhub_token
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

    def gh(self, login: str) -> github.Github:
        return github.Github(auth=github.Auth.Token(self.tokens[login]), base_url=self.stack.localhub.api_url,
                             retry=None)

    def repo(self, login: str = "sam"):  # type: ignore[no-untyped-def]
        return self.gh(login).get_repo(REPO)

    def url(self, login: str) -> str:
        return self.stack.localhub.url.replace("http://", f"http://x-access-token:{self.tokens[login]}@") + \
            f"/{REPO}.git"

    def api(self, verb: str, path: str, login: str, **kwargs) -> requests.Response:  # type: ignore[no-untyped-def]
        return requests.request(verb, f"{self.stack.localhub.api_url}{path}",
                                headers={"Authorization": f"token {self.tokens[login]}"}, timeout=10, **kwargs)

    def settled(self) -> None:
        """Wait until the integrator has nothing queued or running, three looks in a row a moment
        apart (a webhook may still be on its way when the first look finds nothing)."""
        redis = connect(self.stack.redis.url)
        queue = get_queue(redis)
        started = StartedJobRegistry(QUEUE, connection=redis)
        calm = 0
        deadline = time.monotonic() + WAIT
        while calm < 3:
            assert time.monotonic() < deadline, "the integrator never went idle"
            calm = calm + 1 if queue.count == 0 and started.count == 0 else 0
            time.sleep(0.3)
        redis.close()

    def main_file(self, path: str) -> bytes | None:
        """The file on main, or None where there is none."""
        try:
            return self.repo().get_contents(path, ref="main").decoded_content
        except github.UnknownObjectException:
            return None

    def last_head(self) -> bytes | None:
        """The memory's head as last announced to the agents."""
        redis = connect(self.stack.redis.url)
        try:
            return redis.get(last_head_key(REPO))
        finally:
            redis.close()


def stack_world(tmp: Path, writers: tuple[str, ...], others: tuple[str, ...] = ()) -> Iterator[World]:
    """A started stack with sam's memory, `ada` and `writers` its collaborators with push and
    `others` only holding tokens; once the integrator's webhook is on the repository, the world,
    then everything stopped."""
    stack = LocalStack(tmp / "stack").start()
    ada = None
    try:
        tokens = {login: localhub_token(stack.localhub, login) for login in ("sam", "ada", *writers, *others)}
        forge_repo = github.Github(auth=github.Auth.Token(tokens["sam"]), base_url=stack.localhub.api_url,
                                   retry=None).get_user().create_repo("memory", private=False)
        for login in ("ada", *writers):
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


def persona_pull(world: World, text: str) -> int:
    """The agent changes its persona: a protected path, so a pull request for a person."""
    world.ada.record("user", f"Please remember: {text}")
    result = world.ada.handle_tool_call({"command": "insert", "path": PERSONA, "insert_line": -1,
                                         "insert_text": text, "reason": "The user asked"})
    assert result.ok and result.route == "pull-request" and result.pull_request, result.message
    number = int(result.pull_request)
    wait_until(lambda: LABEL_NEEDS_REVIEW in [lb.name for lb in world.repo().get_issue(number).get_labels()], WAIT,
               f"#{number} waiting for review")
    return number
