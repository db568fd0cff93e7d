"""Which memrepo a memory repository's CI runs: the pin `memrepo init` writes into
`.github/workflows/memrepo-validate.yml`, read, compared with the memrepo running and rewritten.

The workflow runs memrepo's own GitHub Action at a commit (`uses: memrepo/memrepo@<sha>`), so
CI runs exactly the rules of that commit. The pin is the memrepo that wrote it: the commit of
the installed memrepo when it is known (a git checkout, an editable install, or pip's record of
a git install, PEP 610's direct_url.json) and has the action, else the commit the release names
(`RELEASE_COMMIT`). The line's comment says the version and where the commit came from
(`git` or `release`), so a person reading the workflow, and `memrepo validate`, can tell.

Reading, comparing and rewriting are pure (text in, text out); `running_pin` and `is_ancestor`
ask the installed package and git.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bot import __version__

WORKFLOW = ".github/workflows/memrepo-validate.yml"
ACTION = "memrepo/memrepo"
# The commit of this project that the release's workflows pin when the installed memrepo's own
# commit is not known (a wheel); moved forward with each release (tests/review/test_workflows.py checks
# it is in this repository's history and has action.yml).
RELEASE_COMMIT = "956596495faac1620e3547b602eb3546dc290e3a"
SOURCES = ("git", "release")

_LINE = re.compile(r"(?P<lead>^[ \t]*-?[ \t]*uses:[ \t]*)" + re.escape(ACTION)
                   + r"@(?P<commit>[0-9a-f]{40})(?P<rest>[^\n]*)$", re.MULTILINE)
_COMMENT = re.compile(r"#\s*memrepo (?P<version>[0-9A-Za-z.+-]+) \((?P<source>git|release)\)")


@dataclass(frozen=True)
class Pin:
    commit: str
    version: str | None = None  # None: an older workflow's line says no version
    source: str | None = None

    def comment(self) -> str:
        return f"# memrepo {self.version} ({self.source})"


def line(pin: Pin) -> str:
    """What follows `uses: ` on the workflow's memrepo line."""
    return f"{ACTION}@{pin.commit} {pin.comment()}"


def read_pin(text: str) -> Pin | None:
    """The pin of a workflow's text (its first memrepo action line), or None."""
    match = _LINE.search(text)
    if match is None:
        return None
    comment = _COMMENT.search(match.group("rest"))
    return Pin(match.group("commit"), comment.group("version") if comment else None,
               comment.group("source") if comment else None)


def rewrite(text: str, pin: Pin) -> str:
    """`text` with its memrepo action line pinned to `pin`: that one line changes, nothing else."""
    match = _LINE.search(text)
    if match is None:
        raise ValueError(WORKFLOW)
    return text[: match.start()] + match.group("lead") + line(pin) + text[match.end():]


def _version(text: str | None) -> tuple[int, ...] | None:
    parts = re.findall(r"\d+", (text or "").split("+")[0])
    return tuple(int(p) for p in parts[:3]) if parts else None


def age(pinned: Pin, running: Pin, pinned_is_ancestor: bool | None) -> str:
    """How the workflow's pin stands to the memrepo running: `current` (the same commit),
    `older` (an earlier version, or an ancestor of the running commit), `newer`, or `unknown`
    (neither the versions nor the history tell)."""
    if pinned.commit == running.commit:
        return "current"
    mine, theirs = _version(running.version), _version(pinned.version)
    if mine and theirs and mine != theirs:
        return "older" if theirs < mine else "newer"
    if pinned_is_ancestor is True:
        return "older"
    if pinned_is_ancestor is False and running.source == "git":
        return "newer" if theirs and mine and theirs > mine else "unknown"
    return "unknown"


# ------------------------------------------------------------------------------- the shell
def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=20)


def _direct_url() -> dict:
    """pip's record of where the installed memrepo came from (PEP 610's direct_url.json), or {}."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        found = json.loads(distribution("memrepo").read_text("direct_url.json") or "{}")
    except (PackageNotFoundError, OSError, ValueError):  # not installed, unreadable, not JSON
        return {}
    return found if isinstance(found, dict) else {}


def _checkout() -> Path | None:
    """The git checkout the running memrepo is installed from, when there is one."""
    source = Path(__file__).resolve().parent.parent
    if (source / ".git").exists():
        return source
    url = _direct_url().get("url", "")
    if url.startswith("file://") and (Path(url[7:]) / ".git").exists():
        return Path(url[7:])
    return None


def _vcs_commit() -> str | None:
    """The commit pip recorded for a memrepo installed from git (PEP 610)."""
    commit = (_direct_url().get("vcs_info") or {}).get("commit_id")
    return commit if isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{40}", commit) else None


def running_pin() -> Pin:
    """The pin of the memrepo running now (see the module's docstring)."""
    checkout = _checkout()
    if checkout is not None:
        done = _git(checkout, "rev-parse", "--verify", "HEAD^{commit}")
        commit = done.stdout.strip()
        if done.returncode == 0 and _git(checkout, "cat-file", "-e", f"{commit}:action.yml").returncode == 0:
            return Pin(commit, __version__, "git")
    commit = _vcs_commit()
    if commit is not None:
        return Pin(commit, __version__, "git")
    return Pin(RELEASE_COMMIT, __version__, "release")


def is_ancestor(older: str, newer: str) -> bool | None:
    """Whether commit `older` is an ancestor of `newer` in the running memrepo's checkout; None
    where there is no checkout or it does not hold `older`."""
    checkout = _checkout()
    if checkout is None:
        return None
    done = _git(checkout, "merge-base", "--is-ancestor", older, newer)
    return {0: True, 1: False}.get(done.returncode)
