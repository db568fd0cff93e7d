"""How memrepo runs a git command as a process on a memory's clone (through GitPython's
runner): for what libgit2 cannot do as git does (git's own transports and credential helpers,
linked worktrees, blame that follows renames). Most of the rest is done in-process with
pygit2. Three readers run git themselves, with plain `subprocess`: the hooks' fast path
(bot/memfs/store/git_command.py, which must load neither GitPython nor pygit2), the index's
modes (`MemoryRepo` in bot/memfs/store/repo.py, `git ls-files --stage`), and the CI pin's
look at memrepo's own checkout (bot/ci_pin.py).

The command runs with prompts off, in the C locale (its wording is matched), bounded by
GIT_TIMEOUT, and its output is redacted (git echoes URLs)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.memfs.sync.redaction import redact

GIT_TIMEOUT = 120.0
QUIET = {"GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never", "LC_ALL": "C", "LANGUAGE": "C"}


@dataclass(frozen=True)
class GitOutput:
    status: int
    out: str
    err: str

    @property
    def ok(self) -> bool:
        return self.status == 0

    @property
    def text(self) -> str:
        """stdout and stderr together, redacted."""
        return redact(self.out + self.err)


def quiet_env() -> dict[str, str]:
    """What every git process memrepo starts gets on top of the environment: no prompt for a
    password or an SSH passphrase (nobody is there to answer), English messages."""
    env = dict(QUIET)
    if not any(k in os.environ for k in ("GIT_SSH_COMMAND", "GIT_SSH")):
        env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"
    return env


def run_git(cwd: str | os.PathLike[str], *args: str, env: Mapping[str, str] | None = None,
            timeout: float = GIT_TIMEOUT) -> GitOutput:
    """`git ARGS` in `cwd`: its status and output; never raises for git's own errors (a git that
    cannot be started is status 127, one that ran out of time is killed and gives a status too).
    GitPython is imported here, by the first git process: a commit with nothing to push (every
    `memrepo tool` call without a remote) never pays for loading it."""
    import git

    runner = git.Git(Path(cwd))
    try:
        status, out, err = runner.execute(
            ["git", *args], env={**quiet_env(), **(env or {})}, kill_after_timeout=timeout,
            with_extended_output=True, with_exceptions=False,
        )
    except git.exc.GitCommandNotFound as exc:
        return GitOutput(127, "", f"fatal: git could not be run ({exc.args[0] if exc.args else 'not found'})")
    return GitOutput(int(status or 0), out or "", err or "")


def git_problem(text: str) -> str:
    """The line of git's output that says what went wrong, redacted (git echoes URLs)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for prefix in ("fatal:", "error:", "remote: error:", "!"):
        for line in lines:
            if line.startswith(prefix):
                return redact(line[len(prefix):].strip())[:300] or "git failed"
    return redact(lines[-1])[:300] if lines else "git failed"
