"""The request budget every worker of one forge identity shares (bot/forge/budget.py, pure;
bot/forge/shared.py, on Redis): a table of waits, a hypothesis property that no window ever
holds more than its limit, two "workers" on one real Redis, and two forge clients against
localhub answering GitHub's secondary limit (its fault injection)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import github
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.errors import MemrepoError
from bot.forge.budget import HOUR, MINUTE, Limits, Spent, back_off_until, wait
from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.forge.errors import RateLimited
from bot.forge.shapes import StatusUpdate
from bot.forge.shared import SharedBudget, SharedTokens, identity
from bot.settings import budget_limits, merge_by_push
from tests.conftest import arm_fault, fault_hits, localhub_token, operator_headers
from tests.memory_forge import FAST, REPO

SMALL = Limits(writes_per_minute=3, writes_per_hour=5, points_per_minute=20, requests_per_hour=8)
W, R = True, False


# ------------------------------------------------------------------------------ the pure rule
@pytest.mark.parametrize(("spent", "now", "write", "until", "expected"), [
    ([], 100.0, W, 0.0, 0.0),  # nothing spent
    ([Spent(90, W), Spent(95, W)], 100.0, W, 0.0, 0.0),  # the third write of the minute
    ([Spent(90, W), Spent(95, W), Spent(99, W)], 100.0, W, 0.0, 50.0),  # a fourth waits for 90 to leave
    ([Spent(90, W), Spent(95, W), Spent(99, W)], 100.0, R, 0.0, 0.0),  # a read spends no write
    ([Spent(10, W), Spent(20, W), Spent(30, W)], 100.0, W, 0.0, 0.0),  # those left the minute
    ([Spent(10, W), Spent(20, W), Spent(30, W), Spent(80, W), Spent(90, W)], 100.0, W, 0.0, 3510.0),  # the hour
    ([Spent(float(t), R) for t in range(90, 98)], 100.0, R, 0.0, 3590.0),  # 8 requests an hour: the 9th
    ([Spent(95, W), Spent(96, W), Spent(97, W)], 100.0, R, 0.0, 0.0),  # 15 points + 1 <= 20
    ([Spent(95, W), Spent(96, W), Spent(97, W), Spent(98, R)], 100.0, W, 0.0, 55.0),  # 16 + 5 > 20 points
    ([], 100.0, R, 130.0, 30.0),  # the shared back-off
    ([Spent(90, W), Spent(95, W), Spent(99, W)], 100.0, W, 120.0, 50.0),  # the longer of the two
])
def test_wait(spent: list[Spent], now: float, write: bool, until: float, expected: float) -> None:
    assert wait(SMALL, spent, now, write, until) == pytest.approx(expected, abs=0.01)


@pytest.mark.parametrize(("current", "now", "asked", "expected"), [
    (0.0, 100.0, 60.0, 160.0),
    (200.0, 100.0, 60.0, 200.0),  # one already later stays
    (0.0, 100.0, -5.0, 100.0),
])
def test_back_off_until(current: float, now: float, asked: float, expected: float) -> None:
    assert back_off_until(current, now, asked) == expected


def _within(limits: Limits, log: list[Spent]) -> bool:
    """No window of any length ending at any request holds more than its limit."""
    for end in log:
        minute = [s for s in log if end.at - MINUTE < s.at <= end.at]
        hour = [s for s in log if end.at - HOUR < s.at <= end.at]
        if (sum(s.write for s in minute) > limits.writes_per_minute
                or sum(s.write for s in hour) > limits.writes_per_hour
                or sum(s.points for s in minute) > limits.points_per_minute or len(hour) > limits.requests_per_hour):
            return False
    return True


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 200), st.booleans()), max_size=40))
def test_requests_that_wait_as_told_never_pass_a_limit(asks: list[tuple[float, bool]]) -> None:
    """Requests asked for at any times, each sent when `wait` says: every window within its limit."""
    log: list[Spent] = []
    clock = 0.0
    for gap, write in asks:
        clock += gap
        clock += wait(SMALL, log, clock, write)
        assert wait(SMALL, log, clock, write) == 0.0  # after waiting as told, it may go
        log.append(Spent(clock, write))
    assert _within(SMALL, log)


# ------------------------------------------------------------------------------ the settings
@pytest.mark.parametrize(("raw", "expected"), [
    (None, True), ("", True), ("1", True), ("true", True), ("On", True), ("0", False), ("no", False),
    ("off", False), ("maybe", None), ("2", None)])
def test_merge_by_push_is_on_unless_turned_off(raw: str | None, expected: bool | None) -> None:
    env = {} if raw is None else {"MEMREPO_MERGE_BY_PUSH": raw}
    if expected is not None:
        assert merge_by_push(env) is expected
        return
    with pytest.raises(MemrepoError) as info:
        merge_by_push(env)
    assert str(info.value) == f"MEMREPO_MERGE_BY_PUSH must be 1 or 0 (true/false, yes/no, on/off), found {raw!r}"


@pytest.mark.parametrize(("name", "raw"), [("MEMREPO_WRITES_PER_MINUTE", "0"), ("MEMREPO_WRITES_PER_HOUR", "-1"),
                                           ("MEMREPO_POINTS_PER_MINUTE", "lots"), ("MEMREPO_READS_PER_HOUR", "nan")])
def test_a_budget_setting_that_is_not_a_positive_number_is_refused_in_one_line(name: str, raw: str) -> None:
    with pytest.raises(MemrepoError) as info:
        budget_limits((80, 500, 900, 5000), {name: raw})
    assert str(info.value) == f"{name} must be a positive number of requests, found {raw!r}"
    assert "\n" not in str(info.value)


def test_budget_settings_are_read() -> None:
    env = {"MEMREPO_WRITES_PER_MINUTE": "40", "MEMREPO_READS_PER_HOUR": "15000"}
    assert budget_limits((80, 500, 900, 5000), env) == (40.0, 500, 900, 15000.0)


def test_the_worker_refuses_to_start_on_a_bad_setting(redis_url: str, tmp_path: Path) -> None:
    from bot.integrator.context import Context

    env = {"REDIS_URL": redis_url, "MEMREPO_GITHUB_TOKEN": "t", "MEMREPO_WORK_DIR": str(tmp_path)}
    assert Context.from_env(env).tuning.merge_by_push is True
    assert Context.from_env({**env, "MEMREPO_MERGE_BY_PUSH": "0"}).tuning.merge_by_push is False
    with pytest.raises(MemrepoError, match="MEMREPO_WRITES_PER_HOUR must be a positive number"):
        Context.from_env({**env, "MEMREPO_WRITES_PER_HOUR": "0"})


# ------------------------------------------------------------------------------ on Redis
class Clock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_two_workers_share_one_budget(rclient) -> None:  # type: ignore[no-untyped-def]
    clock = Clock()
    one = SharedBudget(rclient, "same", SMALL, clock=clock, sleep=clock.sleep)
    two = SharedBudget(rclient, "same", SMALL, clock=clock, sleep=clock.sleep)
    other = SharedBudget(rclient, "another identity", SMALL, clock=clock, sleep=clock.sleep)
    assert [one.try_take(W), two.try_take(W), one.try_take(W)] == [0.0, 0.0, 0.0]
    assert two.try_take(W) == pytest.approx(MINUTE, abs=0.01)  # the minute's three writes are spent, by either
    assert other.try_take(W) == 0.0  # another identity has its own
    assert two.take(W) == pytest.approx(MINUTE, abs=0.01)  # waits, in slices, then goes
    assert clock.slept and max(clock.slept) <= 5.0
    assert rclient.zcard("memrepo:budget:same") == 4


def test_a_wait_longer_than_a_job_may_wait_sends_nothing(rclient) -> None:  # type: ignore[no-untyped-def]
    clock = Clock()
    budget = SharedBudget(rclient, "same", SMALL, clock=clock, sleep=clock.sleep, max_wait=10.0)
    for _ in range(3):
        budget.take(W)
    with pytest.raises(RateLimited) as limited:
        budget.take(W)
    assert limited.value.retry_after == pytest.approx(MINUTE, abs=0.01)
    assert "3 content-generating requests a minute" in str(limited.value) and "\n" not in str(limited.value)
    assert rclient.zcard("memrepo:budget:same") == 3 and clock.slept == []


def test_a_back_off_holds_every_worker(rclient) -> None:  # type: ignore[no-untyped-def]
    clock = Clock()
    one = SharedBudget(rclient, "same", SMALL, clock=clock, sleep=clock.sleep)
    two = SharedBudget(rclient, "same", SMALL, clock=clock, sleep=clock.sleep)
    one.back_off(30.0)
    two.back_off(10.0)  # a shorter one told later does not shorten it
    assert two.try_take(R) == pytest.approx(30.0)
    assert two.take(R) == pytest.approx(30.0)


def test_concurrent_workers_never_take_more_than_the_limit(rclient) -> None:  # type: ignore[no-untyped-def]
    """Eight threads race for the same three writes of the minute: exactly three get one."""
    got: list[float] = []
    start = threading.Barrier(8)

    def worker() -> None:
        budget = SharedBudget(rclient.connection_pool and type(rclient)(connection_pool=rclient.connection_pool),
                              "race", SMALL)
        start.wait()
        got.append(budget.try_take(W))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(got)[:3] == [0.0, 0.0, 0.0] and all(g > 0 for g in sorted(got)[3:])
    assert rclient.zcard("memrepo:budget:race") == 3


def test_installation_tokens_are_shared_until_shortly_before_they_expire(rclient) -> None:  # type: ignore[no-untyped-def]
    clock = Clock()
    tokens = SharedTokens(rclient, identity("https://api.github.com", "app:7"), margin=300, clock=clock)
    assert tokens.get("Alice/Memory") is None
    tokens.put("alice/memory", "ghs_one", clock.now + 3600)
    assert SharedTokens(rclient, tokens.app_id, margin=300, clock=clock).get("ALICE/memory") == ("ghs_one",
                                                                                                 clock.now + 3600)
    clock.now += 3600 - 299
    assert tokens.get("alice/memory") is None  # within the margin: a new one is minted
    assert "ghs_one" not in identity("https://api.github.com", "token:ghs_one")


# ------------------------------------------------------------------------------ against localhub
SECONDARY = {"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
             "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}


@pytest.fixture
def hub(localhub, tmp_path: Path):  # type: ignore[no-untyped-def]
    token = localhub_token(localhub, "alice")
    gh = github.Github(auth=github.Auth.Token(token), base_url=localhub.api_url, retry=None)
    gh.get_user().create_repo("memory", auto_init=True)
    return localhub, token


def _requests(server) -> dict[str, int]:  # type: ignore[no-untyped-def]
    import requests

    resp = requests.get(f"{server.url}/_localhub/requests", headers=operator_headers(server), timeout=10)
    resp.raise_for_status()
    return dict(resp.json()["by_account"].get("alice", {}))


def test_no_request_beyond_the_budget_reaches_the_forge(hub, rclient) -> None:  # type: ignore[no-untyped-def]
    server, token = hub
    limits = Limits(writes_per_minute=2, writes_per_hour=500, points_per_minute=900, requests_per_hour=5000)
    budget = SharedBudget(rclient, identity(server.api_url, token), limits, max_wait=1.0)
    workers = [ForgeClient(REPO, TokenCredentials(token), base_url=server.api_url, policy=FAST, min_write_interval=0,
                           budget=budget) for _ in range(2)]
    sha = workers[0].get_ref("heads/main").sha
    before = _requests(server).get("POST", 0)
    workers[0].set_status(sha, StatusUpdate("success", "one"))
    workers[1].set_status(sha, StatusUpdate("success", "two"))
    with pytest.raises(RateLimited):
        workers[0].set_status(sha, StatusUpdate("success", "three"))
    assert _requests(server).get("POST", 0) - before == 2  # the third was never sent


def test_a_secondary_limit_makes_every_worker_wait(hub, rclient) -> None:  # type: ignore[no-untyped-def]
    """GitHub answers one worker a secondary limit with Retry-After: 2; the other worker's next
    request waits for the same moment, and nothing is lost."""
    server, token = hub
    budget_one = SharedBudget(rclient, identity(server.api_url, token))
    budget_two = SharedBudget(rclient, identity(server.api_url, token))
    fault = arm_fault(server, method="GET", path=f"/repos/{REPO}/commits/main/status", status=403, times=1,
                      body=SECONDARY, headers={"Retry-After": "2"})
    sent_at: list[float] = []
    two = ForgeClient(REPO, TokenCredentials(token), base_url=server.api_url, policy=FAST, budget=budget_two)

    def sleep_then_the_other_worker(seconds: float) -> None:
        sent_at.append(time.time())
        other = threading.Thread(target=lambda: (two.combined_status("main"), sent_at.append(time.time())))
        other.start()
        time.sleep(seconds)
        other.join()

    one = ForgeClient(REPO, TokenCredentials(token), base_url=server.api_url, policy=FAST, budget=budget_one,
                      sleep=sleep_then_the_other_worker)
    assert one.combined_status("main").state in ("pending", "success")
    assert fault_hits(server, fault) == 1
    told, other_done = sent_at
    assert other_done - told >= 1.8  # the other worker waited for the shared until


# ------------------------------------------------------------------------------ requests in flight
@pytest.mark.parametrize("raw", ["0", "-3", "2.5", "lots", "1e2"])
def test_a_concurrency_setting_that_is_not_a_positive_whole_number_is_refused_in_one_line(raw: str) -> None:
    from bot.settings import concurrent_requests

    with pytest.raises(MemrepoError) as info:
        concurrent_requests(100, {"MEMREPO_CONCURRENT_REQUESTS": raw})
    assert str(info.value) == f"MEMREPO_CONCURRENT_REQUESTS must be a positive whole number of requests, found {raw!r}"
    assert "\n" not in str(info.value)


def test_the_concurrency_setting_is_read_and_refused_at_start(redis_url: str, tmp_path: Path) -> None:
    from bot.integrator.context import Context
    from bot.settings import concurrent_requests

    assert concurrent_requests(100, {}) == 100 and concurrent_requests(100, {"MEMREPO_CONCURRENT_REQUESTS": "7"}) == 7
    env = {"REDIS_URL": redis_url, "MEMREPO_GITHUB_TOKEN": "t", "MEMREPO_WORK_DIR": str(tmp_path)}
    client = Context.from_env({**env, "MEMREPO_CONCURRENT_REQUESTS": "7"}).forge("alice/memory")
    assert client._http._budget is not None and client._http._budget.in_flight.limit == 7
    with pytest.raises(MemrepoError, match="MEMREPO_CONCURRENT_REQUESTS must be a positive whole number"):
        Context.from_env({**env, "MEMREPO_CONCURRENT_REQUESTS": "none"})


def test_never_more_requests_in_flight_than_the_limit_across_workers(redis_url: str) -> None:
    """Twelve threads, each its own Redis client (a worker each), send 4 requests apiece
    through one identity's slots, limit 3: at no moment are more than 3 in flight, and the
    limit is reached (the slots are what holds them back)."""
    from bot.forge.shared import InFlight
    from bot.queue import connect

    lock = threading.Lock()
    now_in: list[int] = [0]
    most: list[int] = [0]
    start = threading.Barrier(12)

    def worker() -> None:
        conn = connect(redis_url)
        slots = InFlight(conn, "busy", 3, poll=0.005)
        start.wait()
        for _ in range(4):
            with slots.slot():
                with lock:
                    now_in[0] += 1
                    most[0] = max(most[0], now_in[0])
                time.sleep(0.02)  # the request, in flight
                with lock:
                    now_in[0] -= 1
        conn.close()

    threads = [threading.Thread(target=worker) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 3
    assert InFlight(connect(redis_url), "busy", 3).held() == 0  # every slot given back


def test_a_dead_holders_slot_comes_back_when_its_lease_ends(redis_url: str) -> None:
    """A worker process killed while it holds the identity's only slot: the slot is not
    free at once (its request may still be in flight), and it is once the lease ended."""
    import signal
    import subprocess
    import sys

    from bot.forge.shared import InFlight
    from bot.queue import connect

    holder = ("import os, signal, sys\n"
              "from bot.forge.shared import InFlight\nfrom bot.queue import connect\n"
              "slots = InFlight(connect(sys.argv[1]), 'one', 1, lease=1.0)\n"
              "assert slots.try_acquire() is not None\n"
              "print('held', flush=True)\n"
              "os.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run([sys.executable, "-c", holder, redis_url], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.stdout.strip() == "held" and done.returncode == -signal.SIGKILL
    slots = InFlight(connect(redis_url), "one", 1, max_wait=0.1, poll=0.02)
    assert slots.held() == 1 and slots.try_acquire() is None
    with pytest.raises(RateLimited) as limited, slots.slot():
        pass
    assert "1 request in flight" in str(limited.value) and "\n" not in str(limited.value)
    time.sleep(1.1)
    lease = slots.try_acquire()
    assert lease is not None and slots.held() == 1
    slots.release(lease)
    assert slots.held() == 0


def test_a_forge_client_holds_a_slot_while_its_request_is_in_flight(hub, rclient) -> None:  # type: ignore[no-untyped-def]
    """A client with the shared budget holds one of its identity's slots for exactly as long
    as its request is in flight; with every slot held by another worker, it sends nothing."""
    from bot.forge.errors import NotFound
    from bot.forge.shared import InFlight

    server, token = hub
    name = identity(server.api_url, token)
    budget = SharedBudget(rclient, name, Limits(concurrent=1), max_wait=0.3)
    client = ForgeClient(REPO, TokenCredentials(token), base_url=server.api_url, policy=FAST, min_write_interval=0,
                         budget=budget)
    arm_fault(server, method="GET", path=f"/repos/{REPO}/git/ref/heads/slow", status=404, times=1, delay_ms=600,
              body={"message": "Not Found"})
    failed: list[BaseException] = []

    def read() -> None:
        try:
            client.get_ref("heads/slow")
        except NotFound as exc:
            failed.append(exc)

    reading = threading.Thread(target=read)
    reading.start()
    time.sleep(0.3)
    assert budget.in_flight.held() == 1  # the slow request, in flight
    reading.join()
    assert failed and budget.in_flight.held() == 0
    other = InFlight(rclient, name, 1)
    lease = other.try_acquire()  # another worker's request now holds the only slot
    assert lease is not None
    before = sum(_requests(server).values())
    with pytest.raises(RateLimited):
        client.get_ref("heads/main")
    assert sum(_requests(server).values()) == before  # not sent
    other.release(lease)
    assert client.get_ref("heads/main").ref == "refs/heads/main"
