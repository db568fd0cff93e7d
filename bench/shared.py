"""Shared memory: what attaching costs, what attachments add to a compile, and how long one
shared push takes to reach N attached agents' prompts.

    python bench/shared.py [--files 60] [--agents 20]

Real git repositories (bare ones as the forge), `memrepo init`'s memories, the code agents run
(bot.memfs's shared_projection and PromptCompiler). The reach figure is each agent's own sync of
its projection (what its HeadSubscriber does on a head event) and its next compile, run one
agent after another on this machine, timed from the start of the push; the receiver's fan-out
of the event to N streams is bench/fanout.py's. Ends with one line of JSON.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--agents", type=int, default=20)
    args = parser.parse_args()
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
                      "reach_p50_ms": round(p50), "reach_p99_ms": round(p99)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
