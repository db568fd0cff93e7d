"""`memrepo serve --local` heals a worker that dies: the stack starts a new one (within a
bound on restarts, each logged and printed) instead of stopping. The bound as a table, the
watch giving up on a worker that dies every time, and a real stack whose worker gets SIGKILL."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import requests

from bot.queue import WAKE, get_queue
from bot.serve import local
from bot.serve.local import (
    RESTART_WINDOW,
    SERVE_LOCAL_WORKER_GAVE_UP,
    SERVE_LOCAL_WORKER_RESTARTED,
    WORKER_RESTARTS,
    LocalStack,
    restart_allowed,
)
from tests.processes import alive, descendants
from tests.served import LocalStack as ServedStack
from tests.waiting import wait_until

MINUTES = RESTART_WINDOW / 60


@pytest.mark.parametrize(("restarts", "now", "allowed"), [
    ([], 0.0, True),
    ([1.0] * (WORKER_RESTARTS - 1), 2.0, True),
    ([1.0] * WORKER_RESTARTS, 2.0, False),  # the bound: that many within the window
    ([1.0] * WORKER_RESTARTS, 1.0 + RESTART_WINDOW, True),  # they all left the window
    ([0.0, 0.0, 500.0, 500.0, 500.0], 650.0, True),  # two of them left it
])
def test_restarts_are_bounded_within_a_window(restarts: list[float], now: float, allowed: bool) -> None:
    assert restart_allowed(restarts, now) is allowed


def test_a_worker_that_keeps_dying_is_restarted_up_to_the_bound_then_the_stack_stops(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stack = LocalStack(tmp_path / "data")
    started: list[subprocess.Popen[bytes]] = []

    def dying_worker() -> None:  # a real process that exits at once with 3
        stack.worker = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"], start_new_session=True)
        started.append(stack.worker)

    monkeypatch.setattr(stack, "_start_worker", dying_worker)
    monkeypatch.setattr(local, "WATCH_SECONDS", 0.01)
    dying_worker()
    said: list[str] = []
    assert stack.watch(threading.Event(), out=said.append) == 1
    log = stack.logs / "worker.log"
    assert said == [SERVE_LOCAL_WORKER_RESTARTED.format(code=3, log=log, count=n, limit=WORKER_RESTARTS,
                                                                    minutes=MINUTES)
                    for n in range(1, WORKER_RESTARTS + 1)] + [
        SERVE_LOCAL_WORKER_GAVE_UP.format(code=3, log=log, limit=WORKER_RESTARTS, minutes=MINUTES)]
    assert len(started) == 1 + WORKER_RESTARTS
    assert all(process.poll() == 3 for process in started)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServedStack]:
    s = ServedStack(tmp_path / "data")
    try:
        yield s
    finally:
        s.stop()


def workers(stack: ServedStack) -> list[int]:
    """The stack's worker processes: its children running `memrepo worker`."""
    found = []
    for pid in descendants(stack.process.pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if parent == stack.process.pid and b"worker" in argv and alive(pid):
            found.append(pid)
    return found


def test_a_killed_worker_of_serve_local_is_replaced_and_the_new_one_runs_jobs(served: ServedStack) -> None:
    [old] = wait_until(lambda: workers(served), 30, "the stack's worker")
    for pid in [old, *descendants(old)]:  # kill -9, work horse and scheduler included
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    [new] = wait_until(lambda: [pid for pid in workers(served) if pid != old], 30,
                       lambda: "a new worker; the stack said:\n" + "".join(served.output))
    assert new != old and not alive(old)
    restarted = SERVE_LOCAL_WORKER_RESTARTED.format(code=-signal.SIGKILL, log=served.worker_log, count=1,
                                                                limit=WORKER_RESTARTS, minutes=MINUTES)
    wait_until(lambda: restarted + "\n" in served.output, 10, lambda: "the restart said:\n" + "".join(served.output))
    assert served.process.poll() is None
    assert requests.get(f"{served.receiver}/healthz", timeout=10).status_code == 200
    # The new worker takes jobs: a wake-up, which answers with what its enqueue did.
    client = redis.Redis.from_url(served.urls["redis"])
    try:
        job = get_queue(client).enqueue(WAKE, "nobody/nothing", 1)
        wait_until(lambda: job.get_status(refresh=True) == "finished", 30,
                   lambda: f"the job to run (status {job.get_status(refresh=True)})")
        assert job.return_value() == "queued"
    finally:
        client.close()
    assert served.stop() == 0
