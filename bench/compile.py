"""Benchmark of prompt compilation: `python bench/compile.py` from the project root.

Builds a memory repository (about 64 KiB of system/ in 40 blocks, 500 described external
files, one commit) in a temporary folder and measures in this process:
  hit          PromptCompiler.compile when HEAD has not moved (the per-model-call cost)
  recompile    a cold compile: a fresh PromptCompiler each run, nothing cached
  incremental  a warm compiler after a commit that changed one core file
  baseline     reading the same blobs through a warm `git cat-file --batch` process
Prints readable lines, then one line of JSON with the figures.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pygit2

from bot.memfs.prompt.compiler import PromptCompiler

CORE_BLOCKS = 40
CORE_BYTES = 64 * 1024 - 1024  # stays under the default core_chars limit of 65,536
EXTERNAL_FILES = 500
HIT_CALLS = 2000
RUNS = 50
TARGET_HIT_MS = 0.5
TARGET_RECOMPILE_MS = 25.0
SYSTEM_PROMPT = "You are a careful assistant with a persistent memory.\n" * 40

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}

WORDS = ("memory", "agent", "deploy", "review", "branch", "schema", "latency", "budget",
         "release", "customer", "incident", "runbook", "token", "cache", "index", "policy")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env=GIT_ENV, check=True,
                          capture_output=True, text=True).stdout


def text(seed: int, chars: int) -> str:
    words = []
    size = 0
    while size < chars:
        word = WORDS[(seed * 7 + len(words) * 13) % len(WORDS)]
        words.append(word)
        size += len(word) + 1
    lines = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
    return "\n".join(lines)[:chars]


def document(description: str, body: str) -> str:
    return f"---\ndescription: {description}\n---\n\n{body}\n"


def build(root: Path) -> None:
    """The benchmark repository: 40 core blocks (15 nested one level), 500 external files."""
    files: dict[str, str] = {".memrepo/config.yml": "merge: explicit\n"}
    body_chars = CORE_BYTES // CORE_BLOCKS - 60
    for i in range(CORE_BLOCKS):
        folder = ("", "project/", "people/", "tools/")[0 if i < 25 else 1 + i % 3]
        name = {0: "persona", 1: "human"}.get(i, f"block-{i:02d}")
        files[f"system/{folder}{name}.md"] = document(f"Core block {i} about {WORDS[i % 16]}",
                                                      text(i, body_chars))
    for i in range(EXTERNAL_FILES):
        area, topic = divmod(i, 50)
        path = f"reference/area-{area:02d}/topic-{topic % 5}/note-{i:03d}.md"
        files[path] = document(f"Notes {i} on {WORDS[i % 16]} and {WORDS[(i * 5) % 16]}",
                               text(1000 + i, 600))
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "benchmark memory")


def measure(func: Callable[[], object], runs: int, before: Callable[[], object] | None = None
            ) -> list[float]:
    """Milliseconds per call; `before` runs untimed ahead of each call."""
    out = []
    for _ in range(runs):
        if before is not None:
            before()
        start = time.perf_counter_ns()
        func()
        out.append((time.perf_counter_ns() - start) / 1e6)
    return out


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * 99 // 100) - 1)]


def baseline_reader(root: Path) -> tuple[subprocess.Popen, Callable[[], int]]:
    """A warm `git cat-file --batch` and a function that reads every blob through it."""
    repo = pygit2.Repository(str(root))
    ids = []
    stack = [repo.head.peel(pygit2.Commit).tree]
    while stack:
        for entry in stack.pop():
            if entry.type_str == "tree":
                stack.append(repo[entry.id])
            else:
                ids.append(str(entry.id))
    request = ("\n".join(ids) + "\n").encode()  # ~22 KB: fits the pipe, so no deadlock
    proc = subprocess.Popen(["git", "cat-file", "--batch"], cwd=root, env=GIT_ENV,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def read_all() -> int:
        stdin.write(request)
        stdin.flush()
        total = 0
        for _ in ids:
            size = int(stdout.readline().split()[2])
            total += len(stdout.read(size + 1)) - 1
        return total

    return proc, read_all


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="memrepo-bench-compile-") as tmp:
        root = Path(tmp)
        build(root)
        compiler = PromptCompiler(root)
        first = compiler.compile(SYSTEM_PROMPT)
        assert not first.cache_hit
        assert compiler.compile(SYSTEM_PROMPT).cache_hit
        hit = measure(lambda: compiler.compile(SYSTEM_PROMPT), HIT_CALLS)
        recompile = measure(lambda: PromptCompiler(root).compile(SYSTEM_PROMPT), RUNS)

        # Incremental: alternate HEAD between two commits that differ in one core file.
        repo = pygit2.Repository(str(root))
        old = str(repo.head.target)
        persona = root / "system/persona.md"
        persona.write_text(persona.read_text() + "\nOne more line.\n")
        git(root, "commit", "-q", "-am", "one change")
        new = str(repo.head.target)
        heads = [old, new]

        def move_head() -> None:
            heads.reverse()
            repo.references["refs/heads/main"].set_target(heads[0])

        warm = PromptCompiler(root)
        warm.compile(SYSTEM_PROMPT)
        incremental = measure(lambda: warm.compile(SYSTEM_PROMPT), RUNS, before=move_head)
        repo.references["refs/heads/main"].set_target(old)

        proc, read_all = baseline_reader(root)
        read_all()
        baseline = measure(read_all, RUNS)
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait()

    figures = {
        "bench": "compile",
        "core_blocks": CORE_BLOCKS,
        "external_files": EXTERNAL_FILES,
        "prompt_chars": len(first.text),
        "hit_median_ms": statistics.median(hit),
        "hit_p99_ms": p99(hit),
        "recompile_median_ms": statistics.median(recompile),
        "recompile_p99_ms": p99(recompile),
        "incremental_median_ms": statistics.median(incremental),
        "incremental_p99_ms": p99(incremental),
        "baseline_median_ms": statistics.median(baseline),
        "baseline_p99_ms": p99(baseline),
    }
    figures["hit_over_baseline"] = figures["hit_median_ms"] / figures["baseline_median_ms"]
    figures["recompile_over_baseline"] = figures["recompile_median_ms"] / figures["baseline_median_ms"]
    figures = {k: round(v, 4) if isinstance(v, float) else v for k, v in figures.items()}

    print(f"memory: {CORE_BLOCKS} core blocks (~{CORE_BYTES // 1024} KiB), {EXTERNAL_FILES} external "
          f"files; prompt {figures['prompt_chars']:,} characters")
    for name, runs in (("hit", HIT_CALLS), ("recompile", RUNS), ("incremental", RUNS), ("baseline", RUNS)):
        print(f"{name:<12} median {figures[f'{name}_median_ms']:8.4f} ms   "
              f"p99 {figures[f'{name}_p99_ms']:8.4f} ms   ({runs} runs)")
    print(f"targets: hit median <= {TARGET_HIT_MS} ms "
          f"({'met' if figures['hit_median_ms'] <= TARGET_HIT_MS else 'MISSED'}), "
          f"recompile median <= {TARGET_RECOMPILE_MS} ms "
          f"({'met' if figures['recompile_median_ms'] <= TARGET_RECOMPILE_MS else 'MISSED'})")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
