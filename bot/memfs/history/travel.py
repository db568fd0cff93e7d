"""Time travel over memory's git history: what memory held `at` a moment, and the prompt it
compiled to then. These are the stable entry points (the CLI and the MCP server call them; the
reports are plain JSON-ready data with a `version`):

    at(repo_root, when, path=None) -> dict
    compile_at(repo_root, when, system_prompt="") -> dict

"main" is the clone's `refs/heads/main` (HEAD when there is no such branch); files are those
of its committed commits, never the working tree. Exit codes (`details["exit_code"]` of the
errors, which the CLI returns): 3 a date that cannot be read, 4 a moment before main's first
commit, 5 a path that is not a file in memory. Why a line is in memory is answered above the
core, by `bot.provenance`, which needs the forge and the transcripts as well.
"""

from __future__ import annotations

import contextlib
import math
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pygit2

from bot.config import CONFIG_PATH, DEFAULT_POLICY, PolicyError, parse_policy
from bot.dates import EXIT_BAD_DATE, BadDateError, parse_when, parse_when_bound
from bot.errors import MemrepoError
from bot.identity import writer
from bot.memfs.history import timeline
from bot.memfs.prompt.compile import DEFAULT_MEMORY_DIR, compile_memory, compile_prompt, read_document
from bot.memfs.store import refs
from bot.memfs.store.repo import MAIN, MemoryRepo

__all__ = ["EXIT_BAD_DATE", "EXIT_BEFORE_HISTORY", "EXIT_NOT_IN_MEMORY", "REPORT_VERSION", "BadDateError",
           "BeforeHistoryError", "PathNotInMemoryError", "at", "commit_at", "compile_at", "file_path", "iso",
           "main_landings", "main_ref", "main_timeline", "parse_when", "parse_when_bound", "ref_name"]

# Memory at a date, and who wrote a line (history.py, blame.py).
HISTORY_BEFORE_FIRST = "memory did not exist yet at {when}: the first commit on {ref} is from {first}"
HISTORY_BAD_PATH = "{path!r} is not a path inside memory (no '..', no absolute paths, nothing under .git)"

REPORT_VERSION = 1
EXIT_BEFORE_HISTORY = 4
EXIT_NOT_IN_MEMORY = 5


class BeforeHistoryError(MemrepoError):
    """The moment is before main's first commit: memory did not exist yet (exit code 4)."""


class PathNotInMemoryError(MemrepoError):
    """The path is not a file of memory at the commit asked about (exit code 5)."""


# ------------------------------------------------------------------------------ main and its past
def iso(seconds: int) -> str:
    """A commit time as ISO 8601 in UTC (whole seconds, Z)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def main_ref(repo: MemoryRepo) -> tuple[str, str]:
    """(the ref read as main, its commit)."""
    name = f"refs/heads/{MAIN}"
    sha = refs.resolve(repo.root, name)
    if sha and repo.resolve(sha):
        return name, sha
    return "HEAD", repo.head_sha() or ""


def _common_dir(repo: MemoryRepo) -> Path:
    dirs = refs.git_dirs(repo.root)
    return dirs[1] if dirs else Path(repo.git.path)


def main_timeline(repo: MemoryRepo, ref: str, tip: str) -> timeline.Timeline:
    return timeline.load(repo.git, _common_dir(repo), ref, tip)


def main_landings(repo: MemoryRepo, ref: str, chain: timeline.Timeline) -> timeline.Landings:
    """Where each commit main contains landed on `chain` (main_timeline's answer for `ref`)."""
    return timeline.load_landings(repo.git, _common_dir(repo), ref, chain)


def _seconds(when: datetime) -> int:
    """Whole seconds (commit times have no fraction): a commit made at 10:00:00 is included at
    10:00:00.5. A moment without a zone is UTC."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return math.floor(when.timestamp())


def commit_at(repo: MemoryRepo, when: datetime) -> tuple[str, int, bool]:
    """(main's commit at `when`, its commit time, whether it is main's tip); main's first-parent
    history by commit time, as `git rev-list --first-parent --before=WHEN -1 main`."""
    ref, tip = main_ref(repo)
    line = main_timeline(repo, ref, tip)
    position = line.at(_seconds(when))
    if position is None:
        first = min(line.times) if len(line) else 0
        raise BeforeHistoryError(HISTORY_BEFORE_FIRST.format(
            when=_shown(when), first=iso(first), ref=ref_name(ref)), exit_code=EXIT_BEFORE_HISTORY)
    return line.sha(position), line.times[position], position == len(line) - 1


def _shown(when: datetime) -> str:
    moment = when if when.tzinfo else when.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def ref_name(ref: str) -> str:
    return ref.removeprefix("refs/heads/")


def file_path(repo: MemoryRepo, sha: str, raw: str, where: str) -> str:
    """The file `raw` names at `sha` (the `.md` may be left out, as the memory tool allows)."""
    text = raw.strip().replace("\\", "/")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    path = "/".join(parts)
    if not path or ".." in parts or text.startswith("/") or parts[0] == ".git":
        raise PathNotInMemoryError(HISTORY_BAD_PATH.format(path=raw), exit_code=EXIT_NOT_IN_MEMORY)
    for candidate in (path, path + ".md"):
        if repo.read(candidate, sha) is not None:
            return candidate
    hint = " (it is a folder: `memrepo at DATE` lists files)" if repo.is_folder(path, sha) else ""
    raise PathNotInMemoryError(f"{path} is not a file in memory {where}{hint}",
                               exit_code=EXIT_NOT_IN_MEMORY)


# ------------------------------------------------------------------------------------------ at
def at(repo_root: str | os.PathLike[str], when: datetime, path: str | None = None) -> dict[str, Any]:
    """Memory as main held it at `when` (aware; naive means UTC): main's first-parent history
    by commit time, a commit made exactly at `when` included, main's tip after its last commit.

    A `path` of `shared/<NAME>/<path>` (NAME attached) is read in that shared memory's
    projection, by its main's history, and reported as addressed.

    Returns {"version", "when", "ref", "commit", "committed_at", "author", "role", "summary",
    "latest", "path"} and, with `path`, "text" and "size" (bytes) of that file; without,
    "files": [{"path", "size", "description"}] of every file (description from the
    frontmatter of markdown files, else ""). Raises BeforeHistoryError (4) before main's first
    commit, PathNotInMemoryError (5) when `path` is not a file then.
    """
    from bot.memfs.shared.projection import in_shared_memory

    repo = MemoryRepo.open(repo_root)
    shown = ""  # how the agent addresses the memory `path` is in: "" its own, shared/<NAME>/ another
    if path is not None:
        own = repo
        repo, inner = in_shared_memory(repo, path)
        shown = path.removesuffix(inner) if repo is not own else ""
        path = inner
    sha, _, latest = commit_at(repo, when)
    commit = repo.git[sha].peel(pygit2.Commit)
    report: dict[str, Any] = {
        "version": REPORT_VERSION,
        "when": _shown(when),
        "ref": ref_name(main_ref(repo)[0]),
        "commit": sha,
        "committed_at": iso(commit.commit_time),
        "author": {"name": commit.author.name, "email": commit.author.email},
        "role": writer(commit.author.email, commit.committer.email, commit.message),
        "summary": commit.message.split("\n", 1)[0],
        "latest": latest,
        "path": None,
    }
    if path is not None:
        where = f"at {_shown(when)} (commit {sha[:10]})"
        found = file_path(repo, sha, path, where)
        data = repo.read(found, sha) or b""
        report.update(path=shown + found, size=len(data), text=data.decode("utf-8", "replace"))
        return report
    files = []
    for name, blob in sorted(repo.paths(sha).items()):
        obj = repo.git[blob]
        description = read_document(obj.data).description if name.endswith(".md") else ""
        files.append({"path": name, "size": obj.size, "description": description})
    report["files"] = files
    return report


def compile_at(repo_root: str | os.PathLike[str], when: datetime, system_prompt: str = "", *,
               memory_dir: str = DEFAULT_MEMORY_DIR) -> dict[str, Any]:
    """The system prompt the agent would have had at `when`: memory at main's commit then,
    compiled as `memrepo compile` compiles HEAD (the limits of the policy of that commit; the
    default limits when it does not parse, as the prompt cache does).

    Returns {"version", "when", "commit", "committed_at", "latest", "text"}; raises as `at`.
    """
    repo = MemoryRepo.open(repo_root)
    sha, committed, latest = commit_at(repo, when)
    limits = DEFAULT_POLICY.limits
    config = repo.read(CONFIG_PATH, sha)
    if config is not None:
        with contextlib.suppress(PolicyError):
            limits = parse_policy(config.decode("utf-8", "replace")).limits
    text = compile_prompt(system_prompt, compile_memory(repo.files(sha), limits, memory_dir))
    return {"version": REPORT_VERSION, "when": _shown(when), "commit": sha, "committed_at": iso(committed),
            "latest": latest, "text": text}
