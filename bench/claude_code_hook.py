"""Benchmark of Claude Code's hooks: `python bench/claude_code_hook.py` from the project root.

Each figure is a whole process, as Claude Code pays for it on every prompt: the command
`memrepo claude-code install` registers (`python -m bot.claude_code.hook EVENT --repo DIR`,
the hook's JSON on standard input), started, run and waited for. Measured, interleaved round by
round (the order rotates each round):
  baseline     `python -c pass`: the interpreter and site-packages, nothing of memrepo
  quiet        `hook prompt` when nothing moved: the session saw this HEAD (target 100 ms)
  inject       `hook session-start`: compile the core memory and print it (target 250 ms)
  moved        `hook prompt` for a session that has not seen this HEAD: compile and inject
  cli_quiet    `memrepo claude-code hook prompt`, nothing moved: the same through the CLI
  eager_door   a process that loads every name of the memory core's door (`bot.memfs`): what
               each hook would pay before its first line were the door to load its names eagerly
The memory is bench/edit.py's (40 core blocks, 500 external files: 544 files). Byte-code cache
on, in a folder of this run, as bench/startup.py. Prints readable lines, then one line of JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.edit import EXTERNAL_FILES, SYSTEM_BLOCKS, build, percentile
from bench.startup import environment, memrepo_command

EAGER_DOOR = "import bot.memfs as door; [getattr(door, name) for name in door.__all__]"
TARGETS_MS = {"quiet": 100.0, "inject": 250.0, "moved": 250.0}


def timed(argv: list[str], stdin: str, cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """Milliseconds from start to exit of one process, and what it printed; a failure stops
    the benchmark."""
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} ... exited {done.returncode}: {done.stderr.strip()}")
    return elapsed, done.stdout


Run = Callable[[int], tuple[list[str], str]]


def interleaved(runs: dict[str, Run], rounds: int, cwd: Path, env: dict[str, str]) -> dict[str, list[float]]:
    """Each run's milliseconds over `rounds` rounds, every run once a round in an order rotating
    each round, so a drift of the machine falls on all of them alike."""
    names = list(runs)
    ms: dict[str, list[float]] = {name: [] for name in names}
    for i in range(rounds):
        for name in names[i % len(names):] + names[:i % len(names)]:
            ms[name].append(timed(*runs[name](i), cwd, env)[0])
    return ms


def report(bench: str, rounds: int, ms: dict[str, list[float]]) -> None:
    """Readable lines (median, p99, ratio to "baseline", TARGETS_MS met), then one line of JSON."""
    figures: dict[str, object] = {"bench": bench, "rounds": rounds, "files": SYSTEM_BLOCKS + EXTERNAL_FILES + 4}
    base = statistics.median(ms["baseline"])
    print(f"memory: {figures['files']} files; {rounds} rounds of whole processes")
    for name in ms:
        median, p99 = statistics.median(ms[name]), percentile(ms[name], 0.99)
        figures[f"{name}_median_ms"] = round(median, 1)
        figures[f"{name}_p99_ms"] = round(p99, 1)
        line = f"{name:<10} median {median:7.1f} ms, p99 {p99:7.1f} ms"
        if name != "baseline":
            figures[f"{name}_ratio_to_baseline"] = round(median / base, 2)
            line += f", {median / base:.2f}x the baseline"
        if name in TARGETS_MS:
            figures[f"{name}_met"] = median <= TARGETS_MS[name]
            line += f"  (target: median <= {TARGETS_MS[name]:g} ms)"
        print(line)
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=60)
    rounds = parser.parse_args().rounds
    hook = [sys.executable, "-m", "bot.claude_code.hook"]
    with tempfile.TemporaryDirectory(prefix="memrepo-bench-claude-code-") as tmp:
        root = Path(tmp) / "memory"
        build(root)
        env = environment(Path(tmp), True)
        seen = json.dumps({"session_id": "seen", "hook_event_name": "UserPromptSubmit", "prompt": "hi"})
        runs = {
            "baseline": lambda i: ([sys.executable, "-c", "pass"], ""),
            "quiet": lambda i: ([*hook, "prompt", "--repo", str(root)], seen),
            "inject": lambda i: ([*hook, "session-start", "--repo", str(root)],
                                 json.dumps({"session_id": f"start-{i}", "source": "startup"})),
            "moved": lambda i: ([*hook, "prompt", "--repo", str(root)], json.dumps({"session_id": f"moved-{i}"})),
            "cli_quiet": lambda i: ([*memrepo_command(), "claude-code", "hook", "prompt", "--repo", str(root)], seen),
            "eager_door": lambda i: ([sys.executable, "-c", EAGER_DOOR], ""),
        }
        names = list(runs)
        timed(*runs["inject"](-1), Path(tmp), env)  # byte-code caches written
        timed([*hook, "session-start", "--repo", str(root)], seen, Path(tmp), env)  # session "seen" saw HEAD
        for name in names:
            _, out = timed(*runs[name](-2), Path(tmp), env)
            if name in ("quiet", "cli_quiet") and out:
                raise SystemExit(f"{name}: a prompt where nothing moved printed {len(out)} characters")
            if name in ("inject", "moved") and "<memory>" not in out:
                raise SystemExit(f"{name}: no memory in the hook's output")
        ms = interleaved(runs, rounds, Path(tmp), env)
    report("claude_code_hook", rounds, ms)


if __name__ == "__main__":
    main()
