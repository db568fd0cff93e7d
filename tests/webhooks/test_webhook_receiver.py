"""The webhook receiver (webhooks/intake/), its settings (bot/settings.py) and its Redis
plumbing (bot/queue.py, bot/dedupe.py, bot/repo_lock.py), against a real Redis server:
signatures, sizes, bad input, de-duplication, collapsing bursts into one job per pull
request, the bot's own events, head events published, health, Redis restarting under the
receiver, and localhub sending real signed webhooks to a receiver on a real
port. The event stream is tests/webhooks/test_event_stream.py."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import redis
import requests
from flask import Flask
from flask.testing import FlaskClient
from rq.job import Job
from werkzeug.serving import BaseWSGIServer, make_server

from bot import queue as jobs
from bot.errors import MemrepoError
from bot.notify.publisher import subscribe
from bot.queue import (
    INTEGRATE,
    INTEGRATE_COMMIT,
    QUEUE,
    RECONCILE,
    Settled,
    collapsing,
    connect,
    enqueue_collapsed,
    enqueue_integrate,
    get_queue,
    job_key,
    parse_job_key,
)
from bot.redis_keys import lock_key
from bot.repo_lock import repo_lock
from bot.settings import MAX_BODY_BYTES, Settings
from tests.conftest import localhub_token
from tests.redis_server import RedisServer
from tests.waiting import wait_until
from webhooks.intake import create_app
from webhooks.intake.routing import Integrate, IntegrateCommit, PublishHead, Reconcile, route

SECRET = "It's a Secret to Everybody"
TOKEN = "agent-token-0123456789"
BOT = "memrepo-integrator[bot]"
REPO = "alice/memory"
SHA1 = "1" * 40
SHA2 = "2" * 40
ZERO = "0" * 40
ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------------------- helpers
def make_settings(redis_url: str, **changes: Any) -> Settings:
    fields: dict[str, Any] = {"redis_url": redis_url, "webhook_secret": SECRET, "agent_token": TOKEN,
                              "repos": frozenset({REPO, "alice/notes"}), "bot_login": BOT, "heartbeat_seconds": 0.2}
    fields.update(changes)
    return Settings(**fields)


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def repository(full_name: str = REPO) -> dict[str, Any]:
    return {"full_name": full_name, "default_branch": "main"}


def pull_request(action: str = "opened", number: int = 12, repo: str = REPO, sender: str = "alice") -> dict[str, Any]:
    return {"action": action, "number": number, "pull_request": {"number": number}, "repository": repository(repo),
            "sender": {"login": sender}}


def push(ref: str = "refs/heads/main", before: str = SHA1, after: str = SHA2, sender: str = "bob") -> dict[str, Any]:
    return {"ref": ref, "before": before, "after": after, "deleted": after == ZERO, "repository": repository(),
            "sender": {"login": sender}}


def status(sender: str = BOT, sha: str = SHA2) -> dict[str, Any]:
    return {"sha": sha, "state": "success", "context": "memrepo/validate", "repository": repository(),
            "sender": {"login": sender}}


def deliver(client: FlaskClient, event: str, payload: Any, *, guid: str | None = None, body: bytes | None = None,
            secret: str = SECRET, headers: dict[str, str | None] | None = None) -> Any:
    """POST a delivery as GitHub sends it (JSON, signed); `headers` values of None drop one."""
    data = body if body is not None else json.dumps(payload).encode()
    sent: dict[str, str | None] = {"Content-Type": "application/json", "X-GitHub-Event": event,
                                   "X-GitHub-Delivery": guid or str(uuid.uuid4()),
                                   "X-Hub-Signature-256": sign(data, secret), "User-Agent": "GitHub-Hookshot/test"}
    sent.update(headers or {})
    return client.post("/webhooks/github", data=data, headers={k: v for k, v in sent.items() if v is not None})


def queued(client: redis.Redis) -> list[Job]:
    return get_queue(client).get_jobs()


@pytest.fixture
def app(redis_url: str) -> Flask:
    return create_app(make_settings(redis_url))


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


class Served:
    """A Flask app on a real, threaded werkzeug server on a free loopback port."""

    def __init__(self, app: Flask) -> None:
        self.server: BaseWSGIServer = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def served(app: Flask) -> Iterator[Served]:
    server = Served(app)
    yield server
    server.close()


class SSEReader:
    """Reads server-sent events from a streaming HTTP response, block by block."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self.chunks = chunks
        self.buffer = ""

    def block(self) -> str:
        """The next block (the text up to a blank line)."""
        while "\n\n" not in self.buffer:
            self.buffer += next(self.chunks).decode()
        block, _, self.buffer = self.buffer.partition("\n\n")
        return block

    def next_event(self) -> dict[str, str]:
        """The next block that is an event (comments and the retry hint skipped)."""
        while True:
            fields: dict[str, str] = {}
            for line in self.block().split("\n"):
                if line and not line.startswith(":"):
                    name, _, value = line.partition(": ")
                    fields[name] = value
            if "event" in fields:
                return fields


# ---------------------------------------------------------------------------------- settings
ENV = {"REDIS_URL": "redis://127.0.0.1:6379/0", "MEMREPO_WEBHOOK_SECRET": "s", "MEMREPO_AGENT_TOKEN": "t"}


def test_settings_come_from_the_environment() -> None:
    settings = Settings.from_env({**ENV, "MEMREPO_REPOS": " Alice/Memory, bob/notes ", "MEMREPO_BOT_LOGIN": BOT,
                                  "MEMREPO_SSE_HEARTBEAT": "2.5"})
    assert settings.repos == frozenset({"alice/memory", "bob/notes"})
    assert settings.accepts("alice/MEMORY") and not settings.accepts("carol/memory")
    assert settings.is_bot("Memrepo-Integrator[bot]") and not settings.is_bot("alice")
    assert settings.heartbeat_seconds == 2.5
    assert settings.max_body_bytes == MAX_BODY_BYTES == 25 * 1024 * 1024
    plain = Settings.from_env(ENV)
    assert plain.repos is None and plain.accepts("anyone/anything")  # any installed repository
    assert plain.bot_login is None and not plain.is_bot("anyone")
    assert plain.heartbeat_seconds == 15
    assert Settings.from_env({**ENV, "MEMREPO_REPOS": "*"}).repos is None


@pytest.mark.parametrize("name", ["REDIS_URL", "MEMREPO_WEBHOOK_SECRET", "MEMREPO_AGENT_TOKEN"])
def test_a_missing_setting_is_a_start_up_error_naming_it(name: str) -> None:
    env = {k: v for k, v in ENV.items() if k != name}
    with pytest.raises(MemrepoError, match=f"^{name} is not set"):
        Settings.from_env(env)
    with pytest.raises(MemrepoError, match=f"^{name} is not set"):
        Settings.from_env({**env, name: "  "})


def test_create_app_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ENV:
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(MemrepoError, match=r"^REDIS_URL, MEMREPO_WEBHOOK_SECRET and MEMREPO_AGENT_TOKEN are not set"):
        create_app()
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    assert create_app().extensions["memrepo.webhooks"].settings.agent_token == "t"


@pytest.mark.parametrize(("changes", "words"), [
    ({"REDIS_URL": "localhost:6379"}, "REDIS_URL must be a Redis URL"),
    ({"MEMREPO_REPOS": "alice"}, "MEMREPO_REPOS must be * (any installed repository) or a comma-separated list"),
    ({"MEMREPO_REPOS": "alice/memory,a b/c"}, "found 'a b/c'"),
    ({"MEMREPO_SSE_HEARTBEAT": "0"}, "MEMREPO_SSE_HEARTBEAT must be a positive number"),
    ({"MEMREPO_SSE_HEARTBEAT": "soon"}, "MEMREPO_SSE_HEARTBEAT must be a positive number"),
    ({"MEMREPO_SSE_HEARTBEAT": "nan"}, "MEMREPO_SSE_HEARTBEAT must be a positive number"),
])
def test_bad_settings_are_start_up_errors(changes: dict[str, str], words: str) -> None:
    with pytest.raises(MemrepoError) as refused:
        Settings.from_env({**ENV, **changes})
    assert words in str(refused.value)


# ---------------------------------------------------------------------------------- routing (pure)
ROUTES: list[tuple[str, dict[str, Any], tuple[Any, ...]]] = [
    ("pull_request", pull_request("opened"), (Integrate(REPO, 12),)),
    *[("pull_request", pull_request(a), (Integrate(REPO, 12),))
      for a in ("synchronize", "reopened", "labeled", "unlabeled", "edited", "ready_for_review", "closed")],
    ("pull_request", pull_request("assigned"), ()),
    ("pull_request", pull_request("opened", sender=BOT), (Integrate(REPO, 12),)),  # a dreamer acting as the App
    ("pull_request", pull_request("synchronize", sender=BOT), (Integrate(REPO, 12),)),  # its resolution: validate
    ("pull_request", pull_request("labeled", sender=BOT), ()),
    ("pull_request", pull_request("closed", sender=BOT), ()),
    ("pull_request", pull_request("opened", repo="carol/memory"), ()),
    ("pull_request_review", {"action": "submitted", "pull_request": {"number": 3}, "repository": repository(),
                             "sender": {"login": "carol"}}, (Integrate(REPO, 3),)),
    ("pull_request_review", {"action": "edited", "pull_request": {"number": 3}, "repository": repository(),
                             "sender": {"login": "carol"}}, ()),
    ("issue_comment", {"action": "created", "issue": {"number": 4, "pull_request": {"url": "u"}},
                       "repository": repository(), "sender": {"login": "carol"}}, (Integrate(REPO, 4),)),
    ("issue_comment", {"action": "created", "issue": {"number": 4}, "repository": repository(),
                       "sender": {"login": "carol"}}, ()),
    ("issue_comment", {"action": "created", "issue": {"number": 4, "pull_request": {"url": "u"}},
                       "repository": repository(), "sender": {"login": BOT}}, ()),
    ("status", status(sender="ci-bot"), (IntegrateCommit(REPO, SHA2),)),
    ("status", status(sender=BOT), ()),
    ("check_suite", {"action": "completed", "check_suite": {"head_sha": SHA1, "pull_requests": [
        {"number": 5}, {"number": 6}, {"number": 5}]}, "repository": repository(), "sender": {"login": "ci"}},
     (Integrate(REPO, 5), Integrate(REPO, 6))),
    ("check_run", {"action": "completed", "check_run": {"head_sha": SHA1, "pull_requests": []},
                   "repository": repository(), "sender": {"login": "ci"}}, (IntegrateCommit(REPO, SHA1),)),
    ("check_suite", {"action": "requested", "check_suite": {"head_sha": SHA1}, "repository": repository(),
                     "sender": {"login": "ci"}}, ()),
    ("push", push(), (PublishHead(REPO, SHA1, SHA2, "bob"), Reconcile(REPO))),
    ("push", push(sender=BOT), (PublishHead(REPO, SHA1, SHA2, BOT), Reconcile(REPO))),  # its merges are news
    ("push", push(before=ZERO), (PublishHead(REPO, None, SHA2, "bob"), Reconcile(REPO))),
    ("push", push(ref="refs/heads/memrepo/dream/x"), ()),
    ("push", push(after=ZERO), ()),
    ("star", {"action": "created", "repository": repository(), "sender": {"login": "carol"}}, ()),
    ("installation", {"action": "created", "sender": {"login": "carol"}}, ()),
]


@pytest.mark.parametrize(("event", "payload", "actions"), ROUTES)
def test_events_map_to_jobs(event: str, payload: dict[str, Any], actions: tuple[Any, ...]) -> None:
    routed = route(event, payload, make_settings("redis://127.0.0.1:1/0"))
    assert routed.actions == actions
    assert (routed.ignored is None) == bool(actions)


# ---------------------------------------------------------------------------------- signatures
def test_a_signed_pull_request_event_enqueues_integrate(client: FlaskClient, rclient: redis.Redis) -> None:
    resp = deliver(client, "pull_request", pull_request(), guid="g-1")
    assert resp.status_code == 202
    assert resp.json["done"] == [{"job": "integrate-alice_2Fmemory-12", "outcome": "queued"}]
    [job] = queued(rclient)
    assert (job.id, job.func_name, job.args) == (job_key(REPO, 12), INTEGRATE, [REPO, 12])  # JSON: a list


@pytest.mark.parametrize("signature", [None, "", "sha256=" + "0" * 64, "sha1=abc", sign(b"other body"),
                                       "sha256=ünïcode"])
def test_unsigned_or_badly_signed_deliveries_are_401_and_leave_no_trace(
        client: FlaskClient, rclient: redis.Redis, signature: str | None) -> None:
    resp = deliver(client, "pull_request", pull_request(), headers={"X-Hub-Signature-256": signature})
    assert resp.status_code == 401
    assert "X-Hub-Signature-256" in resp.json["message"]
    assert rclient.dbsize() == 0  # nothing enqueued, not even the delivery id remembered


def test_a_delivery_signed_with_another_secret_is_401(client: FlaskClient, rclient: redis.Redis) -> None:
    resp = deliver(client, "pull_request", pull_request(), secret="not the secret")
    assert resp.status_code == 401
    assert resp.json["message"].startswith("X-Hub-Signature-256 does not match the body")
    assert rclient.dbsize() == 0


# ---------------------------------------------------------------------------------- bad input
def test_bodies_over_25_mb_are_413(client: FlaskClient, rclient: redis.Redis) -> None:
    body = b"{" + b" " * MAX_BODY_BYTES + b"}"
    resp = deliver(client, "pull_request", None, body=body)
    assert resp.status_code == 413
    assert "26,214,400 bytes" in resp.json["message"]
    assert rclient.dbsize() == 0


def test_a_chunked_body_without_a_length_is_cut_at_the_limit(redis_url: str, rclient: redis.Redis) -> None:
    server = Served(create_app(make_settings(redis_url, max_body_bytes=1000)))
    body = json.dumps({**pull_request(), "padding": "x" * 2000}).encode()
    try:
        resp = requests.post(f"{server.url}/webhooks/github", data=iter([body[:500], body[500:]]), timeout=10,
                             headers={"Content-Type": "application/json", "X-GitHub-Event": "pull_request",
                                      "X-GitHub-Delivery": "g", "X-Hub-Signature-256": sign(body)})
    finally:
        server.close()
    assert resp.request.headers["Transfer-Encoding"] == "chunked"
    assert resp.status_code == 413
    assert rclient.dbsize() == 0


@pytest.mark.parametrize(("body", "content_type", "words"), [
    (b"not json", "application/json", "the payload is not JSON"),
    (b"\xff\xfe", "application/json", "the payload is not JSON"),
    (b"[1, 2]", "application/json", "must be a JSON object, found array"),
    (b"other=1", "application/x-www-form-urlencoded", "in one 'payload' field"),
    (b"payload=%7B", "application/x-www-form-urlencoded", "the payload is not JSON"),
])
def test_signed_bodies_that_are_not_json_objects_are_400(client: FlaskClient, rclient: redis.Redis, body: bytes,
                                                          content_type: str, words: str) -> None:
    resp = deliver(client, "pull_request", None, body=body, headers={"Content-Type": content_type})
    assert resp.status_code == 400
    assert words in resp.json["message"]
    assert rclient.dbsize() == 0


def test_form_encoded_deliveries_are_accepted(client: FlaskClient, rclient: redis.Redis) -> None:
    body = urlencode({"payload": json.dumps(pull_request(number=8))}).encode()
    resp = deliver(client, "pull_request", None, body=body,
                   headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert resp.status_code == 202
    assert [job.id for job in queued(rclient)] == [job_key(REPO, 8)]


@pytest.mark.parametrize("header", ["X-GitHub-Event", "X-GitHub-Delivery"])
def test_missing_github_headers_are_400(client: FlaskClient, rclient: redis.Redis, header: str) -> None:
    resp = deliver(client, "pull_request", pull_request(), headers={header: None})
    assert resp.status_code == 400
    assert resp.json["message"] == f"no {header} header; this endpoint receives GitHub webhooks only"
    resp = deliver(client, "pull_request", pull_request(), headers={header: "bad value\twith tab"})
    assert resp.status_code == 400
    assert rclient.dbsize() == 0


def test_a_payload_without_what_its_event_needs_is_400(client: FlaskClient, rclient: redis.Redis) -> None:
    resp = deliver(client, "pull_request", {**pull_request(), "number": "twelve"})
    assert resp.status_code == 400
    assert resp.json["message"] == "the pull_request payload has no valid number"
    assert deliver(client, "status", {**status(sender="ci"), "sha": "nope"}).status_code == 400
    assert rclient.dbsize() == 0


def test_events_for_other_repositories_are_accepted_and_ignored(client: FlaskClient, rclient: redis.Redis) -> None:
    resp = deliver(client, "pull_request", pull_request(repo="mallory/memory"))
    assert resp.status_code == 202
    assert resp.json["message"].startswith("ignored: mallory/memory is not one of the repositories")
    resp = deliver(client, "star", {"action": "created", "repository": repository(), "sender": {"login": "x"}})
    assert (resp.status_code, resp.json["message"]) == (202, "ignored: memrepo does not act on star events")
    assert rclient.dbsize() == 0


def test_ping_is_200(client: FlaskClient, rclient: redis.Redis) -> None:
    resp = deliver(client, "ping", {"zen": "Design for failure.", "hook_id": 1, "repository": repository()})
    assert resp.status_code == 200
    assert resp.json == {"message": "pong: memrepo's webhook receiver is listening", "zen": "Design for failure."}
    assert rclient.dbsize() == 0


# ---------------------------------------------------------------------------------- de-duplication and bursts
def test_a_redelivered_event_is_acknowledged_and_not_enqueued_twice(client: FlaskClient,
                                                                    rclient: redis.Redis) -> None:
    assert deliver(client, "pull_request", pull_request(), guid="same-guid").status_code == 202
    get_queue(rclient).empty()  # the job ran and is gone: only the GUID can stop a second one
    again = deliver(client, "pull_request", pull_request(), guid="same-guid")
    assert again.status_code == 200
    assert again.json["duplicate"] is True and "duplicate delivery same-guid" in again.json["message"]
    assert queued(rclient) == []
    assert 0 < rclient.ttl("memrepo:delivery:same-guid") <= 7 * 24 * 3600
    assert deliver(client, "pull_request", pull_request(), guid="new-guid").status_code == 202
    assert len(queued(rclient)) == 1


def test_a_burst_of_twenty_events_for_one_pull_request_is_one_job(client: FlaskClient,
                                                                  rclient: redis.Redis) -> None:
    actions = ["opened", "labeled", "synchronize", "edited", "unlabeled"] * 4
    outcomes = [deliver(client, "pull_request", pull_request(a)).json["done"][0]["outcome"] for a in actions]
    assert outcomes == ["queued"] + ["pending"] * 19
    assert [job.id for job in queued(rclient)] == [job_key(REPO, 12)]


def test_a_concurrent_burst_through_a_real_server_is_one_job(served: Served, rclient: redis.Redis) -> None:
    def send(i: int) -> int:
        body = json.dumps(pull_request("synchronize", number=30)).encode()
        return requests.post(f"{served.url}/webhooks/github", data=body, timeout=10, headers={
            "Content-Type": "application/json", "X-GitHub-Event": "pull_request", "X-GitHub-Delivery": f"c-{i}",
            "X-Hub-Signature-256": sign(body)}).status_code

    with ThreadPoolExecutor(max_workers=20) as pool:
        assert set(pool.map(send, range(20))) == {202}
    assert [job.id for job in queued(rclient)] == [job_key(REPO, 30)]


def test_events_for_two_pull_requests_are_two_jobs(client: FlaskClient, rclient: redis.Redis) -> None:
    for number in (1, 2, 1, 2):
        assert deliver(client, "pull_request", pull_request("synchronize", number=number)).status_code == 202
    jobs_now = queued(rclient)
    assert [job.id for job in jobs_now] == [job_key(REPO, 1), job_key(REPO, 2)]
    assert [job.args for job in jobs_now] == [[REPO, 1], [REPO, 2]]


def test_a_finished_job_is_enqueued_again_by_the_next_event(client: FlaskClient, rclient: redis.Redis) -> None:
    deliver(client, "pull_request", pull_request())
    [job] = queued(rclient)
    get_queue(rclient).remove(job)
    job.set_status("finished")
    assert deliver(client, "pull_request", pull_request("labeled")).json["done"][0]["outcome"] == "queued"
    assert len(queued(rclient)) == 1


def test_the_bots_own_status_event_is_ignored(client: FlaskClient, rclient: redis.Redis) -> None:
    resp = deliver(client, "status", status(sender=BOT))
    assert resp.status_code == 202
    assert resp.json["message"] == f"ignored: this status event was caused by the integrator itself ({BOT})"
    assert rclient.dbsize() == 0
    resp = deliver(client, "status", status(sender="ci-bot"))  # someone else's status: look it up
    [job] = queued(rclient)
    assert (job.func_name, job.args) == (INTEGRATE_COMMIT, [REPO, SHA2])


# ---------------------------------------------------------------------------------- head events
def test_a_push_to_main_publishes_a_head_event(client: FlaskClient, rclient: redis.Redis) -> None:
    with subscribe(rclient, REPO) as sub:
        resp = deliver(client, "push", push(sender=BOT))  # the integrator's merge: still news for agents
        assert resp.status_code == 202
        got = sub.get(timeout=5)
    assert got is not None
    assert (got.repo, got.sha, got.before, got.cause, got.pr, got.dream_id) == (REPO, SHA2, SHA1, "push", None, None)
    assert resp.json["done"][0] == {"published": SHA2, "receivers": 1}
    [job] = queued(rclient)  # and the open pull requests get looked at again
    assert (job.func_name, job.args) == (RECONCILE, [REPO])


def test_pushes_elsewhere_publish_nothing(client: FlaskClient, rclient: redis.Redis) -> None:
    with subscribe(rclient, REPO) as sub:
        assert deliver(client, "push", push(ref="refs/heads/feature")).status_code == 202
        assert deliver(client, "push", push(after=ZERO)).status_code == 202
        assert sub.get(timeout=0.3) is None
    assert queued(rclient) == []


# ---------------------------------------------------------------------------------- health and Redis outages
def test_healthz_reports_redis_and_queue_depths(client: FlaskClient) -> None:
    deliver(client, "pull_request", pull_request(number=1))
    deliver(client, "pull_request", pull_request(number=2))
    resp = client.get("/healthz")
    assert resp.status_code == 200
    assert resp.json == {"message": "ok", "redis": "ok", "queues": {QUEUE: 2}}


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    """A Redis server of this test's own, to stop and start."""
    with RedisServer() as server:
        yield server


def test_healthz_is_503_when_redis_is_down(own_redis: RedisServer) -> None:
    client = create_app(make_settings(own_redis.url)).test_client()
    assert client.get("/healthz").status_code == 200
    own_redis.stop()
    resp = client.get("/healthz")
    assert resp.status_code == 503
    assert resp.json["redis"] == "unreachable"
    assert resp.json["message"].startswith("Redis is not reachable")


def test_the_receiver_keeps_answering_while_redis_restarts(own_redis: RedisServer) -> None:
    app = create_app(make_settings(own_redis.url))
    client = app.test_client()
    assert deliver(client, "pull_request", pull_request(number=1)).status_code == 202
    own_redis.stop()
    for number in (2, 3):
        resp = deliver(client, "pull_request", pull_request(number=number), guid=f"outage-{number}")
        assert resp.status_code == 503
        assert resp.headers["Retry-After"] == "5"
        assert resp.json["message"].startswith("Redis is not reachable")
    assert deliver(client, "ping", {"zen": "z"}).status_code == 200  # needs no Redis
    own_redis.start()  # same port, empty
    assert deliver(client, "pull_request", pull_request(number=4)).status_code == 202
    # The delivery GitHub recorded as failed during the outage can be redelivered.
    assert deliver(client, "pull_request", pull_request(number=2), guid="outage-2").status_code == 202
    conn = connect(own_redis.url)
    assert [job.id for job in queued(conn)] == [job_key(REPO, 4), job_key(REPO, 2)]
    conn.close()


# ---------------------------------------------------------------------------- bot/queue.py, bot/repo_lock.py
@pytest.mark.parametrize("repo", ["alice/memory", "Alice/Memory", "a-b/c_d.e", "x/y--z", "o/name_5F"])
def test_job_keys_are_valid_rq_ids_and_reversible(repo: str, rclient: redis.Redis) -> None:
    key = job_key(repo, 7)
    assert parse_job_key(key) == ("integrate", repo.lower(), "7")
    Job.create(func=INTEGRATE, id=key, connection=rclient)  # rq accepts it
    assert job_key("a-b/c", 1) != job_key("a/b-c", 1)
    with pytest.raises(ValueError):
        job_key(REPO, 0)


def test_the_repository_lock_is_exclusive_and_expires(rclient: redis.Redis) -> None:
    first = repo_lock(rclient, REPO, ttl=0.3)
    assert first.acquire(blocking=False)
    assert not repo_lock(rclient, "ALICE/memory", ttl=5).acquire(blocking=False)
    assert repo_lock(rclient, "alice/notes", ttl=5).acquire(blocking=False)  # other repositories run in parallel
    second = repo_lock(rclient, REPO, ttl=5)
    assert second.acquire(timeout=3)  # the first holder "crashed": its lock expired
    assert not first.release()  # and it cannot release the new holder's lock
    assert second.owned()
    assert second.extend(10) and 5 < rclient.pttl(lock_key(REPO)) / 1000 <= 10
    assert second.release() and not second.owned()


def test_the_lock_as_a_context_manager(rclient: redis.Redis) -> None:
    with repo_lock(rclient, REPO, ttl=5) as held:
        assert held.owned()
        with pytest.raises(MemrepoError, match="another integrator has held the lock on alice/memory"), \
                repo_lock(rclient, REPO, ttl=5, wait=0.1):
            pass
    assert rclient.get(lock_key(REPO)) is None


def test_an_enqueue_waits_while_rq_writes_down_a_job_that_just_ended(rclient: redis.Redis,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    job = Job.create(func=INTEGRATE, args=(REPO, 9), id=job_key(REPO, 9), connection=rclient)
    job.save()
    job.set_status("started")
    rclient.set(f"memrepo:job:{job.id}:run", "ended")  # `collapsing` saw no dirty flag and returned
    decisions: list[str] = []
    waiting = threading.Event()
    run_script = jobs._run

    def spy(*args: Any) -> Any:
        decision = run_script(*args)
        decisions.append(decision)
        if decision == "wait":
            waiting.set()
        return decision

    monkeypatch.setattr(jobs, "_run", spy)

    def finish() -> None:  # rq writes the job's end down once the enqueue is waiting for it
        assert waiting.wait(20)
        job.set_status("finished")

    writer = threading.Thread(target=finish)
    writer.start()
    assert enqueue_integrate(rclient, REPO, 9).outcome == "queued"  # not a dirty mark nobody would see
    writer.join()
    assert decisions[0] == "wait" and "enqueue" in decisions
    assert [j.id for j in queued(rclient)] == [job.id]


def test_a_running_job_is_marked_dirty(rclient: redis.Redis) -> None:
    job = Job.create(func=INTEGRATE, args=(REPO, 9), id=job_key(REPO, 9), connection=rclient)
    job.save()
    job.set_status("started")
    assert enqueue_integrate(rclient, REPO, 9).outcome == "dirty"
    assert rclient.exists(f"memrepo:job:{job.id}:dirty")
    assert queued(rclient) == []


# Jobs for the worker below: they count their runs and wait until the test pushes to
# test:NAME:release (a blocking pop, so the test decides when a run ends).
RELEASE_WAIT = 20


@collapsing
def held_job(name: str) -> int:
    """Waits to be released on its first run only."""
    from rq import get_current_job

    conn = get_current_job().connection  # type: ignore[union-attr]
    runs = int(conn.incr(f"test:{name}:runs"))
    if runs == 1:
        assert conn.blpop([f"test:{name}:release"], timeout=RELEASE_WAIT), "the test never released the job"
    return runs


def run_worker(redis_url: str) -> subprocess.Popen[bytes]:
    """A real rq worker in another process, serving the queue until it is empty (rq's own,
    reading JSON as memrepo's does: the jobs here are the test's, not on memrepo's allow-list)."""
    code = ("import sys; from redis import Redis; from rq import Queue, SimpleWorker; "
            "from bot.queue import SERIALIZER as S, Worker; c = Redis.from_url(sys.argv[1]); "
            "W = type('W', (SimpleWorker,), {'subscribe': Worker.subscribe}); "  # exits as soon as memrepo's does
            "W([Queue(sys.argv[2], connection=c, serializer=S)], connection=c, serializer=S).work(burst=True)")
    return subprocess.Popen([sys.executable, "-c", code, redis_url, QUEUE], cwd=ROOT)


def test_events_while_a_job_runs_make_it_run_once_more(redis_url: str, rclient: redis.Redis) -> None:
    func = f"{__name__}.held_job"
    assert enqueue_collapsed(rclient, func, ("a",), "held-a").outcome == "queued"
    worker = run_worker(redis_url)
    try:
        wait_until(lambda: rclient.get("test:a:runs") == b"1", RELEASE_WAIT, "the job's first run")
        outcomes = {enqueue_collapsed(rclient, func, ("a",), "held-a").outcome for _ in range(5)}
        assert outcomes == {"dirty"}
        assert get_queue(rclient).count == 0  # nothing added: it runs again itself
        rclient.lpush("test:a:release", "1")
        assert worker.wait(timeout=30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
    assert rclient.get("test:a:runs") == b"2"  # five events while it ran: one more run
    assert Job.fetch("held-a", connection=rclient).get_status() == "finished"
    assert enqueue_collapsed(rclient, func, ("a",), "held-a").outcome == "queued"  # after it ended: a new job


@collapsing
def settled_job(name: str) -> str:
    from rq import get_current_job

    conn = get_current_job().connection  # type: ignore[union-attr]
    runs = int(conn.incr(f"test:{name}:runs"))
    assert conn.blpop([f"test:{name}:release"], timeout=RELEASE_WAIT), "the test never released the job"
    return Settled(f"run {runs}")


def test_a_settled_job_does_not_run_again_for_events_that_arrived_meanwhile(redis_url: str,
                                                                             rclient: redis.Redis) -> None:
    func = f"{__name__}.settled_job"
    assert enqueue_collapsed(rclient, func, ("s",), "settled-s").outcome == "queued"
    worker = run_worker(redis_url)
    try:
        wait_until(lambda: rclient.get("test:s:runs") == b"1", RELEASE_WAIT, "the job's run")
        assert enqueue_collapsed(rclient, func, ("s",), "settled-s").outcome == "dirty"
        rclient.lpush("test:s:release", "1")
        assert worker.wait(timeout=30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
    assert rclient.get("test:s:runs") == b"1"
    assert Job.fetch("settled-s", connection=rclient).get_status() == "finished"
    assert enqueue_collapsed(rclient, func, ("s",), "settled-s").outcome == "queued"  # ended: the next event counts


def test_a_collapsing_job_called_outside_a_worker_just_runs(rclient: redis.Redis) -> None:
    import bot.queue

    assert bot.queue.get_current_job() is None
    assert held_job.__wrapped__.__name__ == "held_job"  # type: ignore[attr-defined]


def test_pull_request_keys_ignore_case(rclient: redis.Redis) -> None:
    assert enqueue_integrate(rclient, REPO, 5).outcome == "queued"
    assert enqueue_integrate(rclient, "ALICE/MEMORY", 5).outcome == "pending"


# ---------------------------------------------------------------------------------- end to end with localhub
def test_localhub_webhooks_reach_the_receiver_and_enqueue_one_job(localhub: Any, redis_url: str,
                                                                   rclient: redis.Redis, tmp_path: Path) -> None:
    from tests.localhub.test_localhub_issues import Checkout, open_pull
    from tests.localhub.test_localhub_issues import client as github_client
    from tests.localhub.test_localhub_webhooks import settle

    receiver = Served(create_app(make_settings(redis_url, repos=frozenset({REPO}))))
    try:
        alice = localhub_token(localhub, "alice")
        bob = localhub_token(localhub, "bob")
        repo = github_client(localhub, alice).get_user().create_repo("memory", auto_init=True)
        repo.add_to_collaborators("bob", "push")  # bob pushes the branch
        repo.create_hook("web", {"url": f"{receiver.url}/webhooks/github", "content_type": "json",
                                 "secret": SECRET}, ["*"])
        checkout = Checkout.clone(localhub, bob, REPO, tmp_path / "bob")
        settle(localhub)
        checkout.commit("memrepo/dream/20260301T120000Z-0a1b2c3d", {"notes/ada.md": "# Ada\n"}, "Add Ada")
        checkout.push("memrepo/dream/20260301T120000Z-0a1b2c3d")
        with subscribe(rclient, REPO) as sub:
            number = open_pull(localhub, bob, REPO, "memrepo/dream/20260301T120000Z-0a1b2c3d")
            deliveries = settle(localhub)
            assert {(d["event"], d["status_code"]) for d in deliveries} == {
                ("ping", 200), ("push", 202), ("pull_request", 202)}
            [job] = queued(rclient)
            assert (job.id, job.func_name, job.args) == (job_key(REPO, number), INTEGRATE, [REPO, number])
            assert job.id == f"integrate-alice_2Fmemory-{number}"
            # A person edits memory on main: agents hear of it.
            edited = checkout.commit("main", {"system/human.md": "edited\n"}, "Edit on main")
            checkout.push("main")
            settle(localhub)
            moved = sub.get(timeout=10)
        assert moved is not None and (moved.sha, moved.cause) == (edited, "push")
    finally:
        receiver.close()
