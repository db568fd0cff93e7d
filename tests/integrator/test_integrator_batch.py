"""Merging in batches: the pure plan (`bot.integrator.batch`) by tables and a hypothesis
property over whole runs, and `merge_ready` against localhub over HTTP and a real Redis:
K pull requests in one push, each reported merged by the forge with its change on `main`
exactly once; a push refused because `main` moved is built again; a member whose head moved
is left out and decided again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.integrator import jobs
from bot.integrator.batch import (
    AfterPush,
    LeftOut,
    PushAnswer,
    Ready,
    after_push,
    members,
    merged_by_push,
)
from bot.integrator.state import Tuning
from bot.integrator.workspace import Workspace
from bot.redis_keys import ready_key
from localhub.server import LocalhubServer
from tests.conftest import git
from tests.integrator.test_integrator_jobs import FACTS, FACTS_TEXT, REPO, World, built_world, drain

A, B, C = "a" * 40, "b" * 40, "c" * 40


# ------------------------------------------------------------------------------------ tables
@pytest.mark.parametrize(("ready", "heads", "merged", "taken", "left"), [
    ([Ready(2, A), Ready(1, B)], {1: B, 2: A}, [], [1, 2], {}),  # oldest first
    ([Ready(1, A)], {1: B}, [], [], {1: LeftOut.HEAD_MOVED}),  # never by an old sha
    ([Ready(1, A)], {1: None}, [], [], {1: LeftOut.GONE}),
    ([Ready(1, A)], {}, [], [], {1: LeftOut.GONE}),
    ([Ready(1, A), Ready(2, B)], {1: A, 2: B}, [1], [2], {1: LeftOut.MERGED}),  # never twice
    ([Ready(1, A), Ready(1, C)], {1: C}, [], [1], {}),  # the latest entry of a number counts
    ([Ready(1, A.upper())], {1: A}, [], [1], {}),
])
def test_who_goes_into_the_batch(ready: list[Ready], heads: dict[int, str | None], merged: list[int],
                                 taken: list[int], left: dict[int, LeftOut]) -> None:
    got, why = members(ready, heads, merged)
    assert [r.number for r in got] == taken
    assert why == left


@pytest.mark.parametrize(("answer", "rebuilds", "then"), [
    (PushAnswer.PUSHED, 0, AfterPush.DONE),
    (PushAnswer.MOVED, 0, AfterPush.REBUILD),
    (PushAnswer.MOVED, 2, AfterPush.REBUILD),
    (PushAnswer.MOVED, 3, AfterPush.ONE_BY_ONE),
    (PushAnswer.REFUSED, 0, AfterPush.ONE_BY_ONE),
])
def test_what_a_push_answer_means(answer: PushAnswer, rebuilds: int, then: AfterPush) -> None:
    assert after_push(answer, rebuilds) is then


def test_only_a_pushed_chain_is_reported_merged() -> None:
    chain = [(1, A, "m1"), (2, B, "m2")]
    assert merged_by_push(chain, "m2") == {1: "m1", 2: "m2"}
    assert merged_by_push(chain, None) == {}
    assert merged_by_push(chain, "m1") == {}  # not the chain that was built
    assert merged_by_push([], "m2") == {}


# ------------------------------------------------------------------------------------ property
@st.composite
def runs(draw: st.DrawFn) -> list[tuple[str, int]]:
    """Steps of a run: a pull request marked ready at its head, its head moved, a batch whose
    push lands or is refused."""
    step = st.one_of(st.tuples(st.just("ready"), st.integers(1, 5)), st.tuples(st.just("move"), st.integers(1, 5)),
                     st.tuples(st.sampled_from(["push", "moved", "refused"]), st.just(0)))
    return draw(st.lists(step, max_size=40))


@settings(max_examples=300, deadline=None)
@given(runs())
def test_never_a_double_merge_never_merged_without_its_change(steps: list[tuple[str, int]]) -> None:
    """A model forge: `main` is the set of commits it holds; a pull request is marked merged
    when its head reaches `main`. Whatever happens in between, no pull request is merged
    twice, none is marked merged unless its head is on `main`, and no head that moved after it
    was validated reaches `main` through a batch."""
    heads = {n: f"{n}-0" for n in range(1, 6)}
    ready: dict[int, Ready] = {}
    main: set[str] = set()
    merged: dict[int, str] = {}
    times: dict[int, int] = {}
    for kind, number in steps:
        if kind == "ready" and number not in merged:
            ready[number] = Ready(number, heads[number])
        elif kind == "move" and number not in merged:
            version = int(heads[number].split("-")[1]) + 1
            heads[number] = f"{number}-{version}"
        elif kind in ("push", "moved", "refused"):
            taken, left = members(ready.values(), heads, merged)
            for gone in left:
                ready.pop(gone, None)
            chain = [(r.number, r.sha, f"merge-{r.number}-{r.sha}") for r in taken]
            answer = {"push": PushAnswer.PUSHED, "moved": PushAnswer.MOVED, "refused": PushAnswer.REFUSED}[kind]
            if after_push(answer, 0) is AfterPush.DONE and chain:
                for n, sha, commit in chain:
                    assert sha == heads[n]  # only the validated head, and it is still the head
                    main.update({sha, commit})
                for n, commit in merged_by_push(chain, chain[-1][2]).items():
                    times[n] = times.get(n, 0) + 1
                    merged[n] = commit
                    ready.pop(n, None)
    assert all(count == 1 for count in times.values())
    for n, commit in merged.items():
        assert commit in main and commit.endswith(next(sha for sha in main if sha.startswith(f"{n}-")))


# ------------------------------------------------------------------------------------ localhub
@pytest.fixture
def world(localhub: LocalhubServer, tmp_path: Path, redis_url: str) -> Iterator[World]:
    with built_world(localhub, tmp_path, redis_url) as w:
        w.ctx.tuning = Tuning(max_attempts=12, wait_base=0.05, wait_cap=0.5, merge_by_push=True)
        yield w


def bullets(k: int) -> list[str]:
    return [f"- batch item {i}" for i in range(k)]


def open_overlapping(world: World, k: int) -> list[tuple[int, str, str]]:
    """K dreams that each add a bullet at the end of the same file: every pair conflicts."""
    return [world.open_dream({FACTS: FACTS_TEXT + line + "\n"}) for line in bullets(k)]


def integrator_pushes(world: World) -> int:
    """Pushes to main by the integrator's account, as localhub's repository activity records them."""
    client = world.client()
    resp = client._requester.requestJsonAndCheck("GET", f"/repos/{REPO}/activity",
                                                 parameters={"ref": "refs/heads/main", "per_page": 100})
    return sum(1 for a in resp[1] if a["activity_type"] in ("push", "force_push", "merge_queue_merge")
               and a["actor"]["login"] == "alice" and a["after"] != a["before"])


def test_k_pull_requests_merge_in_one_push_each_marked_merged_with_its_change_once(world: World) -> None:
    dreams = open_overlapping(world, 4)
    before = world.main_sha()
    pushes_before = integrator_pushes(world)
    for number, _, _ in dreams:
        world.integrate(number)  # validated and marked ready: nothing merged, no status written
        assert not world.pull(number).merged
    assert world.ctx.redis.hlen(ready_key(REPO)) == 4
    with world.subscribe() as sub:
        summary = jobs.merge_ready(REPO, context=world.ctx)
        events = drain(sub)
    assert "4" in summary
    assert integrator_pushes(world) == pushes_before + 1
    git(world.clone, "fetch", "-q", "origin")
    first_parent = git(world.clone, "rev-list", "--first-parent", f"{before}..origin/main").split()
    assert len(first_parent) == 4
    text = world.main_file(FACTS)
    for line in bullets(4):
        assert text.count(line) == 1
    for number, head, _ in dreams:
        pull = world.pull(number)
        assert pull.merged and pull.state == "closed"
        assert pull.merge_commit_sha in first_parent  # the merge commit that brought it, as GitHub says
        assert git(world.clone, "rev-parse", f"{pull.merge_commit_sha}^2").strip() == head
        assert world.status(head) == (None, None)  # nobody reads a status on a pull request merged at once
        assert world.comments(number) == []
    assert len(events) == 1 and events[0].sha == first_parent[0] and events[0].before == before
    assert world.ctx.redis.hlen(ready_key(REPO)) == 0
    # The forge's `closed` deliveries bring each job back: it finds nothing left to do.
    for number, _, _ in dreams:
        with world.subscribe() as sub:
            world.integrate(number)
            assert drain(sub, 0.2) == []
    assert world.merges_on_main() == 4


def test_a_push_refused_because_main_moved_is_built_again(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    dreams = open_overlapping(world, 2)
    for number, _, _ in dreams:
        world.integrate(number)
    real = Workspace.push
    moved: list[str] = []

    def push_after_a_person(self: Workspace, sha: str, branch: str) -> bool:
        if not moved:  # a person pushes to main between the batch's fetch and its push
            moved.append(world.commit("main", {"reference/other.md": "---\ndescription: Other.\n---\n# Other\n"}))
        return real(self, sha, branch)

    monkeypatch.setattr(Workspace, "push", push_after_a_person)
    jobs.merge_ready(REPO, context=world.ctx)
    git(world.clone, "fetch", "-q", "origin")
    assert git(world.clone, "merge-base", "--is-ancestor", moved[0], "origin/main") == ""  # kept, not forced over
    for number, _, _ in dreams:
        assert world.pull(number).merged
    assert "reference/other.md" in git(world.clone, "ls-tree", "-r", "--name-only", "origin/main")


def test_a_member_whose_head_moved_is_left_out_and_decided_again(world: World) -> None:
    (first, _, _), (second, _, dream_id) = open_overlapping(world, 2)
    world.integrate(first)
    world.integrate(second)
    branch = f"memrepo/dream/{dream_id}"
    git(world.clone, "fetch", "-q", "origin")
    moved = world.commit(branch, {"reference/more.md": "---\ndescription: More.\n---\n# More\n"}, base=branch,
                         message=f"Dream {dream_id}\n\nDream-ID: {dream_id}\n", author=f"{dream_id}@dreams.memrepo")
    jobs.merge_ready(REPO, context=world.ctx)
    assert world.pull(first).merged
    pull = world.pull(second)
    assert not pull.merged and pull.head_sha == moved
    git(world.clone, "fetch", "-q", "origin")
    assert "reference/more.md" not in git(world.clone, "ls-tree", "-r", "--name-only", "origin/main")
    assert world.ctx.redis.hlen(ready_key(REPO)) == 0
    world.integrate(second)  # decided again on its new head, then merged by the next batch
    jobs.merge_ready(REPO, context=world.ctx)
    assert world.pull(second).merged
    git(world.clone, "fetch", "-q", "origin")
    assert "reference/more.md" in git(world.clone, "ls-tree", "-r", "--name-only", "origin/main")


def test_a_push_the_forge_refuses_falls_back_to_the_merge_api(world: World, caplog: pytest.LogCaptureFixture) -> None:
    """main requires pull requests (localhub declines the push as GitHub's pre-receive hook
    does): the batch is merged one by one through the merge API, never forced, the operator
    is told once how to let the integrator bypass the rule, and the next pull request goes
    straight to the merge API."""
    import requests

    from bot.redis_keys import push_refused_key
    from tests.conftest import operator_headers

    requests.post(f"{world.server.url}/_localhub/repos/{REPO}/protection",
                  json={"branch": "main", "pull_request": True},
                  headers=operator_headers(world.server), timeout=10).raise_for_status()
    files = [{f"reference/item-{i}.md": f"---\ndescription: Item {i}.\n---\n# Item {i}\n"} for i in range(3)]
    (first, _, _), (second, _, _) = (world.open_dream(files[0]), world.open_dream(files[1]))
    before = world.main_sha()
    world.integrate(first)
    world.integrate(second)
    with caplog.at_level("WARNING", logger="memrepo.integrator"):
        jobs.merge_ready(REPO, context=world.ctx)
    said = [r.getMessage() for r in caplog.records if "does not let the integrator push" in r.getMessage()]
    assert len(said) == 1 and "protected branch hook declined" in said[0] and "bypass" in said[0]
    assert world.ctx.redis.exists(push_refused_key(REPO))
    for number in (first, second):  # back to its own job, which merges it through the merge API
        assert not world.pull(number).merged
        world.integrate(number)
        assert world.pull(number).merged
    git(world.clone, "fetch", "-q", "origin")
    assert git(world.clone, "merge-base", "--is-ancestor", before, "origin/main") == ""  # never forced
    third, _, _ = world.open_dream(files[2])
    world.integrate(third)  # the merge API at once: nothing marked ready
    assert world.pull(third).merged and world.ctx.redis.hlen(ready_key(REPO)) == 0


def test_a_batch_reads_no_status_and_a_closed_delivery_reads_nothing(world: World) -> None:
    """Merging by push, a clean dream's job reads no commit status (nobody wrote one), and
    the job its `closed` delivery brings after the batch asks the forge nothing."""
    (number, _, _) = world.open_dream({"reference/read.md": "---\ndescription: Read.\n---\n# Read\n"})
    exchanges = world.server.app.extensions["conformance"].exchanges

    def asked(since: int) -> list[str]:
        return [f"{e.method} {e.path}" for e in list(exchanges)[since:]]

    start = len(exchanges)
    world.integrate(number)
    assert not [a for a in asked(start) if a.endswith("/status") or "/statuses/" in a]
    jobs.merge_ready(REPO, context=world.ctx)
    assert world.pull(number).merged
    after_batch = len(exchanges)
    world.integrate(number)  # the `closed` delivery's job
    assert asked(after_batch) == []


def test_a_pull_request_that_waits_for_a_person_reads_its_status_before_writing_one(world: World) -> None:
    """Merging by push, the status is still read when a decision would write one: a pending
    status already set is not written again on the next run."""
    number, head = world.open_untrusted_edit({FACTS: FACTS_TEXT + "- lives at 9 Harbour Road, Leith\n"})
    world.integrate(number)
    assert world.status(head) == ("pending", "waiting for review")
    exchanges = world.server.app.extensions["conformance"].exchanges
    start = len(exchanges)
    world.integrate(number)
    again = [f"{e.method} {e.path}" for e in list(exchanges)[start:]]
    assert any(a.startswith("GET") and a.endswith("/status") for a in again)
    assert not [a for a in again if a.startswith("POST")]
    assert world.status(head) == ("pending", "waiting for review") and not world.pull(number).merged


def git_requests(world: World, account: str = "alice") -> int:
    """What localhub counted of `account`'s git transport requests (its own count by account)."""
    import requests

    from tests.conftest import operator_headers

    resp = requests.get(f"{world.server.url}/_localhub/requests", headers=operator_headers(world.server), timeout=10)
    resp.raise_for_status()
    return int(resp.json()["by_account"].get(account, {}).get("git", 0))


def test_a_burst_fetches_the_heads_of_the_waiting_jobs_in_one_git_request(world: World) -> None:
    """Merging by push, the first job of a burst fetches its head with those of the other
    pull requests whose jobs wait, in one git request; the jobs after it, within seconds of
    that fetch of main, fetch nothing (a job after that fetches main again), and the batch
    still fetches main and every head afresh and merges each exactly once."""
    from bot.queue import enqueue_integrate, waiting_pulls
    from bot.redis_keys import fresh_base_key

    dreams = open_overlapping(world, 4)
    numbers = [number for number, _, _ in dreams]
    for number in numbers:
        enqueue_integrate(world.ctx.redis, REPO, number)  # the webhook deliveries' jobs, waiting
    assert waiting_pulls(world.ctx.redis, REPO) == numbers
    before = git_requests(world)
    world.integrate(numbers[0])
    one_fetch = git_requests(world) - before  # one fetch: the refs, then the pack (protocol v2)
    assert 1 <= one_fetch <= 2
    for number in numbers[1:]:
        world.integrate(number)
    assert git_requests(world) == before + one_fetch  # their heads came with the first job's fetch
    assert world.ctx.redis.hlen(ready_key(REPO)) == 4
    world.ctx.redis.delete(fresh_base_key(REPO, "main"))  # the fetch of main is more than a few seconds old
    world.integrate(numbers[0])
    assert git_requests(world) > before + one_fetch  # main is asked for again before anything is decided on it
    jobs.merge_ready(REPO, context=world.ctx)
    text = world.main_file(FACTS)
    for number, line in zip(numbers, bullets(4), strict=True):
        assert world.pull(number).merged and text.count(line) == 1
    assert world.merges_on_main() == 4
