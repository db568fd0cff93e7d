"""Claude Code's published CLI, pinned to VERSION, fetched by the tests like Letta's package
(tests/letta_conformance/letta.py): `npm pack` once per machine into the folder named by
MEMREPO_CLAUDE_CODE, or the default below, under a lock, unpacked elsewhere and renamed into
place. The `@anthropic-ai/claude-code` package is a wrapper whose postinstall copies in the
native binary of an optional per-platform package; the tests fetch that platform package
(`@anthropic-ai/claude-code-linux-x64`, ...) of the same version and run its `claude` directly.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest

from tests.npm_package import USER_HOME, NpmPackage

VERSION = "2.1.332"
ENV = "MEMREPO_CLAUDE_CODE"
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


def hint(folder: Path, package: str) -> str:
    return (f"mkdir -p {folder.parent} && cd {folder.parent} && npm pack {package}@{VERSION} && "
            f"tar xzf *.tgz")


def binary() -> Path:
    """The `claude` binary of VERSION, fetched on first use; fails (never skips) saying what is
    missing, since a skipped conformance test proves nothing."""
    name = platform_package()
    folder = Path(os.environ.get(ENV) or default_dir())
    package = NpmPackage("Claude Code", VERSION, f"{name}@{VERSION}", ENV, "claude", hint(folder, name),
                         timeout=FETCH_TIMEOUT, executable=True)
    package.ensure(folder)
    return folder / "claude"
