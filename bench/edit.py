"""Benchmark: one memory tool call, from request to commit, against `git commit` of the
same kind of change from the command line, in the same run and the same repository.

The tool call includes everything an agent pays for: parsing the call, the clone's lock,
the dirty-tree check, reading HEAD, validation (with the core-size limit), writing the
commit, and updating the working tree and index. The baseline is `git add` + `git commit
--no-verify` (git's own speed, without memrepo's hook). Calls alternate between the two so
that both see the same machine load.

Run from the project root: python bench/edit.py [--rounds N]
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

from bot.memfs.create import init_repository
from bot.memfs.tool.memory_tool import MemoryTool

SYSTEM_BLOCKS = 40
EXTERNAL_FILES = 500


def build(root: Path) -> None:
    repo = init_repository(root, "bench", "Bench")
    for i in range(SYSTEM_BLOCKS):
        folder = "system" if i % 4 else "system/topics"
        path = root / folder / f"block{i:02d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ndescription: Block {i}\n---\n" + f"- fact {i} line\n" * 60)
    for i in range(EXTERNAL_FILES):
        path = root / "reference" / f"area{i % 20:02d}" / f"note{i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ndescription: Note {i}\n---\nSome external memory {i}.\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com",
                    "commit", "-q", "--no-verify", "-m", "bench data"], cwd=root, check=True)
    assert repo.head_sha()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory(prefix="memrepo-bench-edit-") as tmp:
        root = Path(tmp) / "memory"
        build(root)
        tool = MemoryTool(root, push=False)
        tool_ms: list[float] = []
        git_ms: list[float] = []
        for i in range(rounds):
            call = {"command": "insert", "path": f"system/block{1 + 2 * (i % 15):02d}.md", "insert_line": -1,
                    "insert_text": f"- new fact {i}", "reason": f"Remember fact {i}"}
            start = time.perf_counter()
            result = tool.call(call)
            tool_ms.append((time.perf_counter() - start) * 1000)
            if not result.ok:
                raise SystemExit(f"tool call failed: {result.message}")

            target = root / f"reference/area{i % 20:02d}/note{i % EXTERNAL_FILES:03d}.md"
            start = time.perf_counter()
            with target.open("a") as handle:
                handle.write(f"- new fact {i}\n")
            subprocess.run(["git", "add", "--", str(target)], cwd=root, check=True)
            subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit",
                            "-q", "--no-verify", "-m", f"Remember fact {i}"], cwd=root, check=True)
            git_ms.append((time.perf_counter() - start) * 1000)

    figures = {
        "rounds": rounds,
        "files": SYSTEM_BLOCKS + EXTERNAL_FILES + 4,
        "tool_median_ms": round(statistics.median(tool_ms), 3),
        "tool_p99_ms": round(percentile(tool_ms, 0.99), 3),
        "git_commit_median_ms": round(statistics.median(git_ms), 3),
        "git_commit_p99_ms": round(percentile(git_ms, 0.99), 3),
    }
    figures["median_ratio_tool_to_git"] = round(figures["tool_median_ms"] / figures["git_commit_median_ms"], 3)
    print(f"repository: {figures['files']} files, {rounds} rounds")
    print(f"memory tool call:       median {figures['tool_median_ms']:.2f} ms, p99 {figures['tool_p99_ms']:.2f} ms")
    print(f"git add + git commit:   median {figures['git_commit_median_ms']:.2f} ms, "
          f"p99 {figures['git_commit_p99_ms']:.2f} ms")
    print(f"ratio (median): {figures['median_ratio_tool_to_git']:.2f}x  (targets: <= 15 ms, <= 2x)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
