"""Benchmark of time travel: `python bench/history.py` from the project root.

Builds a memory repository with 10,000 commits on main's first-parent history (every tenth a
merge of a side-branch commit, a few with clocks running backwards, 50 markdown files edited in
turn) with `git fast-import` in a temporary folder, then measures in this process:
  at_file     bot.memfs.history.travel.at(repo, when, path): one file as it was (opening the
              repository included), at random moments, with the first-parent index warm
  at_tree     the same without a path: the listing of every file with its description
  cold        the first call, which builds the index under .git/memrepo
  baseline    `git rev-list --first-parent --before=T -1 main` + `git show SHA:path`, the
              two processes a script would run, at the same moments
  why         bot.provenance.why.why on one line (no forge, no transcripts): the first call,
              which also builds the landing index under .git/memrepo, then the median over the
              other 49 files
Every answer of `at` is checked against `git rev-list`'s. Prints readable lines, then one line
of JSON with the figures (p50 target: 20 ms for at_file).
"""

from __future__ import annotations

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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.memfs.create import init_repository
from bot.memfs.history.travel import at
from bot.provenance.why import why

COMMITS = 10_000
FILES = 50
RUNS = 200
BASELINE_RUNS = 60
TARGET_P50_MS = 20.0
START = 1_700_000_000
STEP = 60

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str, data: bytes | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=root, env=GIT_ENV, input=data, capture_output=True, check=True)
    return done.stdout.decode()


def _blob(text: str) -> bytes:
    raw = text.encode()
    return b"data %d\n%s\n" % (len(raw), raw)


def build(root: Path) -> None:
    """COMMITS commits on main after `memrepo init`'s first one, through one fast-import stream."""
    init_repository(root, "a1", "Ada")
    out: list[bytes] = []
    mark = 0
    parent = "refs/heads/main^0"
    for n in range(1, COMMITS + 1):
        when = START + n * STEP - (7 * STEP if n % 997 == 0 else 0)  # now and then a clock running behind
        side = None
        if n % 10 == 0:  # a side-branch commit, merged by this one
            mark += 1
            side = mark
            out.append(b"commit refs/heads/side\nmark :%d\ncommitter bench <bench@example.invalid> %d +0000\n"
                       % (side, when - 30))
            out.append(_blob(f"Side {n}"))
            out.append(b"from %s\n" % parent.encode())
            out.append(b"M 100644 inline reference/side.md\n" + _blob(f"---\ndescription: Side notes\n---\n{n}\n"))
        mark += 1
        out.append(b"commit refs/heads/main\nmark :%d\ncommitter bench <bench@example.invalid> %d +0000\n"
                   % (mark, when))
        out.append(_blob(f"Commit {n}"))
        out.append(b"from %s\n" % parent.encode())
        if side is not None:
            out.append(b"merge :%d\n" % side)
        path = f"reference/notes-{n % FILES}.md"
        out.append(b"M 100644 inline %s\n" % path.encode()
                   + _blob(f"---\ndescription: Notes {n % FILES}\n---\nversion {n}\n"))
        parent = f":{mark}"
    git(root, "fast-import", "--quiet", "--force", data=b"".join(out))
    git(root, "reset", "-q", "--hard", "main")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="memrepo-bench-history-") as tmp:
        root = Path(tmp) / "memory"
        started = time.perf_counter()
        build(root)
        built_s = time.perf_counter() - started
        first_parent = int(git(root, "rev-list", "--first-parent", "--count", "main"))
        print(f"repository: {first_parent} commits on main's first-parent history "
              f"({COMMITS // 10} merges), built in {built_s:.1f} s")
        last = START + COMMITS * STEP
        moments = [rng.randint(START + FILES * STEP, last + STEP) for _ in range(max(RUNS, BASELINE_RUNS))]
        path = "reference/notes-7.md"

        def expected(seconds: int) -> str:
            return git(root, "rev-list", "--first-parent", f"--before={seconds}", "-1", "main").strip()

        t = time.perf_counter()
        at(root, datetime.fromtimestamp(moments[0], UTC), path)
        cold_ms = (time.perf_counter() - t) * 1000

        file_ms, tree_ms, wrong = [], [], 0
        for seconds in moments[:RUNS]:
            when = datetime.fromtimestamp(seconds, UTC)
            t = time.perf_counter()
            report = at(root, when, path)
            file_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            at(root, when)
            tree_ms.append((time.perf_counter() - t) * 1000)
            wrong += report["commit"] != expected(seconds)

        base_ms = []
        for seconds in moments[:BASELINE_RUNS]:
            t = time.perf_counter()
            sha = expected(seconds)
            git(root, "show", f"{sha}:{path}")
            base_ms.append((time.perf_counter() - t) * 1000)

        t = time.perf_counter()
        why(root, path, 4, forge=False, transcripts=False)
        why_ms = (time.perf_counter() - t) * 1000
        warm_ms = []
        for other in [f"reference/notes-{i}.md" for i in range(FILES) if f"reference/notes-{i}.md" != path]:
            t = time.perf_counter()
            why(root, other, 4, forge=False, transcripts=False)
            warm_ms.append((time.perf_counter() - t) * 1000)

    p50 = statistics.median(file_ms)
    figures = {
        "bench": "history",
        "commits_first_parent": first_parent,
        "runs": RUNS,
        "cold_ms": round(cold_ms, 2),
        "at_file_p50_ms": round(p50, 3),
        "at_file_p99_ms": round(percentile(file_ms, 0.99), 3),
        "at_tree_p50_ms": round(statistics.median(tree_ms), 3),
        "baseline_p50_ms": round(statistics.median(base_ms), 3),
        "speedup_vs_baseline": round(statistics.median(base_ms) / p50, 2),
        "why_line_ms": round(why_ms, 1),
        "why_warm_p50_ms": round(statistics.median(warm_ms), 2),
        "wrong_answers": wrong,
        "target_p50_ms": TARGET_P50_MS,
        "met": p50 <= TARGET_P50_MS and wrong == 0,
    }
    print(f"at (one file):  p50 {figures['at_file_p50_ms']:.2f} ms, p99 {figures['at_file_p99_ms']:.2f} ms "
          f"(target p50 <= {TARGET_P50_MS:.0f} ms); first call, building the index: {cold_ms:.1f} ms")
    print(f"at (the tree, {FILES + 4} files): p50 {figures['at_tree_p50_ms']:.2f} ms")
    print(f"baseline (git rev-list --first-parent --before + git show): p50 {figures['baseline_p50_ms']:.2f} ms; "
          f"at is {figures['speedup_vs_baseline']:.1f}x faster")
    print(f"why on one line (blame over the whole history, no forge): first call {why_ms:.0f} ms (landing index "
          f"built), then p50 {figures['why_warm_p50_ms']:.1f} ms over {len(warm_ms)} other files")
    print(f"answers differing from git rev-list: {wrong} of {RUNS}")
    print(json.dumps(figures))
    return 0 if figures["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
