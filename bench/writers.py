"""Benchmark of many agents writing one memory at once: `python bench/writers.py` from the
project root.

For 2, 4 and 8 writers (`--writers`), each a process of its own with its own clone of one bare
remote (file://), each makes `--edits` (50) edits through `AgentSession`, all starting together
on a barrier: a bullet appended to its own file, a bullet appended to a shared core file, the
shared `counter:` line replaced, in turn (tests/writers_work.py, the routine the concurrency
test runs). Then `sync` in every clone, one after another, and every edit is looked for on the
remote's main (its files and `git log`) and among the clone's set-aside commits.

Reported for each size: accepted edits, edits on main, edits set aside (and reported to their
writer), edits lost (accepted, in neither place: must be 0, or the benchmark exits 1), wrong
reports, edits whose own result said "not pushed yet", the median and p99 time of one edit
(the `handle_tool_call`: commit, push, replays and retries) and the run's wall time.

Baseline, in the same run, one writer alone on a remote of its own (`--rounds` rounds,
alternating): `git commit -a` + `git push` of one appended line in a plain git clone, and one
AgentSession edit (the same append) with nobody else writing.

Prints readable lines, then one line of JSON. Options: --writers 2,4,8  --edits 50  --rounds 30  --keep
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.transcript import TranscriptStore
from tests import writers_work as work


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def baseline(folder: Path, rounds: int) -> dict[str, float]:
    """One writer, nobody else: plain `git commit` + `git push` of one line, and one AgentSession
    edit, alternating so both see the same load (medians in ms)."""
    _, (plain,) = work.make_remote(folder / "git", 1)
    _, (alone,) = work.make_remote(folder / "session", 1)
    target = plain / work.own_path(0)
    git_ms: list[float] = []
    edit_ms: list[float] = []
    store = TranscriptStore(folder / "home-alone", fsync=False)
    with work.open_session(alone, 0, store) as session:
        for k in range(rounds):
            began = time.perf_counter()
            with target.open("a", encoding="utf-8") as handle:
                handle.write(f"- {work.token(0, k)}: a plain git commit\n")
            run_git(plain, "commit", "-q", "--no-verify", "-a", "-m", f"own {work.token(0, k)}")
            run_git(plain, "push", "-q", "origin", "main")
            git_ms.append((time.perf_counter() - began) * 1000)

            call = work.call_for(session.repo, 0, 3 * k)  # k * 3: always an append to its own file
            began = time.perf_counter()
            result = session.handle_tool_call(call)
            edit_ms.append((time.perf_counter() - began) * 1000)
            if not (result.ok and result.pushed):
                raise SystemExit(f"a lone edit was not pushed: {result.message}")
    store.close()
    return {"git_commit_push_median_ms": round(statistics.median(git_ms), 2),
            "git_commit_push_p99_ms": round(quantile(git_ms, 0.99), 2),
            "lone_edit_median_ms": round(statistics.median(edit_ms), 2),
            "lone_edit_p99_ms": round(quantile(edit_ms, 0.99), 2)}


def contended(folder: Path, writers: int, edits: int) -> tuple[dict[str, object], work.Audit]:
    remote, clones = work.make_remote(folder, writers)
    reports = work.run_writers(folder, clones, edits)
    errors = [f"w{r.writer}: {r.error}" for r in reports if r.error]
    if errors:
        raise SystemExit("a writer failed: " + "; ".join(errors))
    syncs = work.final_syncs(clones)
    unsynced = [s.summary for s in syncs if not s.pushed]
    if unsynced:
        raise SystemExit("a final sync did not push: " + "; ".join(unsynced))
    found = work.audit(remote, clones, reports, syncs)
    ms = [e.ms for r in reports for e in r.edits]
    wall = max(e.at + e.ms / 1000 for r in reports for e in r.edits) - min(e.at for r in reports for e in r.edits)
    figures: dict[str, object] = {"writers": writers, "edits_each": edits, **found.as_data(),
                                  "edit_median_ms": round(statistics.median(ms), 2),
                                  "edit_p99_ms": round(quantile(ms, 0.99), 2),
                                  "wall_s": round(wall, 2), "edits_per_s": round(len(ms) / wall, 1)}
    return figures, found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writers", default="2,4,8")
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)
    sizes = [int(n) for n in args.writers.split(",") if n.strip()]

    tmp = Path(tempfile.mkdtemp(prefix="memrepo-bench-writers-"))
    home = tmp / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Bench Person\n\temail = bench@example.com\n"
                                     "[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n")
    os.environ.update({"HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"})
    print(f"writers benchmark: {', '.join(map(str, sizes))} writers x {args.edits} edits on one bare remote, "
          f"{os.cpu_count() or 1} cores, temp {tmp}")
    code = 1
    try:
        base = baseline(tmp / "baseline", args.rounds)
        print(f"baseline, one writer alone ({args.rounds} rounds): git commit + git push median "
              f"{base['git_commit_push_median_ms']:.1f} ms; AgentSession edit median "
              f"{base['lone_edit_median_ms']:.1f} ms")
        runs = []
        lost = wrong = 0
        for n in sizes:
            f, found = contended(tmp / f"writers-{n}", n, args.edits)
            runs.append(f)
            print(f"{n} writers x {args.edits}: accepted {f['accepted']}, on main {f['on_main']}, set aside "
                  f"{f['set_aside']} {f['set_aside_by_kind']}, lost {f['lost']}, wrong reports {f['wrong']}, "
                  f"queued at first {f['queued']}; edit median {f['edit_median_ms']:.1f} ms, "
                  f"p99 {f['edit_p99_ms']:.1f} ms; {f['wall_s']:.1f} s, {f['edits_per_s']} edits/s")
            for token in found.lost:
                print(f"  LOST {token}")
            for token, what in found.wrong:
                print(f"  wrong report: {token}: {what}")
            for token, message in found.refused:
                print(f"  refused {token}: {message}")
            lost += len(found.lost)
            wrong += len(found.wrong)
        code = 1 if lost else 0
        result = {"bench": "writers", "edits_each": args.edits, "baseline_rounds": args.rounds, **base,
                  "runs": runs, "lost": lost, "wrong": wrong}
        print(json.dumps(result))
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
