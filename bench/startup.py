"""Benchmark of the `memrepo` command's start-up: `python bench/startup.py` from the project root.

Every figure is a whole process, as a person or a pre-commit hook pays for it: the console
script next to this interpreter (`memrepo`, what the README's users run; `python -m bot.cli`
when it is not installed), started, run and waited for. Measured, interleaved round by round
(the order rotates each round, so that no command always runs right after another):
  baseline   `python -c pass`: the interpreter and site-packages, nothing of memrepo
  help       `memrepo --help`
  validate   `memrepo validate --staged` on a 544-file memory with one staged change
  tool       one `memrepo tool` call: an insert into a core block, committed (no push)
The memories are bench/edit.py's (40 core blocks, 500 external files), one for `validate`
(its staged change stays staged) and one for `tool` (which needs a clean tree).

Python's byte-code cache is on, in a folder of this run (PYTHONPYCACHEPREFIX), as for anyone
whose environment does not set PYTHONDONTWRITEBYTECODE: installed packages and bot/ are
compiled once, in the first round, which is not counted. `--no-bytecode-cache` keeps the
environment as it is instead (with PYTHONDONTWRITEBYTECODE=1, bot/ is compiled from source by
every process). Beside each wall-clock figure, the processor time the process (and what it
started) used, user + system: on a busy machine it grows less than the wall clock does, which
also counts the wait for a free core. Prints readable lines, then one line of JSON with the
figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.edit import EXTERNAL_FILES, SYSTEM_BLOCKS, build, percentile

TARGETS_MS = {"help": 150.0, "tool": 250.0}


def memrepo_command() -> list[str]:
    """The installed console script next to this interpreter, else `python -m bot.cli`."""
    script = Path(sys.executable).parent / "memrepo"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "bot.cli"]


def stage_change(root: Path) -> None:
    """One valid change to an external file, staged: what `validate --staged` checks in a hook."""
    note = root / "reference" / "area00" / "note000.md"
    with note.open("a") as handle:
        handle.write("- one more line, staged\n")
    subprocess.run(["git", "add", "--", str(note)], cwd=root, check=True)


def tool_call(i: int) -> str:
    return json.dumps({"command": "insert", "path": f"system/block{1 + 2 * (i % 15):02d}.md", "insert_line": -1,
                       "insert_text": f"- started fact {i}", "reason": f"Remember started fact {i}"})


def environment(tmp: Path, bytecode_cache: bool) -> dict[str, str]:
    """This process's environment; with the byte-code cache on, in a folder under `tmp`."""
    env = dict(os.environ)
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    return env


def processor_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Milliseconds from start to exit of one process, and of processor time it used; a
    failure stops the benchmark."""
    cpu = processor_seconds()
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:3])} ... exited {done.returncode}: {done.stderr.strip()}")
    return elapsed, (processor_seconds() - cpu) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="run with this environment as it is (no private byte-code cache)")
    options = parser.parse_args()
    rounds, bytecode_cache = options.rounds, not options.no_bytecode_cache
    memrepo = memrepo_command()
    with tempfile.TemporaryDirectory(prefix="memrepo-bench-startup-") as tmp:
        checked, edited = Path(tmp) / "checked", Path(tmp) / "edited"
        build(checked)
        build(edited)
        stage_change(checked)
        env = environment(Path(tmp), bytecode_cache)
        runs = {
            "baseline": lambda i: [sys.executable, "-c", "pass"],
            "help": lambda i: [*memrepo, "--help"],
            "validate": lambda i: [*memrepo, "validate", "--staged", "--repo", str(checked)],
            "tool": lambda i: [*memrepo, "tool", "--no-push", "--repo", str(edited), tool_call(i)],
        }
        names = list(runs)
        for name in names:  # once each first: byte-code caches written, files in the page cache
            timed(runs[name](-1), Path(tmp), env)
        ms: dict[str, list[float]] = {name: [] for name in names}
        cpu_ms: dict[str, list[float]] = {name: [] for name in names}
        for i in range(rounds):
            for name in names[i % len(names):] + names[:i % len(names)]:
                wall, cpu = timed(runs[name](i), Path(tmp), env)
                ms[name].append(wall)
                cpu_ms[name].append(cpu)

    figures: dict[str, object] = {"rounds": rounds, "files": SYSTEM_BLOCKS + EXTERNAL_FILES + 4,
                                  "command": " ".join(Path(part).name for part in memrepo),
                                  "bytecode_cache": bytecode_cache,
                                  "dont_write_bytecode": bool(env.get("PYTHONDONTWRITEBYTECODE"))}
    base = statistics.median(ms["baseline"])
    print(f"memory: {figures['files']} files; {rounds} rounds of whole processes ({figures['command']}); "
          f"byte-code cache {'on' if bytecode_cache else 'as the environment has it'}"
          f"{', PYTHONDONTWRITEBYTECODE set' if figures['dont_write_bytecode'] else ''}")
    for name in names:
        median, p99 = statistics.median(ms[name]), percentile(ms[name], 0.99)
        figures[f"{name}_median_ms"] = round(median, 1)
        figures[f"{name}_p99_ms"] = round(p99, 1)
        figures[f"{name}_cpu_median_ms"] = round(statistics.median(cpu_ms[name]), 1)
        target = f"  (target: median <= {TARGETS_MS[name]:g} ms)" if name in TARGETS_MS else ""
        ratio = ""
        if name != "baseline":
            figures[f"{name}_ratio_to_baseline"] = round(median / base, 2)
            ratio = f", {median / base:.2f}x the baseline"
        print(f"{name:<9} median {median:7.1f} ms, p99 {p99:7.1f} ms{ratio}; processor time median "
              f"{figures[f'{name}_cpu_median_ms']:.1f} ms{target}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
