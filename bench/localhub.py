"""Benchmark: localhub as PyGithub sees it, over real HTTP on loopback.

Measures, in one run against one localhub (free port, temporary data):
- a pull request read (`repo.get_pull(n)`, one GET) against the baseline of the bare HTTP
  round trip, a raw `requests.get` of `GET /user` with the same token, and the same read
  through memrepo's forge client (`ForgeClient.get_pull_request`, PyGithub's requester plus
  the retry machinery); the three alternate so all see the same load;
- a merge (`pr.merge(sha=...)`, one PUT) of N pull requests on non-conflicting branches;
- webhook delivery: a repository hook points at a tiny local HTTP server; the time from the
  start of the REST call that causes the event (an issue comment) to the delivery's arrival.

Run from the project root: python bench/localhub.py [--reads N] [--merges N] [--hooks N]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import github
import requests

from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from localhub.server import LocalhubServer

OWNER = "bench"
REPO = f"{OWNER}/memory"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def git(cwd: Path, *args: str) -> str:
    env_args = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    return subprocess.run(["git", *env_args, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def push_branches(server: LocalhubServer, token: str, root: Path, names: list[str]) -> dict[str, str]:
    """One commit per branch, each adding its own file (so no two conflict); pushed at once."""
    url = server.url.replace("http://", f"http://x-access-token:{token}@") + f"/{REPO}.git"
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", url, str(clone)], check=True)
    heads: dict[str, str] = {}
    for name in names:
        git(clone, "checkout", "-q", "-B", name, "origin/main")
        (clone / f"{name}.md").write_text(f"# {name}\n\nA memory written on branch {name}.\n")
        git(clone, "add", "-A")
        git(clone, "commit", "-q", "--no-verify", "-m", f"{name}: add a note")
        heads[name] = git(clone, "rev-parse", "HEAD").strip()
    git(clone, "push", "-q", "origin", *names)
    return heads


def wait_mergeable(repo: github.Repository.Repository, number: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while repo.get_pull(number).mergeable is None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"pull request #{number} never became mergeable")
        time.sleep(0.05)


class _Receiver(BaseHTTPRequestHandler):
    """Records (arrival time, event, body) of each webhook delivery."""

    arrivals: queue.Queue[tuple[float, str, dict]] = queue.Queue()

    def do_POST(self) -> None:
        arrived = time.perf_counter()
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.arrivals.put((arrived, self.headers.get("X-GitHub-Event", ""), json.loads(body or b"{}")))

    def log_message(self, *args: object) -> None:
        return None


def summary(values_s: list[float]) -> tuple[float, float, float]:
    """(median ms, p99 ms, requests per second when done one after the other)."""
    return (statistics.median(values_s) * 1000, percentile(values_s, 0.99) * 1000,
            len(values_s) / sum(values_s))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reads", type=int, default=500)
    parser.add_argument("--merges", type=int, default=40)
    parser.add_argument("--hooks", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memrepo-bench-localhub-") as tmp:
        root = Path(tmp)
        with LocalhubServer(root / "data") as server:
            token = server.hub.token_for(OWNER)
            gh = github.Github(auth=github.Auth.Token(token), base_url=server.api_url, retry=None,
                               seconds_between_requests=None, seconds_between_writes=None)
            repo = gh.get_user().create_repo("memory", auto_init=True)
            branches = ["read", *(f"merge-{i:03d}" for i in range(args.merges))]
            heads = push_branches(server, token, root, branches)

            # PR read vs. bare round trip, alternating.
            read_pr = repo.create_pull(base="main", head="read", title="Read me", body="bench")
            session = requests.Session()
            session.headers["Authorization"] = f"token {token}"
            user_url = f"{server.api_url}/user"
            client = ForgeClient(REPO, TokenCredentials(token), base_url=server.api_url, min_write_interval=0)
            for _ in range(20):  # warm up every path
                session.get(user_url, timeout=10).raise_for_status()
                repo.get_pull(read_pr.number)
                client.get_pull_request(read_pr.number)
            baseline: list[float] = []
            reads: list[float] = []
            client_reads: list[float] = []
            for _ in range(args.reads):
                start = time.perf_counter()
                session.get(user_url, timeout=10).raise_for_status()
                baseline.append(time.perf_counter() - start)
                start = time.perf_counter()
                repo.get_pull(read_pr.number)
                reads.append(time.perf_counter() - start)
                start = time.perf_counter()
                client.get_pull_request(read_pr.number)
                client_reads.append(time.perf_counter() - start)
            client.close()

            # Merges: open every pull request first, then time each merge alone.
            pulls = [(repo.create_pull(base="main", head=name, title=f"Merge {name}", body="bench"), heads[name])
                     for name in branches[1:]]
            merges: list[float] = []
            for pr, sha in pulls:
                wait_mergeable(repo, pr.number)
                start = time.perf_counter()
                status = pr.merge(sha=sha, merge_method="merge")
                merges.append(time.perf_counter() - start)
                assert status.merged, f"#{pr.number} did not merge"

            # Webhooks: from the start of the REST call that causes the event to its arrival.
            receiver = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
            threading.Thread(target=receiver.serve_forever, daemon=True).start()
            hook_url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
            repo.create_hook("web", {"url": hook_url, "content_type": "json"}, events=["issue_comment"], active=True)
            arrived, event, _ = _Receiver.arrivals.get(timeout=30)
            assert event == "ping", event
            issue = repo.get_issue(read_pr.number)
            hooks: list[float] = []
            calls: list[float] = []
            for i in range(args.hooks):
                start = time.perf_counter()
                issue.create_comment(f"comment {i}")
                calls.append(time.perf_counter() - start)
                arrived, event, payload = _Receiver.arrivals.get(timeout=30)
                assert event == "issue_comment" and payload["comment"]["body"] == f"comment {i}", (event, payload)
                hooks.append(arrived - start)
            receiver.shutdown()
            receiver.server_close()
            gh.close()

    base_med, base_p99, base_rps = summary(baseline)
    read_med, read_p99, read_rps = summary(reads)
    client_med, client_p99, client_rps = summary(client_reads)
    merge_med, merge_p99, merge_rps = summary(merges)
    hook_med, hook_p99, _ = summary(hooks)
    call_med, _, _ = summary(calls)
    figures = {
        "reads": args.reads, "merges": args.merges, "hooks": args.hooks,
        "baseline_get_user_median_ms": round(base_med, 3), "baseline_get_user_p99_ms": round(base_p99, 3),
        "baseline_get_user_rps": round(base_rps, 1),
        "pr_read_median_ms": round(read_med, 3), "pr_read_p99_ms": round(read_p99, 3),
        "pr_read_rps": round(read_rps, 1),
        "median_ratio_pr_read_to_baseline": round(read_med / base_med, 2),
        "client_pr_read_median_ms": round(client_med, 3), "client_pr_read_p99_ms": round(client_p99, 3),
        "client_pr_read_rps": round(client_rps, 1),
        "median_ratio_client_read_to_baseline": round(client_med / base_med, 2),
        "merge_median_ms": round(merge_med, 3), "merge_p99_ms": round(merge_p99, 3),
        "merge_rps": round(merge_rps, 1),
        "median_ratio_merge_to_baseline": round(merge_med / base_med, 2),
        "webhook_median_ms": round(hook_med, 3), "webhook_p99_ms": round(hook_p99, 3),
        "comment_call_median_ms": round(call_med, 3),
    }
    print(f"localhub over loopback HTTP, through PyGithub {importlib.metadata.version('PyGithub')}")
    print(f"baseline GET /user (raw requests): median {base_med:.2f} ms, p99 {base_p99:.2f} ms, "
          f"{base_rps:.0f} req/s ({args.reads} runs)")
    print(f"PR read (get_pull):                median {read_med:.2f} ms, p99 {read_p99:.2f} ms, "
          f"{read_rps:.0f} req/s  ({read_med / base_med:.2f}x baseline)")
    print(f"PR read (ForgeClient):             median {client_med:.2f} ms, p99 {client_p99:.2f} ms, "
          f"{client_rps:.0f} req/s  ({client_med / base_med:.2f}x baseline)")
    print(f"merge (pr.merge with sha):         median {merge_med:.2f} ms, p99 {merge_p99:.2f} ms, "
          f"{merge_rps:.1f} merges/s ({args.merges} pull requests, {merge_med / base_med:.1f}x baseline)")
    print(f"webhook, REST call -> arrival:     median {hook_med:.2f} ms, p99 {hook_p99:.2f} ms "
          f"(the comment call itself: median {call_med:.2f} ms; {args.hooks} events)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
