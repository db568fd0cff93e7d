"""The forge client against localhub over real HTTP (and git): pull requests from open to
merge, the merge outcomes, comments, labels, statuses, reviews, refs and files, App
credentials; failures injected through localhub's faults (a merge that succeeds but answers
500 is not merged twice; reads are retried; rate limits are waited out). `responses` mocks
only GitHub answers localhub cannot give (secondary rate-limit and abuse bodies, a GHE URL)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import github
import pytest
import requests
import responses

from bot.forge.client import ForgeClient
from bot.forge.credentials import AppCredentials, TokenCredentials
from bot.forge.errors import (
    Conflict,
    ForgeConfigError,
    ForgeError,
    NotFound,
    RateLimited,
    Unauthorized,
    Unavailable,
    UncertainWrite,
)
from bot.forge.retry import MergeOutcome, RetryPolicy
from bot.forge.shapes import NewPullRequest, StatusUpdate
from localhub.server import LocalhubServer
from tests.conftest import arm_fault, fault_hits, git, localhub_app, localhub_token, operator_headers
from tests.memory_forge import FAST, REPO
from tests.waiting import wait_until


@dataclass
class World:
    """A localhub with alice/memory, a clone to push branches from, and helpers to arm faults
    and see what localhub answered."""

    server: LocalhubServer
    token: str
    clone: Path

    def client(self, **kw: Any) -> ForgeClient:
        kw.setdefault("policy", FAST)
        kw.setdefault("min_write_interval", 0.0)
        kw.setdefault("timeout", 10)
        return ForgeClient(REPO, TokenCredentials(self.token), base_url=self.server.api_url, **kw)

    def push(self, branch: str, files: dict[str, str], base: str = "main") -> str:
        """A commit on `branch` (made from `base`) changing `files`, pushed; its sha."""
        git(self.clone, "fetch", "-q", "origin")
        git(self.clone, "checkout", "-q", "-B", branch, f"origin/{base}")
        for name, text in files.items():
            (self.clone / name).write_text(text)
        git(self.clone, "add", "-A")
        git(self.clone, "commit", "-qm", f"{branch}: edit {', '.join(files)}")
        git(self.clone, "push", "-q", "-f", "origin", branch)
        return git(self.clone, "rev-parse", "HEAD").strip()

    def merges_on(self, branch: str = "main") -> int:
        git(self.clone, "fetch", "-q", "origin")
        return int(git(self.clone, "rev-list", "--count", "--merges", f"origin/{branch}").strip())

    def arm(self, **spec: Any) -> int:
        return arm_fault(self.server, **spec)

    def hits(self, fault_id: int) -> int:
        return fault_hits(self.server, fault_id)

    def exchanges(self) -> list[Any]:
        """Every /api/v3 answer localhub gave so far, in the order they completed."""
        return list(self.server.app.extensions["conformance"].exchanges)

    def open(self, client: ForgeClient, branch: str, files: dict[str, str], **kw: Any) -> tuple[int, str]:
        sha = self.push(branch, files)
        pr = client.open_pull_request(NewPullRequest(head=branch, base="main", title=f"Update {branch}", **kw))
        return pr.number, sha


@pytest.fixture
def world(localhub: LocalhubServer, tmp_path: Path) -> World:
    token = localhub_token(localhub, "alice")
    gh = github.Github(auth=github.Auth.Token(token), base_url=localhub.api_url, retry=None)
    gh.get_user().create_repo("memory", auto_init=True)
    clone = tmp_path / "clone"
    url = localhub.url.replace("http://", f"http://x-access-token:{token}@") + f"/{REPO}.git"
    git(tmp_path, "clone", "-q", url, str(clone))
    return World(localhub, token, clone)


def _path(number: int, tail: str = "") -> str:
    return f"/api/v3/repos/{REPO}/pulls/{number}{tail}"


class SleepClock:
    """A client's clock that moves only when the client sleeps: its retry budget is spent at
    once, and what it waited is in `slept`."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


# ------------------------------------------------------------------------------------ pull requests
def test_open_read_wait_and_merge_with_the_right_sha(world: World) -> None:
    client = world.client()
    main_sha = client.get_ref("main").sha
    head_sha = world.push("note", {"note.md": "remember this\n"})
    opened = client.open_pull_request(NewPullRequest(head="note", base="main", title="Add a note",
                                                     body="Why: to remember.", labels=("memory",)))
    pr = client.get_pull_request(opened.number)
    assert (pr.number, pr.state, pr.merged, pr.draft) == (opened.number, "open", False, False)
    assert (pr.head_ref, pr.head_sha, pr.base_ref, pr.base_sha) == ("note", head_sha, "main", main_sha)
    assert (pr.title, pr.body, pr.author, pr.labels) == ("Add a note", "Why: to remember.", "alice", ("memory",))
    assert pr.url.endswith(f"/{REPO}/pull/{pr.number}")
    assert opened.labels == ("memory",)

    ready = client.wait_for_mergeability(pr.number, timeout=20)
    assert ready.mergeable is True
    result = client.merge(pr.number, head_sha, title="Merge the note", message="memrepo integrator")
    assert result.outcome is MergeOutcome.MERGED and result.merged
    assert result.sha and result.status == 200
    assert client.is_merged(pr.number) is True
    after = client.get_pull_request(pr.number)
    assert (after.merged, after.state, after.merge_commit_sha) == (True, "closed", result.sha)
    assert client.get_ref("refs/heads/main").sha == result.sha
    assert client.commit_parents(result.sha) == (main_sha, head_sha)  # where main was, then the branch
    assert client.read_file("note.md", "main").text == "remember this\n"
    assert world.merges_on("main") == 1


def test_a_draft_pull_request_is_reported_as_draft(world: World) -> None:
    client = world.client()
    number, _ = world.open(client, "draft", {"d.md": "x\n"}, draft=True)
    assert client.get_pull_request(number).draft is True


def test_merge_with_a_wrong_sha_is_head_moved_and_nothing_merges(world: World) -> None:
    client = world.client()
    number, head_sha = world.open(client, "note", {"note.md": "a\n"})
    client.wait_for_mergeability(number, timeout=20)
    result = client.merge(number, "0" * 40)
    assert result.outcome is MergeOutcome.HEAD_MOVED and result.outcome.reread
    assert result.status == 409
    assert "0000000000" in result.detail
    assert client.is_merged(number) is False
    assert client.merge(number, head_sha).outcome is MergeOutcome.MERGED


def test_merging_twice_is_already_merged_with_the_same_commit(world: World) -> None:
    client = world.client()
    number, head_sha = world.open(client, "note", {"note.md": "a\n"})
    client.wait_for_mergeability(number, timeout=20)
    first = client.merge(number, head_sha)
    second = client.merge(number, head_sha)
    assert first.outcome is MergeOutcome.MERGED
    assert second.outcome is MergeOutcome.ALREADY_MERGED and second.merged
    assert second.sha == first.sha
    assert world.merges_on("main") == 1


def test_a_conflict_is_not_mergeable(world: World) -> None:
    client = world.client()
    one, one_sha = world.open(client, "one", {"README.md": "one\n"})
    two, two_sha = world.open(client, "two", {"README.md": "two\n"})
    client.wait_for_mergeability(one, timeout=20)
    assert client.merge(one, one_sha).outcome is MergeOutcome.MERGED
    wait_until(lambda: client.wait_for_mergeability(two, timeout=20).mergeable is False, 20,
               "the second pull request's mergeability, recomputed after main moved")
    result = client.merge(two, two_sha)
    assert result.outcome is MergeOutcome.NOT_MERGEABLE and not result.outcome.reread
    assert result.status == 405
    assert client.is_merged(two) is False


def test_list_open_pull_requests_by_label_and_by_commit(world: World) -> None:
    client = world.client()
    a, a_sha = world.open(client, "a", {"a.md": "a\n"}, labels=("memory",))
    b, _ = world.open(client, "b", {"b.md": "b\n"})
    assert [pr.number for pr in client.list_open_pull_requests("memory")] == [a]
    assert {pr.number for pr in client.list_open_pull_requests()} == {a, b}
    assert [pr.number for pr in client.pull_requests_for_commit(a_sha)] == [a]


def test_comment_labels_status_and_reviews(world: World, localhub: LocalhubServer) -> None:
    client = world.client()
    number, head_sha = world.open(client, "note", {"note.md": "a\n"})

    comment = client.comment(number, "Validation passed.")
    assert (comment.body, comment.author) == ("Validation passed.", "alice")
    assert comment.id > 0

    assert set(client.add_labels(number, ["memory", "needs-review"])) == {"memory", "needs-review"}
    assert client.remove_label(number, "needs-review") is True
    assert client.remove_label(number, "needs-review") is False
    assert client.get_pull_request(number).labels == ("memory",)

    status = client.set_status(head_sha, StatusUpdate("success", "memrepo/validate", "policy ok",
                                                      "https://example.com/runs/1"))
    assert (status.context, status.state, status.description) == ("memrepo/validate", "success", "policy ok")
    client.set_status(head_sha, StatusUpdate("pending", "memrepo/review"))
    combined = client.combined_status(head_sha)
    assert (combined.state, combined.sha) == ("pending", head_sha)
    assert {(s.context, s.state) for s in combined.statuses} == {("memrepo/validate", "success"),
                                                                 ("memrepo/review", "pending")}
    assert client.combined_status("note").sha == head_sha

    bob = github.Github(auth=github.Auth.Token(localhub_token(localhub, "bob")), base_url=localhub.api_url, retry=None)
    bob.get_repo(REPO).get_pull(number).create_review(body="Looks right.", event="APPROVE")
    reviews = client.list_reviews(number)
    assert [(r.author, r.state, r.commit_id, r.body) for r in reviews] == [("bob", "APPROVED", head_sha,
                                                                            "Looks right.")]


def test_compare_refs_update_branch_and_files(world: World) -> None:
    client = world.client()
    number, head_sha = world.open(client, "note", {"note.md": "a\n"})
    main_sha = client.get_ref("main").sha
    comparison = client.compare("main", "note")
    assert (comparison.status, comparison.ahead_by, comparison.behind_by) == ("ahead", 1, 0)
    assert comparison.commits == (head_sha,) and comparison.merge_base_sha == main_sha

    # main moves on; the pull request's branch is brought up to date by GitHub.
    moved = world.push("main", {"other.md": "b\n"})
    assert client.compare("main", "note").status == "diverged"
    assert client.update_branch(number, head_sha) is True
    wait_until(lambda: client.get_pull_request(number).head_sha != head_sha, 20, "GitHub's update of the branch")
    assert client.compare("main", "note").behind_by == 0
    with pytest.raises(Conflict):
        client.update_branch(number, head_sha)  # the head is no longer head_sha

    # Refs: fast-forward only unless forced.
    world.push("scratch", {"s.md": "s\n"})
    with pytest.raises(Conflict) as refused:
        client.update_ref("scratch", moved)
    assert "refs/heads/scratch" in str(refused.value)
    assert client.update_ref("heads/scratch", moved, force=True).sha == moved
    assert client.get_ref("scratch").sha == moved

    assert client.read_file("other.md", "main").content == b"b\n"
    assert client.read_file("note.md", head_sha).text == "a\n"
    with pytest.raises(NotFound):
        client.read_file("other.md", main_sha)


# ------------------------------------------------------------------------------------ errors
def test_errors_are_typed_and_name_the_operation_never_the_token(world: World) -> None:
    client = world.client()
    with pytest.raises(NotFound) as missing:
        client.get_pull_request(999)
    assert "read pull request #999 of alice/memory" in str(missing.value)
    assert "HTTP 404" in str(missing.value) and missing.value.status == 404
    with pytest.raises(NotFound):
        client.read_file("nothing.md", "main")

    wrong = ForgeClient(REPO, TokenCredentials("ghp_wrong_token_123"), base_url=world.server.api_url, policy=FAST)
    with pytest.raises(Unauthorized) as refused:
        wrong.get_pull_request(1)
    assert refused.value.status == 401
    assert "ghp_wrong_token_123" not in str(refused.value) and world.token not in str(refused.value)

    with pytest.raises(ForgeConfigError):
        ForgeClient("no-slash", TokenCredentials("x"))
    with pytest.raises(ForgeConfigError):
        ForgeClient(REPO, TokenCredentials(""))
    with pytest.raises(ForgeConfigError):
        client.merge(1, "0" * 40, method="octopus")


def test_an_unreachable_forge_gives_up_in_bounded_time_and_a_merge_is_not_sent(world: World) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    policy = RetryPolicy(max_total_seconds=1.0, backoff_base=0.05, backoff_cap=0.2)
    clock = SleepClock()
    client = ForgeClient(REPO, TokenCredentials(world.token), base_url=f"http://127.0.0.1:{port}/api/v3",
                         policy=policy, min_write_interval=0, clock=clock, sleep=clock.sleep)
    with pytest.raises(Unavailable) as gone:
        client.get_pull_request(1)
    assert clock.slept and sum(clock.slept) <= policy.max_total_seconds  # its waits stay within the budget
    assert "could not connect" in str(gone.value)
    assert f"gave up after {len(clock.slept) + 1} attempts" in str(gone.value)
    result = client.merge(1, "0" * 40)
    assert result.outcome is MergeOutcome.NOT_MERGED and result.status is None
    assert "never reached GitHub" in result.detail


# ------------------------------------------------------------------------------------ GitHub App
def _app(world: World) -> dict[str, Any]:
    return localhub_app(world.server, "alice")


def _token_grants(world: World) -> int:
    return sum(1 for e in world.exchanges() if e.method == "POST" and e.path.endswith("/access_tokens"))


def test_app_credentials_find_the_installation_and_act_as_the_bot(world: World) -> None:
    app = _app(world)
    client = ForgeClient(REPO, AppCredentials(app["id"], app["private_key"]), base_url=world.server.api_url,
                         policy=FAST, min_write_interval=0)
    number, _ = world.open(client, "note", {"note.md": "a\n"})
    assert client.comment(number, "hello").author == "memrepo[bot]"
    assert client.get_pull_request(number).author == "memrepo[bot]"
    assert _token_grants(world) == 1  # one installation token serves every call until near its expiry
    assert any(e.path == f"/api/v3/repos/{REPO}/installation" for e in world.exchanges())


def test_app_installation_tokens_are_refreshed_before_expiry(world: World) -> None:
    app = _app(world)
    installation = requests.post(f"{world.server.url}/_localhub/apps/{app['id']}/installations",
                                 json={"account": "alice"}, headers=operator_headers(world.server),
                                 timeout=10).json()["id"]
    # Tokens live an hour; a margin above that makes every call find its token too close to expiry.
    client = ForgeClient(REPO, AppCredentials(app["id"], app["private_key"], installation),
                         base_url=world.server.api_url, policy=FAST, min_write_interval=0,
                         token_refresh_margin=4000)
    number, _ = world.open(client, "note", {"note.md": "a\n"})
    client.get_pull_request(number)
    client.get_pull_request(number)
    assert _token_grants(world) == 3
    assert not any(e.path.endswith("/installation") for e in world.exchanges())


def test_a_broken_app_key_is_a_configuration_error(world: World) -> None:
    client = ForgeClient(REPO, AppCredentials(1, "not a pem"), base_url=world.server.api_url, policy=FAST)
    with pytest.raises(ForgeConfigError) as bad:
        client.get_pull_request(1)
    assert "not a pem" not in str(bad.value)


# ------------------------------------------------------------------------------------ faults: merges
def test_merge_applied_but_answered_500_is_merged_once(world: World) -> None:
    client = world.client()
    number, head_sha = world.open(client, "note", {"note.md": "a\n"})
    client.wait_for_mergeability(number, timeout=20)
    fault = world.arm(method="PUT", path=f"/repos/{REPO}/pulls/{number}/merge", status=500, apply=True, times=5)
    result = client.merge(number, head_sha)
    assert result.outcome is MergeOutcome.MERGED and result.status == 500
    assert result.sha == client.get_pull_request(number).merge_commit_sha
    assert world.hits(fault) == 1  # sent once: a second PUT would have met the fault again
    assert world.merges_on("main") == 1


def test_merge_answered_500_without_effect_is_not_merged_and_not_resent(world: World) -> None:
    client = world.client()
    number, head_sha = world.open(client, "note", {"note.md": "a\n"})
    client.wait_for_mergeability(number, timeout=20)
    main_before = client.get_ref("main").sha
    fault = world.arm(method="PUT", path=f"/repos/{REPO}/pulls/{number}/merge", status=500, times=5)
    result = client.merge(number, head_sha)
    assert result.outcome is MergeOutcome.NOT_MERGED and result.outcome.reread
    assert "HTTP 500" in result.detail
    assert world.hits(fault) == 1
    assert client.is_merged(number) is False
    assert client.get_ref("main").sha == main_before
    assert world.merges_on("main") == 0


def test_pygithubs_default_retry_would_resend_the_merge(world: World) -> None:
    """Why the client turns PyGithub's retry off: with its default, a merge that worked but
    answered 500 is sent again, and the caller is told it failed although it merged."""
    client = world.client()
    number, head_sha = world.open(client, "note", {"note.md": "a\n"})
    client.wait_for_mergeability(number, timeout=20)
    world.arm(method="PUT", path=f"/repos/{REPO}/pulls/{number}/merge", status=500, apply=True, times=1)
    naive = github.Github(auth=github.Auth.Token(world.token), base_url=world.server.api_url)
    with pytest.raises(github.GithubException):
        naive.get_repo(REPO).get_pull(number).merge(sha=head_sha)
    puts = [e for e in world.exchanges() if e.method == "PUT" and e.path == _path(number, "/merge")]
    assert len(puts) == 2
    assert client.is_merged(number) is True


def test_a_timeout_on_merge_asks_github_before_anything_else(world: World) -> None:
    client = world.client(timeout=1)
    number, head_sha = world.open(client, "note", {"note.md": "a\n"})
    client.wait_for_mergeability(number, timeout=20)
    seen = len(world.exchanges())
    world.arm(method="PUT", path=f"/repos/{REPO}/pulls/{number}/merge", status=500, delay_ms=2500, times=5)
    result = client.merge(number, head_sha)
    assert result.outcome is MergeOutcome.NOT_MERGED and result.status is None
    assert "no answer" in result.detail
    wait_until(lambda: any(e.method == "PUT" for e in world.exchanges()[seen:]), 10,
               "the delayed answer to the merge (it completes last)")
    after = world.exchanges()[seen:]
    assert [e.method for e in after].count("PUT") == 1
    others = [(e.method, e.path) for e in after if e.method != "PUT"]
    assert others[0] == ("GET", _path(number, "/merge"))
    assert world.merges_on("main") == 0


def test_a_timeout_on_a_merge_that_happened_is_merged(world: World) -> None:
    client = world.client(timeout=1)
    number, head_sha = world.open(client, "note", {"note.md": "a\n"})
    client.wait_for_mergeability(number, timeout=20)
    seen = len(world.exchanges())
    fault = world.arm(method="PUT", path=f"/repos/{REPO}/pulls/{number}/merge", status=500, delay_ms=2500,
                      apply=True, times=5)
    result = client.merge(number, head_sha)
    assert result.outcome is MergeOutcome.MERGED and result.sha
    assert next((e.method, e.path) for e in world.exchanges()[seen:]) == ("GET", _path(number, "/merge"))
    assert world.hits(fault) == 1
    assert world.merges_on("main") == 1


def test_when_the_merge_check_fails_too_the_outcome_is_unknown(world: World) -> None:
    client = world.client(policy=RetryPolicy(max_total_seconds=1.0, backoff_base=0.05, backoff_cap=0.2))
    number, head_sha = world.open(client, "note", {"note.md": "a\n"})
    client.wait_for_mergeability(number, timeout=20)
    world.arm(method="PUT", path=f"/repos/{REPO}/pulls/{number}/merge", status=502, times=1)
    world.arm(method="GET", path=f"/repos/{REPO}/pulls/{number}/merge", status=503, times=1000)
    result = client.merge(number, head_sha)
    assert result.outcome is MergeOutcome.UNKNOWN and result.outcome.reread
    assert "HTTP 502" in result.detail and "HTTP 503" in result.detail


# ------------------------------------------------------------------------------------ faults: reads, writes
def test_a_502_on_a_read_is_retried(world: World) -> None:
    client = world.client()
    number, _ = world.open(client, "note", {"note.md": "a\n"})
    fault = world.arm(method="GET", path=f"/repos/{REPO}/pulls/{number}", status=502, body="<html>502</html>")
    assert client.get_pull_request(number).number == number
    assert world.hits(fault) == 1


def test_a_read_that_keeps_failing_gives_up_within_the_budget(world: World) -> None:
    policy = RetryPolicy(max_total_seconds=1.0, backoff_base=0.05, backoff_cap=0.2)
    clock = SleepClock()
    client = world.client(policy=policy, clock=clock, sleep=clock.sleep)
    fault = world.arm(method="GET", path=f"/repos/{REPO}/git/ref/*", status=503, times=1000)
    with pytest.raises(Unavailable) as down:
        client.get_ref("main")
    assert clock.slept and sum(clock.slept) <= policy.max_total_seconds  # its waits stay within the budget
    assert "HTTP 503" in str(down.value) and "read ref refs/heads/main of alice/memory" in str(down.value)
    assert world.hits(fault) == len(clock.slept) + 1 >= 2


def test_primary_rate_limit_waits_for_the_reset(world: World) -> None:
    client = world.client()
    number, _ = world.open(client, "note", {"note.md": "a\n"})
    reset = int(time.time()) + 1
    fault = world.arm(method="GET", path=f"/repos/{REPO}/pulls/{number}", status=403,
                      body={"message": "API rate limit exceeded for user ID 1001.",
                            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"},
                      headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)})
    assert client.get_pull_request(number).number == number
    assert time.time() >= reset
    assert world.hits(fault) == 1


def test_429_retry_after_is_obeyed(world: World) -> None:
    client = world.client()
    number, _ = world.open(client, "note", {"note.md": "a\n"})
    fault = world.arm(method="GET", path=f"/repos/{REPO}/pulls/{number}", status=429, headers={"Retry-After": "1"})
    start = time.monotonic()
    assert client.get_pull_request(number).number == number
    assert time.monotonic() - start >= 1.0
    assert world.hits(fault) == 1


def test_a_comment_whose_answer_is_lost_is_not_sent_again(world: World) -> None:
    client = world.client()
    number, _ = world.open(client, "note", {"note.md": "a\n"})
    fault = world.arm(method="POST", path=f"/repos/{REPO}/issues/{number}/comments", status=502, apply=True,
                      times=5)
    with pytest.raises(UncertainWrite) as lost:
        client.comment(number, "once")
    assert "may or may not have been made" in str(lost.value)
    assert world.hits(fault) == 1


def test_idempotent_writes_are_retried(world: World) -> None:
    client = world.client()
    number, head_sha = world.open(client, "note", {"note.md": "a\n"})
    labels = world.arm(method="POST", path=f"/repos/{REPO}/issues/{number}/labels", status=502, apply=True)
    statuses = world.arm(method="POST", path=f"/repos/{REPO}/statuses/*", status=503)
    assert client.add_labels(number, ["memory"]) == ("memory",)
    assert client.set_status(head_sha, StatusUpdate("success", "memrepo/validate")).state == "success"
    assert (world.hits(labels), world.hits(statuses)) == (1, 1)


def test_opening_a_pull_request_whose_answer_is_lost_finds_it_instead(world: World) -> None:
    client = world.client()
    world.push("note", {"note.md": "a\n"})
    fault = world.arm(method="POST", path=f"/repos/{REPO}/pulls", status=502, apply=True, times=5)
    pr = client.open_pull_request(NewPullRequest(head="note", base="main", title="Note", labels=("memory",)))
    assert (pr.head_ref, pr.base_ref, pr.labels) == ("note", "main", ("memory",))
    assert world.hits(fault) == 1
    assert [p.number for p in client.list_open_pull_requests()] == [pr.number]


def test_writes_are_spaced(world: World) -> None:
    client = world.client(min_write_interval=0.4)
    number, _ = world.open(client, "note", {"note.md": "a\n"})
    start = time.monotonic()
    client.comment(number, "one")
    client.comment(number, "two")
    client.get_pull_request(number)  # reads are not spaced
    assert time.monotonic() - start >= 0.4


# ------------------------------------------------------------------------------------ GitHub shapes (mocked)
API = "https://api.github.com"
GHE = "https://ghe.example.com/api/v3"
# PyGithub names the port explicitly; `responses` matches URLs as sent.
API_SENT = "https://api.github.com:443"
GHE_SENT = "https://ghe.example.com:443/api/v3"
PULL = {"number": 7, "html_url": "https://github.com/acme/memory/pull/7", "title": "t", "body": None,
        "state": "open", "merged": False, "draft": False, "mergeable": None, "mergeable_state": "unknown",
        "head": {"ref": "note", "sha": "a" * 40}, "base": {"ref": "main", "sha": "b" * 40},
        "labels": [{"name": "memory"}], "user": {"login": "ada"}, "merge_commit_sha": None}


def _mocked(base: str = API, **kw: Any) -> tuple[ForgeClient, list[float]]:
    slept: list[float] = []
    kw.setdefault("policy", RetryPolicy(max_total_seconds=120.0))
    client = ForgeClient("acme/memory", TokenCredentials("ghp_secret_value"), base_url=base, min_write_interval=0,
                         sleep=slept.append, **kw)
    return client, slept


@responses.activate
def test_a_secondary_rate_limit_without_headers_waits_a_minute() -> None:
    client, slept = _mocked()
    url = f"{API_SENT}/repos/acme/memory/pulls/7"
    responses.get(url, status=403, json={
        "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"})
    responses.get(url, json=PULL)
    pr = client.get_pull_request(7)
    assert (pr.number, pr.mergeable, pr.labels, pr.body) == (7, None, ("memory",), "")
    assert slept == [60.0]


@responses.activate
def test_an_abuse_detection_answer_obeys_retry_after() -> None:
    client, slept = _mocked()
    url = f"{API_SENT}/repos/acme/memory/pulls/7"
    responses.get(url, status=403, headers={"Retry-After": "30"}, json={
        "message": "You have triggered an abuse detection mechanism. Please wait a few minutes before you try again.",
        "documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#abuse-rate-limits"})
    responses.get(url, json=PULL)
    assert client.get_pull_request(7).number == 7
    assert slept == [30.0]


@responses.activate
def test_a_rate_limit_longer_than_the_budget_is_raised_at_once() -> None:
    client, slept = _mocked(policy=RetryPolicy(max_total_seconds=60.0))
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/7", status=403,
                  headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(time.time()) + 1800)},
                  json={"message": "API rate limit exceeded for user ID 1."})
    with pytest.raises(RateLimited) as limited:
        client.get_pull_request(7)
    assert slept == []
    assert 1700 < limited.value.retry_after <= 1801
    assert "read pull request #7 of acme/memory" in str(limited.value)
    assert "ghp_secret_value" not in str(limited.value)


@responses.activate
def test_a_rate_limited_merge_is_not_sent_again() -> None:
    client, slept = _mocked()
    merge = responses.put(f"{API_SENT}/repos/acme/memory/pulls/7/merge", status=403, headers={"Retry-After": "45"},
                          json={"message": "You have exceeded a secondary rate limit and have been temporarily "
                                           "blocked from content creation. Please retry your request again later."})
    result = client.merge(7, "a" * 40)
    assert result.outcome is MergeOutcome.NOT_MERGED and result.retry_after == 45.0
    assert merge.call_count == 1 and slept == []


@responses.activate
def test_a_permission_403_is_forbidden_not_a_rate_limit() -> None:
    from bot.forge.errors import Forbidden

    client, slept = _mocked()
    responses.post(f"{API_SENT}/repos/acme/memory/issues/7/comments", status=403,
                   headers={"X-RateLimit-Remaining": "4321"},
                   json={"message": "Resource not accessible by integration"})
    with pytest.raises(Forbidden) as denied:
        client.comment(7, "hi")
    assert "Resource not accessible by integration" in str(denied.value) and slept == []


@responses.activate
def test_github_enterprise_differs_only_by_base_url() -> None:
    client, _ = _mocked(GHE)
    responses.get(f"{GHE_SENT}/repos/acme/memory/pulls/7", json=PULL)
    for _ in range(2):  # two listings of two pages each, answered in order
        responses.get(f"{GHE_SENT}/repos/acme/memory/pulls", json=[PULL],
                      headers={"Link": f'<{GHE}/repos/acme/memory/pulls?state=open&per_page=100&page=2>; rel="next"'})
        responses.get(f"{GHE_SENT}/repos/acme/memory/pulls", json=[{**PULL, "number": 8, "labels": []}])
    assert client.get_pull_request(7).head_sha == "a" * 40
    assert [pr.number for pr in client.list_open_pull_requests()] == [7, 8]
    assert [pr.number for pr in client.list_open_pull_requests("memory")] == [7]


@responses.activate
def test_a_success_with_an_unexpected_body_is_a_bad_answer() -> None:
    from bot.forge.errors import BadAnswer

    client, _ = _mocked()
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/7", json={"title": "no number"})
    with pytest.raises(BadAnswer):
        client.get_pull_request(7)
    assert issubclass(BadAnswer, ForgeError)


def _private_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


@responses.activate
def test_a_revoked_installation_token_is_replaced_once() -> None:
    """localhub cannot revoke a token early; GitHub can (the App was reinstalled, say)."""
    slept: list[float] = []
    client = ForgeClient("acme/memory", AppCredentials(42, _private_key(), installation_id=5), base_url=API,
                         min_write_interval=0, sleep=slept.append)
    expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    grants = responses.post(f"{API_SENT}/app/installations/5/access_tokens", status=201,
                            json={"token": "ghs_first", "expires_at": expires})
    responses.post(f"{API_SENT}/app/installations/5/access_tokens", status=201,
                   json={"token": "ghs_second", "expires_at": expires})
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/7", status=401, json={"message": "Bad credentials"})
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/7", json=PULL)
    assert client.get_pull_request(7).number == 7
    sent = [call.request.headers.get("Authorization") for call in responses.calls
            if call.request.url.endswith("/pulls/7")]
    assert sent == ["token ghs_first", "token ghs_second"]
    assert len([c for c in responses.calls if c.request.url.endswith("/access_tokens")]) == 2
    assert grants.call_count == 1 and slept == []
    # One refresh per operation: a 401 with the new token too is final.
    responses.get(f"{API_SENT}/repos/acme/memory/pulls/8", status=401, json={"message": "Bad credentials"})
    with pytest.raises(Unauthorized) as refused:
        client.get_pull_request(8)
    assert "ghs_" not in str(refused.value)
