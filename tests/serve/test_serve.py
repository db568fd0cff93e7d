"""`memrepo serve`: the embedded stack (`--local`) end to end as a real subprocess: a memory
repository pushed to its localhub, a dream pull request merged by its worker, the head event on
its SSE stream, and Ctrl-C leaving no process behind. Production `serve`: a missing setting is a
one-line start-up error naming it. The GitHub App manifest is well formed."""

from __future__ import annotations

import json
import os
import queue
import random
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import github
import pytest
import requests

from bot.memfs import sync
from bot.memfs.create import init_repository
from bot.serve.local import PORTS_FILE, choose_ports, ephemeral_range
from tests.conftest import git, run_cli
from tests.memory_forge import open_dream
from tests.processes import alive, command_line, descendants
from tests.served import SERVICE_ENV, LocalStack
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
MERGE_TIMEOUT = 30.0
FACTS = "reference/facts.md"
FACTS_TEXT = "---\ndescription: Facts about the person.\n---\n# Facts\n\n- lives in Berlin\n- likes tea\n"


# ------------------------------------------------------------------------------ helpers


def _events(url: str, token: str, found: queue.Queue[dict], stop: threading.Event) -> None:
    """Read an SSE stream; put each `head` event's data on `found`."""
    try:
        with requests.get(url, headers={"Authorization": f"Bearer {token}"}, stream=True, timeout=(5, 60)) as resp:
            if resp.status_code != 200:
                found.put({"error": resp.status_code})
                return
            event = None
            for raw in resp.iter_lines(decode_unicode=True):
                if stop.is_set():
                    return
                if raw.startswith("event:"):
                    event = raw.partition(":")[2].strip()
                elif raw.startswith("data:") and event == "head":
                    found.put(json.loads(raw.partition(":")[2]))
                elif raw.startswith(": connected"):
                    found.put({"connected": True})
    except requests.RequestException:
        return


# ------------------------------------------------------------------------------ serve --local
def test_serve_local_merges_a_dream_announces_it_and_stops_cleanly(served: LocalStack, tmp_path: Path) -> None:
    # The printed URLs answer.
    assert requests.get(f"{served.receiver}/healthz", timeout=10).status_code == 200
    assert requests.get(f"{served.web}/_localhub/health", timeout=10).json() == {"ok": True}

    # alice's memory repository on localhub, made by `memrepo init` and pushed.
    token = served.new_token("alice")
    github.Github(auth=github.Auth.Token(token), base_url=served.api, retry=None).get_user().create_repo("memory")
    memory = init_repository(tmp_path / "memory", "a1", "Ada")
    url = served.web.replace("http://", f"http://x-access-token:{token}@") + "/alice/memory.git"
    sync.set_remote(memory, url)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", url, str(clone))

    # The webhook was installed on the new repository by its first event (the push).
    hooks = requests.get(f"{served.api}/repos/alice/memory/hooks", headers={"Authorization": f"token {token}"},
                         timeout=10).json()
    assert [h["config"]["url"] for h in hooks] == [f"{served.receiver}/webhooks/github"]

    # An agent subscribes to the head events (the agent token works, a wrong one does not).
    events_url = f"{served.receiver}/v1/repos/alice/memory/events"
    assert requests.get(events_url, headers={"Authorization": "Bearer nope"}, timeout=10).status_code == 401
    found: queue.Queue[dict] = queue.Queue()
    stop = threading.Event()
    threading.Thread(target=_events, args=(events_url, served.agent_token, found, stop), daemon=True).start()
    assert found.get(timeout=10) == {"connected": True}

    # A dream pull request with a valid memory change.
    client, number = open_dream(served.api, token, clone, FACTS, FACTS_TEXT)

    # The integrator merges it, and the agent hears of it.
    wait_until(lambda: client.get_pull_request(number).merged, MERGE_TIMEOUT,
               lambda: "the merge; the stack said:\n" + "".join(served.output) +
               (tmp_path / "data" / "logs" / "worker.log").read_text()[-3000:])
    git(clone, "fetch", "-q", "origin")
    assert git(clone, "show", f"origin/main:{FACTS}") == FACTS_TEXT
    main = git(clone, "rev-parse", "origin/main").strip()
    # The merge reaches agents as a head event for the new main (announced by the job, or by the
    # receiver from the push webhook, whichever comes first).
    head = found.get(timeout=15)
    stop.set()
    assert head["repo"] == "alice/memory" and head["sha"] == main and head["cause"] in ("merge", "push"), head

    # The printed palace URL shows the memory, its remote named (the forge's, without a token).
    palace = served.urls["palace"].replace("<owner>/<repo>", "alice/memory")
    assert palace == f"{served.receiver}/palace/alice/memory/"
    page = requests.get(palace, headers={"Authorization": f"Bearer {served.agent_token}"}, timeout=30)
    assert page.status_code == 200 and "Memory of alice/memory" in page.text, page.text
    assert "Memory has no remote" not in page.text
    assert f"Nothing is waiting to be pushed to {served.web}/alice/memory.git" in page.text

    # Ctrl-C: everything it started is gone, redis-server included.
    children = descendants(served.process.pid)
    redis = [pid for pid in children if "redis-server" in command_line(pid)]
    assert len(redis) == 1 and len(children) >= 2
    assert served.stop() == 0
    assert "memrepo serve --local: stopped" in "".join(served.output)
    wait_until(lambda: not any(alive(pid) for pid in children), 10,
               lambda: f"every process it started to end; running: {[pid for pid in children if alive(pid)]}")


def test_serve_local_keeps_its_tokens_across_restarts_and_stops_on_sigterm(tmp_path: Path) -> None:
    first = LocalStack(tmp_path / "data")
    try:
        token = first.agent_token
        said = f"localhub's accounts and tokens are those kept in {tmp_path / 'data' / 'localhub'}; a token made"
        wait_until(lambda: any(said in line for line in first.output), 10,
                   lambda: "the line saying which tokens its localhub knows")
        children = descendants(first.process.pid)
        first.process.send_signal(signal.SIGTERM)
        assert first.stop() == 0
    finally:
        first.stop()
    assert not any(alive(pid) for pid in children)
    second = LocalStack(tmp_path / "data")
    try:
        assert second.agent_token == token
    finally:
        assert second.stop() == 0
    state = tmp_path / "data" / "serve.json"
    assert state.stat().st_mode & 0o077 == 0


def test_serve_local_picks_ports_outside_the_ephemeral_range_and_starts_on_them_again_without_port(
        tmp_path: Path) -> None:
    """Free ports inside the range the kernel gives outgoing connections may be taken by one of
    them before the next start (the receiver's, PORT+1, found "Address already in use"): the
    stack picks a pair outside it, records it in its data, and a start without --port reuses it."""
    low, high = ephemeral_range()
    first = LocalStack(tmp_path / "data")
    try:
        api, receiver = first.api, first.receiver
    finally:
        assert first.stop() == 0
    port = urlsplit(api).port
    assert port is not None and urlsplit(receiver).port == port + 1
    assert not low <= port <= high and not low <= port + 1 <= high
    assert json.loads((tmp_path / "data" / PORTS_FILE).read_text()) == {"localhub": port, "receiver": port + 1}
    second = LocalStack(tmp_path / "data", port=None)
    try:
        assert (second.api, second.receiver) == (api, receiver)
    finally:
        assert second.stop() == 0


def test_choose_ports_keeps_out_of_the_given_ephemeral_range() -> None:
    rng = random.Random(7)
    for _ in range(50):
        port = choose_ports("127.0.0.1", (20000, 60999), rng)
        assert 10000 <= port < 19999 or 61000 <= port < 65535


def test_serve_local_names_an_unreadable_ports_file_in_one_line(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path) -> None:
    (tmp_path / PORTS_FILE).write_text("{not json")
    code, _, err = run_cli(capsys, "serve", "--local", "--data", str(tmp_path))
    assert code == 1 and len(err.strip().splitlines()) == 1 and str(tmp_path / PORTS_FILE) in err
    assert "Traceback" not in err and not (tmp_path / "serve.json").exists()


def test_serve_local_refuses_a_bad_port(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "serve", "--local", "--port", "70000", "--data", str(tmp_path))
    assert code == 1 and err.strip() == "memrepo: --port must be from 0 to 65535, found 70000"


# ------------------------------------------------------------------------------ production serve
@pytest.mark.parametrize(("present", "missing"), [
    ({}, "REDIS_URL, MEMREPO_WEBHOOK_SECRET and MEMREPO_AGENT_TOKEN are"),
    ({"REDIS_URL": "redis://127.0.0.1:1/0"}, "MEMREPO_WEBHOOK_SECRET and MEMREPO_AGENT_TOKEN are"),
    ({"REDIS_URL": "redis://127.0.0.1:1/0", "MEMREPO_WEBHOOK_SECRET": "s"}, "MEMREPO_AGENT_TOKEN is"),
])
def test_serve_names_a_missing_setting_in_one_line(capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   present: dict[str, str], missing: str) -> None:
    for name in SERVICE_ENV:
        monkeypatch.delenv(name, raising=False)
    for name, value in present.items():
        monkeypatch.setenv(name, value)
    code, out, err = run_cli(capsys, "serve", "--port", "0")
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith(f"memrepo: {missing} not set"), err


def test_serve_rejects_a_malformed_redis_url(capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "http://nope")
    monkeypatch.setenv("MEMREPO_WEBHOOK_SECRET", "s")
    monkeypatch.setenv("MEMREPO_AGENT_TOKEN", "t")
    code, _, err = run_cli(capsys, "serve", "--port", "0")
    assert code == 1 and "REDIS_URL" in err and len(err.strip().splitlines()) == 1


def test_serve_in_production_answers_health_and_stops_on_sigterm(redis_url: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in SERVICE_ENV}
    env.update({"REDIS_URL": redis_url, "MEMREPO_WEBHOOK_SECRET": "s3cret", "MEMREPO_AGENT_TOKEN": "agent"})
    process = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve", "--port", "0"], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/webhooks/github", line)
        assert match, line
        assert requests.get(f"http://127.0.0.1:{match.group(1)}/healthz", timeout=10).status_code == 200
        # gunicorn's master is the process itself; its 2 workers (the default) boot one after the other.
        workers = wait_until(lambda: len(found := descendants(process.pid)) >= 2 and found, 15,
                             "gunicorn's second worker")
        assert len(workers) == 2, workers
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
        assert not any(alive(pid) for pid in workers)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_serve_in_production_names_a_busy_port_in_one_line(capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("MEMREPO_WEBHOOK_SECRET", "s")
    monkeypatch.setenv("MEMREPO_AGENT_TOKEN", "t")
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        code, out, err = run_cli(capsys, "serve", "--port", str(port))
    assert code == 1 and out == ""
    assert err.strip().splitlines() == [f"memrepo: cannot listen on 127.0.0.1:{port}: Address already in use"], err


def test_serve_in_production_refuses_no_workers(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "serve", "--port", "0", "--workers", "0")
    assert code == 1 and err.strip() == "memrepo: --workers and --threads must be at least 1, found 0 and 16"


# ------------------------------------------------------------------------------ the GitHub App manifest
def test_the_github_app_manifest_asks_for_what_the_integrator_needs() -> None:
    manifest = json.loads((ROOT / "templates" / "github-app" / "manifest.json").read_text())
    assert manifest["public"] is False
    assert manifest["default_permissions"] == {"contents": "write", "pull_requests": "write", "statuses": "write",
                                               "metadata": "read", "issues": "write", "members": "read"}
    assert set(manifest["default_events"]) == {"pull_request", "pull_request_review", "push", "status",
                                                "issue_comment", "member", "membership", "organization", "team"}
    assert manifest["hook_attributes"]["url"].endswith("/webhooks/github")
    assert manifest["redirect_url"].startswith("https://")
    assert (ROOT / "templates" / "github-app" / "README.md").read_text().count("MEMREPO_") >= 5
