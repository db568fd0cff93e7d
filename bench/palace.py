"""Benchmark of the palace's pages: `python bench/palace.py` from the project root.

Builds compile's memory (bench/compile.py's builder: 40 core blocks, ~63 KiB of system/, 500
described external files), then 10,000 commits on main through one `git fast-import` stream
(bench/history.py's helpers): agent edits carrying their Agent-ID / Conversation-ID /
Transcript-Range trailers, every tenth a dream merged by the integrator's forge account (its
dreamer commit on a side branch), every seventh a person's edit of an external note; 544 files
at the end. Then, in this process, through Flask's test client (the server's own time: routing,
reading memory, rendering; no network), for each of `--rounds` rounds after a memory tool commit
moves main:
  index_moved   GET /: what main's new commit changes is read and rendered
  index_again   GET / again at the same commit
  why_new       GET /why?path=&line= for a line of a core block not asked about before
  why_again     the same line again
  log_moved     GET /log: the commit index extended, the chart and the newest 100 commits
  log_again     GET /log again
Baselines, timed in the same rounds: `compile_memory` of main's files (what `memrepo compile`
does for `/`'s core memory) and `why()` called directly on another new line (what `memrepo why`
does). `why_graph` repeats why_new after `git commit-graph write --reachable --changed-paths`
(which `git maintenance` writes; memrepo does not). The first request of each page, which builds
the indexes, is reported apart.

Then the same memory as `memrepo serve` shows it (`--served-rounds`, 0 to skip): pushed to a
localhub (private), a real Redis, the receiver on uvicorn with the palace mounted at
/palace/alice/memory/, and a keep-alive HTTP client with the owner's forge token (the access
check asks localhub once, then answers from its cache). Each round a commit is pushed and its
head event published, then, wall time at the client:
  served_moved  GET head.json: the receiver's clone fetched and main read
  served_index  GET / at the new commit
  served_why    GET /why on a line not asked about before
The first page, which clones the 11,001 commits, is reported apart. Prints readable lines, then
one line of JSON with the figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.config import DEFAULT_POLICY
from bot.memfs.prompt.compile import compile_memory
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.tool.memory_tool import MemoryTool
from bot.palace.web import create_app
from bot.provenance.why import why

ROOT = Path(__file__).resolve().parent.parent
COMMITS = 10_000
START = 1_773_000_000  # 2026-03-08
STEP = 300  # five minutes between commits: 10,000 commits over about 35 days
TARGET_MS = 50.0


def _bench(name: str) -> ModuleType:
    """bench/<name>.py as a module (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


compile_bench = _bench("compile")
history_bench = _bench("history")


def _data(text: str) -> bytes:
    raw = text.encode()
    return b"data %d\n%s" % (len(raw), raw)


def _who(name: str, email: str, when: int) -> bytes:
    return b"%s <%s> %d +0000" % (name.encode(), email.encode(), when)


def build(root: Path) -> int:
    """The memory: compile's 541 files in one commit, then COMMITS commits on main (a dream's
    merge counts one, its dreamer commit is on the side). Returns the number of files."""
    compile_bench.build(root)
    stamp = f"@{START} +0000"  # the first commit comes first in time too
    subprocess.run(["git", "commit", "-q", "--amend", "--no-edit", "--no-verify", "--date", stamp], cwd=root,
                   env={**history_bench.GIT_ENV, "GIT_COMMITTER_DATE": stamp}, check=True, capture_output=True)
    repo = MemoryRepo.open(root)
    files = {path: data.decode() for path, data in repo.files().items()}
    core = sorted(p for p in files if p.startswith("system/"))
    notes = sorted(p for p in files if p.startswith("reference/"))

    def edit(path: str, n: int, line: str) -> None:
        lines = files[path].split("\n")
        body = lines.index("---", 1) + 2  # after the frontmatter and its blank line
        lines[body + (n // len(core)) % max(1, len(lines) - body - 1)] = line
        files[path] = "\n".join(lines)

    out: list[bytes] = []
    mark = 0
    parent = b"refs/heads/main^0"
    for n in range(1, COMMITS + 1):
        when = START + n * STEP
        if n % 10 == 0:  # a dream: the dreamer's commit on its branch, merged by the integrator's account
            dream = f"{datetime.fromtimestamp(when - 60, UTC):%Y%m%dT%H%M%SZ}-{n:08x}"
            record = f"conversations/c{n % 3}/2026-03.md"
            files.setdefault(record, f"---\ndescription: What the user said in conversation c{n % 3}\n---\n\n")
            files[record] += f"> fact number {n}, in the user's words\n"
            mark += 1
            side = mark
            dreamer = _who("memrepo dreamer", f"{dream}@dreams.memrepo", when - 30)
            out += [b"commit refs/heads/side\nmark :%d\nauthor %s\ncommitter %s\n" % (side, dreamer, dreamer),
                    _data(f"Dream {dream}\n\nRecorded what was said.\n\nDream-ID: {dream}\nAgent-ID: a1\n"
                          f"Conversation-ID: c{n % 3}\nTranscript-Range: m_{n}..m_{n + 1}\nBase-Commit: 0\n"),
                    b"\nfrom %s\nM 100644 inline %s\n" % (parent, record.encode()), _data(files[record]), b"\n"]
            mark += 1
            merger = _who("memrepo-bot", "1+memrepo-bot@users.noreply.localhub", when)
            out += [b"commit refs/heads/main\nmark :%d\nauthor %s\ncommitter %s\n"
                    % (mark, merger, _who("localhub", "noreply@localhub", when)),
                    _data(f"Merge pull request #{n // 10} from alice/memrepo/dream/{dream}\n\nDream {dream}"),
                    b"\nfrom %s\nmerge :%d\n\n" % (parent, side)]
            parent = b":%d" % mark
            continue
        if n % 7 == 0:
            path = notes[(n * 13) % len(notes)]
            edit(path, n, f"Pat checked this on day {n // 288}.")
            author, message = _who("Pat Person", "pat@example.com", when), f"Note what Pat checked ({n})"
        else:
            path = core[n % len(core)]
            edit(path, n, f"- fact {n}: the user said something worth keeping about item {n % 97}")
            author = _who("Ada", "a1@agents.memrepo", when)
            message = (f"Record fact {n}\n\nAgent-ID: a1\nConversation-ID: c{n % 3}\n"
                       f"Transcript-Range: m_{n}..m_{n + 2}\n")
        mark += 1
        out += [b"commit refs/heads/main\nmark :%d\nauthor %s\ncommitter %s\n" % (mark, author, author),
                _data(message), b"\nfrom %s\nM 100644 inline %s\n" % (parent, path.encode()), _data(files[path]),
                b"\n"]
        parent = b":%d" % mark
    history_bench.git(root, "fast-import", "--quiet", "--force", data=b"".join(out))
    history_bench.git(root, "reset", "-q", "--hard", "main")
    history_bench.git(root, "config", "memrepo.agentId", "a1")
    return len(files)


def percentile(values: list[float], q: float) -> float:
    return history_bench.percentile(values, q)


def timed(func: object) -> float:
    start = time.perf_counter()
    func()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def served(root: Path, tmp: Path, rounds: int, tool: MemoryTool, new_line: Any) -> dict[str, Any]:
    """The served palace's figures (see the module's docstring): {name: [ms, ...]} and "first"."""
    import requests

    from bot.access import ForgeAccess
    from bot.forge.credentials import TokenCredentials
    from bot.notify.events import HeadEvent
    from bot.notify.publisher import publish_head
    from bot.queue import connect
    from bot.serve.palace import with_credentials
    from bot.serve.receiver import ReceiverServer
    from bot.settings import Settings
    from localhub.server import LocalhubServer
    from tests.redis_server import RedisServer
    from webhooks.asgi import Receiver

    repo = "alice/memory"
    with RedisServer() as redis_server, LocalhubServer(tmp / "localhub") as hub:
        token = hub.hub.token_for("alice")
        made = requests.post(f"{hub.api_url}/user/repos", json={"name": "memory", "private": True}, timeout=10,
                             headers={"Authorization": f"token {token}"})
        made.raise_for_status()
        remote = hub.url.replace("http://", f"http://x-access-token:{token}@") + f"/{repo}.git"
        history_bench.git(root, "push", "-q", remote, "main")
        settings = Settings(redis_url=redis_server.url, webhook_secret="bench-secret", agent_token="operator")
        access = ForgeAccess(hub.api_url, integrator_token=token)
        palaces = with_credentials(settings, access, TokenCredentials(token), api_url=hub.api_url, git_url=hub.url,
                                   work_dir=tmp / "work")
        server = ReceiverServer(Receiver(settings, access=access, palace=palaces.app()), "127.0.0.1", 0).start()
        conn = connect(redis_server.url)
        # the integrator's head event for the push above: the palace shows only memories it has seen pushed to
        publish_head(conn, HeadEvent(repo=repo, sha=history_bench.git(root, "rev-parse", "main").strip(), before=None,
                                     cause="push"))
        client = requests.Session()
        client.headers["Authorization"] = f"Bearer {token}"
        base = f"{server.url}/palace/{repo}/"

        def get(path: str) -> float:
            start = time.perf_counter()
            answer = client.get(base + path, timeout=60)
            elapsed = (time.perf_counter() - start) * 1000
            if answer.status_code != 200:
                raise SystemExit(f"GET {base + path}: {answer.status_code} {answer.text[:300]}")
            return elapsed

        out: dict[str, Any] = {"first": get(""), "served_moved": [], "served_index": [], "served_why": []}
        try:
            for i in range(rounds):
                before = history_bench.git(root, "rev-parse", "main").strip()
                result = tool.call({"command": "insert", "path": "system/persona.md", "insert_line": -1,
                                    "insert_text": f"- served fact {i}", "reason": f"Remember served fact {i}"})
                if not result.ok:
                    raise SystemExit(f"memory tool call failed: {result.message}")
                history_bench.git(root, "push", "-q", remote, "main")
                publish_head(conn, HeadEvent(repo=repo, sha=result.commit, before=before, cause="push"))
                out["served_moved"].append(get("head.json"))
                out["served_index"].append(get(""))
                path, line = new_line()
                out["served_why"].append(get(f"why?path={path}&line={line}"))
            if palaces.fetches != rounds + 1:
                raise SystemExit(f"the served palace fetched {palaces.fetches} times, not once per round")
        finally:
            client.close()
            conn.close()
            server.stop()
            palaces.close()
            access.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=80)
    parser.add_argument("--served-rounds", type=int, default=30)
    args = parser.parse_args()
    rounds = args.rounds
    rng = random.Random(14)
    with tempfile.TemporaryDirectory(prefix="memrepo-bench-palace-") as tmp:
        root = Path(tmp) / "memory"
        os.environ["MEMREPO_HOME"] = str(Path(tmp) / "home")
        started = time.perf_counter()
        count = build(root)
        commits = int(history_bench.git(root, "rev-list", "--count", "main"))
        print(f"memory: {count} files, {commits} commits ({COMMITS // 10} dreams merged), "
              f"built in {time.perf_counter() - started:.1f} s")

        app = create_app(root, forge=False, transcripts=False)
        client = app.test_client()
        palace = app.extensions["memrepo_palace"]
        tool = MemoryTool(root, agent_id="a1", push=False)
        repo = MemoryRepo.open(root)
        core = sorted(p for p in repo.paths() if p.startswith("system/"))

        def get(url: str) -> float:
            start = time.perf_counter()
            answer = client.get(url)
            elapsed = (time.perf_counter() - start) * 1000
            if answer.status_code != 200:
                raise SystemExit(f"GET {url}: {answer.status_code} {answer.get_data(as_text=True)[:300]}")
            return elapsed

        asked: set[tuple[str, int]] = set()

        def new_line() -> tuple[str, int]:
            while True:
                path = rng.choice(core)
                block = next(b for b in palace.overview()["blocks"] if b["path"] == path)
                line = rng.choice(block["lines"])["n"]
                if (path, line) not in asked:
                    asked.add((path, line))
                    return path, line

        first = {"index": get("/"), "log": get("/log")}
        path, line = new_line()
        first["why"] = get(f"/why?path={path}&line={line}")
        names = ("index_moved", "index_again", "why_new", "why_again", "log_moved", "log_again", "compile", "why_call")
        ms: dict[str, list[float]] = {name: [] for name in names}
        for i in range(rounds):
            block = core[(i * 7) % len(core)]
            result = tool.call({"command": "insert", "path": block, "insert_line": -1,
                                "insert_text": f"- bench fact {i}", "reason": f"Remember bench fact {i}"})
            if not result.ok:
                raise SystemExit(f"memory tool call failed: {result.message}")
            ms["index_moved"].append(get("/"))
            ms["index_again"].append(get("/"))
            path, line = new_line()
            ms["why_new"].append(get(f"/why?path={path}&line={line}"))
            ms["why_again"].append(get(f"/why?path={path}&line={line}"))
            ms["log_moved"].append(get("/log"))
            ms["log_again"].append(get("/log"))
            files = repo.files()
            ms["compile"].append(timed(lambda files=files: compile_memory(files, DEFAULT_POLICY.limits)))
            path, line = new_line()
            ms["why_call"].append(timed(lambda p=path, n=line: why(root, p, n, forge=False, transcripts=False)))

        history_bench.git(root, "commit-graph", "write", "--reachable", "--changed-paths")
        graph = []
        for _ in range(max(10, rounds // 4)):
            path, line = new_line()
            graph.append(get(f"/why?path={path}&line={line}"))
        palace.close()
        if "system/persona.md" not in core:
            raise SystemExit("the memory has no system/persona.md to edit")
        over_http = served(root, Path(tmp), args.served_rounds, tool, new_line) if args.served_rounds > 0 else {}

    figures: dict[str, object] = {"bench": "palace", "files": count, "commits": commits, "rounds": rounds}
    timed_lists = [*ms.items(), ("why_graph", graph)]
    timed_lists += [(k, v) for k, v in over_http.items() if k != "first"]
    for name, values in timed_lists:
        figures[f"{name}_median_ms"] = round(statistics.median(values), 2)
        figures[f"{name}_p99_ms"] = round(percentile(values, 0.99), 2)
    figures.update({f"first_{k}_ms": round(v, 1) for k, v in first.items()})
    if over_http:
        figures["served_rounds"] = args.served_rounds
        figures["first_served_ms"] = round(over_http["first"], 1)
    figures["index_over_compile"] = round(figures["index_moved_median_ms"] / figures["compile_median_ms"], 2)
    figures["why_over_why_call"] = round(figures["why_new_median_ms"] / figures["why_call_median_ms"], 2)
    figures["target_ms"] = TARGET_MS
    figures["index_met"] = figures["index_moved_median_ms"] <= TARGET_MS
    figures["why_met"] = figures["why_new_median_ms"] <= TARGET_MS
    figures["why_met_warm"] = figures["why_again_median_ms"] <= TARGET_MS

    labels = {"index_moved": "/ after main moved", "index_again": "/ again", "why_new": "/why, a new line",
              "why_again": "/why, the same line again", "log_moved": "/log after main moved",
              "log_again": "/log again", "compile": "baseline: compile_memory of main",
              "why_call": "baseline: why() called directly", "why_graph": "/why, a new line, with a commit-graph",
              "served_moved": "served: head.json after a push (fetch)", "served_index": "served: / at the new commit",
              "served_why": "served: /why, a new line"}
    for name, label in labels.items():
        if f"{name}_median_ms" not in figures:
            continue
        print(f"{label:<40} median {figures[f'{name}_median_ms']:8.2f} ms   p99 {figures[f'{name}_p99_ms']:8.2f} ms")
    print(f"first requests (indexes built): / {first['index']:.0f} ms, /log {first['log']:.0f} ms, "
          f"/why {first['why']:.0f} ms" + (f"; served / (the clone made) {over_http['first']:.0f} ms"
                                            if over_http else ""))
    print(f"targets (median <= {TARGET_MS:.0f} ms): / {'met' if figures['index_met'] else 'MISSED'}; "
          f"/why on a new line {'met' if figures['why_met'] else 'MISSED'}, "
          f"on a line asked before {'met' if figures['why_met_warm'] else 'MISSED'}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
