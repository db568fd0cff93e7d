"""More than one machine: three `memrepo worker` processes and two receivers against one Redis
and one forge (localhub). Dream pull requests on four memories, their webhooks split between
the two receivers as a load balancer would, are each merged exactly once (the per-repository
lock serializes a repository's integrations), and the workers integrate different
repositories at the same time. The workers start once every pull request is open, so the
queue holds work for several repositories when they begin: opening the pull requests one
after another would otherwise let each repository finish before the next one's work arrives."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from rq.registry import FinishedJobRegistry

from bot.contracts import LABEL_DREAM
from bot.forge.client import ForgeClient
from bot.forge.credentials import TokenCredentials
from bot.forge.shapes import NewPullRequest
from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.queue import connect, get_queue
from bot.serve.receiver import ReceiverServer
from bot.settings import Settings
from tests.conftest import git, localhub_token
from tests.memory_forge import FAST, as_dreamer, dream_body
from tests.waiting import wait_until
from webhooks.asgi import Receiver

REPOS = [f"alice/memory-{n}" for n in range(4)]
PER_REPO = 3
SECRET = "multi-secret"
BOT = "memrepo-bot"
MERGE_TIMEOUT = 90.0


@pytest.fixture
def receivers(redis_url: str) -> Iterator[list[ReceiverServer]]:
    settings = Settings(redis_url=redis_url, webhook_secret=SECRET, agent_token="operator", bot_login=BOT)
    servers = [ReceiverServer(Receiver(settings), "127.0.0.1", 0).start() for _ in range(2)]
    yield servers
    for server in servers:
        server.stop()


@pytest.fixture
def start_workers(localhub: Any, redis_url: str, tmp_path: Path) -> Iterator[Callable[[], None]]:
    """Starts three `memrepo worker` processes when called; stops them at the end of the test."""
    bot_token = localhub_token(localhub, BOT)
    procs: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        for n in range(3):
            procs.append(worker(n, bot_token, localhub.api_url, redis_url, tmp_path))

    yield start
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def worker(n: int, bot_token: str, api_url: str, redis_url: str, tmp_path: Path) -> subprocess.Popen[bytes]:
    """One `memrepo worker` process named machine-N, as on a machine of its own (own work folder)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMREPO_", "GITHUB_TOKEN"))}
    env.update({"REDIS_URL": redis_url, "MEMREPO_GITHUB_URL": api_url, "MEMREPO_GITHUB_TOKEN": bot_token,
                "MEMREPO_WORK_DIR": str(tmp_path / f"work-{n}"), "MEMREPO_BOT_LOGIN": BOT,
                "MEMREPO_WEBHOOK_SECRET": SECRET, "MEMREPO_AGENT_TOKEN": "operator"})
    log = (tmp_path / f"worker-{n}.log").open("ab")
    return subprocess.Popen([sys.executable, "-m", "bot.cli", "worker", "--name", f"machine-{n}",
                             "--reconcile-every", "5"], env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)


def test_three_workers_and_two_receivers_merge_each_pull_request_once_and_repositories_in_parallel(
        localhub: Any, receivers: list[ReceiverServer], start_workers: Callable[[], None],
        redis_url: str, tmp_path: Path) -> None:
    token = localhub_token(localhub, "alice")
    auth = {"Authorization": f"token {token}"}
    opened: list[tuple[str, int, ForgeClient]] = []
    bases = {}
    for index, repo in enumerate(REPOS):
        name = repo.split("/")[1]
        assert requests.post(f"{localhub.api_url}/user/repos", json={"name": name}, headers=auth,
                             timeout=10).status_code == 201
        hook = {"name": "web", "active": True, "events": ["push", "pull_request", "pull_request_review", "status"],
                "config": {"url": f"{receivers[index % 2].url}/webhooks/github", "content_type": "json",
                           "secret": SECRET}}
        assert requests.post(f"{localhub.api_url}/repos/{repo}/hooks", json=hook, headers=auth,
                             timeout=10).status_code == 201
        assert requests.put(f"{localhub.api_url}/repos/{repo}/collaborators/{BOT}", json={"permission": "push"},
                            headers=auth, timeout=10).status_code == 204  # the integrator may merge
        memory = init_repository(tmp_path / name, "a1", "Ada")
        url = localhub.url.replace("http://", f"http://x-access-token:{token}@") + f"/{repo}.git"
        sync.set_remote(memory, url)
        clone = tmp_path / f"{name}-clone"
        git(tmp_path, "clone", "-q", url, str(clone))
        bases[repo] = git(clone, "rev-parse", "HEAD").strip()
        client = ForgeClient(repo, TokenCredentials(token), base_url=localhub.api_url, policy=FAST,
                             min_write_interval=0.0, timeout=10)
        for n in range(PER_REPO):
            dream_id = f"20260314T0900{index}{n}Z-0000000{n}"
            branch = f"memrepo/dream/{dream_id}"
            path = f"reference/note-{n}.md"
            git(clone, "checkout", "-q", "-B", branch, bases[repo])
            (clone / path).parent.mkdir(parents=True, exist_ok=True)
            (clone / path).write_text(f"---\ndescription: Note {n}.\n---\n\nNote {n} of {repo}.\n")
            git(clone, "add", "-A")
            git(clone, *as_dreamer(dream_id, f"dream: note {n}"))
            git(clone, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
            pull = client.open_pull_request(NewPullRequest(head=branch, base="main", title=f"Dream {dream_id}",
                                                           body=dream_body(dream_id, bases[repo], path),
                                                           labels=(LABEL_DREAM,)))
            opened.append((repo, pull.number, client))

    start_workers()

    def merged() -> bool:
        return all(client.get_pull_request(number).merged for _, number, client in opened)

    logs = lambda: "every merge; the workers said:\n" + "\n".join(  # noqa: E731
        (tmp_path / f"worker-{n}.log").read_text()[-1500:] for n in range(3))
    wait_until(merged, MERGE_TIMEOUT, logs)

    for repo in REPOS:  # each pull request merged exactly once, each note on main once
        check = tmp_path / f"{repo.split('/')[1]}-check"
        git(tmp_path, "clone", "-q", localhub.url.replace("http://", f"http://x-access-token:{token}@") +
            f"/{repo}.git", str(check))
        merges = git(check, "rev-list", "--first-parent", f"{bases[repo]}..HEAD").split()
        assert len(merges) == PER_REPO, (repo, merges)
        for n in range(PER_REPO):
            assert (check / f"reference/note-{n}.md").read_text().endswith(f"Note {n} of {repo}.\n")

    redis = connect(redis_url)
    queue = get_queue(redis)
    jobs = [queue.fetch_job(job_id) for job_id in FinishedJobRegistry(queue=queue).get_job_ids()]
    ran = [(job.args[0], job.worker_name, job.started_at, job.ended_at) for job in jobs
           if job is not None and job.func_name.endswith(".integrate") and job.started_at and job.ended_at]
    assert len({worker for _, worker, _, _ in ran}) >= 2  # the work was shared between machines
    parallel = [(a, b) for a in ran for b in ran
                if a[0] != b[0] and a[1] != b[1] and a[2] < b[3] and b[2] < a[3]]
    assert parallel, ran  # two repositories integrated at the same time by two workers
    redis.close()
