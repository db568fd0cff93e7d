"""webhooks/intake/health.py and the receiver through a Redis outage: /healthz reports Redis and the
queue depths, answers 503 while Redis is down, and deliveries are refused with Retry-After until
it is back."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask.testing import FlaskClient

from bot.queue import (
    QUEUE,
    connect,
    job_key,
)
from tests.redis_server import RedisServer
from tests.webhooks.deliveries import (
    REPO,
    deliver,
    make_settings,
    pull_request,
    queued,
)
from webhooks.intake import create_app


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
