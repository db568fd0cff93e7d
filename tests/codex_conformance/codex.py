"""OpenAI's Codex CLI, pinned to VERSION, fetched by the tests like Claude Code's
(tests/claude_code_conformance/claude.py): `npm pack` once per machine into the folder named by
MEMREPO_CODEX, or the default below, under a lock, unpacked elsewhere and renamed into place.
The `@openai/codex` package is a launcher whose optional dependencies are the per-platform
builds, published as versions of the same package (`@openai/codex@0.171.0-linux-x64`); the
tests fetch that build and run its native `codex` directly.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest

from tests.npm_package import USER_HOME, NpmPackage

VERSION = "0.171.0"
ENV = "MEMREPO_CODEX"
FETCH_TIMEOUT = 900  # seconds for `npm pack`: the native build is about 170 MB
TRIPLES = {("linux", "x64"): "x86_64-unknown-linux-musl", ("linux", "arm64"): "aarch64-unknown-linux-musl",
           ("darwin", "x64"): "x86_64-apple-darwin", ("darwin", "arm64"): "aarch64-apple-darwin"}


def build() -> tuple[str, str]:
    """(the platform build's npm version suffix, its Rust target triple) for this machine."""
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system())
    triple = TRIPLES.get((system or "", machine or ""))
    if triple is None:
        pytest.fail(f"Codex {VERSION} has no native build these tests know for {platform.system()} "
                    f"{platform.machine()}")
    return f"{system}-{machine}", triple


def default_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or USER_HOME / ".cache") / "memrepo" / f"codex-{VERSION}" / "package"


def binary() -> Path:
    """The `codex` binary of VERSION, fetched on first use; fails (never skips) saying what is missing."""
    suffix, triple = build()
    folder = Path(os.environ.get(ENV) or default_dir())
    spec = f"@openai/codex@{VERSION}-{suffix}"
    marker = f"vendor/{triple}/bin/codex"
    hint = f"mkdir -p {folder.parent} && cd {folder.parent} && npm pack {spec} && tar xzf *.tgz"
    NpmPackage("Codex", f"{VERSION}-{suffix}", spec, ENV, marker, hint, timeout=FETCH_TIMEOUT,
               executable=True).ensure(folder)
    return folder / marker
