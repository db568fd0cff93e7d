"""Benchmark of the agents' event stream at scale: `python bench/fanout.py` from the project root.

Runs `memrepo serve --local` (localhub, Redis, the receiver, a worker) as a subprocess in a
temporary folder, makes ada's private memory on its localhub and a clone of it, and raises
this process's limit on open files (the receiver raises its own). Then, in one run:

1. Webhooks with no stream open: `--deliveries` signed `pull_request` deliveries, one after
   another on one keep-alive connection; p50 / p99 of the answer (the baseline). Every
   webhook measurement starts once the worker has run what earlier deliveries enqueued.
2. For each N in `--streams` (1000,5000,10000): N idle streams on ada/memory, opened with
   ada's own localhub token (the receiver asks localhub once, then its cache answers), held
   and read by a child process with one epoll loop over plain sockets (a coroutine per stream
   in the client would be slower than the receiver, and it would be the client that is
   measured); then the same deliveries again, and `/healthz` 50 times; the receiver's resident
   memory before and after (its process, /proc), per stream; then one commit pushed over git
   to main, and per stream the time from the start of the push to the head event for that
   commit: p50, p99, max, and whether every stream got it.
3. With `--prs N` (100): N dream pull requests over `--repos` (10) memories on a localhub of
   this process, webhooks split between two receivers, integrated by 1 and then by 3
   `memrepo worker` processes on one Redis: seconds from the first pull request opened to
   the last merged, pull requests lost (not merged) and merged twice (first-parent commits on
   main beyond one per pull request). The 3-worker time is reported against the 1-worker one.

Prints readable lines, then one line of JSON with the figures (webhook ratios against the
no-stream baseline of the same run; 3 workers against 1). Targets on a 2-core machine: push -> every stream p99
<= 1 s, webhook p99 <= 20 ms and within 1.5x of no streams, <= 20 KiB per stream.

Options: --streams 1000,5000,10000 (or none)  --deliveries 300  --prs 0  --repos 10  --keep
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import http.client
import json
import resource
import select
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import requests  # noqa: E402

from tests.served import LocalStack  # noqa: E402

CONNECT_CONCURRENCY = 256
TARGETS = {"push_p99_ms": 1000.0, "webhook_p99_ms": 20.0, "webhook_ratio": 1.5, "kib_per_stream": 20.0}
STREAM_WAIT = 30.0  # seconds the streams wait for the pushed commit's event


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(values: list[float], q: float) -> float | None:
    """The q-quantile in milliseconds, None when nothing arrived to measure (JSON has no NaN)."""
    return pct(values, q) * 1000 if values else None


def meets_targets(row: dict[str, Any]) -> bool:
    """Whether a row of N streams meets the targets (every stream got the event, too)."""
    return bool(row["all_delivered"] and row["push_to_event_p99_ms"] <= TARGETS["push_p99_ms"]
                and row["webhook_p99_ms"] <= TARGETS["webhook_p99_ms"]
                and row["webhook_p99_ratio"] <= TARGETS["webhook_ratio"]
                and row["receiver_kib_per_stream"] <= TARGETS["kib_per_stream"])


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def raise_nofile() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


# ---------------------------------------------------------------------------------- webhooks
def deliveries(host: str, port: int, secret: str, repo: str, count: int) -> list[float]:
    """Seconds each signed delivery took to be answered (one keep-alive connection)."""
    conn = http.client.HTTPConnection(host, port, timeout=15)
    took = []
    for n in range(count):
        body = json.dumps({"action": "opened", "number": 900000 + n % 7, "pull_request": {"number": 900000 + n % 7},
                           "repository": {"full_name": repo, "default_branch": "main"},
                           "sender": {"login": "ada"}}).encode()
        headers = {"Content-Type": "application/json", "X-GitHub-Event": "pull_request",
                   "X-GitHub-Delivery": str(uuid.uuid4()),
                   "X-Hub-Signature-256": "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()}
        started = time.perf_counter()
        conn.request("POST", "/webhooks/github", body=body, headers=headers)
        resp = conn.getresponse()
        resp.read()
        took.append(time.perf_counter() - started)
        if resp.status >= 300:
            raise RuntimeError(f"delivery answered {resp.status}")
    conn.close()
    return took


def worker_idle(redis_url: str, timeout: float = 120.0) -> None:
    """Wait until the stack's worker has nothing queued or running: each delivery enqueues an
    integration that the worker then runs against localhub, in the receiver's process, so
    every webhook measurement starts from the same idle worker (else the later ones would be
    measured against the backlog of the earlier ones, streams or not)."""
    from rq.registry import StartedJobRegistry

    from bot.queue import QUEUE, connect, get_queue

    redis = connect(redis_url)
    try:
        queue, started = get_queue(redis), StartedJobRegistry(QUEUE, connection=redis)
        deadline = time.monotonic() + timeout
        while (queue.count or started.count) and time.monotonic() < deadline:
            time.sleep(0.1)
        if queue.count or started.count:
            raise RuntimeError(f"the worker still had work after {timeout:g} s; the figures would measure its backlog")
    finally:
        redis.close()


def health(url: str, count: int = 50) -> list[float]:
    took = []
    with requests.Session() as session:
        for _ in range(count):
            started = time.perf_counter()
            assert session.get(f"{url}/healthz", timeout=15).status_code == 200
            took.append(time.perf_counter() - started)
    return took


# ---------------------------------------------------------------------------------- streams
def hold_streams(host: str, port: int, repo: str, token: str, count: int) -> None:
    """The agents' side, run as a child process (`--hold`): open `count` streams, print one
    line of JSON when they are open, then read every stream as its data comes (one epoll loop
    over plain sockets: no coroutine or task per stream, so what is measured is the receiver,
    not this reader), and for each sha read on stdin print when `id: <sha>` came on each
    stream (perf_counter: CLOCK_MONOTONIC, the same clock as the parent's)."""
    raise_nofile()
    request = (f"GET /v1/repos/{repo}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
               "Accept: text/event-stream\r\n\r\n").encode()
    poller = select.epoll()
    socks: dict[int, socket.socket] = {}
    opening: dict[int, bytes | None] = {}  # None: connecting; bytes: what it answered so far
    failed, todo, started = 0, count, time.perf_counter()

    def fail(fd: int) -> None:
        nonlocal failed
        poller.unregister(fd)
        socks.pop(fd).close()
        opening.pop(fd, None)
        failed += 1

    while todo or opening:
        while todo and len(opening) < CONNECT_CONCURRENCY:
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex((host, port))
            poller.register(sock.fileno(), select.EPOLLOUT)
            socks[sock.fileno()], opening[sock.fileno()] = sock, None
            todo -= 1
        ready = poller.poll(60)
        if not ready:
            for fd in list(opening):
                fail(fd)
        for fd, _ in ready:
            sock = socks[fd]
            if opening[fd] is None:
                if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    fail(fd)
                    continue
                sock.send(request)
                opening[fd] = b""
                poller.modify(fd, select.EPOLLIN)
                continue
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            answer = (opening[fd] or b"") + data
            if not data or (b"\r\n" in answer and b" 200 " not in answer.split(b"\r\n", 1)[0]):
                fail(fd)
            elif b"connected to" in answer:
                del opening[fd]
            else:
                opening[fd] = answer
    print(json.dumps({"open": len(socks), "failed": failed, "seconds": time.perf_counter() - started}), flush=True)
    poller.register(sys.stdin.fileno(), select.EPOLLIN)
    needle, deadline = b"", 0.0
    tails: dict[int, bytes] = {}
    arrived: dict[int, float] = {}
    while True:
        waiting = bool(needle) and len(arrived) < len(socks)
        ready = poller.poll(max(0.0, deadline - time.perf_counter()) if waiting else None)
        now = time.perf_counter()
        for fd, _ in ready:
            if fd == sys.stdin.fileno():
                line = sys.stdin.readline().strip()
                if not line:
                    return
                needle, deadline = f"id: {line}".encode(), now + STREAM_WAIT
                tails, arrived = {}, {}
                print(json.dumps({"waiting": line}), flush=True)
                continue
            try:
                data = socks[fd].recv(65536)
            except OSError:
                data = b""
            if not data:
                poller.unregister(fd)
                continue
            if needle and fd not in arrived:
                seen = tails.get(fd, b"") + data
                if needle in seen:
                    arrived[fd] = now
                else:
                    tails[fd] = seen[-len(needle):]
        if needle and (len(arrived) == len(socks) or time.perf_counter() >= deadline):
            print(json.dumps([arrived.get(fd) for fd in socks]), flush=True)
            needle = b""


class Streams:
    """N event streams held by a child process (`hold_streams`)."""

    def __init__(self, host: str, port: int, repo: str, token: str, count: int) -> None:
        self.child = subprocess.Popen([sys.executable, __file__, "--hold", host, str(port), repo, token, str(count)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.held = self.failed = 0

    def _line(self) -> Any:
        assert self.child.stdout is not None
        line = self.child.stdout.readline()
        if not line:
            raise RuntimeError(f"the stream holder exited ({self.child.wait()})")
        return json.loads(line)

    def open(self) -> None:
        opened = self._line()
        self.held, self.failed = opened["open"], opened["failed"]

    def expect(self, sha: str) -> None:
        """From now on the holder looks for `sha` (returns once it does)."""
        assert self.child.stdin is not None
        self.child.stdin.write(sha + "\n")
        self.child.stdin.flush()
        assert self._line() == {"waiting": sha}

    def arrivals(self) -> list[float | None]:
        """When each stream got the expected sha (None: not within STREAM_WAIT seconds)."""
        return list(self._line())

    def close(self) -> None:
        assert self.child.stdin is not None
        self.child.stdin.close()
        self.child.wait(timeout=60)


def run(args: argparse.Namespace) -> dict[str, Any]:
    limit = raise_nofile()
    print(f"open files allowed here: {limit}", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="memrepo-fanout-"))
    stack = LocalStack(tmp / "data")
    results: dict[str, Any] = {"bench": "fanout", "rows": []}
    try:
        web, api, receiver = stack.web, stack.api, stack.receiver
        host, port = receiver.removeprefix("http://").split(":")
        secret = json.loads((tmp / "data" / "serve.json").read_text())["webhook_secret"]
        token = stack.new_token("ada")
        assert requests.post(f"{api}/user/repos", json={"name": "memory", "private": True, "auto_init": True},
                             headers={"Authorization": f"token {token}"}, timeout=10).status_code == 201
        clone = tmp / "clone"
        git(tmp, "clone", "-q", web.replace("http://", f"http://x-access-token:{token}@") + "/ada/memory.git",
            str(clone))
        git(clone, "config", "user.name", "Ada")
        git(clone, "config", "user.email", "ada@example.com")
        pid = stack.process.pid
        deliveries(host, int(port), secret, "ada/memory", 30)  # warm up
        worker_idle(stack.urls["redis"])
        base = deliveries(host, int(port), secret, "ada/memory", args.deliveries)
        results["webhook_no_streams"] = {"p50_ms": pct(base, 0.5) * 1000, "p99_ms": pct(base, 0.99) * 1000}
        print(f"webhook, no streams: p50 {pct(base, .5) * 1000:.2f} ms, p99 {pct(base, .99) * 1000:.2f} ms",
              flush=True)
        for count in [int(n) for n in args.streams.split(",")]:
            before = rss_kib(pid)
            started = time.perf_counter()
            streams = Streams(host, int(port), "ada/memory", token, count)
            streams.open()
            opened = time.perf_counter() - started
            time.sleep(1.0)  # let the receiver settle before its memory is read
            after = rss_kib(pid)
            held = streams.held
            print(f"{count} streams: {held} open ({streams.failed} failed) in {opened:.1f} s; receiver memory "
                  f"{before / 1024:.0f} -> {after / 1024:.0f} MiB", flush=True)
            worker_idle(stack.urls["redis"])
            hooks = deliveries(host, int(port), secret, "ada/memory", args.deliveries)
            checks = health(receiver)
            (clone / "notes.md").write_text(f"note {count} {uuid.uuid4()}\n")
            git(clone, "add", "notes.md")
            git(clone, "commit", "-qm", f"note {count}")
            sha = git(clone, "rev-parse", "HEAD").strip()
            streams.expect(sha)
            pushed = time.perf_counter()
            subprocess.Popen(["git", "push", "-q", "origin", "HEAD:main"], cwd=clone).wait()
            arrived = streams.arrivals()
            delays = [a - pushed for a in arrived if a is not None]
            row = {
                "streams": count, "open": held, "open_seconds": round(opened, 2),
                "push_to_event_p50_ms": ms(delays, 0.5), "push_to_event_p99_ms": ms(delays, 0.99),
                "push_to_event_max_ms": max(delays) * 1000 if delays else None,
                "all_delivered": len(delays) == held == count,
                "webhook_p50_ms": pct(hooks, 0.5) * 1000, "webhook_p99_ms": pct(hooks, 0.99) * 1000,
                "webhook_p99_ratio": pct(hooks, 0.99) / pct(base, 0.99),
                "healthz_p50_ms": pct(checks, 0.5) * 1000, "healthz_p99_ms": pct(checks, 0.99) * 1000,
                "receiver_kib_per_stream": (after - before) / max(held, 1),
            }
            results["rows"].append(row)
            if delays:
                print(f"  push -> head event: p50 {row['push_to_event_p50_ms']:.0f} ms, p99 "
                      f"{row['push_to_event_p99_ms']:.0f} ms, all delivered: {row['all_delivered']} "
                      f"({len(delays)}/{held})", flush=True)
            else:
                print(f"  push -> head event: no stream got it (0/{held})", flush=True)
            print(f"  webhook with streams: p50 {row['webhook_p50_ms']:.2f} ms, p99 {row['webhook_p99_ms']:.2f} ms "
                  f"({row['webhook_p99_ratio']:.2f}x no streams); /healthz p50 {row['healthz_p50_ms']:.2f} ms, "
                  f"p99 {row['healthz_p99_ms']:.2f} ms; {row['receiver_kib_per_stream']:.1f} KiB per stream",
                  flush=True)
            streams.close()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and requests.get(f"{receiver}/healthz", timeout=10).json().get(
                    "streams", 0) > 0:
                time.sleep(0.2)
        measured = [row for row in results["rows"] if row["streams"]]
        if measured:
            results["targets_met"] = all(meets_targets(row) for row in measured)
            print(f"targets (p99 <= {TARGETS['push_p99_ms']:.0f} ms to every stream, webhook p99 <= "
                  f"{TARGETS['webhook_p99_ms']:.0f} ms and <= {TARGETS['webhook_ratio']}x, <= "
                  f"{TARGETS['kib_per_stream']:.0f} KiB per stream) met in every row: {results['targets_met']}",
                  flush=True)
        results["stats"] = {"python": sys.version.split()[0],
                            "median_webhook_ms": statistics.median(base) * 1000}
        return results
    finally:
        code = stack.stop()
        results["stack_exit"] = code
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def pull_requests(total: int, repos: int, workers: int, tmp: Path) -> dict[str, Any]:
    """Row 3: `total` dream pull requests over `repos` memories, `workers` worker processes."""
    import os

    from bot.contracts import LABEL_DREAM
    from bot.forge.client import ForgeClient
    from bot.forge.credentials import TokenCredentials
    from bot.forge.shapes import NewPullRequest
    from bot.memfs import sync
    from bot.memfs.create import init_repository
    from bot.serve.receiver import ReceiverServer
    from bot.settings import Settings
    from localhub.server import LocalhubServer
    from tests.memory_forge import FAST, as_dreamer, dream_body
    from tests.redis_server import RedisServer
    from webhooks.asgi import Receiver

    secret, bot = "bench-secret", "memrepo-bot"
    with RedisServer() as redis_server, LocalhubServer(tmp / "localhub") as hub:
        settings = Settings(redis_url=redis_server.url, webhook_secret=secret, agent_token="operator", bot_login=bot)
        receivers = [ReceiverServer(Receiver(settings), "127.0.0.1", 0).start() for _ in range(2)]
        token = hub.hub.token_for("alice")
        bot_token = hub.hub.token_for(bot)
        auth = {"Authorization": f"token {token}"}
        branches: list[tuple[str, str, str, str]] = []  # repo, branch, dream id, path
        clients, bases = {}, {}
        per_repo = total // repos
        for r in range(repos):
            repo = f"alice/memory-{r}"
            requests.post(f"{hub.api_url}/user/repos", json={"name": f"memory-{r}"}, headers=auth, timeout=10)
            requests.put(f"{hub.api_url}/repos/{repo}/collaborators/{bot}", json={"permission": "push"},
                         headers=auth, timeout=10)  # the integrator merges: it may write, as an App would
            requests.post(f"{hub.api_url}/repos/{repo}/hooks", headers=auth, timeout=10, json={
                "name": "web", "active": True, "events": ["push", "pull_request", "pull_request_review", "status"],
                "config": {"url": f"{receivers[r % 2].url}/webhooks/github", "content_type": "json",
                           "secret": secret}})
            url = hub.url.replace("http://", f"http://x-access-token:{token}@") + f"/{repo}.git"
            sync.set_remote(init_repository(tmp / f"m{r}", "a1", "Ada"), url)
            clone = tmp / f"c{r}"
            git(tmp, "clone", "-q", url, str(clone))
            bases[repo] = git(clone, "rev-parse", "HEAD").strip()
            clients[repo] = ForgeClient(repo, TokenCredentials(token), base_url=hub.api_url, policy=FAST,
                                        min_write_interval=0.0, timeout=30)
            for n in range(per_repo):
                dream_id = f"20260314T09{r:02d}{n:02d}Z-{n:08x}"
                branch, path = f"memrepo/dream/{dream_id}", f"reference/note-{n}.md"
                git(clone, "checkout", "-q", "-B", branch, bases[repo])
                (clone / "reference").mkdir(exist_ok=True)
                (clone / path).write_text(f"---\ndescription: Note {n}.\n---\n\nNote {n}.\n")
                git(clone, "add", "-A")
                git(clone, *as_dreamer(dream_id, f"dream {n}"))
                branches.append((repo, branch, dream_id, path))
            git(clone, "push", "-q", "origin", *[f"refs/heads/{b}:refs/heads/{b}" for rp, b, _, _ in branches
                                                 if rp == repo])
        procs = []
        for w in range(workers):
            env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMREPO_", "GITHUB_TOKEN"))}
            env.update({"REDIS_URL": redis_server.url, "MEMREPO_GITHUB_URL": hub.api_url,
                        "MEMREPO_GITHUB_TOKEN": bot_token, "MEMREPO_WORK_DIR": str(tmp / f"work-{w}"),
                        "MEMREPO_BOT_LOGIN": bot, "MEMREPO_WEBHOOK_SECRET": secret, "MEMREPO_AGENT_TOKEN": "x"})
            procs.append(subprocess.Popen([sys.executable, "-m", "bot.cli", "worker", "--reconcile-every", "10"],
                                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from rq import Worker

        from bot.queue import connect

        conn = connect(redis_server.url)
        while Worker.count(connection=conn) < workers:  # none of the measured time is theirs to start
            time.sleep(0.05)
        conn.close()
        started = time.perf_counter()
        numbers = []
        for repo, branch, dream_id, path in branches:
            pull = clients[repo].open_pull_request(NewPullRequest(
                head=branch, base="main", title=f"Dream {dream_id}", body=dream_body(dream_id, bases[repo], path),
                labels=(LABEL_DREAM,)))
            numbers.append((repo, pull.number))
        deadline = time.monotonic() + 300
        pending = list(numbers)
        while pending and time.monotonic() < deadline:
            pending = [(repo, n) for repo, n in pending if not clients[repo].get_pull_request(n).merged]
            if pending:
                time.sleep(0.2)
        took = time.perf_counter() - started
        doubles = 0
        for repo in bases:
            check = tmp / f"check-{repo.split('/')[1]}-{workers}"
            git(tmp, "clone", "-q", hub.url.replace("http://", f"http://x-access-token:{token}@") + f"/{repo}.git",
                str(check))
            doubles += max(0, len(git(check, "rev-list", "--first-parent", f"{bases[repo]}..HEAD").split()) - per_repo)
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)
        for server in receivers:
            server.stop()
        for client in clients.values():
            client.close()
    return {"workers": workers, "pull_requests": len(numbers), "repos": repos, "seconds": round(took, 2),
            "lost": len(pending), "double_merges": doubles}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", default="1000,5000,10000")
    parser.add_argument("--deliveries", type=int, default=300)
    parser.add_argument("--prs", type=int, default=0)
    parser.add_argument("--repos", type=int, default=10)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--hold", nargs=5, help=argparse.SUPPRESS)  # the stream holder's child process
    args = parser.parse_args()
    if args.hold:
        host, port, repo, token, count = args.hold
        hold_streams(host, int(port), repo, token, int(count))
        return 0
    try:
        results = run(args) if args.streams != "none" else {"bench": "fanout", "rows": []}
    except (RuntimeError, OSError) as exc:  # the stack or the stream holder failed: still one JSON line
        print(f"the benchmark stopped: {exc}", flush=True)
        print(json.dumps({"bench": "fanout", "error": str(exc)}, separators=(",", ":")))
        return 1
    if args.prs:
        rows = []
        for workers in (1, 3):
            tmp = Path(tempfile.mkdtemp(prefix="memrepo-prs-"))
            try:
                row = pull_requests(args.prs, args.repos, workers, tmp)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            rows.append(row)
            print(f"{row['pull_requests']} dream pull requests over {row['repos']} memories, {workers} worker(s): "
                  f"{row['seconds']} s, {row['lost']} lost, {row['double_merges']} merged twice", flush=True)
        rows[1]["speedup_vs_1_worker"] = round(rows[0]["seconds"] / rows[1]["seconds"], 2)
        results["pull_requests"] = rows
    print(json.dumps(results, separators=(",", ":"), allow_nan=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
