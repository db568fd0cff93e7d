"""Abuse: Redis as a door into the integrator.

Whoever writes into the integrator's Redis decides what it believes (the permission cache says
who may approve) and, with rq's default pickle serializer, what its worker runs. So:

- `memrepo serve --local`'s Redis answers its own user only: a Unix socket in a 0700 folder,
  no TCP port at all, its files 0600. Another local user (the tests run as root, so they can
  be `nobody`) reaches nothing; any process of any user finds no loopback port to talk to.
- the worker runs memrepo's own job functions only, with JSON arguments: a queue holding a
  pickled job, a job naming `os.system`, a pickle hidden in a job's meta, or an allowed
  function with arguments of the wrong shape, is refused with one log line and nothing runs.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis
from hypothesis import given
from hypothesis import strategies as st
from rq import Callback, Queue
from rq.job import Job
from rq.serializers import JSONSerializer

from bot.queue import (
    ALLOWED,
    INTEGRATE,
    INTEGRATE_COMMIT,
    JOB_BAD_ARGUMENTS,
    JOB_HOOKS,
    JOB_NOT_JSON,
    JOB_NOT_OURS,
    QUEUE,
    RECONCILE,
    WAKE,
    GuardedJob,
    JobFacts,
    RefusedJob,
    enqueue_integrate,
    get_queue,
    job_key,
    refusal,
)
from bot.redis_keys import permission_key
from bot.serve.local import MAX_SOCKET_PATH, SOCKET_NAME, RedisProcess, socket_path
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
REPO = "alice/memory"
FORGED_KEY = permission_key(REPO, "mallory")
NOBODY = 65534

def command(*words: str) -> bytes:
    """One Redis command in RESP, as any program can write it without a client library."""
    out = b"*%d\r\n" % len(words)
    for word in words:
        data = word.encode()
        out += b"$%d\r\n%s\r\n" % (len(data), data)
    return out


def hostile(addresses: list[str]) -> str:
    """What another local user's process gets at each address: it connects and, where it gets
    in, writes `write` into the permission cache and pushes a job onto rq's queue. Run in a
    forked child that becomes `nobody` first when the tests run as root (the socket's and
    folder's modes are what must keep it out; root itself passes any mode)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            os.close(read)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            said = []
            for address in addresses:
                url = urlsplit(address)
                try:
                    if url.scheme == "unix":
                        conn = socket.socket(socket.AF_UNIX)
                        conn.settimeout(5)
                        conn.connect(url.path)
                    else:
                        conn = socket.create_connection((url.hostname, url.port), timeout=5)
                    conn.sendall(command("SET", FORGED_KEY, "write") + command("RPUSH", f"rq:queue:{QUEUE}", "forged"))
                    said.append(f"{address} in: {conn.recv(100)!r}")
                    conn.close()
                except OSError as exc:
                    said.append(f"{address} refused: {exc}")
            os.write(write, "\n".join(said).encode())
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        out = pipe.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out
    return out


def listening_tcp_ports(pid: int) -> set[int]:
    """The TCP ports process `pid` listens on (its socket inodes matched in /proc/net/tcp*)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


@pytest.fixture
def open_data() -> Iterator[Path]:
    """A data folder every user may pass through (as a home's ~/.local/share often is), so that
    only what serve --local makes private keeps others out."""
    path = Path(tempfile.mkdtemp(prefix="memrepo-abuse-redis-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def local_redis(open_data: Path) -> Iterator[RedisProcess]:
    """serve --local's Redis, as LocalStack starts it."""
    server = RedisProcess(open_data / "redis")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_serve_local_redis_cannot_be_written_by_another_local_user(local_redis: RedisProcess) -> None:
    assert local_redis.process is not None
    ports = listening_tcp_ports(local_redis.process.pid)
    addresses = [f"redis://127.0.0.1:{port}/0" for port in sorted(ports)]
    if os.geteuid() == 0:  # it can be another user: the socket too (as this user it may open it, by design)
        addresses.append(local_redis.url)
    said = hostile(addresses)
    owner = redis.Redis.from_url(local_redis.url)
    try:
        assert owner.get(FORGED_KEY) is None, said
        assert owner.llen(f"rq:queue:{QUEUE}") == 0, said
    finally:
        owner.close()


def test_serve_local_redis_listens_on_no_tcp_port(local_redis: RedisProcess) -> None:
    assert local_redis.process is not None
    assert listening_tcp_ports(local_redis.process.pid) == set()
    assert local_redis.url.startswith("unix://")


def test_serve_local_redis_keeps_its_files_to_its_user(local_redis: RedisProcess) -> None:
    owner = redis.Redis.from_url(local_redis.url)
    try:
        owner.set("memrepo:test", "x")
        owner.bgrewriteaof()  # an appendonly file rewritten as well as appended to
        wait_until(lambda: owner.info("persistence")["aof_rewrite_in_progress"] == 0, 15, "the AOF rewrite")
    finally:
        owner.close()
    folder = local_redis.dir
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = [p for p in folder.rglob("*")]
    assert any(p.name.startswith("appendonly") for p in files), files
    for path in [*files, Path(local_redis.url.removeprefix("unix://").split("?")[0])]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"
        assert path.lstat().st_uid == os.geteuid()


@pytest.mark.parametrize("folder, fits", [
    (Path("/d"), True),
    (Path("/" + "d" * (MAX_SOCKET_PATH - len("/" + SOCKET_NAME) - 1)), True),  # exactly the limit
    (Path("/" + "d" * (MAX_SOCKET_PATH - len("/" + SOCKET_NAME))), False),  # one byte over
    (Path("/" + "é" * 50), False),  # the limit is in bytes
])
def test_the_socket_lives_in_the_data_folder_when_its_path_fits(folder: Path, fits: bool) -> None:
    assert socket_path(folder) == (folder / SOCKET_NAME if fits else None)


@pytest.mark.parametrize("deep_tmpdir", [False, True])
def test_a_data_folder_too_deep_for_a_socket_gets_a_private_one_elsewhere(
        open_data: Path, deep_tmpdir: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = open_data / ("d" * 60) / ("e" * 60) / "redis"
    if deep_tmpdir:  # as a test's or the demo's TMPDIR may be
        (open_data / ("t" * 100)).mkdir()
        monkeypatch.setattr(tempfile, "tempdir", str(open_data / ("t" * 100)))
    server = RedisProcess(deep)
    server.start()
    try:
        folder = server.socket.parent
        assert folder != deep and stat.S_IMODE(folder.stat().st_mode) == 0o700
        owner = redis.Redis.from_url(server.url)
        assert owner.ping()
        owner.close()
    finally:
        server.stop()
    assert not folder.exists()


def test_files_an_earlier_run_left_open_are_made_private(open_data: Path) -> None:
    folder = open_data / "redis"
    folder.mkdir(mode=0o755)
    (folder / "appendonly.aof").write_bytes(b"")
    (folder / "appendonly.aof").chmod(0o644)
    (folder / "redis.log").write_text("an earlier run\n")
    (folder / "redis.log").chmod(0o644)
    server = RedisProcess(folder)
    server.start()
    try:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        for name in ("appendonly.aof", "redis.log"):
            assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name
    finally:
        server.stop()


# ---------------------------------------------------------------------------------- the worker
def run_worker(redis_url: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`memrepo worker --burst`, as deployed: it takes what is queued, then exits."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMREPO_", "GITHUB_"))}
    env.update({"REDIS_URL": redis_url, "MEMREPO_GITHUB_URL": "http://127.0.0.1:9/api/v3",
                "MEMREPO_GITHUB_TOKEN": "t", "MEMREPO_WORK_DIR": str(tmp_path / "work")})
    return subprocess.run([sys.executable, "-m", "bot.cli", "worker", "--burst", "--reconcile-every", "0"],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)


class Touch:
    """Unpickling this runs `touch MARKER`: what a pickled job can carry."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def pickled_job_naming_os_system(conn: redis.Redis, marker: Path) -> str:
    return Queue(QUEUE, connection=conn).enqueue("os.system", f"touch {marker}").id  # rq's default: pickle


def json_job_naming_os_system(conn: redis.Redis, marker: Path) -> str:
    return Queue(QUEUE, connection=conn, serializer=JSONSerializer).enqueue("os.system", f"touch {marker}").id


def pickle_in_the_arguments(conn: redis.Redis, marker: Path) -> str:
    return Queue(QUEUE, connection=conn).enqueue(INTEGRATE, Touch(marker), 1).id


def pickle_in_the_meta(conn: redis.Redis, marker: Path) -> str:
    job = Queue(QUEUE, connection=conn, serializer=JSONSerializer).enqueue(INTEGRATE, REPO, "1")
    conn.hset(Job.key_for(job.id), "meta", pickle.dumps(Touch(marker)))
    return job.id


def pickle_as_a_result(conn: redis.Redis, marker: Path) -> str:
    job = Queue(QUEUE, connection=conn, serializer=JSONSerializer).enqueue(RECONCILE, "not a repository")
    conn.hset(Job.key_for(job.id), "result", pickle.dumps(Touch(marker)))
    return job.id


@pytest.mark.parametrize("plant", [pickled_job_naming_os_system, json_job_naming_os_system, pickle_in_the_arguments,
                                   pickle_in_the_meta, pickle_as_a_result])
def test_the_worker_refuses_a_job_that_is_not_memrepos_and_runs_nothing(plant: Any, redis_url: str,
                                                                      tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    conn = redis.Redis.from_url(redis_url)
    try:
        job_id = plant(conn, marker)
        worker = run_worker(redis_url, tmp_path)
        assert worker.returncode == 0, worker.stdout + worker.stderr
        assert not marker.exists()
        said = [line for line in (worker.stdout + worker.stderr).splitlines() if job_id in line and "refused" in line]
        assert len(said) == 1, worker.stdout + worker.stderr
        assert "Traceback" not in worker.stderr
        assert conn.hget(Job.key_for(job_id), "status") == b"failed"
        assert conn.llen(f"rq:queue:{QUEUE}") == 0  # not retried either
    finally:
        conn.close()


def test_every_job_memrepo_enqueues_is_json(rclient: redis.Redis) -> None:
    assert enqueue_integrate(rclient, REPO, 3).outcome == "queued"
    data = zlib.decompress(rclient.hget(Job.key_for(job_key(REPO, 3)), "data"))
    assert json.loads(data) == [INTEGRATE, None, [REPO, 3], {}]


# ---------------------------------------------------------------------------------- the rule, as a table
def facts(func: str | None, args: list[Any], **more: Any) -> JobFacts:
    return JobFacts(func_name=func, args=args, **more)


def said_as(template: str) -> re.Pattern[str]:
    """A pattern matching what `template` says, whatever its fields hold."""
    return re.compile(".*".join(re.escape(part) for part in re.split(r"\{[^}]*\}", template)), re.DOTALL)


@pytest.mark.parametrize("job, problem", [
    (facts(INTEGRATE, [REPO, 12]), None),
    (facts(INTEGRATE_COMMIT, [REPO, "0" * 40]), None),
    (facts(RECONCILE, [REPO]), None),
    (facts(WAKE, [REPO, 7]), None),
    (facts("os.system", ["touch x"]), JOB_NOT_OURS),
    (facts("bot.integrator.jobs.integrate_", [REPO, 1]), JOB_NOT_OURS),
    (facts(None, [], readable=False), JOB_NOT_JSON),
    (facts(INTEGRATE, [REPO, "12"]), JOB_BAD_ARGUMENTS),
    (facts(INTEGRATE, [REPO, True]), JOB_BAD_ARGUMENTS),
    (facts(INTEGRATE, [REPO, 0]), JOB_BAD_ARGUMENTS),
    (facts(INTEGRATE, [REPO]), JOB_BAD_ARGUMENTS),
    (facts(INTEGRATE, ["../../etc", 1]), JOB_BAD_ARGUMENTS),
    (facts(INTEGRATE_COMMIT, [REPO, "HEAD"]), JOB_BAD_ARGUMENTS),
    (facts(RECONCILE, [REPO], kwargs={"context": None}), JOB_BAD_ARGUMENTS),
    (facts(RECONCILE, [REPO], instance=True), JOB_NOT_OURS),
    (facts(RECONCILE, [REPO], callbacks=("os.system",)), JOB_HOOKS),
    (facts(RECONCILE, [REPO], webhooks=True), JOB_HOOKS),
])
def test_which_jobs_the_worker_runs(job: JobFacts, problem: str | None) -> None:
    found = refusal(job)
    if problem is None:
        assert found is None
    else:
        assert found is not None and said_as(problem).fullmatch(found), found


@given(st.text(max_size=60))
def test_no_function_outside_the_allow_list_is_run(name: str) -> None:
    found = refusal(facts(name, [REPO, 1]))
    assert (found is None) == (name in (INTEGRATE, WAKE))  # the two that take (repo, number)
    if name not in ALLOWED:
        assert found == JOB_NOT_OURS.format(func=name[:200], allowed=", ".join(sorted(ALLOWED)))
        assert "\n" not in found  # one log line, whatever the name holds


def test_a_job_read_through_memrepos_queue_never_resolves_to_a_foreign_function(rclient: redis.Redis) -> None:
    queue = get_queue(rclient)
    job = Queue(QUEUE, connection=rclient, serializer=JSONSerializer).enqueue(
        "os.system", "true", on_success=Callback("os.system"), on_failure=Callback("os.system"))
    read = queue.fetch_job(job.id)
    assert isinstance(read, GuardedJob)
    with pytest.raises(RefusedJob):
        read.func  # noqa: B018
    assert read.success_callback is None and read.failure_callback is None and read.stopped_callback is None
    ours = queue.fetch_job(get_queue(rclient).enqueue(WAKE, REPO, 1).id)
    assert ours is not None and ours.func.__name__ == "wake"


def test_a_burst_worker_exits_once_the_queue_is_empty(redis_url: str, tmp_path: Path) -> None:
    """rq stops its channel's thread after unsubscribing; polled every 60 s, the thread kept a
    --burst worker alive up to a minute after its last job (bot.queue.Worker.subscribe)."""
    conn = redis.Redis.from_url(redis_url)
    try:
        for _ in range(5):
            json_job_naming_os_system(conn, tmp_path / "ran")
            started = time.monotonic()
            worker = run_worker(redis_url, tmp_path)
            assert worker.returncode == 0, worker.stdout + worker.stderr
            assert time.monotonic() - started < 20
    finally:
        conn.close()
