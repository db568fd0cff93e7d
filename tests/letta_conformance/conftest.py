"""The Letta Code package these tests run, found and extracted once per test session."""

from __future__ import annotations

import pytest

from tests.letta_conformance.letta import Letta, package_dir


@pytest.fixture(scope="session")
def letta(tmp_path_factory: pytest.TempPathFactory) -> Letta:
    return Letta(package_dir(), tmp_path_factory.mktemp("letta-code"))
