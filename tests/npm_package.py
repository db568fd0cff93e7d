"""A published npm package the tests run (Letta Code's bundle, Claude Code's CLI), fetched by
the tests themselves the first time they need it on a machine, so that the README's test
command is all a fresh machine needs.

`npm pack` once per machine, under a lock beside the target folder (test runs started
together fetch it once), unpacked elsewhere and renamed into place (a run stopped halfway
leaves no half package that looks whole). Every failure fails the test, never skips it,
saying what is missing: a skipped conformance test proves nothing.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

USER_HOME = Path.home()  # read before the tests give each test a home of its own: npm keeps the user's settings


@dataclass(frozen=True)
class NpmPackage:
    """`name` and `version` name it in messages ("Letta Code", "0.32.18"); `spec` is what npm
    fetches; `env` the variable naming an unpacked copy; `marker` the file that shows the package
    is whole; `executable` is made runnable after unpacking; `hint` the commands that fetch it by
    hand."""

    name: str
    version: str
    spec: str
    env: str
    marker: str
    hint: str
    timeout: float = 600.0
    executable: bool = False

    @property
    def what(self) -> str:
        return f"{self.name} {self.version}"

    def ensure(self, folder: Path) -> Path:
        """`folder`, holding the package of `version`: fetched on first use, and a test failure
        (never a skip) when it holds another version."""
        if not self.installed(folder):
            self.fetch(folder)
        found = json.loads((folder / "package.json").read_text(encoding="utf-8")).get("version")
        if found != self.version:
            pytest.fail(f"{folder} holds {self.name} {found}, not {self.version}, which these tests are pinned to "
                        f"({self.hint})")
        return folder

    def installed(self, folder: Path) -> bool:
        return (folder / "package.json").is_file() and (folder / self.marker).is_file()

    def fetch(self, folder: Path) -> None:
        """Put the package into `folder`, unless a run beside this one did meanwhile."""
        folder.parent.mkdir(parents=True, exist_ok=True)
        with open(folder.parent / f".{folder.name}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.installed(folder):
                return
            if folder.exists() and any(folder.iterdir()):
                pytest.fail(f"{folder} holds something other than {self.what}: remove it, and the tests fetch "
                            f"the package again ({self.hint})")
            with tempfile.TemporaryDirectory(dir=folder.parent, prefix=f".{folder.name}-") as work:
                unpacked = self._unpack(self._pack(Path(work), folder), Path(work))
                os.replace(unpacked, folder)

    def _pack(self, work: Path, folder: Path) -> Path:
        """The package's tarball, fetched from the npm registry into `work`."""
        if shutil.which("npm") is None:
            pytest.fail(f"{self.what} is not in {folder} and npm is not installed to fetch it "
                        f"(Debian/Ubuntu: apt-get install nodejs npm; or set {self.env} to an unpacked {self.spec})")
        try:
            done = subprocess.run(["npm", "pack", "--loglevel=error", "--pack-destination", str(work), self.spec],
                                  capture_output=True, text=True, timeout=self.timeout,
                                  env={**os.environ, "HOME": str(USER_HOME)})
        except subprocess.TimeoutExpired:
            pytest.fail(f"`npm pack {self.spec}` did not finish in {self.timeout:g} s; is the npm registry reachable?")
        tarballs = sorted(work.glob("*.tgz"))
        if done.returncode != 0 or len(tarballs) != 1:
            pytest.fail(f"could not fetch {self.what} into {folder}: `npm pack {self.spec}` exited "
                        f"{done.returncode}: {(done.stderr or done.stdout).strip()} "
                        f"(or set {self.env} to an unpacked copy)")
        return tarballs[0]

    def _unpack(self, tarball: Path, work: Path) -> Path:
        """The `package/` folder the tarball holds, unpacked into `work` (no path may leave it)."""
        with tarfile.open(tarball) as archive:
            archive.extractall(work / "unpacked", filter="data")
        unpacked = work / "unpacked" / "package"
        if not self.installed(unpacked):
            pytest.fail(f"{tarball.name} from npm holds no package/{self.marker}: {self.spec} changed its layout")
        if self.executable:
            (unpacked / self.marker).chmod(0o755)
        return unpacked
