"""Benchmark of the agents' event stream at scale: `python bench/fanout.py` from the project root.

Runs `memrepo serve --local` (localhub, Redis, the receiver, a worker) as a subprocess in a
temporary folder, makes ada's private memory on its localhub and a clone of it, and raises
this process's limit on open files (the receiver raises its own). Then, in one run:

1. Webhooks with no stream open: `--deliveries` signed `pull_request` deliveries, one after
   another on one keep-alive connection; p50 / p99 of the answer (the baseline).
2. For each N in `--streams` (1000,5000,10000): N idle streams on ada/memory, opened with
   ada's own localhub token (the receiver asks localhub once, then its cache answers), by an
   asyncio client in this process; then the same deliveries again, and `/healthz` 50 times;
   the receiver's resident memory before and after (its process, /proc), per stream; then one
   commit pushed over git to main, and per stream the time from the start of the push to the
   head event for that commit: p50, p99, max, and whether every stream got it.

Prints readable lines, then one line of JSON with the figures (webhook ratios against the
no-stream baseline of the same run). Targets on a 2-core machine: push -> every stream p99
<= 1 s, webhook p99 <= 20 ms and within 1.5x of no streams, <= 20 KiB per stream.

Options: --streams 1000,5000,10000  --deliveries 300  --keep
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import http.client
import json
import resource
import shutil
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

from bot.serve.child import LocalStack  # noqa: E402

CONNECT_CONCURRENCY = 256


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


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


def health(url: str, count: int = 50) -> list[float]:
    took = []
    with requests.Session() as session:
        for _ in range(count):
            started = time.perf_counter()
            assert session.get(f"{url}/healthz", timeout=15).status_code == 200
            took.append(time.perf_counter() - started)
    return took


# ---------------------------------------------------------------------------------- streams
class Streams:
    """N event streams held by asyncio in a thread of this process."""

    def __init__(self, host: str, port: int, repo: str, token: str) -> None:
        self.host, self.port, self.repo, self.token = host, port, repo, token
        self.writers: list[asyncio.StreamWriter] = []
        self.readers: list[asyncio.StreamReader] = []
        self.failed = 0

    async def open_one(self, gate: asyncio.Semaphore) -> None:
        async with gate:
            try:
                reader, writer = await asyncio.open_connection(self.host, self.port, limit=1 << 16)
                writer.write(f"GET /v1/repos/{self.repo}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                             f"{self.token}\r\nAccept: text/event-stream\r\n\r\n".encode())
                await writer.drain()
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
                if b" 200 " not in head.split(b"\r\n", 1)[0]:
                    raise RuntimeError(head.split(b"\r\n", 1)[0].decode())
                await asyncio.wait_for(reader.readuntil(b"connected to"), 60)
                self.readers.append(reader)
                self.writers.append(writer)
            except Exception:
                self.failed += 1

    async def open(self, count: int) -> None:
        gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
        await asyncio.gather(*(self.open_one(gate) for _ in range(count)))

    async def wait_for(self, sha: str, timeout: float) -> list[float | None]:
        needle = f"id: {sha}".encode()

        async def one(reader: asyncio.StreamReader) -> float | None:
            try:
                await asyncio.wait_for(reader.readuntil(needle), timeout)
                return time.perf_counter()
            except Exception:
                return None

        return list(await asyncio.gather(*(one(r) for r in self.readers)))

    async def close(self) -> None:
        for writer in self.writers:
            writer.close()
        self.writers.clear()
        self.readers.clear()


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
        token = requests.post(f"{web}/_localhub/tokens", json={"login": "ada"}, timeout=10).json()["token"]
        assert requests.post(f"{api}/user/repos", json={"name": "memory", "private": True, "auto_init": True},
                             headers={"Authorization": f"token {token}"}, timeout=10).status_code == 201
        clone = tmp / "clone"
        git(tmp, "clone", "-q", web.replace("http://", f"http://x-access-token:{token}@") + "/ada/memory.git",
            str(clone))
        git(clone, "config", "user.name", "Ada")
        git(clone, "config", "user.email", "ada@example.com")
        pid = stack.process.pid
        deliveries(host, int(port), secret, "ada/memory", 30)  # warm up
        base = deliveries(host, int(port), secret, "ada/memory", args.deliveries)
        results["webhook_no_streams"] = {"p50_ms": pct(base, 0.5) * 1000, "p99_ms": pct(base, 0.99) * 1000}
        print(f"webhook, no streams: p50 {pct(base, .5) * 1000:.2f} ms, p99 {pct(base, .99) * 1000:.2f} ms",
              flush=True)
        loop = asyncio.new_event_loop()
        for count in [int(n) for n in args.streams.split(",")]:
            streams = Streams(host, int(port), "ada/memory", token)
            before = rss_kib(pid)
            started = time.perf_counter()
            loop.run_until_complete(streams.open(count))
            opened = time.perf_counter() - started
            time.sleep(1.0)  # let the receiver settle before its memory is read
            after = rss_kib(pid)
            held = len(streams.readers)
            print(f"{count} streams: {held} open ({streams.failed} failed) in {opened:.1f} s; receiver memory "
                  f"{before / 1024:.0f} -> {after / 1024:.0f} MiB", flush=True)
            hooks = deliveries(host, int(port), secret, "ada/memory", args.deliveries)
            checks = health(receiver)
            (clone / "notes.md").write_text(f"note {count} {uuid.uuid4()}\n")
            git(clone, "add", "notes.md")
            git(clone, "commit", "-qm", f"note {count}")
            sha = git(clone, "rev-parse", "HEAD").strip()
            pushed = time.perf_counter()
            waiting = loop.create_task(streams.wait_for(sha, 30.0))
            loop.run_until_complete(asyncio.sleep(0))
            subprocess.Popen(["git", "push", "-q", "origin", "HEAD:main"], cwd=clone).wait()
            arrived = loop.run_until_complete(waiting)
            delays = [a - pushed for a in arrived if a is not None]
            row = {
                "streams": count, "open": held, "open_seconds": round(opened, 2),
                "push_to_event_p50_ms": pct(delays, 0.5) * 1000, "push_to_event_p99_ms": pct(delays, 0.99) * 1000,
                "push_to_event_max_ms": max(delays) * 1000 if delays else None,
                "all_delivered": len(delays) == held == count,
                "webhook_p50_ms": pct(hooks, 0.5) * 1000, "webhook_p99_ms": pct(hooks, 0.99) * 1000,
                "webhook_p99_ratio": pct(hooks, 0.99) / pct(base, 0.99),
                "healthz_p50_ms": pct(checks, 0.5) * 1000, "healthz_p99_ms": pct(checks, 0.99) * 1000,
                "receiver_kib_per_stream": (after - before) / max(held, 1),
            }
            results["rows"].append(row)
            print(f"  push -> head event: p50 {row['push_to_event_p50_ms']:.0f} ms, p99 "
                  f"{row['push_to_event_p99_ms']:.0f} ms, all delivered: {row['all_delivered']} "
                  f"({len(delays)}/{held})", flush=True)
            print(f"  webhook with streams: p50 {row['webhook_p50_ms']:.2f} ms, p99 {row['webhook_p99_ms']:.2f} ms "
                  f"({row['webhook_p99_ratio']:.2f}x no streams); /healthz p50 {row['healthz_p50_ms']:.2f} ms, "
                  f"p99 {row['healthz_p99_ms']:.2f} ms; {row['receiver_kib_per_stream']:.1f} KiB per stream",
                  flush=True)
            loop.run_until_complete(streams.close())
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and requests.get(f"{receiver}/healthz", timeout=10).json().get(
                    "streams", 0) > 0:
                time.sleep(0.2)
        loop.close()
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", default="1000,5000,10000")
    parser.add_argument("--deliveries", type=int, default=300)
    parser.add_argument("--keep", action="store_true")
    results = run(parser.parse_args())
    print(json.dumps(results, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
