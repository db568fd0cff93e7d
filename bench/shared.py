"""Shared memory: what attaching costs, what attachments add to a compile, and how long one
shared push takes to reach N attached agents' prompts.

    python bench/shared.py [--files 60] [--agents 20] [--streams 1000,5000,10000] [--tokens 10]

Real git repositories (bare ones as the forge), `memrepo init`'s memories, the code agents run
(bot.memfs's shared_projection and PromptCompiler). The reach figure is each agent's own sync of
its projection (what its HeadSubscriber does on a head event) and its next compile, run one
agent after another on this machine, timed from the start of the push.

With --streams, the fan-out through one receiver: `memrepo serve --local` (localhub, Redis,
the receiver, a worker) runs as a subprocess; carol/team is a shared memory made by `memrepo
init`, `--tokens` agents are its collaborators, and for each N each agent's token holds N/tokens
of the N event streams on carol/team (what each attached agent's session or follow opens, beside
its own memory's stream), read by bench/fanout.py's epoll holders (one child process per token);
then carol pushes a change to the team's main and, per stream, the time from the start of the
push to the head event for that commit: p50, p99, max, and whether every stream got it.
Ends with one line of JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.memfs import PromptCompiler, sync
from bot.memfs import shared_projection as shared
from bot.memfs.create import init_repository

ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "bench",
       "GIT_COMMITTER_EMAIL": "bench@example.com", "PATH": "/usr/bin:/bin"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True)


def team(tmp: Path, name: str, files: int) -> Path:
    """A shared memory of `files` notes with descriptions, pushed to `<name>.git`."""
    bare = tmp / f"{name}.git"
    git(tmp, "init", "-q", "--bare", "-b", "main", str(bare))
    memory = init_repository(tmp / name, "t0", "Team")
    for i in range(files):
        path = memory.root / f"area{i % 6}" / f"note{i}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"---\ndescription: Note {i} of the team's runbooks.\n---\n# Note {i}\n\n- a fact\n")
    git(memory.root, "add", "-A")
    git(memory.root, "commit", "-q", "--no-verify", "-m", "notes")
    sync.set_remote(memory, str(bare))
    return bare


def median_ms(run, times: int = 7) -> float:  # type: ignore[no-untyped-def]
    found = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        found.append((time.perf_counter() - start) * 1000)
    return statistics.median(found)


def fan_out(counts: list[int], tokens: int) -> list[dict[str, object]]:
    """One push on a shared memory's main reaching N attached agents' event streams through one
    receiver (see the module docstring); one row per N."""
    import shutil
    import uuid

    import requests

    from bench.fanout import Streams, ms, raise_nofile
    from tests.served import LocalStack

    raise_nofile()
    tmp = Path(tempfile.mkdtemp(prefix="memrepo-bench-shared-fanout-"))
    stack = LocalStack(tmp / "data")
    rows: list[dict[str, object]] = []
    try:
        host, port = stack.receiver.removeprefix("http://").split(":")
        carol = stack.new_token("carol")
        made = requests.post(f"{stack.api}/user/repos", json={"name": "team", "private": True},
                             headers={"Authorization": f"token {carol}"}, timeout=10)
        assert made.status_code == 201, made.text
        agents = []
        for i in range(tokens):
            login = f"agent{i}"
            agents.append(stack.new_token(login))
            added = requests.put(f"{stack.api}/repos/carol/team/collaborators/{login}", json={"permission": "push"},
                                 headers={"Authorization": f"token {carol}"}, timeout=10)
            assert added.status_code in (201, 204), added.text
        clone = init_repository(tmp / "carol" / "team", "t0", "Team")
        sync.set_remote(clone, stack.web.replace("http://", f"http://x-access-token:{carol}@") + "/carol/team.git")
        assert sync.push(clone).pushed
        for count in counts:
            per = [count // tokens + (1 if i < count % tokens else 0) for i in range(tokens)]
            held = [Streams(host, int(port), "carol/team", token, n) for token, n in zip(agents, per, strict=True) if n]
            started = time.perf_counter()
            for streams in held:
                streams.open()
            opened = time.perf_counter() - started
            (clone.root / "decisions.md").write_text(
                f"---\ndescription: What the team decided.\n---\n- {count} {uuid.uuid4()}\n")
            git(clone.root, "add", "-A")
            git(clone.root, "commit", "-q", "--no-verify", "-m", f"decision {count}")
            sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone.root, capture_output=True, text=True,
                                 check=True).stdout.strip()
            for streams in held:
                streams.expect(sha)
            pushed = time.perf_counter()
            git(clone.root, "push", "-q", "origin", "main")
            arrived = [a for streams in held for a in streams.arrivals()]
            delays = [a - pushed for a in arrived if a is not None]
            total_open = sum(streams.held for streams in held)
            row = {"streams": count, "agents_tokens": tokens, "open": total_open, "open_seconds": round(opened, 2),
                   "push_to_event_p50_ms": _round(ms(delays, 0.5)), "push_to_event_p99_ms": _round(ms(delays, 0.99)),
                   "push_to_event_max_ms": round(max(delays) * 1000, 1) if delays else None,
                   "all_delivered": len(delays) == total_open == count}
            rows.append(row)
            print(f"{count} streams on carol/team ({tokens} agents' tokens): {total_open} open in {opened:.1f} s; "
                  f"push -> head event p50 {row['push_to_event_p50_ms']} ms, p99 {row['push_to_event_p99_ms']} ms, "
                  f"all delivered: {row['all_delivered']} ({len(delays)}/{total_open})", flush=True)
            for streams in held:
                streams.close()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and requests.get(f"{stack.receiver}/healthz", timeout=10).json().get(
                    "streams", 0) > 0:
                time.sleep(0.2)
    finally:
        stack.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--streams", default="none", help="N,N,... event streams on one receiver (none: skip)")
    parser.add_argument("--tokens", type=int, default=10, help="attached agents whose tokens hold the streams")
    parser.add_argument("--only-streams", action="store_true", help="skip attach, compile and reach")
    args = parser.parse_args()
    if args.only_streams:
        rows = fan_out([int(n) for n in args.streams.split(",")], args.tokens)
        print(json.dumps({"bench": "shared", "fan_out": rows}))
        return 0
    import os

    os.environ.update({k: v for k, v in ENV.items() if k != "PATH"})
    with tempfile.TemporaryDirectory(prefix="memrepo-bench-shared-") as folder:
        tmp = Path(folder)
        teams = [team(tmp, f"team{i}", args.files) for i in range(50)]

        # Attaching: clone, check the rules, commit and record.
        attach_ms = []
        for i in range(7):
            memory = init_repository(tmp / f"attach{i}" / "memory", "a1", "Ada")
            start = time.perf_counter()
            shared.attach(memory, str(teams[0]), name="team")
            attach_ms.append((time.perf_counter() - start) * 1000)
        print(f"attach ({args.files} files): median {statistics.median(attach_ms):.1f} ms")

        # A full compile (a new compiler each time) with 0, 1, 10 and 50 attachments.
        memory = init_repository(tmp / "agent" / "memory", "a1", "Ada")
        compile_ms: dict[int, float] = {}
        attached = 0
        for count in (0, 1, 10, 50):
            while attached < count:
                shared.attach(memory, str(teams[attached]), name=f"team{attached}")
                attached += 1
            compile_ms[count] = median_ms(lambda: PromptCompiler(memory.root).compile("system"))
            print(f"compile with {count} attachments: {compile_ms[count]:.2f} ms "
                  f"({compile_ms[count] / compile_ms[0]:.2f}x of none)")
        compiler = PromptCompiler(memory.root)
        compiler.compile("system")
        hit_us = median_ms(lambda: compiler.compile("system"), 201) * 1000
        print(f"cache hit with 50 attachments: {hit_us:.1f} µs")

        # One shared push reaching N agents' prompts.
        agents = []
        for i in range(args.agents):
            mine = init_repository(tmp / f"fleet{i}" / "memory", f"a{i}", f"Agent {i}")
            shared.attach(mine, str(teams[1]), name="team")
            compiler = PromptCompiler(mine.root)
            compiler.compile()
            agents.append((mine, compiler))
        author = tmp / "author"
        git(tmp, "clone", "-q", str(teams[1]), str(author))
        (author / "decisions.md").write_text("---\ndescription: What the team decided.\n---\n- ship on Tuesdays\n")
        git(author, "add", "-A")
        git(author, "commit", "-q", "--no-verify", "-m", "decision")
        start = time.perf_counter()
        git(author, "push", "-q", "origin", "main")
        reached = []
        for mine, compiler in agents:
            shared.sync_one(mine, shared.attachments(mine)[0])
            assert "decisions.md" in compiler.compile().text
            reached.append((time.perf_counter() - start) * 1000)
        quantiles = statistics.quantiles(reached, n=100, method="inclusive")
        p50, p99 = statistics.median(reached), quantiles[98]
        print(f"one push reaching {args.agents} agents' prompts: p50 {p50:.0f} ms, p99 {p99:.0f} ms")
    print(json.dumps({"bench": "shared", "files": args.files, "attach_ms": round(statistics.median(attach_ms), 1),
                      "compile_ms": {str(k): round(v, 2) for k, v in compile_ms.items()},
                      "compile_ratio": {str(k): round(v / compile_ms[0], 2) for k, v in compile_ms.items()},
                      "cache_hit_us_50": round(hit_us, 1), "agents": args.agents,
                      "reach_p50_ms": round(p50), "reach_p99_ms": round(p99),
                      "fan_out": [] if args.streams == "none" else
                      fan_out([int(n) for n in args.streams.split(",")], args.tokens)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
