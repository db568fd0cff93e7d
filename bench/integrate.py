"""Benchmark of the integrator end to end: `python bench/integrate.py` from the project root.

Runs `memrepo serve --local` (localhub, Redis, the webhook receiver, the integrator worker) as a
subprocess in a temporary folder, creates alice/memory on its localhub from `memrepo init`'s
template, and makes `--agents` clones of it, each followed by a HeadSubscriber on the receiver's
event stream and compiled by its own PromptCompiler.

1. Latency (`--rounds` rounds, one at a time): push a `memrepo/dream/<id>` branch that appends a
   bullet with a unique marker to system/human.md (core memory, shown in the prompt), then open a
   dream pull request (as the dreamer opens it: one request, no labels). Measured from the
   moment the pull request is opened: merged (the PR polled every 0.1 s), and each agent's
   clone at the merge commit with `compile()` showing the marker. Reported: p50 / p99 of "all
   agents recompiled" (targets p50 <= 1 s, p99 <= 3 s).
2. Burst (`--burst` pull requests): `merge: explicit` in .memrepo/config.yml and a shared file
   reference/burst.md committed and pushed to main; then N branches that each append a distinct
   bullet to the end of that file (every pair overlaps), pushed in one push, and N pull requests
   opened at once (8 threads). Waits (deadline `--deadline`, 120 s) until the receiver's event
   stream has announced every PR's merge (or the forge lists none open, asked on every head event,
   since a batch announces one for many merges, and every 5 s), then
   reads every PR back and checks: every PR merged, every bullet on main exactly once (no lost
   edit), one integrator merge commit per PR on main's first-parent history (no double merge),
   total time to the last announced merge (target <= 15 s, nothing lost).

3. Budget, for each phase: what the integrator (memrepo-bot) and the dreamer (alice, whose
   pull request openings the bench makes as the dreamer does) asked of localhub, from its own
   count by account and method (`GET /_localhub/requests`): `budget: {content_writes, reads,
   git_requests, merged, writes_per_merged, reads_per_merged, dreams_per_hour_ceiling}`.
   Content-generating requests are REST POST, PUT, PATCH and DELETE; reads are the
   integrator's GETs (the bench's own polling as alice is left out); the ceiling is the most
   merged dreams an hour the integrator's App installation can sustain under GitHub's
   documented limits (`ceiling`; the dreamer opens with the agent's own token), and
   `dreams_per_hour_ceiling_one_identity` the same were the dreamer to share it. Targets: at most 0.5 integrator and 1.5
   content-generating requests in all per merged dream in the burst, a ceiling of at least
   1,000 an hour.

Prints readable lines, then one line of JSON with the figures. serve --local is always stopped
(SIGINT, then wait) at the end; if something stalls it prints the webhook delivery count and
the worker log's path and tail.

Options: --agents 10  --rounds 20  --burst 100  --deadline 120  --keep (keep the temp folder)
         --merge-api (MEMREPO_MERGE_BY_PUSH=0: each pull request through the merge API, for comparison)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import requests

from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.forge.retry import RetryPolicy
from bot.forge.shapes import NewPullRequest
from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.memfs.prompt.compiler import PromptCompiler
from bot.notify.events import HeadEvent
from bot.notify.follower import HeadSubscriber, parse_sse, shutdown_response
from tests.memory_forge import as_dreamer, dream_body
from tests.served import LocalStack

ROOT = Path(__file__).resolve().parent.parent
ROUND_TIMEOUT = 30.0
HUMAN = "system/human.md"
BURST = "reference/burst.md"
CONFIG = ".memrepo/config.yml"
BURST_TEXT = "---\ndescription: Items added by a burst of concurrent dreams.\n---\n# Burst\n\n- seed item\n"
TARGET_P50 = 1.0
TARGET_P99 = 3.0
TARGET_BURST_S = 15.0  # on localhub, nothing lost
INTEGRATOR = "memrepo-bot"  # serve --local's integrator account
DREAMER = "alice"
WRITES = ("POST", "PUT", "PATCH", "DELETE")  # GitHub's content-generating methods
# GitHub's documented REST limits for one App installation (the least it gets): 5,000 requests
# an hour; secondary: 80 content-generating requests a minute and 500 an hour, 900 points a
# minute (a GET 1 point, a write 5).
PRIMARY_PER_HOUR = 5000
WRITES_PER_MINUTE = 80
WRITES_PER_HOUR = 500
POINTS_PER_MINUTE = 900
TARGET_WRITES_PER_MERGED = 0.5
TARGET_ALL_WRITES_PER_MERGED = 1.5
TARGET_CEILING = 1000


# --------------------------------------------------------------------- helpers
def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {done.stderr.strip()}")
    return done.stdout


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def delivery_count(served: LocalStack, token: str, repo: str) -> int:
    """Webhook deliveries localhub recorded for the repository's hooks."""
    headers = {"Authorization": f"token {token}"}
    total = 0
    for hook in requests.get(f"{served.api}/repos/{repo}/hooks", headers=headers, timeout=10).json():
        page = 1
        while True:
            rows = requests.get(f"{served.api}/repos/{repo}/hooks/{hook['id']}/deliveries", headers=headers,
                                params={"per_page": 100, "page": page}, timeout=30).json()
            total += len(rows)
            if len(rows) < 100:
                break
            page += 1
    return total


def stalled(served: LocalStack, token: str, repo: str, why: str) -> None:
    print(f"STALL: {why}")
    with contextlib.suppress(Exception):
        print(f"  webhook deliveries recorded by localhub: {delivery_count(served, token, repo)}")
    print(f"  worker log: {served.worker_log}")
    with contextlib.suppress(OSError):
        tail = served.worker_log.read_text(errors="replace")[-2000:]
        print("  worker log tail:\n" + "\n".join("    " + line for line in tail.splitlines()))


def usage(served: LocalStack) -> dict[str, dict[str, int]]:
    """localhub's own count of requests, by account and method (`git` for the transport)."""
    from localhub.operator import read_operator_token

    headers = {"Authorization": f"Bearer {read_operator_token(served.data / 'localhub')}"}
    resp = requests.get(f"{served.web}/_localhub/requests", headers=headers, timeout=10)
    resp.raise_for_status()
    return resp.json()["by_account"]


def ceiling(writes_per_merged: float, reads_per_merged: float) -> int:
    """Merged dreams an hour one App installation sustains under GitHub's documented limits:
    the tightest of the primary limit, the hourly and per-minute content-generating limits and
    the per-minute points."""
    bounds = [PRIMARY_PER_HOUR / max(writes_per_merged + reads_per_merged, 1e-9)]
    if writes_per_merged > 0:
        bounds += [WRITES_PER_HOUR / writes_per_merged, 60 * WRITES_PER_MINUTE / writes_per_merged]
    bounds.append(60 * POINTS_PER_MINUTE / max(5 * writes_per_merged + reads_per_merged, 1e-9))
    return int(min(bounds))


def budget(before: dict[str, dict[str, int]], after: dict[str, dict[str, int]], merged: int) -> dict:
    """What one phase spent: the difference of two counts, per merged pull request."""
    def spent(account: str, kinds: tuple[str, ...]) -> int:
        now, then = after.get(account, {}), before.get(account, {})
        return sum(now.get(k, 0) - then.get(k, 0) for k in kinds)

    integrator_writes = spent(INTEGRATOR, WRITES)
    dreamer_writes = spent(DREAMER, WRITES)
    reads = spent(INTEGRATOR, ("GET", "HEAD"))
    per = max(merged, 1)
    writes_per = (integrator_writes + dreamer_writes) / per
    return {"content_writes": integrator_writes + dreamer_writes, "integrator_writes": integrator_writes,
            "dreamer_writes": dreamer_writes, "reads": reads, "git_requests": spent(INTEGRATOR, ("git",)),
            "merged": merged, "writes_per_merged": round(writes_per, 3),
            "integrator_writes_per_merged": round(integrator_writes / per, 3),
            "reads_per_merged": round(reads / per, 3),
            # the App installation's own ceiling (the dreamer opens with the agent's token) ...
            "dreams_per_hour_ceiling": ceiling(integrator_writes / per, reads / per),
            # ... and the ceiling if the dreamer opened its pull requests as the same identity
            "dreams_per_hour_ceiling_one_identity": ceiling(writes_per, reads / per)}


def show_budget(name: str, b: dict) -> None:
    print(f"  budget ({name}): {b['content_writes']} content-generating requests ({b['integrator_writes']} "
          f"integrator, {b['dreamer_writes']} dreamer), {b['reads']} integrator reads, {b['git_requests']} "
          f"integrator git requests for {b['merged']} merged: {b['writes_per_merged']} writes "
          f"({b['integrator_writes_per_merged']} integrator) and {b['reads_per_merged']} reads per merged; "
          f"ceiling {b['dreams_per_hour_ceiling']} merged dreams an hour for the integrator's App installation "
          f"({b['dreams_per_hour_ceiling_one_identity']} if the dreamer opened as the same identity)")


class Agent:
    """One agent: a clone, its HeadSubscriber and its PromptCompiler."""

    def __init__(self, root: Path, events_url: str, token: str) -> None:
        self.root = root
        self.compiler = PromptCompiler(root)
        self.subscriber = HeadSubscriber(root, events_url, token)

    def shows(self, marker: str) -> tuple[bool, str]:
        compiled = self.compiler.compile()
        return marker in compiled.text, compiled.head_sha


class MergeWatcher:
    """Reads the receiver's event stream and records the pull requests whose merge was
    announced, and when the last one arrived."""

    def __init__(self, events_url: str, token: str) -> None:
        self.merged: set[int] = set()
        self.heads = 0  # head events of any cause: a batch merges many pull requests with one
        self.last_at = 0.0
        self._changed = threading.Condition()
        self._response = requests.get(events_url, headers={"Authorization": f"Bearer {token}"}, stream=True,
                                      timeout=(10, None))
        self._response.raise_for_status()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        with contextlib.suppress(Exception):  # the stream ends when close() shuts it
            for message in parse_sse(self._response.iter_content(chunk_size=None)):
                if message.event != "head":
                    continue
                event = HeadEvent.from_json(message.data)
                with self._changed:
                    self.heads += 1
                    self.last_at = time.monotonic()
                    if event.cause == "merge" and event.pr is not None:
                        self.merged.add(event.pr)
                    self._changed.notify_all()

    def wait_for(self, numbers: set[int], timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: numbers <= self.merged, timeout)

    def wait_head(self, seen: int, timeout: float) -> int:
        """The count of head events once it passes `seen` (or `timeout` passes)."""
        with self._changed:
            self._changed.wait_for(lambda: self.heads > seen, timeout)
            return self.heads

    def close(self) -> None:
        shutdown_response(self._response)


# --------------------------------------------------------------------- phases
def latency_round(n: int, author: Path, client: ForgeClient, agents: list[Agent]) -> dict:
    dream_id = f"20260314T{9 + n // 3600:02d}{n // 60 % 60:02d}{n % 60:02d}Z-{0xa0000000 + n:08x}"
    branch = f"memrepo/dream/{dream_id}"
    marker = f"latency marker {n:03d} {dream_id[-8:]}"
    git(author, "fetch", "-q", "origin")
    base = git(author, "rev-parse", "origin/main").strip()
    git(author, "checkout", "-q", "-B", branch, "origin/main")
    path = author / HUMAN
    path.write_text(path.read_text().rstrip("\n") + f"\n- {marker}\n")
    git(author, "add", "-A")
    git(author, *as_dreamer(dream_id, f"dream: {marker}"))
    git(author, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")

    began = time.monotonic()
    pr = client.open_pull_request(NewPullRequest(head=branch, base="main", title=f"Dream {dream_id}",
                                                 body=dream_body(dream_id, base, HUMAN)))
    opened = time.monotonic() - began
    merged: dict = {}

    def watch() -> None:
        while time.monotonic() - began < ROUND_TIMEOUT:
            state = client.get_pull_request(pr.number)
            if state.merged:
                merged["t"] = time.monotonic() - began
                merged["sha"] = state.merge_commit_sha
                return
            if state.state == "closed":
                merged["closed"] = True
                return
            time.sleep(0.1)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    seen: dict[int, tuple[float, str]] = {}
    while len(seen) < len(agents) and time.monotonic() - began < ROUND_TIMEOUT:
        for i, agent in enumerate(agents):
            if i not in seen:
                ok, head = agent.shows(marker)
                if ok:
                    seen[i] = (time.monotonic() - began, head)
        time.sleep(0.005)
    watcher.join(ROUND_TIMEOUT)
    heads = {head for _, head in seen.values()}
    return {
        "pr": pr.number, "open_s": opened, "merged_s": merged.get("t"), "merge_sha": merged.get("sha"),
        "agents_done": len(seen), "first_s": min((t for t, _ in seen.values()), default=None),
        "all_s": max(t for t, _ in seen.values()) if len(seen) == len(agents) else None,
        "at_merge_sha": heads == {merged.get("sha")} if merged.get("sha") else False,
    }


def burst(n: int, author: Path, clients: list[ForgeClient], deadline_s: float, events_url: str,
          agent_token: str) -> dict:
    git(author, "fetch", "-q", "origin")
    git(author, "checkout", "-q", "-B", "main", "origin/main")
    config = (author / CONFIG).read_text()
    wanted = re.sub(r"(?m)^merge:.*$", "merge: explicit", config)
    config_changed = wanted != config
    if config_changed:
        (author / CONFIG).write_text(wanted)
    (author / BURST).parent.mkdir(parents=True, exist_ok=True)
    (author / BURST).write_text(BURST_TEXT)
    git(author, "add", "-A")
    git(author, "commit", "-qm", "burst: merge explicit, shared file")
    git(author, "push", "-q", "origin", "HEAD:refs/heads/main")
    base = git(author, "rev-parse", "HEAD").strip()

    bullets = [f"- burst item {i:03d} {os.urandom(4).hex()}" for i in range(n)]
    branches = []
    for i, bullet in enumerate(bullets):
        dream_id = f"20260315T{10 + i // 3600:02d}{i // 60 % 60:02d}{i % 60:02d}Z-{0xb0000000 + i:08x}"
        branch = f"memrepo/dream/{dream_id}"
        git(author, "checkout", "-q", "-B", branch, base)
        (author / BURST).write_text(BURST_TEXT + bullet + "\n")
        git(author, "add", "-A")
        git(author, *as_dreamer(dream_id, f"dream: burst item {i:03d}"))
        branches.append((dream_id, branch))
    for start in range(0, n, 50):
        git(author, "push", "-q", "origin", *[f"refs/heads/{b}:refs/heads/{b}" for _, b in branches[start:start + 50]])
    git(author, "checkout", "-q", "main")

    def open_one(i: int) -> int:
        dream_id, branch = branches[i]
        client = clients[i % len(clients)]
        return client.open_pull_request(NewPullRequest(
            head=branch, base="main", title=f"Dream {dream_id}", body=dream_body(dream_id, base, BURST))).number

    watcher = MergeWatcher(events_url, agent_token)
    began = time.monotonic()
    with ThreadPoolExecutor(len(clients)) as pool:
        numbers = list(pool.map(open_one, range(n)))
    opened_s = time.monotonic() - began
    print(f"  burst: {n} pull requests opened in {opened_s:.2f} s")

    # Done when every pull request's merge has been announced on the event stream (what agents
    # see), or when the forge lists none open. A batch merges many pull requests with one push
    # and announces one head event, so the open pull requests are listed on every head event
    # (and every 5 s, for one closed without a merge).
    wanted = set(numbers)
    last_report = last_listed = began
    done_s = None
    heads = 0
    while time.monotonic() - began < deadline_s:
        if watcher.wait_for(wanted, timeout=0):
            done_s = watcher.last_at - began
            break
        seen, heads = heads, watcher.wait_head(heads, timeout=0.5)
        now = time.monotonic()
        if heads > seen or now - last_listed >= 5:
            last_listed = now
            open_left = len(clients[0].list_open_pull_requests(base="main"))
            if open_left == 0:
                done_s = (watcher.last_at if heads > seen else time.monotonic()) - began
                break
            if now - last_report >= 10:
                print(f"  burst: {now - began:5.1f} s, {open_left} still open")
                last_report = now
    watcher.close()
    if done_s is None:
        done_s = time.monotonic() - began

    with ThreadPoolExecutor(len(clients)) as pool:
        states = list(pool.map(lambda i: clients[i % len(clients)].get_pull_request(numbers[i]), range(n)))
    merged = [s for s in states if s.merged]
    closed_unmerged = [s.number for s in states if s.state == "closed" and not s.merged]
    still_open = [s.number for s in states if s.state == "open"]

    git(author, "fetch", "-q", "origin")
    text = git(author, "show", f"origin/main:{BURST}")
    lines = text.splitlines()
    counts = [lines.count(b) for b in bullets]
    merged_numbers = {s.number for s in merged}
    # lost: a merged PR whose bullet is not on main; a PR not merged yet is counted as not integrated
    lost = sum(1 for i, c in enumerate(counts) if c == 0 and numbers[i] in merged_numbers)
    duplicated = sum(1 for c in counts if c > 1)
    merges = git(author, "rev-list", "--first-parent", "--merges", f"{base}..origin/main").split()
    merge_shas = {s.merge_commit_sha for s in merged}
    # A PR merged twice would show as a second merge commit whose second parent is that PR's branch.
    second_parents = [git(author, "rev-parse", f"{m}^2").strip() for m in merges]
    by_head: dict[str, int] = {}
    for parent in second_parents:
        by_head[parent] = by_head.get(parent, 0) + 1
    double = sum(1 for c in by_head.values() if c > 1)
    return {
        "prs": n, "config_changed": config_changed, "opened_s": round(opened_s, 2),
        "all_closed": not still_open, "total_s": round(done_s, 2),
        "merged": len(merged), "closed_unmerged": closed_unmerged, "still_open": still_open,
        "bullets_present_once": sum(1 for c in counts if c == 1), "not_integrated": n - len(merged),
        "lost_edits": lost, "duplicated_edits": duplicated,
        "merge_commits_first_parent": len(merges), "merge_commits_matching_prs": len(merge_shas & set(merges)),
        "double_merges": double + max(0, len(merges) - len(merged)),
    }


# --------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--burst", type=int, default=100)
    parser.add_argument("--deadline", type=float, default=120.0)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--merge-api", action="store_true",
                        help="merge each pull request through the merge API (MEMREPO_MERGE_BY_PUSH=0), for comparison")
    args = parser.parse_args(argv)
    if args.merge_api:
        os.environ["MEMREPO_MERGE_BY_PUSH"] = "0"

    tmp = Path(tempfile.mkdtemp(prefix="memrepo-bench-integrate-"))
    home = tmp / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Bench Person\n\temail = bench@example.com\n"
                                     "[init]\n\tdefaultBranch = main\n")
    os.environ.update({"HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"})
    cores = os.cpu_count() or 1
    print(f"integrator benchmark: serve --local, {args.agents} agents, {args.rounds} latency rounds, burst of "
          f"{args.burst}, {cores} cores, temp {tmp}")

    served: LocalStack | None = None
    agents: list[Agent] = []
    clients: list[ForgeClient] = []
    result: dict = {"bench": "integrate", "agents": args.agents, "rounds": args.rounds, "burst_size": args.burst,
                    "cores": cores, "merge": "merge API" if args.merge_api else "one push of main per batch"}
    code = 0
    try:
        began = time.monotonic()
        served = LocalStack(tmp / "data")
        print(f"  serve --local up in {time.monotonic() - began:.1f} s; receiver {served.receiver}")
        token = served.new_token("alice")
        requests.post(f"{served.api}/user/repos", json={"name": "memory"},
                      headers={"Authorization": f"token {token}"}, timeout=10).raise_for_status()
        memory = init_repository(tmp / "memory", "a1", "Ada")
        url = served.web.replace("http://", f"http://x-access-token:{token}@") + "/alice/memory.git"
        sync.set_remote(memory, url)
        author = tmp / "author"
        git(tmp, "clone", "-q", url, str(author))
        policy = RetryPolicy(max_total_seconds=30.0, max_attempts=8, backoff_base=0.05, backoff_cap=1.0)
        clients = [ForgeClient("alice/memory", TokenCredentials(token), base_url=served.api, policy=policy,
                               min_write_interval=0.0, timeout=30) for _ in range(8)]

        events_url = f"{served.receiver}/v1/repos/alice/memory/events"
        for i in range(args.agents):
            clone = tmp / f"agent{i:02d}"
            git(tmp, "clone", "-q", url, str(clone))
            agent = Agent(clone, events_url, served.agent_token)
            agent.compiler.compile()
            agent.subscriber.start()
            agents.append(agent)
        deadline = time.monotonic() + 20
        while not all(a.subscriber.connected.is_set() for a in agents) and time.monotonic() < deadline:
            time.sleep(0.05)
        print(f"  {sum(a.subscriber.connected.is_set() for a in agents)}/{args.agents} agents subscribed")

        # 1. latency
        counted = usage(served)
        rounds = []
        for n in range(args.rounds):
            r = latency_round(n, author, clients[0], agents)
            rounds.append(r)
            shown = lambda v: f"{v:.3f} s" if v is not None else "--"  # noqa: E731
            print(f"  round {n + 1:2d}: PR #{r['pr']} merged {shown(r['merged_s'])}, first agent "
                  f"{shown(r['first_s'])}, all {r['agents_done']}/{args.agents} {shown(r['all_s'])}"
                  f"{'' if r['at_merge_sha'] else '  (agents not at the merge sha!)'}")
            if r["all_s"] is None:
                stalled(served, token, "alice/memory", f"round {n + 1} did not complete in {ROUND_TIMEOUT:g} s")
        done = [r["all_s"] for r in rounds if r["all_s"] is not None]
        merged_t = [r["merged_s"] for r in rounds if r["merged_s"] is not None]
        lat = {
            "completed": len(done),
            "p50_all_s": round(statistics.median(done), 3) if done else None,
            "p99_all_s": round(percentile(done, 0.99), 3) if done else None,
            "max_all_s": round(max(done), 3) if done else None,
            "p50_merged_s": round(statistics.median(merged_t), 3) if merged_t else None,
            "p99_merged_s": round(percentile(merged_t, 0.99), 3) if merged_t else None,
            "p50_first_agent_s": round(statistics.median([r["first_s"] for r in rounds if r["first_s"]]), 3)
            if done else None,
            "all_at_merge_sha": all(r["at_merge_sha"] for r in rounds),
        }
        lat["p50_met"] = lat["p50_all_s"] is not None and len(done) == len(rounds) and lat["p50_all_s"] <= TARGET_P50
        lat["p99_met"] = lat["p99_all_s"] is not None and len(done) == len(rounds) and lat["p99_all_s"] <= TARGET_P99
        lat["budget"] = budget(counted, usage(served), sum(1 for r in rounds if r["merged_s"] is not None))
        result["latency"] = lat
        if rounds:
            print(f"latency (open -> all {args.agents} agents recompiled), {len(done)}/{len(rounds)} rounds: "
                  f"p50 {lat['p50_all_s']} s, p99 {lat['p99_all_s']} s, max {lat['max_all_s']} s; open -> merged "
                  f"p50 {lat['p50_merged_s']} s, p99 {lat['p99_merged_s']} s")
            show_budget("latency rounds", lat["budget"])
            print(f"  target p50 <= {TARGET_P50:g} s: {'met' if lat['p50_met'] else 'NOT met'}; "
                  f"p99 <= {TARGET_P99:g} s: {'met' if lat['p99_met'] else 'NOT met'}")

        # 2. burst
        if args.burst > 0:
            counted = usage(served)
            b = burst(args.burst, author, clients, args.deadline, events_url, served.agent_token)
            b["budget"] = budget(counted, usage(served), b["merged"])
            b["budget"]["met"] = (b["budget"]["integrator_writes_per_merged"] <= TARGET_WRITES_PER_MERGED
                                  and b["budget"]["writes_per_merged"] <= TARGET_ALL_WRITES_PER_MERGED
                                  and b["budget"]["dreams_per_hour_ceiling"] >= TARGET_CEILING)
            b["met"] = (b["all_closed"] and b["merged"] == args.burst and b["lost_edits"] == 0
                        and b["duplicated_edits"] == 0 and b["double_merges"] == 0
                        and b["merge_commits_first_parent"] == args.burst and b["total_s"] <= TARGET_BURST_S)
            result["burst"] = b
            print(f"burst of {args.burst} overlapping dream PRs (merge: explicit): "
                  f"{'all closed' if b['all_closed'] else 'NOT all closed'} in {b['total_s']} s; merged "
                  f"{b['merged']}/{args.burst}; closed unmerged {len(b['closed_unmerged'])}; still open "
                  f"{len(b['still_open'])}")
            print(f"  bullets on main exactly once {b['bullets_present_once']}/{args.burst}, lost {b['lost_edits']}, "
                  f"duplicated {b['duplicated_edits']}, not integrated yet {b['not_integrated']}; merge commits on "
                  f"first-parent main {b['merge_commits_first_parent']} (PRs' merge shas among them: "
                  f"{b['merge_commits_matching_prs']}), double merges {b['double_merges']}")
            print(f"  target all integrated in <= {TARGET_BURST_S:g} s with zero lost edits and zero double merges: "
                  f"{'met' if b['met'] else 'NOT met'}")
            show_budget("burst", b["budget"])
            print(f"  target <= {TARGET_WRITES_PER_MERGED:g} integrator and <= {TARGET_ALL_WRITES_PER_MERGED:g} "
                  f"content-generating requests in all per merged, ceiling >= {TARGET_CEILING}: "
                  f"{'met' if b['budget']['met'] else 'NOT met'}")
            if not b["all_closed"]:
                stalled(served, token, "alice/memory", f"{len(b['still_open'])} PRs still open at the deadline")
        with contextlib.suppress(Exception):
            result["webhook_deliveries"] = delivery_count(served, token, "alice/memory")
        result["subscriber_errors"] = sum(a.subscriber.errors for a in agents)
        result["worker_log"] = str(served.worker_log)
    except Exception as exc:  # report what was measured, then stop everything
        code = 1
        result["error"] = f"{type(exc).__name__}: {exc}"
        print(f"FAILED: {result['error']}")
        if served is not None:
            stalled(served, "", "alice/memory", "benchmark failed")
    finally:
        for agent in agents:
            agent.subscriber.stop()
        for client in clients:
            client.close()
        if served is not None:
            result["serve_exit"] = served.stop()
            print(f"serve --local stopped (exit {result['serve_exit']})")
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(result))
    return code


if __name__ == "__main__":
    sys.exit(main())
