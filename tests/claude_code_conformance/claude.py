"""Claude Code's published CLI, pinned to VERSION, fetched by the tests like Letta's package
(tests/letta_conformance/letta.py): `npm pack` once per machine into the folder named by
MEMREPO_CLAUDE_CODE, or the default below, under a lock, unpacked elsewhere and renamed into
place. The `@anthropic-ai/claude-code` package is a wrapper whose postinstall copies in the
native binary of an optional per-platform package; the tests fetch that platform package
(`@anthropic-ai/claude-code-linux-x64`, ...) of the same version and run its `claude` directly.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest

VERSION = "2.1.332"
ENV = "MEMREPO_CLAUDE_CODE"
USER_HOME = Path.home()  # read before the tests give each test a home of its own: npm keeps the user's settings
FETCH_TIMEOUT = 900  # seconds for `npm pack`: the native package is about 190 MB


def platform_package() -> str:
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system())
    if machine is None or system is None:
        pytest.fail(f"Claude Code {VERSION} has no native package these tests know for {platform.system()} "
                    f"{platform.machine()}")
    musl = system == "linux" and not Path("/lib64/ld-linux-x86-64.so.2").exists() and any(Path("/lib").glob("ld-musl*"))
    return f"@anthropic-ai/claude-code-{system}-{machine}{'-musl' if musl else ''}"


def default_dir() -> Path:
    return (Path(os.environ.get("XDG_CACHE_HOME") or USER_HOME / ".cache") / "memrepo"
            / f"claude-code-{VERSION}" / "package")


def installed(folder: Path) -> bool:
    return (folder / "package.json").is_file() and (folder / "claude").is_file()


def hint(folder: Path, package: str) -> str:
    return (f"mkdir -p {folder.parent} && cd {folder.parent} && npm pack {package}@{VERSION} && "
            f"tar xzf *.tgz")


def binary() -> Path:
    """The `claude` binary of VERSION, fetched on first use; fails (never skips) saying what is
    missing, since a skipped conformance test proves nothing."""
    package = platform_package()
    folder = Path(os.environ.get(ENV) or default_dir())
    if not installed(folder):
        fetch(folder, package)
    found = json.loads((folder / "package.json").read_text(encoding="utf-8")).get("version")
    if found != VERSION:
        pytest.fail(f"{folder} holds Claude Code {found}, not {VERSION}, which these tests are pinned to "
                    f"({hint(folder, package)})")
    return folder / "claude"


def fetch(folder: Path, package: str) -> None:
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed(folder):
            return
        if folder.exists() and any(folder.iterdir()):
            pytest.fail(f"{folder} holds something other than Claude Code {VERSION}: remove it, and the tests "
                        f"fetch it again ({hint(folder, package)})")
        with tempfile.TemporaryDirectory(dir=folder.parent, prefix=f".{folder.name}-") as work:
            tarball = npm_pack(Path(work), folder, f"{package}@{VERSION}")
            with tarfile.open(tarball) as archive:
                archive.extractall(Path(work) / "unpacked", filter="data")
            unpacked = Path(work) / "unpacked" / "package"
            if not installed(unpacked):
                pytest.fail(f"{tarball.name} from npm holds no package/claude: {package} changed its layout")
            (unpacked / "claude").chmod(0o755)
            os.replace(unpacked, folder)


def npm_pack(work: Path, folder: Path, spec: str) -> Path:
    if shutil.which("npm") is None:
        pytest.fail(f"Claude Code {VERSION} is not in {folder} and npm is not installed to fetch it "
                    f"(Debian/Ubuntu: apt-get install nodejs npm; or set {ENV} to an unpacked {spec})")
    try:
        done = subprocess.run(["npm", "pack", "--loglevel=error", "--pack-destination", str(work), spec],
                              capture_output=True, text=True, timeout=FETCH_TIMEOUT,
                              env={**os.environ, "HOME": str(USER_HOME)})
    except subprocess.TimeoutExpired:
        pytest.fail(f"`npm pack {spec}` did not finish in {FETCH_TIMEOUT} s; is the npm registry reachable?")
    tarballs = sorted(work.glob("*.tgz"))
    if done.returncode != 0 or len(tarballs) != 1:
        pytest.fail(f"could not fetch {spec} into {folder}: `npm pack` exited {done.returncode}: "
                    f"{(done.stderr or done.stdout).strip()} (or set {ENV} to an unpacked copy)")
    return tarballs[0]
