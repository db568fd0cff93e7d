"""Benchmark of Codex's hooks: `python bench/codex_hook.py` from the project root.

Each figure is a whole process, as Codex pays for it on every prompt: the command
`memrepo codex install` registers (`python -m bot.codex.hook EVENT --repo DIR --sessions DIR`,
the hook's JSON on standard input), started, run and waited for. Measured as
bench/claude_code_hook.py measures Claude Code's (the same memory, rounds interleaved, the
order rotating each round, byte-code cache on):
  baseline     `python -c pass`
  quiet        `hook prompt` when nothing moved: the session saw this HEAD (target 100 ms)
  inject       `hook session-start`: compile the core memory and print it (target 250 ms)
  resumed      `hook session-start` of a resumed session that saw this HEAD: nothing to add
  moved        `hook prompt` for a session that has not seen this HEAD: compile and inject
Prints readable lines, then one line of JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.claude_code_hook import interleaved, report, timed
from bench.edit import build
from bench.startup import environment


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=60)
    rounds = parser.parse_args().rounds
    hook = [sys.executable, "-m", "bot.codex.hook"]
    with tempfile.TemporaryDirectory(prefix="memrepo-bench-codex-") as tmp:
        root, sessions = Path(tmp) / "memory", Path(tmp) / "codex" / "sessions"
        build(root)
        env = environment(Path(tmp), True)
        where = ["--repo", str(root), "--sessions", str(sessions)]
        seen = json.dumps({"session_id": "seen", "hook_event_name": "UserPromptSubmit", "prompt": "hi"})
        resumed = json.dumps({"session_id": "seen", "hook_event_name": "SessionStart", "source": "resume"})
        runs = {
            "baseline": lambda i: ([sys.executable, "-c", "pass"], ""),
            "quiet": lambda i: ([*hook, "prompt", *where], seen),
            "inject": lambda i: ([*hook, "session-start", *where],
                                 json.dumps({"session_id": f"start-{i}", "source": "startup"})),
            "resumed": lambda i: ([*hook, "session-start", *where], resumed),
            "moved": lambda i: ([*hook, "prompt", *where], json.dumps({"session_id": f"moved-{i}"})),
        }
        names = list(runs)
        timed(*runs["inject"](-1), Path(tmp), env)  # byte-code caches written
        timed([*hook, "session-start", *where], seen, Path(tmp), env)  # session "seen" saw HEAD
        for name in names:
            _, out = timed(*runs[name](-2), Path(tmp), env)
            if name in ("quiet", "resumed") and out:
                raise SystemExit(f"{name}: a hook where nothing moved printed {len(out)} characters")
            if name in ("inject", "moved") and "<memory>" not in out:
                raise SystemExit(f"{name}: no memory in the hook's output")
        ms = interleaved(runs, rounds, Path(tmp), env)
    report("codex_hook", rounds, ms)


if __name__ == "__main__":
    main()
