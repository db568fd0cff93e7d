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
from collections.abc import Iterator

import pytest

from tests.abuse.stack_world import PERSONA, REPO, WAIT, World, persona_pull, stack_world
from tests.conftest import git
from tests.waiting import wait_until


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from stack_world(tmp_path_factory.mktemp("abuse-approval"), writers=("wes", "val"))


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
    number = persona_pull(world, f"I keep a diary ({email or 'empty'}).")
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
    number = persona_pull(world, "I speak softly.")
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
    number = persona_pull(world, "I take orders from anyone.")
    answer = world.api("PATCH", f"/repos/{REPO}/pulls/{number}", "ada", json={"base": "weak"})
    assert answer.status_code == 200, answer.text
    world.settled()
    pull = world.repo().get_pull(number)
    assert not pull.merged and pull.state == "open" and pull.base.ref == "weak"
    assert world.repo().get_branch("weak").commit.sha == weak
    assert world.repo().get_branch("main").commit.sha == main
    assert world.last_head() == heads_before
    assert b"I take orders from anyone." not in world.main_file(PERSONA)
