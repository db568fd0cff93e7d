"""Two `memrepo serve --local` stacks side by side on one machine: `--port 0` gives every port
each opens (localhub, receiver, Redis) a free one and `--data` keeps each apart, and each
stack's event stream takes its own localhub's tokens (agents follow with the token they use
for git) and knows nothing of the other's repositories; each shows its memories in the palace
to the same tokens."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests

from bot.memfs import sync
from bot.memfs.create import init_repository
from tests.conftest import git
from tests.served import LocalStack


@pytest.fixture
def stacks(tmp_path: Path) -> Iterator[tuple[LocalStack, LocalStack]]:
    first = LocalStack(tmp_path / "one")
    try:
        second = LocalStack(tmp_path / "two")
    except BaseException:
        first.stop()
        raise
    try:
        yield first, second
    finally:
        assert second.stop() == 0
        assert first.stop() == 0


def ports(stack: LocalStack) -> set[int]:
    return {urlsplit(stack.urls[key]).port for key in ("localhub REST", "receiver")}  # type: ignore[misc]


def test_two_stacks_run_side_by_side_each_on_its_own_ports_and_data(
        stacks: tuple[LocalStack, LocalStack], tmp_path: Path) -> None:
    first, second = stacks
    assert first.urls["redis"] != second.urls["redis"]
    assert len(ports(first)) == 2 and len(ports(second)) == 2 and not ports(first) & ports(second)
    for stack, data in ((first, tmp_path / "one"), (second, tmp_path / "two")):
        assert stack.urls["redis"].startswith("unix://")  # a socket of its own, no port
        assert requests.get(f"{stack.receiver}/healthz", timeout=10).json()["redis"] == "ok"
        assert (data / "localhub").is_dir() and (data / "redis").is_dir() and (data / "logs").is_dir()
    token = first.new_token("ada")
    made = requests.post(f"{first.api}/user/repos", json={"name": "memory", "private": True}, timeout=10,
                         headers={"Authorization": f"token {token}"})
    assert made.status_code == 201
    auth = {"Authorization": f"Bearer {token}"}
    with requests.get(f"{first.receiver}/v1/repos/ada/memory/events", headers=auth, stream=True,
                      timeout=10) as resp:
        assert resp.status_code == 200  # ada's own localhub token opens her memory's stream
        assert b"connected to ada/memory" in next(resp.iter_content(chunk_size=None))
    other = requests.get(f"{second.receiver}/v1/repos/ada/memory/events", headers=auth, timeout=10)
    assert other.status_code == 404  # the other stack serves no such repository


def test_serve_local_shows_each_memory_in_the_palace_to_whoever_may_read_it(
        stacks: tuple[LocalStack, LocalStack], tmp_path: Path) -> None:
    first, second = stacks
    token = first.new_token("ada")
    other = first.new_token("bo")
    made = requests.post(f"{first.api}/user/repos", json={"name": "memory", "private": True}, timeout=10,
                         headers={"Authorization": f"token {token}"})
    assert made.status_code == 201
    page = f"{first.receiver}/palace/ada/memory/"
    auth = {"Authorization": f"Bearer {token}"}
    empty = requests.get(page, headers=auth, timeout=30)
    assert empty.status_code == 404 and "seen a push to" in empty.text  # nothing pushed to it yet
    memory = init_repository(tmp_path / "memory", "a1", "Ada")
    sync.set_remote(memory, first.web.replace("http://", f"http://x-access-token:{token}@") + "/ada/memory.git")
    git(memory.root, "push", "-q", "origin", "main")
    shown = requests.get(page, headers=auth, timeout=30)
    assert shown.status_code == 200 and "<h1>Memory of ada/memory</h1>" in shown.text
    assert requests.get(page, headers={"Authorization": f"Bearer {other}"}, timeout=30).status_code == 404
    assert requests.get(page, timeout=30).status_code == 401
    assert requests.get(f"{second.receiver}/palace/ada/memory/", headers=auth, timeout=30).status_code == 404
