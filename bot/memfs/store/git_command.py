"""A commit's files read through the git command, for a process that compiles one prompt and
exits (Claude Code's hooks): `git ls-tree` lists the commit once, and one `git cat-file --batch`
reads every markdown file and the policy in one go when the first is asked for (one round trip
per file would cost more than the reading). Importing pygit2 alone costs such a process more
than the compile; this reads the same objects without it. Reads only.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bot.errors import MemrepoError
from bot.memfs.store import refs
from bot.memfs.texts import REPO_NOT_GIT

GIT_COMMAND_FAILED = "git {command} failed in {path}: {problem}"

GIT_TIMEOUT = 30  # seconds: listing a commit's tree, reading its files
PROMPT_SUFFIXES = (".md", ".yml", ".json")  # memory files, the policy, Letta's limits


class CommandSnapshot:
    """The compiler's view of the repository at `root` (bot.memfs.prompt.compiler.Snapshot)."""

    def __init__(self, root: Path) -> None:
        dirs = refs.git_dirs(root)
        if dirs is None:
            raise MemrepoError(REPO_NOT_GIT.format(path=root))
        self.root = root
        self._git_dir = dirs[0]
        self._listed: list[str] = []  # the blobs of the last commit listed that a prompt may read
        self._read: dict[str, bytes] = {}
        self._trees: dict[str, dict[str, str]] = {}  # rev -> its paths, listed once

    @property
    def git_dir(self) -> str:
        return str(self._git_dir)

    def _git(self, *args: str) -> bytes:
        return self._git_input(*args, stdin=None)

    def _git_input(self, *args: str, stdin: bytes | None) -> bytes:
        done = subprocess.run(["git", "-C", str(self.root), *args], input=stdin, capture_output=True,
                              timeout=GIT_TIMEOUT)
        if done.returncode != 0:
            problem = done.stderr.decode("utf-8", "replace").strip()
            raise MemrepoError(GIT_COMMAND_FAILED.format(command=" ".join(args), path=self.root,
                                                               problem=problem))
        return done.stdout

    def resolve(self, rev: str) -> str | None:
        done = subprocess.run(["git", "-C", str(self.root), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
                              capture_output=True, timeout=GIT_TIMEOUT)
        sha = done.stdout.decode().strip()
        return sha if done.returncode == 0 and sha else None

    def paths(self, rev: str) -> dict[str, str]:
        """Every blob path of the commit -> its id (what MemoryRepo.paths gives), listed once a
        revision."""
        if rev in self._trees:
            return dict(self._trees[rev])
        out: dict[str, str] = {}
        for record in self._git("ls-tree", "-r", "-z", "--full-tree", rev).split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            _mode, kind, oid = meta.split(b" ")
            if kind == b"blob":
                out[path.decode("utf-8", "surrogateescape")] = oid.decode()
        self._listed = [oid for path, oid in out.items() if path.endswith(PROMPT_SUFFIXES)]
        self._trees[rev] = out
        return dict(out)

    def read(self, path: str, rev: str = "HEAD") -> bytes | None:
        """One file of the commit, None where it has none (what MemoryRepo.read gives); read in
        the same `git cat-file --batch` as the prompt's files."""
        oid = self.paths(rev).get(path)
        return None if oid is None else self.blob(oid)

    def blob(self, oid: str) -> bytes:
        """One object's bytes; the first call reads the listed commit's markdown files and
        policy with one `git cat-file --batch`."""
        if oid not in self._read:
            self._read.update(self._objects([oid, *self._listed]))
            self._listed = []
        try:
            return self._read[oid]
        except KeyError:
            raise MemrepoError(f"git has no object {oid} in {self.root}") from None

    def _objects(self, oids: list[str]) -> dict[str, bytes]:
        data = self._git_input("cat-file", "--batch", stdin="".join(f"{oid}\n" for oid in oids).encode())
        found: dict[str, bytes] = {}
        at = 0
        while at < len(data):
            end = data.index(b"\n", at)
            header = data[at:end].split()
            at = end + 1
            if len(header) != 3:  # `<oid> missing`
                continue
            size = int(header[2])
            found[header[0].decode()] = data[at:at + size]
            at += size + 1
        return found
