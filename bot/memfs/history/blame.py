"""Which commit wrote each line of a file, from `git blame --line-porcelain`.

git's blame follows every parent of a merge, so a line that came through a merged pull
request is attributed to the commit on the pull request's branch that wrote it (a conflict
resolution by the integrator included), not to the merge commit; which commit of main's
first-parent history brought that commit in is a separate question (timeline.landing).
Running git is the shell; reading its output is a pure function, tested on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.errors import MemrepoError
from bot.memfs.store.repo import MemoryRepo
from bot.memfs.sync.gitcmd import run_git

HISTORY_BLAME_FAILED = "cannot tell who wrote the lines of {path}: git blame failed ({problem})"


@dataclass(frozen=True)
class BlamedLine:
    line: int  # in the file at the blamed revision, from 1
    sha: str  # the commit that wrote it
    original_line: int  # where it was in that commit's version of the file
    original_path: str  # the file's name in that commit (renames are followed)
    text: str


def parse_line_porcelain(output: str) -> list[BlamedLine]:
    """The lines of `git blame --line-porcelain` output, in file order."""
    out: list[BlamedLine] = []
    header: list[str] | None = None
    filename = ""
    for raw in output.split("\n"):
        if header is None:
            if raw:
                header = raw.split(" ")
                filename = ""
            continue
        if raw.startswith("\t"):
            out.append(BlamedLine(int(header[2]), header[0], int(header[1]), filename, raw[1:]))
            header = None
        elif raw.startswith("filename "):
            filename = raw[len("filename "):]
    return out


def blame(repo: MemoryRepo, rev: str, path: str, line: int | None = None) -> list[BlamedLine]:
    """Blame `path` at `rev` (one line, or all); the caller has checked that both exist. The
    repository is named on the command line, so a GIT_DIR inherited from a hook cannot send
    git to another one."""
    args = [f"--git-dir={repo.git.path}", f"--work-tree={repo.root}", "blame", "--line-porcelain"]
    if line is not None:
        args += ["-L", f"{line},{line}"]
    done = run_git(repo.root, *args, rev, "--", path)
    if not done.ok:
        problem = done.err.strip().splitlines()
        raise MemrepoError(HISTORY_BLAME_FAILED.format(path=path, problem=problem[-1] if problem else
                                                             f"exit code {done.status}"))
    return parse_line_porcelain(done.out)
