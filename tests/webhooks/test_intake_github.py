"""webhooks/intake/github.py against a real Redis: signatures, sizes and bad input refused with
nothing left behind, de-duplication, a burst of events for one pull request collapsed into one
job, the bot's own events ignored, and a push to main published as a head event."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlencode

import pytest
import redis
import requests
from flask import Flask
from flask.testing import FlaskClient

from bot.notify.publisher import subscribe
from bot.queue import (
    INTEGRATE,
    INTEGRATE_COMMIT,
    RECONCILE,
    get_queue,
    job_key,
)
from bot.settings import MAX_BODY_BYTES
from tests.webhooks.deliveries import (
    BOT,
    REPO,
    SHA1,
    SHA2,
    ZERO,
    Served,
    deliver,
    make_settings,
    pull_request,
    push,
    queued,
    repository,
    sign,
    status,
)
from webhooks.intake import create_app


@pytest.fixture
def served(app: Flask) -> Iterator[Served]:
    server = Served(app)
    yield server
    server.close()


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
