"""The pinned Codex CLI these tests run, found (or fetched) once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.codex_conformance.codex import binary


@pytest.fixture(scope="session")
def codex() -> Path:
    return binary()
