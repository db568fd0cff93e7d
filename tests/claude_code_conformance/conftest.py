"""The pinned Claude Code CLI these tests run, found (or fetched) once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.claude_code_conformance.claude import binary


@pytest.fixture(scope="session")
def claude() -> Path:
    return binary()
